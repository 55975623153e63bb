package pages

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

func TestGateBoundsEachCallerAndTheQueue(t *testing.T) {
	g := newGate("searches", 1, 2, 2, time.Minute)
	ctx := context.Background()
	mustEnter := func(caller string) func() {
		t.Helper()
		release, err := g.enter(ctx, caller)
		if err != nil {
			t.Fatalf("%s: %v", caller, err)
		}
		return release
	}
	running := mustEnter("a")

	// a's second call queues; its third is past its share, refused at once.
	second := make(chan func())
	go func() { second <- mustEnter("a") }()
	waitQueued(t, g, 1)
	if _, err := g.enter(ctx, "a"); atrium.ErrorCode(err) != atrium.EUnavailable {
		t.Fatalf("a's third call: %v, want unavailable", err)
	}
	// b still has a place in the queue; c finds the queue full.
	third := make(chan func())
	go func() { third <- mustEnter("b") }()
	waitQueued(t, g, 2)
	if _, err := g.enter(ctx, "c"); atrium.ErrorCode(err) != atrium.EUnavailable {
		t.Fatalf("c with the queue full: %v, want unavailable", err)
	}
	// Places come back as calls end, in the order they queued.
	running()
	(<-second)()
	(<-third)()
	if len(g.held) != 0 || g.queued != 0 {
		t.Fatalf("after every call ended: held %v, queued %d", g.held, g.queued)
	}
	mustEnter("c")()
}

func TestGateRefusesAfterWaitingTooLong(t *testing.T) {
	g := newGate("searches", 1, 4, 4, 10*time.Millisecond)
	release, err := g.enter(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if _, err := g.enter(context.Background(), "b"); atrium.ErrorCode(err) != atrium.EUnavailable {
		t.Fatalf("a call that waited past maxWait: %v, want unavailable", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g.maxWait = time.Minute
	if _, err := g.enter(ctx, "b"); err != context.Canceled {
		t.Fatalf("a cancelled call: %v, want context.Canceled", err)
	}
	if g.held["b"] != 0 || g.queued != 0 {
		t.Fatalf("refused calls kept their places: held %v, queued %d", g.held, g.queued)
	}
}

func waitQueued(t *testing.T, g *gate, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		g.mu.Lock()
		q := g.queued
		g.mu.Unlock()
		if q == n {
			return
		}
	}
	t.Fatalf("queue never reached %d", n)
}

// A burst of 32 from one caller is answered, each in its turn, while the
// server serves it within its wait: a burst is not an abuse.
func TestGateAnswersABurstFromOneCaller(t *testing.T) {
	g := newSearchGate(2)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			release, err := g.enter(context.Background(), "one-token")
			if err != nil {
				errs <- err
				return
			}
			time.Sleep(5 * time.Millisecond) // a search
			release()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a search of the burst: %v", err)
	}
}

// Turns go round the callers: one caller's burst queued first does not make
// another's single call wait behind all of it.
func TestGateQueuesFairly(t *testing.T) {
	g := newGate("searches", 1, 64, 64, time.Minute)
	ctx := context.Background()
	running, err := g.enter(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 32)
	var wg sync.WaitGroup
	enter := func(caller string) {
		wg.Go(func() {
			release, err := g.enter(ctx, caller)
			if err != nil {
				t.Errorf("%s: %v", caller, err)
				return
			}
			order <- caller
			release()
		})
	}
	for i := range 10 {
		enter("a")
		waitQueued(t, g, i+1)
	}
	enter("b")
	waitQueued(t, g, 11)
	running()
	wg.Wait()
	close(order)
	var got []string
	for c := range order {
		got = append(got, c)
	}
	if i := slices.Index(got, "b"); i < 0 || i > 1 {
		t.Fatalf("turns went %v; want b's call among the first two", got)
	}
}

// The limits the README states, and the e2e load tests derive their floors
// from: as many searches run as there are cores (leaving a read connection
// to the light calls), 256 more wait, one caller holds at most 64 places,
// and a search waits at most 30 s.
func TestSearchGateHasTheREADMEsLimits(t *testing.T) {
	for _, conns := range []int{1, 2, 4, 64} {
		db := storetest.MustOpen(t, store.SQLite, &store.Options{Conns: conns})
		g := New(db, nil).searches
		running := max(1, min(runtime.GOMAXPROCS(0), conns-1))
		if g.running != running || g.waiting != 256 || g.perCaller != 64 || g.maxWait != 30*time.Second {
			t.Errorf("with %d read connections: %d running, %d waiting, %d per caller, %s; want %d, 256, 64, 30s",
				conns, g.running, g.waiting, g.perCaller, g.maxWait, running)
		}
	}
}
