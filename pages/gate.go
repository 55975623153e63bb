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
// calls go at once, at most waiting queue behind them, and one caller holds
// at most perCaller of those places. A call past a limit, or queued longer
// than maxWait, is refused as unavailable at once: a clear "try again" beats
// a hang.
type gate struct {
	what      string
	slots     chan struct{}
	waiting   int // places in the queue
	perCaller int
	maxWait   time.Duration

	mu     sync.Mutex
	queued int
	held   map[string]int // caller → calls running or queued
}

func newGate(what string, running, waiting, perCaller int, maxWait time.Duration) *gate {
	return &gate{what: what, slots: make(chan struct{}, running), waiting: waiting, perCaller: perCaller,
		maxWait: maxWait, held: map[string]int{}}
}

// callerKey tells callers apart: by principal in a workspace; anonymous
// readers of a workspace share one place.
func callerKey(a *atrium.Actor) string {
	return strconv.FormatInt(a.Workspace.ID, 10) + "/" + strconv.FormatInt(a.Principal.ID, 10)
}

// enter waits for a place to run and returns the function that gives it back.
func (g *gate) enter(ctx context.Context, caller string) (release func(), err error) {
	g.mu.Lock()
	if g.held[caller] >= g.perCaller {
		g.mu.Unlock()
		return nil, atrium.Errorf(atrium.EUnavailable, "you already have %d %s in progress: wait for one to finish", g.perCaller, g.what)
	}
	g.held[caller]++
	g.mu.Unlock()
	leave := func() {
		g.mu.Lock()
		if g.held[caller]--; g.held[caller] == 0 {
			delete(g.held, caller)
		}
		g.mu.Unlock()
	}
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots; leave() }, nil
	default:
	}
	g.mu.Lock()
	if g.queued >= g.waiting {
		g.mu.Unlock()
		leave()
		return nil, atrium.Errorf(atrium.EUnavailable, "the server is busy with %d waiting %s: try again in a moment", g.waiting, g.what)
	}
	g.queued++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.queued--
		g.mu.Unlock()
	}()
	t := time.NewTimer(g.maxWait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return func() { <-g.slots; leave() }, nil
	case <-t.C:
		leave()
		return nil, atrium.Errorf(atrium.EUnavailable, "the server is busy: %s waited %s without a turn; try again in a moment", g.what, g.maxWait)
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}
