package pages_test

import (
	"iter"
	"path/filepath"
	"testing"

	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/pages"
)

// BenchmarkImport imports a generated vault of ATRIUM_BENCH_PAGES pages
// (default 100000) into a new SQLite store, as `atrium import` does.
//
//	ATRIUM_BENCH_PAGES=20000 go test ./pages -run '^$' -bench Import -benchtime 1x
func BenchmarkImport(b *testing.B) {
	n := benchPages()
	for b.Loop() {
		db, ctx := openBenchStore(b, filepath.Join(b.TempDir(), "atrium.db"))
		files := func(yield func(pages.File) bool) {
			for i := range n {
				p := vaultgen.PageAt(1, n, i)
				if !yield(pages.File{Path: p.Path, Content: p.Content}) {
					return
				}
			}
		}
		if res, err := pages.New(db, nil).Import(ctx, iter.Seq[pages.File](files), pages.ImportOptions{}); err != nil || res.Created != n {
			b.Fatalf("import: %+v %v", res, err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "pages/s")
}
