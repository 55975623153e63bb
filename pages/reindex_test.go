package pages_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

var reindexPages = map[string]string{
	"Ops/Backups.md":      "---\ntags: [ops]\n---\n# Backups\n\nDatabase backups run nightly at two.\n",
	"Eng/Schema.md":       "# Schema\n\nThe database schema has three tables. See [[Backups]].\n",
	"Eng/Architecture.md": "# Architecture\n\nSee the architecture diagram below.\n",
}

var reindexQueries = []string{"database", "nightly backups", "arch*", `"three tables"`}

// openEnv opens the store at dsn with a writer of workspace default.
func openEnv(t *testing.T, dsn string) *env {
	t.Helper()
	db, err := store.Open(context.Background(), dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return newEnv(t, db)
}

func (v *env) searchAll(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, q := range reindexQueries {
		out[q] = paths(v.search(t, pages.SearchRequest{Query: q}))
	}
	return out
}

func ensureIndex(t *testing.T, v *env, want int) {
	t.Helper()
	n, err := v.svc.EnsureIndex(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Fatalf("EnsureIndex rebuilt %d pages, want %d", n, want)
	}
}

// The migration that changed the index's form starts it empty; the next
// start must rebuild it from the pages, so that an upgraded workspace finds
// what it found before — prefixes too, which need the words it fills.
func TestSearchIndexIsRebuiltAfterTheMigrationResetsIt(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	v := openEnv(t, dsn)
	ensureIndex(t, v, 0) // a new store: nothing to rebuild
	for p, c := range reindexPages {
		v.write(t, p, c)
	}
	want := v.searchAll(t)
	if len(want["database"]) != 2 || len(want["arch*"]) != 1 {
		t.Fatalf("before: %v", want)
	}
	ensureIndex(t, v, 0) // current: one read, no rebuild
	v.db.Close()

	// Run the migration's reset again, as an upgrade from the version before
	// it would, with its new table of words empty.
	raw, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	migration, err := os.ReadFile("../store/migrations/sqlite/0029_search_words.sql")
	if err != nil {
		t.Fatal(err)
	}
	_, reset, ok := strings.Cut(string(migration), "DROP TABLE page_fts;")
	if !ok {
		t.Fatal("migration 0029 no longer drops page_fts: find its reset anew")
	}
	if _, err := raw.Exec("DELETE FROM search_words;" + reset); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	v = openEnv(t, dsn)
	if got := v.searchAll(t); len(got["database"]) != 0 {
		t.Fatalf("the migration left the index with %v; the test no longer tests a rebuild", got)
	}
	ensureIndex(t, v, len(reindexPages))
	if diff := cmp.Diff(want, v.searchAll(t)); diff != "" {
		t.Errorf("search after the rebuild (-before +after):\n%s", diff)
	}
	v.checkPostings(t)
	links, err := v.svc.Links(v.ctx, "Ops/Backups.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(links.Incoming) != 1 {
		t.Errorf("incoming links after the rebuild: %+v", links.Incoming)
	}
	ensureIndex(t, v, 0)
}

// Every workspace's tokens share one index, keyed by the workspace: no query
// of one workspace — word, prefix or phrase — may reach another's pages, even
// where the keys look alike (workspace 1's "2x" and workspace 12's "x").
func TestSearchKeepsWorkspacesApart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		ctx := context.Background()
		var other *atrium.Actor
		for i := range 11 {
			name := fmt.Sprintf("team%d", i)
			if _, err := v.ids.CreateWorkspace(ctx, name, ""); err != nil {
				t.Fatal(err)
			}
			a, err := v.ids.LocalActor(ctx, "writer", name, atrium.KindAgent)
			if err != nil {
				t.Fatal(err)
			}
			other = a
		}
		if other.Workspace.ID != 12 {
			t.Fatalf("the last workspace is %d, want 12", other.Workspace.ID)
		}
		one := v.ctx
		twelve := atrium.NewContextWithActor(ctx, other)
		write := func(ctx context.Context, path, content string) {
			if _, err := v.svc.WritePage(ctx, pages.WriteRequest{Path: path, Content: content}); err != nil {
				t.Fatal(err)
			}
		}
		write(one, "One.md", "# One\n\n2alpha shared words\n")
		write(twelve, "Twelve.md", "# Twelve\n\nalpha shared words\n")
		for _, c := range []struct {
			ctx   context.Context
			query string
			want  []string
		}{
			{one, "alpha", nil},
			{one, "alpha*", nil},
			{one, "2a*", []string{"One.md"}},
			{one, "2alpha", []string{"One.md"}},
			{one, "shared", []string{"One.md"}},
			{one, `"shared words"`, []string{"One.md"}},
			{twelve, "2alpha", nil},
			{twelve, "alpha*", []string{"Twelve.md"}},
			{twelve, "shared", []string{"Twelve.md"}},
			{twelve, "+shared -alpha", nil},
		} {
			res, err := v.svc.Search(c.ctx, pages.SearchRequest{Query: c.query})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, paths(res)); diff != "" {
				t.Errorf("workspace %d, %q (-want +got):\n%s", atrium.ActorFromContext(c.ctx).Workspace.ID, c.query, diff)
			}
			if res.Total != len(c.want) {
				t.Errorf("workspace %d, %q: total %d, want %d", atrium.ActorFromContext(c.ctx).Workspace.ID, c.query, res.Total, len(c.want))
			}
		}
	})
}

// checkPostings fails t unless the workspace's postings index is exactly
// what its pages hold.
func (v *env) checkPostings(t *testing.T) {
	t.Helper()
	ws := atrium.ActorFromContext(v.ctx).Workspace.ID
	if err := v.db.View(v.ctx, func(tx *store.Tx) error { return tx.CheckPostings(v.ctx, ws) }); err != nil {
		t.Errorf("postings index: %v", err)
	}
}

// A rebuild empties the index at once, then indexes every page again; a page
// written between the two (by another process, or before a rebuild cut
// short starts over) is indexed once, not twice, in the postings and in the
// full-text index.
func TestRebuildAfterAWriteSinceTheIndexWasEmptied(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		for p, c := range reindexPages {
			v.write(t, p, c)
		}
		want := v.searchAll(t)
		if err := v.db.Update(v.ctx, func(tx *store.Tx) error { return tx.ClearPostings(v.ctx) }); err != nil {
			t.Fatal(err)
		}
		v.write(t, "Eng/Architecture.md", reindexPages["Eng/Architecture.md"]+"\nArchitecture reviews happen monthly.\n")
		if err := v.db.Update(v.ctx, func(tx *store.Tx) error { return tx.SetMeta(v.ctx, "docs.index_version", "old") }); err != nil {
			t.Fatal(err)
		}
		ensureIndex(t, v, len(reindexPages))
		if diff := cmp.Diff(want, v.searchAll(t)); diff != "" {
			t.Errorf("search after the rebuild (-before +after):\n%s", diff)
		}
		if got := paths(v.search(t, pages.SearchRequest{Query: "monthly"})); !slices.Equal(got, []string{"Eng/Architecture.md"}) {
			t.Errorf("monthly: %v", got)
		}
		v.checkPostings(t)
	})
}

// A page's stems derive from its stored text whether the store keeps it
// packed or as written — a short text kept as written may begin with the
// byte that marks a packed one — so a rewrite takes it out of every list.
func TestRewritesLeaveNoStalePostings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		long := strings.Repeat("The kestrel hovers over the ridge at dawn. ", 40)
		for _, c := range []string{"\x01kestrel short", long, "\x01" + long} {
			v.write(t, "Bird.md", c)
			v.write(t, "Bird.md", "# Plover\n\nnothing else")
			if got := paths(v.search(t, pages.SearchRequest{Query: "kestrel"})); len(got) != 0 {
				t.Errorf("after rewriting %.20q: kestrel finds %v", c, got)
			}
			v.checkPostings(t)
		}
	})
}

// A rebuild over an index of an older version (not one a migration emptied)
// replaces every page's postings: none is left twice or stale, also for a
// page trashed before it.
func TestRebuildReplacesAnOlderIndex(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		for p, c := range reindexPages {
			v.write(t, p, c)
		}
		if _, err := v.svc.DeletePage(v.ctx, "Eng/Schema.md"); err != nil {
			t.Fatal(err)
		}
		want := v.searchAll(t)
		if err := v.db.Update(v.ctx, func(tx *store.Tx) error { return tx.SetMeta(v.ctx, "docs.index_version", "old") }); err != nil {
			t.Fatal(err)
		}
		ensureIndex(t, v, len(reindexPages)-1)
		if diff := cmp.Diff(want, v.searchAll(t)); diff != "" {
			t.Errorf("search after the rebuild (-before +after):\n%s", diff)
		}
		v.checkPostings(t)
	})
}

// oldIndexPages writes reindexPages and three more, and marks the index as
// built by an older version: the next EnsureIndex rebuilds every page. It
// returns what the searches found before.
func (v *env) oldIndexPages(t *testing.T) map[string][]string {
	t.Helper()
	for p, c := range reindexPages {
		v.write(t, p, c)
	}
	for i := range 3 {
		v.write(t, fmt.Sprintf("Notes/N%d.md", i), fmt.Sprintf("# Note %d\n\nA note on the database, number %d.\n", i, i))
	}
	want := v.searchAll(t)
	if err := v.db.Update(v.ctx, func(tx *store.Tx) error { return tx.SetMeta(v.ctx, "docs.index_version", "old") }); err != nil {
		t.Fatal(err)
	}
	return want
}

// A rebuild cut short (the process stopped, or was killed, between two of
// its transactions) goes on at the next start from where it stopped, rather
// than emptying the index and starting over: at a million pages a rebuild
// is minutes long, and a process that agents start and stop may never see
// one through. Meanwhile searches find the pages reindexed so far, and say
// how far the rebuild is.
func TestRebuildGoesOnWhereItWasCutShort(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		dsn := storetest.DSN(t, e)
		v := openEnv(t, dsn)
		ensureIndex(t, v, 0)
		want := v.oldIndexPages(t)
		pages.SetReindexBatch(v.svc, 2, 0)
		for i, wantN := range []int{0, 2} { // started (the index emptied), then one batch
			n, finished, err := pages.RebuildStep(context.Background(), v.svc)
			if err != nil || finished || n != wantN {
				t.Fatalf("step %d: %d pages reindexed, finished %v, %v; want %d, not finished", i, n, finished, err, wantN)
			}
			res := v.search(t, pages.SearchRequest{Query: "database"})
			note := fmt.Sprintf("the search index is being rebuilt after an upgrade (%d of 6 pages so far)", wantN)
			if !strings.HasPrefix(res.Note, note) {
				t.Errorf("step %d: note %q, want it to start %q", i, res.Note, note)
			}
			if len(res.Hits) > wantN {
				t.Errorf("step %d: %d hits with %d pages reindexed", i, len(res.Hits), wantN)
			}
		}
		// A page the rebuild has not reached yet is written meanwhile.
		v.write(t, "Notes/N2.md", "# Note 2\n\nA note on the database, rewritten monthly.\n")
		v.db.Close()

		w := openEnv(t, dsn)
		pages.SetReindexBatch(w.svc, 2, 0)
		ensureIndex(t, w, 4)
		want["database"] = w.searchAll(t)["database"] // N2 is still about it
		if diff := cmp.Diff(want, w.searchAll(t)); diff != "" {
			t.Errorf("search after the rebuild (-before +after):\n%s", diff)
		}
		res := w.search(t, pages.SearchRequest{Query: "monthly"})
		if got := paths(res); !slices.Equal(got, []string{"Notes/N2.md"}) || res.Note != "" {
			t.Errorf("monthly: %v, note %q", got, res.Note)
		}
		w.checkPostings(t)
	})
}

// Processes that start on an older index (a server, and agents' stdio
// servers beside it) rebuild it together: each batch is reindexed by one of
// them, once, and the index ends whole.
func TestProcessesRebuildTheIndexTogether(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		dsn := storetest.DSN(t, e)
		v := openEnv(t, dsn)
		ensureIndex(t, v, 0)
		want := v.oldIndexPages(t)
		procs := []*env{openEnv(t, dsn), openEnv(t, dsn), openEnv(t, dsn)}
		counts := make([]int, len(procs))
		errs := make([]error, len(procs))
		var wg sync.WaitGroup
		for i, p := range procs {
			pages.SetReindexBatch(p.svc, 1, 10*time.Millisecond)
			wg.Go(func() { counts[i], errs[i] = p.svc.EnsureIndex(context.Background()) })
		}
		wg.Wait()
		total := 0
		for i := range procs {
			if errs[i] != nil {
				t.Fatalf("process %d: %v", i, errs[i])
			}
			total += counts[i]
		}
		if total != 6 {
			t.Errorf("the processes reindexed %v pages, %d in all; want 6 in all", counts, total)
		}
		if diff := cmp.Diff(want, v.searchAll(t)); diff != "" {
			t.Errorf("search after the rebuild (-before +after):\n%s", diff)
		}
		v.checkPostings(t)
	})
}

// In a rolling upgrade an older Atrium runs beside a newer one, whose index
// is of a later version, built or being built: the older one leaves it as it
// is, rather than the two emptying it in turn for ever.
func TestAnOlderAtriumLeavesANewerIndexAlone(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		want := v.oldIndexPages(t)
		for _, meta := range []map[string]string{
			{"docs.index_version": "99"},
			{"docs.index_version": "7", "docs.index_rebuild": "99 2 2 6"},
		} {
			if err := v.db.Update(v.ctx, func(tx *store.Tx) error {
				for k, val := range meta {
					if err := tx.SetMeta(v.ctx, k, val); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			ensureIndex(t, v, 0)
			if diff := cmp.Diff(want, v.searchAll(t)); diff != "" {
				t.Errorf("%v: search (-before +after):\n%s", meta, diff)
			}
			if note := v.search(t, pages.SearchRequest{Query: "database"}).Note; note != "" {
				t.Errorf("%v: note %q", meta, note)
			}
		}
	})
}
