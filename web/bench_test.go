package web_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
)

// BenchmarkRenderPage renders a 5 KB page with 50 review threads for a
// member, on SQLite: the target is p50 ≤ 10 ms. It also reports the
// first page's weight without the page's own text: HTML, CSS and JS.
func BenchmarkRenderPage(b *testing.B) {
	s := newSite(b)
	ctx, docs, rev := s.ctx, s.docs, s.rev
	var body strings.Builder
	body.WriteString("# Design\n\n")
	for i := 0; body.Len() < 5000; i++ {
		fmt.Fprintf(&body, "## Part %d\n\nParagraph %d links [[Other %d]] and says something worth a comment.\n\n", i, i, i)
	}
	if _, err := docs.WritePage(ctx, pages.WriteRequest{Path: "Design.md", Content: body.String()}); err != nil {
		b.Fatal(err)
	}
	for i := range 50 {
		if _, _, err := rev.Create(ctx, review.CreateRequest{DocPath: "Design.md", Content: fmt.Sprintf("thread %d", i), Quote: &atrium.Quote{Exact: fmt.Sprintf("Paragraph %d links", i%10)}, Status: atrium.StatusSubmitted}); err != nil {
			b.Fatal(err)
		}
	}
	get := s.get
	code, html := get("/pages/Design.md")
	if code != 200 || strings.Count(html, `class="thread `) != 50 {
		b.Fatalf("page: %d, %d threads", code, strings.Count(html, `class="thread `))
	}
	weight := 0
	for _, asset := range []string{"/static/atrium.css", "/static/live.js", "/static/review.js", "/static/tree.js"} {
		_, s := get(asset)
		weight += len(s)
	}
	_, empty := get("/") // the home page of a quiet workspace: the shell alone
	var lat []time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if code, _ := get("/pages/Design.md"); code != 200 {
			b.Fatal(code)
		}
		lat = append(lat, time.Since(t0))
	}
	b.ReportMetric(float64(weight+len(empty))/1024, "KiB-first-page")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
