package pages

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
)

// A gate admits heavy work — a search holds a read connection and the cores
// for up to a few hundred milliseconds — so that a burst cannot take every
// connection from the light calls (reads, token checks, health) behind it,
// and so that no one caller's burst stops the others': at most running
// calls go at once and at most waiting queue behind them. Turns go round the
// callers (fair queueing): a caller's burst waits behind itself, not in front
// of everyone else, so a burst — 32 searches at once from one token, or
// everyone under --auth none — is answered in turn rather than refused. One
// caller holds at most perCaller places (running or waiting), so that no one
// fills the whole queue. A call past a limit, or queued longer than maxWait,
// is refused as unavailable at once: a clear "try again" beats a hang.
type gate struct {
	what      string
	running   int // places to run
	waiting   int // places in the queue
	perCaller int
	maxWait   time.Duration

	mu     sync.Mutex
	busy   int                  // calls running
	queued int                  // calls waiting
	queues map[string][]*waiter // caller → its waiting calls, in order
	turns  []string             // callers with waiting calls, whose turn is next first
	held   map[string]int       // caller → calls running or queued
}

// waiter is a queued call; ready is closed when it may run.
type waiter struct {
	ready   chan struct{}
	granted bool
}

func newGate(what string, running, waiting, perCaller int, maxWait time.Duration) *gate {
	return &gate{what: what, running: running, waiting: waiting, perCaller: perCaller,
		maxWait: maxWait, queues: map[string][]*waiter{}, held: map[string]int{}}
}

// newSearchGate is the gate of searches, running at once: 256 may wait (a
// few seconds' work on two cores), one caller up to 64 of them.
func newSearchGate(running int) *gate {
	return newGate("searches", running, 256, 64, 30*time.Second)
}

// callerKey tells callers apart: by principal in a workspace; anonymous
// readers of a workspace share one place.
func callerKey(a *atrium.Actor) string {
	return strconv.FormatInt(a.Workspace.ID, 10) + "/" + strconv.FormatInt(a.Principal.ID, 10)
}

// enter waits for a place to run and returns the function that gives it back.
func (g *gate) enter(ctx context.Context, caller string) (release func(), err error) {
	release = func() {
		g.mu.Lock()
		g.busy--
		g.leave(caller)
		g.dispatch()
		g.mu.Unlock()
	}
	g.mu.Lock()
	switch {
	case g.held[caller] >= g.perCaller:
		g.mu.Unlock()
		return nil, atrium.Errorf(atrium.EUnavailable, "you already have %d %s running or waiting: wait for some to finish", g.perCaller, g.what)
	case g.busy < g.running && g.queued == 0:
		g.busy++
		g.held[caller]++
		g.mu.Unlock()
		return release, nil
	case g.queued >= g.waiting:
		g.mu.Unlock()
		return nil, atrium.Errorf(atrium.EUnavailable, "the server is busy with %d waiting %s: try again in a moment", g.waiting, g.what)
	}
	w := &waiter{ready: make(chan struct{})}
	if len(g.queues[caller]) == 0 {
		g.turns = append(g.turns, caller)
	}
	g.queues[caller] = append(g.queues[caller], w)
	g.queued++
	g.held[caller]++
	g.mu.Unlock()

	t := time.NewTimer(g.maxWait)
	defer t.Stop()
	select {
	case <-w.ready:
		return release, nil
	case <-t.C:
		err = atrium.Errorf(atrium.EUnavailable, "the server is busy: %s waited %s without a turn; try again in a moment", g.what, g.maxWait)
	case <-ctx.Done():
		err = ctx.Err()
	}
	g.mu.Lock()
	if w.granted { // its turn came as it gave up: pass it on
		g.mu.Unlock()
		release()
		return nil, err
	}
	g.unqueue(caller, w)
	g.leave(caller)
	g.mu.Unlock()
	return nil, err
}

// dispatch gives free places to waiting calls, a caller at a time in turn.
// g.mu is held.
func (g *gate) dispatch() {
	for g.busy < g.running && len(g.turns) > 0 {
		caller := g.turns[0]
		g.turns = g.turns[1:]
		q := g.queues[caller]
		w := q[0]
		if len(q) > 1 {
			g.queues[caller] = q[1:]
			g.turns = append(g.turns, caller) // its next call waits for the others' turns
		} else {
			delete(g.queues, caller)
		}
		g.queued--
		g.busy++
		w.granted = true
		close(w.ready)
	}
}

// unqueue takes w, which gave up, out of caller's queue. g.mu is held.
func (g *gate) unqueue(caller string, w *waiter) {
	q := g.queues[caller]
	for i, x := range q {
		if x == w {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	g.queued--
	if len(q) > 0 {
		g.queues[caller] = q
		return
	}
	delete(g.queues, caller)
	for i, c := range g.turns {
		if c == caller {
			g.turns = append(g.turns[:i:i], g.turns[i+1:]...)
			break
		}
	}
}

// leave gives back one of caller's places. g.mu is held.
func (g *gate) leave(caller string) {
	if g.held[caller]--; g.held[caller] <= 0 {
		delete(g.held, caller)
	}
}
