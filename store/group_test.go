package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Writes that wait for the writer together share a commit on SQLite, and
// each still happens entirely or not at all: a call that fails, panics or
// gives up takes nothing of the others with it, its writes and events are
// gone, and the others' are all there and published once. PostgreSQL runs
// the same calls as plain transactions; the outcome is the same.
func TestWritesThatShareACommitStayApart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := storetest.MustOpen(t, e, &store.Options{Conns: 4})
		ctx := context.Background()
		events, stop := db.Subscribe(256)
		defer stop()
		var groups []int
		var groupsMu sync.Mutex
		db.SetGroupHook(func(size int) { groupsMu.Lock(); groups = append(groups, size); groupsMu.Unlock() })

		// The first write holds the writer while the others queue behind it.
		hold, held := make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() {
			first <- db.Update(ctx, func(tx *store.Tx) error {
				close(held)
				<-hold
				return tx.SetMeta(ctx, "group.first", "1")
			})
		}()
		<-held
		const n = 12
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		results := make([]any, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				call := ctx
				if i == 7 {
					call = cancelled // gave up before its turn
				}
				defer func() {
					if p := recover(); p != nil {
						results[i] = fmt.Sprint("panic: ", p)
					}
				}()
				results[i] = db.Update(call, func(tx *store.Tx) error {
					key := fmt.Sprint("group.", i)
					if err := tx.SetMeta(call, key, "written"); err != nil {
						return err
					}
					if _, err := tx.Emit(call, atrium.Event{Kind: "test.group", Subject: key}); err != nil {
						return err
					}
					switch i {
					case 3:
						return errors.New("call 3 fails")
					case 5:
						panic("call 5 panics")
					}
					return nil
				})
			})
		}
		if e == store.SQLite {
			// All of them queued behind the first: they go as one group.
			for deadline := time.Now().Add(30 * time.Second); db.QueuedWrites() < n; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d writes queued", db.QueuedWrites(), n)
				}
			}
		}
		close(hold)
		wg.Wait()
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		groupsMu.Lock()
		if want := map[store.Engine][]int{store.SQLite: {n}}[e]; !slices.Equal(groups, want) {
			t.Errorf("shared commits of %v calls, want %v", groups, want)
		}
		groupsMu.Unlock()
		var wantEvents []string
		for i := range n {
			key := fmt.Sprint("group.", i)
			var got string
			var ok bool
			if err := db.View(ctx, func(tx *store.Tx) (err error) { got, ok, err = tx.Meta(ctx, key); return err }); err != nil {
				t.Fatal(err)
			}
			switch i {
			case 3, 5, 7:
				if ok {
					t.Errorf("call %d failed but its write is there: %q", i, got)
				}
			default:
				if results[i] != nil || !ok || got != "written" {
					t.Errorf("call %d: result %v, stored %q %v", i, results[i], got, ok)
				}
				wantEvents = append(wantEvents, key)
			}
		}
		if err, _ := results[3].(error); err == nil || err.Error() != "call 3 fails" {
			t.Errorf("call 3 returned %v", results[3])
		}
		if p, _ := results[5].(string); !strings.HasPrefix(p, "panic: call 5 panics") {
			t.Errorf("call 5's panic reached its caller as %v", results[5])
		}
		if err, _ := results[7].(error); !errors.Is(err, context.Canceled) {
			t.Errorf("the call that gave up returned %v", results[7])
		}
		// Published: the events of the calls that happened, each once.
		seen := map[string]int{}
		deadline := time.After(5 * time.Second)
		for len(seen) < len(wantEvents) {
			select {
			case ev := <-events:
				if ev.Kind == "test.group" {
					seen[ev.Subject]++
				}
			case <-deadline:
				t.Fatalf("published %v, want %v", seen, wantEvents)
			}
		}
		time.Sleep(300 * time.Millisecond) // a poll would publish doubles now
		for len(events) > 0 {
			if ev := <-events; ev.Kind == "test.group" {
				seen[ev.Subject]++
			}
		}
		for _, k := range wantEvents {
			if seen[k] != 1 {
				t.Errorf("event of %s published %d times", k, seen[k])
			}
		}
		for _, k := range []string{"group.3", "group.5", "group.7"} {
			if seen[k] != 0 {
				t.Errorf("event of failed %s published", k)
			}
		}
	})
}

// Many writers at once, some failing: every write that returned nil is
// there, no other is, and the writers never wait on each other for good.
func TestManyWritersShareCommits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := storetest.MustOpen(t, e, &store.Options{Conns: 4})
		ctx := context.Background()
		const writers, each = 16, 25
		var wg sync.WaitGroup
		ok := make([][]bool, writers)
		for w := range writers {
			ok[w] = make([]bool, each)
			wg.Go(func() {
				for i := range each {
					err := db.Update(ctx, func(tx *store.Tx) error {
						if err := tx.SetMeta(ctx, fmt.Sprintf("many.%d.%d", w, i), "x"); err != nil {
							return err
						}
						if (w+i)%7 == 0 {
							return errors.New("refused")
						}
						return nil
					})
					ok[w][i] = err == nil
					if err != nil && err.Error() != "refused" {
						t.Errorf("writer %d call %d: %v", w, i, err)
					}
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			t.Fatal("writers stuck")
		}
		err := db.View(ctx, func(tx *store.Tx) error {
			for w := range writers {
				for i := range each {
					_, stored, err := tx.Meta(ctx, fmt.Sprintf("many.%d.%d", w, i))
					if err != nil {
						return err
					}
					if stored != ok[w][i] {
						t.Errorf("writer %d call %d: returned ok=%v, stored=%v", w, i, ok[w][i], stored)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
