package gateway

import (
	"slices"
	"sync"
	"time"
)

// latencies keeps the durations of an upstream's last calls, for p50/p95 in
// status: a window, so that the figures say how it behaves now.
type latencies struct {
	mu    sync.Mutex
	buf   [256]time.Duration
	n     int // calls recorded, ever
	fails int
}

func (l *latencies) add(d time.Duration, failed bool) {
	l.mu.Lock()
	l.buf[l.n%len(l.buf)] = d
	l.n++
	if failed {
		l.fails++
	}
	l.mu.Unlock()
}

// summary returns the number of calls, failures and the p50 and p95 of the
// window.
func (l *latencies) summary() (calls, fails int, p50, p95 time.Duration) {
	l.mu.Lock()
	w := append([]time.Duration(nil), l.buf[:min(l.n, len(l.buf))]...)
	calls, fails = l.n, l.fails
	l.mu.Unlock()
	if len(w) == 0 {
		return calls, fails, 0, 0
	}
	slices.Sort(w)
	return calls, fails, w[(len(w)-1)*50/100], w[(len(w)-1)*95/100]
}
