package pages_test

import (
	"testing"

	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// BenchmarkReadPage is the service's part of read_page.
func BenchmarkReadPage(b *testing.B) {
	v := mustEnv(b, store.SQLite)
	p := vaultgen.PageAt(1, 100, 7)
	v.write(b, p.Path, p.Content)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: p.Path}); err != nil {
			b.Fatal(err)
		}
	}
}
