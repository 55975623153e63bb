package pages

import (
	"context"
	"runtime"
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

// The limits the README states, and the e2e load tests derive their floors
// from: as many searches run as there are cores (leaving a read connection
// to the light calls), 64 more wait, one caller holds at most 8 places, and
// a search waits at most 30 s.
func TestSearchGateHasTheREADMEsLimits(t *testing.T) {
	for _, conns := range []int{1, 2, 4, 64} {
		db := storetest.MustOpen(t, store.SQLite, &store.Options{Conns: conns})
		g := New(db, nil).searches
		running := max(1, min(runtime.GOMAXPROCS(0), conns-1))
		if cap(g.slots) != running || g.waiting != 64 || g.perCaller != 8 || g.maxWait != 30*time.Second {
			t.Errorf("with %d read connections: %d running, %d waiting, %d per caller, %s; want %d, 64, 8, 30s",
				conns, cap(g.slots), g.waiting, g.perCaller, g.maxWait, running)
		}
	}
}
