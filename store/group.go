package store

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/atrium-hq/atrium"
)

// Group commit (SQLite). Callers of Update queue; the first becomes the
// leader and runs everything queued in one transaction, each call in its own
// savepoint, then commits once and tells each caller how its call went. A
// call that fails rolls back to its savepoint and takes nothing else with it;
// a commit that fails fails every call it held, none of which happened.

// maxGroup bounds the calls that share one commit, and so how long the last
// of them waits for the first.
const maxGroup = 32

// committer queues the calls waiting for a commit.
type committer struct {
	mu      sync.Mutex
	queue   []*write
	leading bool
	// onGroup, when set (by tests), is told the size of each group of more
	// than one call as its transaction begins: the tests observe that a
	// group formed instead of inferring it from timings.
	onGroup func(size int)
}

// queued is how many calls wait for a commit.
func (c *committer) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// write is one call of Update.
type write struct {
	ctx  context.Context
	fn   func(*Tx) error
	err  error
	pan  any // a panic of fn, raised again in its caller
	done chan struct{}
}

func (c *committer) do(db *DB, ctx context.Context, fn func(*Tx) error) error {
	w := &write{ctx: ctx, fn: fn, done: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, w)
	lead := !c.leading
	c.leading = true
	c.mu.Unlock()
	if lead {
		c.lead(db, w)
	}
	<-w.done
	if w.pan != nil {
		panic(w.pan)
	}
	return w.err
}

// lead commits what is queued, a group at a time, until mine is done; then
// it hands the lead to a goroutine if others still wait, so that a caller
// is never kept serving the others (mine is nil for that goroutine, which
// leads until the queue is empty).
func (c *committer) lead(db *DB, mine *write) {
	for {
		c.mu.Lock()
		n := min(len(c.queue), maxGroup)
		switch {
		case n == 0:
			c.leading = false
			c.mu.Unlock()
			return
		case mine != nil && isDone(mine):
			c.mu.Unlock()
			go c.lead(db, nil)
			return
		}
		batch := c.queue[:n:n]
		c.queue = c.queue[n:]
		c.mu.Unlock()
		db.commitGroup(batch)
	}
}

func isDone(w *write) bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// commitGroup runs batch in one transaction and commits it.
func (db *DB) commitGroup(batch []*write) {
	finish := func(err error) {
		for _, w := range batch {
			if w.err == nil && w.pan == nil {
				w.err = err
			}
			close(w.done)
		}
	}
	if len(batch) == 1 {
		// Alone: the plain transaction, with its caller's context.
		w := batch[0]
		func() {
			defer func() {
				if p := recover(); p != nil {
					db.panicked(w, p)
				}
			}()
			w.err = db.update(w.ctx, w.fn)
		}()
		close(w.done)
		return
	}
	if db.group.onGroup != nil {
		db.group.onGroup(len(batch))
	}
	// The transaction is the group's: no one caller's cancellation ends it,
	// nor stops a statement once it runs (Tx.shared); a call given up before
	// its turn does not run.
	sqltx, err := db.w.BeginTx(context.Background(), nil)
	if err != nil {
		finish(db.wrapBusy(fmt.Errorf("begin: %w", err)))
		return
	}
	tx := &Tx{db: db, tx: sqltx, pool: db.w, write: true, shared: true}
	var (
		events []atrium.Event
		failed error // the transaction cannot go on
	)
	for _, w := range batch {
		if failed != nil {
			w.err = failed
			continue
		}
		if err := w.ctx.Err(); err != nil {
			w.err = err // gave up while queued: nothing of it ran
			continue
		}
		w.err, failed = db.runSaved(tx, w)
		if w.err == nil && w.pan == nil {
			events = append(events, tx.events...)
		}
	}
	if failed != nil {
		_ = sqltx.Rollback()
		for _, w := range batch {
			if w.err == nil && w.pan == nil {
				w.err = failed
			}
		}
		finish(nil)
		return
	}
	if err := sqltx.Commit(); err != nil {
		// The calls that had succeeded did not happen after all.
		err = db.wrapBusy(fmt.Errorf("commit: %w", err))
		for _, w := range batch {
			if w.err == nil && w.pan == nil {
				w.err = err
			}
		}
		finish(nil)
		return
	}
	db.answered()
	db.wrote()
	db.committed(events)
	finish(nil)
}

// runSaved runs one call in a savepoint of tx: its error, and an error that
// leaves the transaction unusable (then the whole group fails).
func (db *DB) runSaved(tx *Tx, w *write) (err, broken error) {
	if _, err := tx.tx.ExecContext(context.Background(), "SAVEPOINT atrium_call"); err != nil {
		return nil, fmt.Errorf("savepoint: %w", err)
	}
	tx.now, tx.events, tx.pending, tx.words = db.now(), nil, nil, nil
	err = func() (err error) {
		defer func() {
			if p := recover(); p != nil {
				db.panicked(w, p)
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		if err := w.fn(tx); err != nil {
			return err
		}
		return tx.flushPostings(w.ctx)
	}()
	if err != nil {
		// Undo this call only; its own context may be gone, the group's is not.
		if _, rerr := tx.tx.ExecContext(context.Background(), "ROLLBACK TO atrium_call"); rerr != nil {
			return err, fmt.Errorf("roll back a call: %w", rerr)
		}
	}
	if _, rerr := tx.tx.ExecContext(context.Background(), "RELEASE atrium_call"); rerr != nil {
		return err, fmt.Errorf("release a call: %w", rerr)
	}
	return err, nil
}

// panicked keeps a panic of a call from taking the group's leader down: it
// is logged with the stack where it happened and raised again in the
// caller's goroutine.
func (db *DB) panicked(w *write, p any) {
	db.log.Error("a write transaction panicked", "panic", p, "stack", string(debug.Stack()))
	w.pan = p
}
