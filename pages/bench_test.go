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

// BenchmarkWritePage is the service's part of write_page: one page of
// about 2.5 KB rewritten, each time with other words, as the commit floor's
// comparison in issue 24 measures it from outside.
func BenchmarkWritePage(b *testing.B) {
	v := mustEnv(b, store.SQLite)
	pages := make([]string, 64)
	for i := range pages {
		pages[i] = vaultgen.PageAt(1, 100, i).Content
	}
	v.write(b, "Notes/Floor.md", pages[0])
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		v.write(b, "Notes/Floor.md", pages[i%len(pages)])
	}
}
