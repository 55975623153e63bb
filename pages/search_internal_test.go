package pages

import (
	"context"
	"path"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Ranking a query word by word and stopping early must give exactly what
// scoring every candidate gives.
func TestRankByTermEqualsRankAll(t *testing.T) {
	ctx := context.Background()
	db := storetest.MustOpen(t, store.SQLite, nil)
	a := identitytest.Agent(t, identitytest.New(t, db), "t", "")
	ctx = atrium.NewContextWithActor(ctx, a)
	svc := New(db, nil)
	err := vaultgen.Generate(3, 600, func(p vaultgen.Page) error {
		_, err := svc.WritePage(ctx, WriteRequest{Path: p.Path, Content: p.Content})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	unread := 0
	for _, query := range []string{"storage migration review plan", "fortress moat", "arch* kubernetes", "note -design", vaultgen.Marker(100) + " database",
		// Rare words beside common ones: ranking settles without the
		// common words' lists, and counts the matches instead.
		"how do we plan the storage migration review", vaultgen.Marker(100) + " the plan storage review note",
		vaultgen.Marker(10) + " " + vaultgen.Marker(100) + " database storage -fortress", "the",
		// The speed benchmark's question of eight common words, and words
		// whose stems carry the mark of a cut silent e (note → not_).
		"what is our plan for the storage migration and the release review with the team budget",
		"notes on the planned release -not", "noting pages"} {
		for _, c := range []struct {
			k, cheapDF int
			f          store.CandidateFilter
		}{
			{1, 0, store.CandidateFilter{IncludePrivate: true}}, {5, 0, store.CandidateFilter{IncludePrivate: true}},
			{40, 0, store.CandidateFilter{IncludePrivate: true}}, {5, 1000, store.CandidateFilter{IncludePrivate: true}},
			{40, 1000, store.CandidateFilter{IncludePrivate: true}},
			// Filters count and read through the pages table instead.
			{5, 0, store.CandidateFilter{IncludePrivate: true, Prefix: store.PathKey(path.Dir(vaultgen.PathAt(600, 0))) + "/"}},
			{5, 0, store.CandidateFilter{}}, // public pages only
		} {
			k := c.k
			q, err := search.ParseQuery(query)
			if err != nil {
				t.Fatal(err)
			}
			words, ok := onlyOptionalWords(q)
			if !ok {
				t.Fatalf("%q is not a query of optional words", query)
			}
			var byTerm, all []hit
			var totalByTerm, totalAll SearchResult
			err = db.View(ctx, func(tx *store.Tx) error {
				rk, err := newRanking(ctx, tx, a.Workspace.ID, q, &dfCache{})
				if err != nil {
					return err
				}
				rk.cheapDF = c.cheapDF
				f := c.f
				t1, t2 := newTopK(k), newTopK(k)
				if err := rk.rankByTerm(ctx, words, f, t1, &totalByTerm); err != nil {
					return err
				}
				if err := rk.rankAll(ctx, f, t2, &totalAll); err != nil {
					return err
				}
				byTerm, all = t1.sorted(), t2.sorted()
				unread += rk.unread
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(all, byTerm, cmp.AllowUnexported(hit{})); diff != "" || totalAll.Total != totalByTerm.Total {
				t.Errorf("%q top %d (cheap lists up to %d): totals %d vs %d; (-all +byTerm):\n%s", query, k, c.cheapDF, totalAll.Total, totalByTerm.Total, diff)
			}
		}
	}
	if unread == 0 {
		t.Error("no query settled its top without reading every list: the test misses that path")
	}
}
