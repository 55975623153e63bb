package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Two rebuilds of the index can interleave (two processes started on an
// older index each rebuild it): one empties the index after the other has
// indexed a page again, which the other then indexes once more, without
// deleting its tokens first (ClearPostings emptied the full-text index). The
// page stays in the full-text index once, and the rebuild does not fail.
func TestReindexAPageTwiceAfterTheIndexWasEmptied(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		db := storetest.MustOpen(t, e, nil)
		idx := store.PageIndex{Tokens: []string{"kestrel", "falcon"}}
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
			func(tx *store.Tx) error { return tx.ClearPostings(ctx) },        // the first rebuild
			func(tx *store.Tx) error { return tx.ClearPostings(ctx) },        // the second
			func(tx *store.Tx) error { return tx.ReindexPage(ctx, &p, idx) }, // the first, on
			func(tx *store.Tx) error { return tx.ReindexPage(ctx, &p, idx) }, // the second, on
		} {
			if err := db.Update(ctx, step); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		err = db.View(ctx, func(tx *store.Tx) error {
			for _, m := range []store.Match{{AllOf: []string{"kestrel"}}, {AnyOf: []string{"falcon", "kestrel"}}} {
				ids, err := tx.SearchCandidates(ctx, p.WorkspaceID, m, store.CandidateFilter{IncludePrivate: true})
				if err != nil {
					return err
				}
				if !slices.Equal(ids, []int64{p.ID}) {
					t.Errorf("%+v: candidates %v, want [%d]", m, ids, p.ID)
				}
				n, err := tx.CountCandidates(ctx, p.WorkspaceID, m, store.CandidateFilter{IncludePrivate: true})
				if err != nil {
					return err
				}
				if n != 1 {
					t.Errorf("%+v: %d candidates counted, want 1", m, n)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
