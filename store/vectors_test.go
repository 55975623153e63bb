package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// The vectors' bookkeeping on both engines: a page written is stale until
// embedded at its revision; an edit or a model change makes it stale
// again; a failure waits; a deletion takes its vectors; and the filter a
// vector hit passes keeps out private, trashed and other workspaces' pages.
func TestPageVectors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		db := storetest.MustOpen(t, e, nil)
		var ws, other int64
		var pub, priv, elsewhere atrium.Page
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(db.Update(ctx, func(tx *store.Tx) error {
			w, err := tx.CreateWorkspace(ctx, "vec")
			if err != nil {
				return err
			}
			o, err := tx.CreateWorkspace(ctx, "other")
			if err != nil {
				return err
			}
			ws, other = w.ID, o.ID
			pub = atrium.Page{WorkspaceID: ws, Path: "A.md", Title: "A", Access: atrium.AccessPublic, Content: "# A\ntext", ContentHash: "h1"}
			priv = atrium.Page{WorkspaceID: ws, Path: "B.md", Title: "B", Access: atrium.AccessPrivate, Content: "b", ContentHash: "h2"}
			elsewhere = atrium.Page{WorkspaceID: other, Path: "A.md", Title: "A", Access: atrium.AccessPublic, Content: "a", ContentHash: "h3"}
			for _, p := range []*atrium.Page{&pub, &priv, &elsewhere} {
				if err := tx.InsertPage(ctx, p, store.PageIndex{}, 0); err != nil {
					return err
				}
			}
			return nil
		}))
		stale := func(model string) map[int64]int64 {
			t.Helper()
			out := map[int64]int64{}
			must(db.View(ctx, func(tx *store.Tx) error {
				jobs, err := tx.StaleEmbeddings(ctx, model, 0, 100)
				for _, j := range jobs {
					out[j.Page] = j.Revision
				}
				return err
			}))
			return out
		}
		if s := stale("m"); len(s) != 3 || s[pub.ID] != 1 {
			t.Fatalf("stale = %v, want the three pages at revision 1", s)
		}
		vec := store.SectionVector{Section: 0, Heading: "A", Line: 1, Scale: 0.5, Vec: []byte{1, 0xff, 127}}
		must(db.Update(ctx, func(tx *store.Tx) error {
			for _, p := range []atrium.Page{pub, priv, elsewhere} {
				if ok, err := tx.PutVectors(ctx, store.EmbedJob{Page: p.ID, Workspace: p.WorkspaceID, Revision: 1}, "m", []store.SectionVector{vec, {Section: 1, Scale: 1, Vec: []byte{0, 0, 1}}}); err != nil || !ok {
					return err
				}
			}
			return nil
		}))
		if s := stale("m"); len(s) != 0 {
			t.Errorf("stale after embedding = %v", s)
		}
		if s := stale("other-model"); len(s) != 3 {
			t.Errorf("stale for another model = %v, want all three", s)
		}
		var gen int64
		must(db.View(ctx, func(tx *store.Tx) (err error) {
			gen, err = tx.VectorGeneration(ctx, ws)
			return err
		}))
		if gen != 2 {
			t.Errorf("generation %d after two pages' vectors, want 2", gen)
		}
		type row struct {
			page  int64
			sec   int
			scale float32
			vec   string
		}
		var rows []row
		must(db.View(ctx, func(tx *store.Tx) error {
			return tx.EachVector(ctx, ws, "m", func(page int64, section int, scale float32, v []byte) error {
				rows = append(rows, row{page, section, scale, string(v)})
				return nil
			})
		}))
		if len(rows) != 4 || rows[0] != (row{pub.ID, 0, 0.5, "\x01\xff\x7f"}) || rows[3].page != priv.ID {
			t.Errorf("vectors = %v", rows)
		}
		// An edit makes the page stale again; a failure makes it wait.
		must(db.Update(ctx, func(tx *store.Tx) error {
			pub.Content = "# A\nnew text"
			return tx.UpdatePage(ctx, &pub, store.PageIndex{}, 0)
		}))
		if s := stale("m"); len(s) != 1 || s[pub.ID] != 2 {
			t.Errorf("stale after an edit = %v, want A at revision 2", s)
		}
		must(db.Update(ctx, func(tx *store.Tx) error {
			return tx.EmbedFailed(ctx, store.EmbedJob{Page: pub.ID, Workspace: ws}, "m", tx.Now().Add(time.Hour))
		}))
		if s := stale("m"); len(s) != 0 {
			t.Errorf("stale while waiting = %v", s)
		}
		must(db.View(ctx, func(tx *store.Tx) error {
			at, err := tx.NextEmbedRetry(ctx)
			if at.IsZero() || time.Until(at) < 50*time.Minute {
				t.Errorf("next retry %v", at)
			}
			done, waiting, err2 := tx.EmbedCounts(ctx, ws, "m")
			if done != 1 || waiting != 1 {
				t.Errorf("counts %d done %d waiting, want 1 and 1", done, waiting)
			}
			return cmpErr(err, err2)
		}))
		// The filter of vector hits.
		f := func(member bool) []int64 {
			var got []int64
			must(db.View(ctx, func(tx *store.Tx) (err error) {
				got, err = tx.FilterPagesIn(ctx, ws, []int64{pub.ID, priv.ID, elsewhere.ID, 999999}, store.CandidateFilter{IncludePrivate: member})
				return err
			}))
			return got
		}
		if got := f(true); len(got) != 2 {
			t.Errorf("member's filter = %v, want A and B", got)
		}
		if got := f(false); len(got) != 1 || got[0] != pub.ID {
			t.Errorf("public filter = %v, want A", got)
		}
		must(db.Update(ctx, func(tx *store.Tx) error { return tx.TrashPage(ctx, pub, 0) }))
		if got := f(true); len(got) != 1 || got[0] != priv.ID {
			t.Errorf("filter after trashing A = %v, want B", got)
		}
		// Deleting a page takes its vectors; a late write for it is dropped.
		must(db.Update(ctx, func(tx *store.Tx) error { return tx.DeletePage(ctx, priv) }))
		must(db.Update(ctx, func(tx *store.Tx) error {
			ok, err := tx.PutVectors(ctx, store.EmbedJob{Page: priv.ID, Workspace: ws, Revision: 1}, "m", []store.SectionVector{vec})
			if ok {
				t.Error("vectors written for a deleted page")
			}
			return err
		}))
		n := 0
		must(db.View(ctx, func(tx *store.Tx) error {
			return tx.EachVector(ctx, ws, "m", func(page int64, _ int, _ float32, _ []byte) error {
				if page == priv.ID {
					t.Errorf("deleted page %d still has vectors", page)
				}
				n++
				return nil
			})
		}))
		if n != 2 {
			t.Errorf("%d vectors left, want A's two", n)
		}
	})
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
