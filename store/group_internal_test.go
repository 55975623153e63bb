package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// SQLite answers a statement interrupted inside an explicit transaction by
// rolling back the whole transaction. In a shared commit that transaction
// holds the other callers' writes too, so a caller that gives up in the middle
// of its own statement must not interrupt it: its call still happens entirely
// or not at all, and the others' writes stay.
func TestGivingUpMidStatementKeepsTheGroupsWrites(t *testing.T) {
	ctx := context.Background()
	db, groups, release := heldLeader(t, func(tx *Tx) error { return tx.SetMeta(ctx, "group.first", "1") })
	const n = 6
	slow, giveUp := context.WithCancel(ctx)
	defer giveUp()
	errs := make([]error, n)
	midStatement := false // the call gave up while its statement ran
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			call := ctx
			if i == 3 {
				call = slow
			}
			errs[i] = db.Update(call, func(tx *Tx) error {
				if err := tx.SetMeta(call, "group."+string(rune('a'+i)), "written"); err != nil {
					return err
				}
				if i != 3 {
					return nil
				}
				// A long write, given up while it runs.
				time.AfterFunc(5*time.Millisecond, giveUp)
				before := call.Err()
				_, err := tx.exec(call, `INSERT INTO meta (key, value)
					WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
					SELECT 'slow.' || i, 'x' FROM n`)
				midStatement = before == nil && call.Err() != nil
				return err
			})
		})
	}
	for deadline := time.Now().Add(30 * time.Second); db.group.queued() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d writes queued behind the first", db.group.queued(), n)
		}
	}
	release()
	wg.Wait()
	// What the test is for: the call gave up in the middle of its statement,
	// in a commit it shared.
	if len(*groups) != 1 || (*groups)[0] != n {
		t.Fatalf("shared commits of %v calls, want one of %d", *groups, n)
	}
	if !midStatement {
		t.Fatal("the call did not give up while its statement ran (it ended in under 5 ms?): the path under test did not run")
	}
	for i := range n {
		key := "group." + string(rune('a'+i))
		var got string
		var ok bool
		if err := db.View(ctx, func(tx *Tx) (err error) { got, ok, err = tx.Meta(ctx, key); return err }); err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			// Either it happened entirely or not at all.
			var slowRows int
			if err := db.View(ctx, func(tx *Tx) error {
				return tx.queryRow(ctx, "SELECT count(*) FROM meta WHERE key LIKE 'slow.%'").Scan(&slowRows)
			}); err != nil {
				t.Fatal(err)
			}
			if happened := errs[i] == nil; happened != ok || happened != (slowRows == 300000) {
				t.Errorf("the call given up returned %v, its first write there: %v, its long write's rows: %d", errs[i], ok, slowRows)
			}
			continue
		}
		if errs[i] != nil || !ok || got != "written" {
			t.Errorf("call %d shared a commit with one given up: returned %v, stored %q %v", i, errs[i], got, ok)
		}
	}
	if errs[3] != nil && !errors.Is(errs[3], context.Canceled) {
		t.Logf("the call given up returned %v", errs[3])
	}
}

// addWords sends a word once per call, not once per transaction: a call that
// rolls back to its savepoint takes its words with it, and the next call of
// the same commit must add them again.
func TestWordsOfACallRolledBackAreAddedByTheNext(t *testing.T) {
	ctx := context.Background()
	db, groups, release := heldLeader(t, func(*Tx) error { return nil })
	words := []SearchWord{{"running", "run"}, {"happily", "happili"}}
	failed := errors.New("the first call fails after adding its words")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			errs[i] = db.Update(ctx, func(tx *Tx) error {
				if err := tx.addWords(ctx, 1, words); err != nil {
					return err
				}
				if err := tx.addWords(ctx, 1, words); err != nil { // sent again: nothing to send
					return err
				}
				if i == 0 {
					return failed
				}
				return nil
			})
		})
		// In this order: the failing call first.
		for deadline := time.Now().Add(30 * time.Second); db.group.queued() < i+1; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("call %d never queued", i)
			}
		}
	}
	release()
	wg.Wait()
	if len(*groups) != 1 || (*groups)[0] != 2 {
		t.Fatalf("shared commits of %v calls, want one of 2: the path under test did not run", *groups)
	}
	if !errors.Is(errs[0], failed) || errs[1] != nil {
		t.Fatalf("the calls returned %v", errs)
	}
	var got []string
	if err := db.View(ctx, func(tx *Tx) (err error) {
		got, err = queryAll(ctx, tx, scanString, "SELECT word || '>' || stem FROM search_words WHERE workspace_id = 1 ORDER BY word")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"happily>happili", "running>run"}; !slices.Equal(got, want) {
		t.Fatalf("search_words after the commit: %q, want %q", got, want)
	}
}

// heldLeader opens a store whose first write, first, waits inside its
// transaction until release: the writes queued meanwhile share the next
// commit. groups records the size of each shared commit after that.
func heldLeader(t *testing.T, first func(*Tx) error) (db *DB, groups *[]int, release func()) {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "a.db"), &Options{Conns: 1, EventPoll: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	groups = new([]int)
	db.group.onGroup = func(size int) { *groups = append(*groups, size) } // the leader alone calls it
	hold, held := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- db.Update(context.Background(), func(tx *Tx) error {
			close(held)
			<-hold
			return first(tx)
		})
	}()
	<-held
	return db, groups, func() {
		close(hold)
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
