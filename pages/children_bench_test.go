package pages_test

import (
	"slices"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/pages"
)

// BenchmarkChildren100k lists windows of 50 children over the generated
// vault of the search benchmark (100,000 pages by default): the root, the
// root's next window, and the folder of the deepest page.
//
//	go test ./pages -run '^$' -bench Children100k -benchtime 500x
func BenchmarkChildren100k(b *testing.B) {
	svc, ctx := searchBenchVault(b, benchPages())
	first, err := svc.Children(ctx, pages.ChildrenRequest{})
	if err != nil || len(first.Children) == 0 {
		b.Fatal(first, err)
	}
	deep := ""
	for folder := ""; ; {
		res, err := svc.Children(ctx, pages.ChildrenRequest{Folder: folder})
		if err != nil {
			b.Fatal(err)
		}
		i := slices.IndexFunc(res.Children, func(c pages.Child) bool { return c.Folder != "" })
		if i < 0 {
			deep = folder
			break
		}
		folder = res.Children[i].Folder
	}
	for _, c := range []struct {
		name string
		req  pages.ChildrenRequest
	}{
		{"root", pages.ChildrenRequest{}},
		{"root-next", pages.ChildrenRequest{Cursor: first.NextCursor}},
		{"deep-folder", pages.ChildrenRequest{Folder: deep}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := svc.Children(ctx, c.req); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}
