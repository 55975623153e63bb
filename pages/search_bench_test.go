package pages_test

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// BenchmarkSearchSpeed is the service's search over a generated vault
// (internal/vaultgen, as `atrium dev gen-vault` makes it) of
// ATRIUM_BENCH_PAGES pages (default 100000), built once into the temp
// folder (or ATRIUM_BENCH_DB): a rare word, and questions of common words.
// Figures are p50 and p99, reported, never asserted.
//
//	go test ./pages -run '^$' -bench SearchSpeed -benchtime 30x
//	psql -h 127.0.0.1 -U postgres test -c 'CREATE SCHEMA bench' &&
//	  ATRIUM_BENCH_DB='postgres://postgres@127.0.0.1:5432/test?search_path=bench' go test ./pages -run '^$' -bench SearchSpeed -benchtime 30x
//
// capped is 1 when the search stopped at maxScored pages and said so: its
// top is then not the exact one.
//
// question-8-synonyms is question-8 with a synonyms page that gives three of
// its words others of the vault's common words, a phrase among them;
// question-8-synonyms-every-word gives each of its words two or three: its
// terms then read the lists of all their forms.
func BenchmarkSearchSpeed(b *testing.B) {
	svc, ctx := searchBenchVault(b, benchPages())
	const question8 = "what is our plan for the storage migration and the release review with the team budget"
	for _, c := range []struct{ name, q, synonyms string }{
		{"rare-word", vaultgen.Marker(1000), ""},
		{"question-4", "how do we plan the storage migration review", ""},
		{"question-8", question8, ""},
		{"question-8-synonyms", question8, "- plan, roadmap\n- migration, upgrade, schema change\n- budget, expense\n"},
		{"question-8-synonyms-every-word", question8, "- plan, roadmap, planning\n- storage, database, data service\n- migration, upgrade\n" +
			"- release, rollout, deploy\n- review, audit, retrospective\n- team, headcount\n- budget, expense, invoice\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			setSynonyms(b, svc, ctx, c.synonyms)
			req := pages.SearchRequest{Query: c.q, Limit: 10}
			first, err := svc.Search(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			// A search that stopped before its ranking was exact says so
			// in its note (too many pages in reach): fast then is not done.
			capped := 0.0
			if first.Note != "" {
				capped = 1
			}
			var lat []time.Duration
			cpu0 := cpuTime()
			for b.Loop() {
				t0 := time.Now()
				if _, err := svc.Search(ctx, req); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(len(lat)), "cpu-µs/op")
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(capped, "capped")
		})
	}
}

// setSynonyms makes text the vault's synonyms page, or takes the page away
// when text is empty.
func setSynonyms(b *testing.B, svc *pages.Service, ctx context.Context, text string) {
	b.Helper()
	var err error
	if text != "" {
		_, err = svc.WritePage(ctx, pages.WriteRequest{Path: pages.SynonymsPath, Content: text, Overwrite: true})
	} else if _, err = svc.DeletePage(ctx, pages.SynonymsPath); atrium.ErrorCode(err) == atrium.ENotFound {
		err = nil
	}
	if err != nil {
		b.Fatal(err)
	}
}

// benchVaultSeed is the seed of the generated vault the benchmarks read.
const benchVaultSeed = 42

// benchPages is the size of the generated vault: ATRIUM_BENCH_PAGES, or 100,000.
func benchPages() int {
	if v, err := strconv.Atoi(os.Getenv("ATRIUM_BENCH_PAGES")); err == nil && v > 0 {
		return v
	}
	return 100000
}

// searchBenchVault opens the generated vault of n pages, building it the
// first time: in the temp folder, or, when ATRIUM_BENCH_DB names a store (a
// PostgreSQL URL whose search_path is a schema of its own), there.
func searchBenchVault(b *testing.B, n int) (*pages.Service, context.Context) {
	const seed = benchVaultSeed
	dsn, ready := os.Getenv("ATRIUM_BENCH_DB"), ""
	built := false
	if dsn == "" {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("atrium-search-bench-seed%d-n%d", seed, n))
		ready = filepath.Join(dir, "ready")
		_, err := os.Stat(ready)
		if built = err == nil; !built {
			os.RemoveAll(dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		dsn = filepath.Join(dir, "atrium.db")
	}
	db, ctx := openBenchStore(b, dsn)
	if ready == "" {
		var have int
		if err := db.View(ctx, func(tx *store.Tx) (err error) { have, err = tx.PageCount(ctx, 0); return err }); err != nil {
			b.Fatal(err)
		}
		if built = have == n; !built && have > 0 {
			b.Fatalf("%s holds %d pages, not a vault of %d: give a store of its own", dsn, have, n)
		}
	}
	svc := pages.New(db, nil)
	// As the binary does on opening a store: rebuilds the index of a vault
	// built by an older index version.
	if _, err := svc.EnsureIndex(ctx); err != nil {
		b.Fatal(err)
	}
	if built {
		return svc, ctx
	}
	start := time.Now()
	files := func(yield func(pages.File) bool) {
		for i := range n {
			p := vaultgen.PageAt(seed, n, i)
			if !yield(pages.File{Path: p.Path, Content: p.Content}) {
				return
			}
		}
	}
	if res, err := svc.Import(ctx, iter.Seq[pages.File](files), pages.ImportOptions{}); err != nil || res.Created != n {
		b.Fatalf("build vault: %+v %v", res, err)
	}
	b.Logf("built a vault of %d pages in %s (kept in %s)", n, time.Since(start).Round(time.Millisecond), dsn)
	if ready != "" {
		if err := os.WriteFile(ready, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return svc, ctx
}

// openBenchStore opens the store at dsn (an SQLite file or a PostgreSQL
// URL), closed when b ends, and a context of an agent of its default
// workspace.
func openBenchStore(b *testing.B, dsn string) (*store.DB, context.Context) {
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ids := identity.New(db, nil)
	b.Cleanup(func() { ids.Close() })
	if _, err := ids.Bootstrap(ctx, false); err != nil {
		b.Fatal(err)
	}
	actor, err := ids.LocalActor(ctx, "bench", "", atrium.KindAgent)
	if err != nil {
		b.Fatal(err)
	}
	return db, atrium.NewContextWithActor(ctx, actor)
}

// BenchmarkWritePage100k rewrites pages of the generated vault with another
// page's text, as an editor saving a page: the write with everything it
// indexes (links, full-text tokens, the postings of each of its words).
// Each page gets its own text back afterwards, unmeasured, so that the
// vault the search benchmark reads stays the same. Figures are p50 and p99,
// reported, never asserted.
//
//	go test ./pages -run '^$' -bench WritePage100k -benchtime 300x
func BenchmarkWritePage100k(b *testing.B) {
	n := benchPages()
	svc, ctx := searchBenchVault(b, n)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		j := (i * 7919) % n
		path := vaultgen.PathAt(n, j)
		content := vaultgen.PageAt(99, n, i%n).Content
		t0 := time.Now()
		if _, err := svc.WritePage(ctx, pages.WriteRequest{Path: path, Content: content, Overwrite: true}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		b.StopTimer()
		if _, err := svc.WritePage(ctx, pages.WriteRequest{Path: path, Content: vaultgen.PageAt(benchVaultSeed, n, j).Content, Overwrite: true}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
