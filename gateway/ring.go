package gateway

import (
	"bytes"
	"strings"
	"sync"
)

// A ring keeps the last lines an upstream wrote to stderr, within a fixed
// number of bytes: enough to see why it failed, and never more memory
// however much it prints. A line longer than the ring is cut.
type ring struct {
	mu      sync.Mutex
	max     int
	lines   []string
	size    int
	partial []byte
}

func newRing(max int) *ring { return &ring{max: max} }

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.partial = append(r.partial, p...)
			if len(r.partial) > r.max {
				r.push(string(r.partial))
				r.partial = r.partial[:0]
			}
			break
		}
		r.partial = append(r.partial, p[:i]...)
		r.push(string(r.partial))
		r.partial = r.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (r *ring) push(line string) {
	line = strings.TrimRight(line, "\r")
	if len(line) > r.max/4 {
		line = line[:r.max/4] + "…"
	}
	r.lines = append(r.lines, line)
	r.size += len(line) + 1
	drop := 0
	for r.size > r.max && drop < len(r.lines) {
		r.size -= len(r.lines[drop]) + 1
		drop++
	}
	if drop > 0 {
		r.lines = append(r.lines[:0], r.lines[drop:]...)
	}
}

// Tail returns up to n of the last lines, oldest first.
func (r *ring) Tail(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	lines := r.lines
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := append([]string(nil), lines...)
	if len(r.partial) > 0 && len(out) < n {
		out = append(out, string(r.partial))
	}
	return out
}
