package store_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// emit commits one event of kind in workspace ws through db.
func emit(t testing.TB, db *store.DB, ws int64, subject string) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		return tx.EmitJSON(context.Background(), ws, 0, "test.event", subject, nil)
	})
	if err != nil {
		t.Error(err)
	}
}

// readAfter reads the whole log after position after, as a reader that
// resumes from a cursor does (a browser's Last-Event-ID).
func readAfter(t testing.TB, db *store.DB, after int64) []atrium.Event {
	t.Helper()
	var out []atrium.Event
	for {
		var batch []atrium.Event
		err := db.View(context.Background(), func(tx *store.Tx) (err error) {
			batch, err = tx.EventsAfter(context.Background(), 0, after, 100)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, batch...)
		if len(batch) < 100 {
			return out
		}
		after = batch[len(batch)-1].Seq
	}
}

// On PostgreSQL transactions commit out of order: an event written first can
// become visible after one written later. A reader that has moved its cursor
// past the later one must still get the earlier one when it commits.
func TestResumingNeverSkipsAnEventCommittedLate(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t, store.Postgres, &store.Options{Conns: 4})
	written := make(chan struct{})
	release := make(chan struct{})
	slow := make(chan error, 1)
	go func() {
		slow <- db.Update(ctx, func(tx *store.Tx) error {
			if err := tx.EmitJSON(ctx, 0, 0, "test.event", "first written", nil); err != nil {
				return err
			}
			close(written)
			<-release // commits after "second written"
			return nil
		})
	}()
	<-written
	emit(t, db, 0, "second written")
	var cursor int64
	var seen []string
	deadline := time.Now().Add(10 * time.Second)
	for len(seen) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the committed event never reached the log")
		}
		for _, e := range readAfter(t, db, cursor) {
			seen, cursor = append(seen, e.Subject), e.Seq
		}
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	for len(seen) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("after %v the reader at %d never got the event that committed late", seen, cursor)
		}
		for _, e := range readAfter(t, db, cursor) {
			seen, cursor = append(seen, e.Subject), e.Seq
		}
	}
	if seen[0] != "second written" || seen[1] != "first written" || len(seen) != 2 {
		t.Errorf("read %v, want the events in the order they became visible, each once", seen)
	}
}

// Two replicas share a database; writers on both, and a follower on the
// second that drops its stream every few hundred milliseconds and resumes
// from the last position it got, as a browser's EventSource does: it gets
// every event, once, in log order.
func TestFollowersResumingAcrossReplicasMissNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		dsn := storetest.DSN(t, e)
		opts := &store.Options{Conns: 4, EventPoll: 20 * time.Millisecond}
		a, err := store.Open(ctx, dsn, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := store.Open(ctx, dsn, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		const writers, each = 8, 30
		got := map[string]int{}
		var order []int64
		var mu sync.Mutex
		done := make(chan struct{})
		followed := make(chan struct{})
		go func() {
			defer close(followed)
			var cursor int64
			for {
				select {
				case <-done:
					mu.Lock()
					n := len(got)
					mu.Unlock()
					if n == writers*each {
						return
					}
				default:
				}
				fctx, cancel := context.WithTimeout(ctx, time.Duration(100+rand.IntN(300))*time.Millisecond)
				err := b.Follow(fctx, 0, cursor, func(ev atrium.Event) bool {
					mu.Lock()
					got[ev.Subject]++
					order = append(order, ev.Seq)
					mu.Unlock()
					cursor = ev.Seq
					return true
				})
				cancel()
				if err != nil && fctx.Err() == nil {
					t.Error(err)
					return
				}
			}
		}()
		var wg sync.WaitGroup
		for w := range writers {
			db := a
			if w%2 == 1 {
				db = b
			}
			wg.Go(func() {
				for i := range each {
					emit(t, db, 0, fmt.Sprintf("w%d-%d", w, i))
				}
			})
		}
		wg.Wait()
		close(done)
		select {
		case <-followed:
		case <-time.After(30 * time.Second):
		}
		mu.Lock()
		defer mu.Unlock()
		if len(got) != writers*each {
			t.Errorf("the follower got %d of %d events", len(got), writers*each)
		}
		for s, n := range got {
			if n != 1 {
				t.Errorf("%s delivered %d times", s, n)
			}
		}
		for i := 1; i < len(order); i++ {
			if order[i] <= order[i-1] {
				t.Fatalf("delivered out of log order: %d after %d", order[i], order[i-1])
			}
		}
	})
}

// A follower that cannot keep up with the live stream is never allowed to
// slow the writers down, and loses nothing: it catches up from the log.
func TestASlowFollowerCatchesUpFromTheLog(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		db := storetest.MustOpen(t, e, &store.Options{Conns: 4})
		const n = 3000 // well past a subscription's buffer
		var got []int64
		stalled := make(chan struct{})
		all := make(chan struct{})
		go func() {
			_ = db.Follow(ctx, 0, 0, func(ev atrium.Event) bool {
				if len(got) == 0 {
					<-stalled // not reading while the writes go by
				}
				got = append(got, ev.Seq)
				if len(got) == n {
					close(all)
					return false
				}
				return true
			})
		}()
		for i := 0; i < n; i += 100 {
			err := db.Update(ctx, func(tx *store.Tx) error {
				for j := range 100 {
					if err := tx.EmitJSON(ctx, 0, 0, "test.event", fmt.Sprint(i+j), nil); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		close(stalled)
		select {
		case <-all:
		case <-time.After(30 * time.Second):
			t.Fatalf("the slow follower got %d of %d events", len(got), n)
		}
		for i := 1; i < len(got); i++ {
			if got[i] != got[i-1]+1 {
				t.Fatalf("positions %d then %d: an event skipped or repeated", got[i-1], got[i])
			}
		}
	})
}

// logRecorder keeps the messages of a logger.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, rec.Message)
	r.mu.Unlock()
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

func (r *logRecorder) has(part string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.msgs {
		if strings.Contains(m, part) {
			return true
		}
	}
	return false
}

// A listener that hears nothing — here it listens on another database, as
// LISTEN through a transaction-pooling PgBouncer does — says so, and the
// replica still gets the other replicas' events, by polling the log.
func TestAListenerThatHearsNothingFallsBackToPolling(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.DSN(t, store.Postgres)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/postgres" // another database: its notifications are not ours
	rec := &logRecorder{}
	deaf, err := store.Open(ctx, dsn, &store.Options{ListenDSN: u.String(), Logger: slog.New(rec)})
	if err != nil {
		t.Fatal(err)
	}
	defer deaf.Close()
	other, err := store.Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	events, stop := deaf.Subscribe(16)
	defer stop()
	emit(t, other, 0, "from the other replica")
	select {
	case e := <-events:
		if e.Subject != "from the other replica" {
			t.Fatalf("got %q", e.Subject)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other replica's event never arrived")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !rec.has("hears no notifications") {
		if time.Now().After(deadline) {
			t.Fatalf("no warning that the listener hears nothing; logged %v", rec.msgs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A follower of one workspace also gets the events of no workspace (a token
// of any workspace revoked) that were committed before it subscribed: a
// browser's stream opened a moment before a revoke must still end.
func TestFollowersCatchUpOnEventsOfNoWorkspace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db := storetest.MustOpen(t, e, &store.Options{Conns: 4})
		var ws int64
		err := db.Update(ctx, func(tx *store.Tx) error {
			w, err := tx.CreateWorkspace(ctx, "followed")
			ws = w.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		after, err := db.LatestEventSeq(ctx, ws)
		if err != nil {
			t.Fatal(err)
		}
		emit(t, db, 0, "token of any workspace revoked")
		emit(t, db, ws, "in the workspace")
		var got []string
		err = db.Follow(ctx, ws, after, func(ev atrium.Event) bool {
			got = append(got, ev.Subject)
			return len(got) < 2
		})
		if err != nil || len(got) != 2 || got[0] != "token of any workspace revoked" {
			t.Errorf("the follower got %v, %v; want the event of no workspace, then the workspace's", got, err)
		}
	})
}
