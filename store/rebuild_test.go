package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Two rebuilds of the index can interleave (two processes started on an
// older index each rebuild it): one empties the index after the other has
// indexed a page again, which the other then indexes once more, without
// taking it out of its lists first (ClearPostings emptied them). The page
// stays in each list once, and the rebuild does not fail.
func TestReindexAPageTwiceAfterTheIndexWasEmptied(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		db := storetest.MustOpen(t, e, nil)
		idx := wordsIndex("kestrel", "falcon")
		var p atrium.Page
		err := db.Update(ctx, func(tx *store.Tx) error {
			w, err := tx.CreateWorkspace(ctx, "birds")
			if err != nil {
				return err
			}
			p = atrium.Page{WorkspaceID: w.ID, Path: "Birds.md", Title: "Birds", Access: atrium.AccessPublic, Content: "kestrel falcon", ContentHash: "h"}
			return tx.InsertPage(ctx, &p, idx, 0)
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, step := range []func(tx *store.Tx) error{
			func(tx *store.Tx) error { return tx.ClearPostings(ctx) },     // the first rebuild
			func(tx *store.Tx) error { return tx.ClearPostings(ctx) },     // the second
			func(tx *store.Tx) error { return reindex(ctx, tx, &p, idx) }, // the first, on
			func(tx *store.Tx) error { return reindex(ctx, tx, &p, idx) }, // the second, on
		} {
			if err := db.Update(ctx, step); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		err = db.View(ctx, func(tx *store.Tx) error {
			for _, stem := range []string{"falcon", "kestrel"} {
				ids, n, err := listed(ctx, tx, p.WorkspaceID, stem)
				if err != nil {
					return err
				}
				if !slices.Equal(ids, []int64{p.ID}) || n != 1 {
					t.Errorf("%s: the list holds %v and counts %d, want [%d] and 1", stem, ids, n, p.ID)
				}
			}
			return tx.CheckPostings(ctx, p.WorkspaceID)
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// wordsIndex is the index of a page holding words, each its own stem: as
// storetest.HeadingStems derives it, from the headings.
func wordsIndex(words ...string) store.PageIndex {
	stems := slices.Sorted(slices.Values(words))
	idx := store.PageIndex{Stems: stems, Headings: strings.Join(stems, " ")}
	for range stems {
		idx.Postings = append(idx.Postings, []byte{1})
	}
	return idx
}

// listed returns the pages the list of stem holds, in order, and how many
// it counts.
func listed(ctx context.Context, tx *store.Tx, ws int64, stem string) ([]int64, int, error) {
	lists, err := tx.PostingLists(ctx, ws, []string{stem})
	if err != nil {
		return nil, 0, err
	}
	var ids []int64
	for page, _, ok := lists[0].Next(); ok; page, _, ok = lists[0].Next() {
		ids = append(ids, page)
	}
	return ids, lists[0].Pages, lists[0].Err()
}

// reindex reindexes p, which must be as the store holds it.
func reindex(ctx context.Context, tx *store.Tx, p *atrium.Page, idx store.PageIndex) error {
	ok, err := tx.ReindexPage(ctx, p, idx)
	if err == nil && !ok {
		err = fmt.Errorf("page %d at revision %d was not reindexed", p.ID, p.Revision)
	}
	return err
}

// A rebuild parses a page outside the transaction that reindexes it: a page
// written, moved or trashed since it was read is left as that write indexed
// it, not overwritten with what it was.
func TestReindexLeavesAPageChangedSinceItWasRead(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		db := storetest.MustOpen(t, e, nil)
		old := wordsIndex("kestrel")
		var ws int64
		pages := map[string]*atrium.Page{}
		err := db.Update(ctx, func(tx *store.Tx) error {
			w, err := tx.CreateWorkspace(ctx, "birds")
			if err != nil {
				return err
			}
			ws = w.ID
			for _, path := range []string{"Written.md", "Moved.md", "Trashed.md", "Kept.md"} {
				p := &atrium.Page{WorkspaceID: ws, Path: path, Title: "Birds", Access: atrium.AccessPublic, Content: "kestrel", ContentHash: "h"}
				if err := tx.InsertPage(ctx, p, old, 0); err != nil {
					return err
				}
				pages[path] = p
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(ctx, func(tx *store.Tx) error { return tx.ClearPostings(ctx) }); err != nil {
			t.Fatal(err)
		}
		read := map[string]atrium.Page{}
		for path, p := range pages {
			read[path] = *p // what the rebuild read
		}
		err = db.Update(ctx, func(tx *store.Tx) error {
			w := pages["Written.md"]
			w.Content, w.ContentHash = "falcon", "h2"
			if err := tx.UpdatePage(ctx, w, wordsIndex("falcon"), 0); err != nil {
				return err
			}
			m := pages["Moved.md"]
			m.Path = "Elsewhere.md"
			if err := tx.UpdatePage(ctx, m, old, 0); err != nil {
				return err
			}
			return tx.DeletePage(ctx, *pages["Trashed.md"])
		})
		if err != nil {
			t.Fatal(err)
		}
		stale := wordsIndex("stale")
		err = db.Update(ctx, func(tx *store.Tx) error {
			for _, path := range []string{"Written.md", "Moved.md", "Trashed.md", "Kept.md"} {
				p := read[path]
				ok, err := tx.ReindexPage(ctx, &p, stale)
				if err != nil {
					return err
				}
				if want := path == "Kept.md"; ok != want {
					t.Errorf("%s: reindexed %v, want %v", path, ok, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.View(ctx, func(tx *store.Tx) error {
			for word, want := range map[string][]int64{
				"falcon":  {pages["Written.md"].ID},
				"kestrel": {pages["Moved.md"].ID},
				"stale":   {pages["Kept.md"].ID},
			} {
				ids, _, err := listed(ctx, tx, ws, word)
				if err != nil {
					return err
				}
				if !slices.Equal(ids, want) {
					t.Errorf("%s: the list holds %v, want %v", word, ids, want)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// A rebuild's clear of the index waits for a writer that has folded its
// pages into the lists to commit (PostgreSQL, where both run at once): the
// clear's DELETE does not see rows inserted after its snapshot, so without
// the wait a writer's new rows, and the postings of every page they share,
// outlived the clear in lists that the new epoch says are empty.
func TestClearingTheIndexWaitsForAWriterBetweenFoldAndCommit(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t, store.Postgres, &store.Options{Conns: 4, PendingPages: 1})
	var ws int64
	err := db.Update(ctx, func(tx *store.Tx) error {
		w, err := tx.CreateWorkspace(ctx, "birds")
		ws = w.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	idx := wordsIndex("kestrel")
	folded, release := make(chan struct{}), make(chan struct{})
	writer := make(chan error, 1)
	go func() {
		writer <- db.Update(ctx, func(tx *store.Tx) error {
			p := atrium.Page{WorkspaceID: ws, Path: "Kestrel.md", Title: "Kestrel", Access: atrium.AccessPublic, Content: "kestrel", ContentHash: "h"}
			if err := tx.InsertPage(ctx, &p, idx, 0); err != nil {
				return err
			}
			if err := tx.FlushIndex(ctx); err != nil {
				return err
			}
			close(folded)
			<-release
			return nil
		})
	}()
	select {
	case <-folded:
	case err := <-writer:
		t.Fatalf("writer: %v", err)
	}
	cleared := make(chan error, 1)
	go func() { cleared <- db.Update(ctx, func(tx *store.Tx) error { return tx.ClearPostings(ctx) }) }()
	select {
	case err := <-cleared:
		close(release)
		t.Fatalf("the clear committed while a writer that folded was open (err %v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-writer; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if err := <-cleared; err != nil {
		t.Fatalf("clear: %v", err)
	}
	err = db.View(ctx, func(tx *store.Tx) error { return tx.CheckPostings(ctx, ws) })
	if err != nil {
		t.Errorf("after the clear: %v", err)
	}
}
