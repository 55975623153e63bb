package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/web"
)

// BenchmarkRenderPage renders a 5 KB page with 50 review threads for a
// member, on SQLite: the target is p50 ≤ 10 ms. It also reports the
// first page's weight without the page's own text: HTML, CSS and JS.
func BenchmarkRenderPage(b *testing.B) {
	db := storetest.MustOpen(b, store.SQLite, &store.Options{Conns: 4})
	ids := identitytest.New(b, db)
	docs := pages.New(db, nil)
	rev := review.New(db, docs, nil)
	secret, _, err := ids.CreateToken(context.Background(), identity.TokenRequest{Principal: "dede", Workspace: atrium.DefaultWorkspace, Role: atrium.RoleAdmin})
	if err != nil {
		b.Fatal(err)
	}
	a, err := ids.Authenticate(context.Background(), secret, "")
	if err != nil {
		b.Fatal(err)
	}
	ctx := atrium.NewContextWithActor(context.Background(), a)
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
	h := &web.Handler{Auth: &authn.Authenticator{Mode: authn.ModeToken, Identity: ids, Logger: slog.Default()}, Docs: docs, Review: rev, Activity: activity.New(db), Logger: slog.Default()}
	mux := http.NewServeMux()
	h.Register(mux)
	get := func(path string) (int, string) {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		out, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, string(out)
	}
	code, html := get("/pages/Design.md")
	if code != 200 || strings.Count(html, `class="thread `) != 50 {
		b.Fatalf("page: %d, %d threads", code, strings.Count(html, `class="thread `))
	}
	weight := 0
	for _, asset := range []string{"/static/atrium.css", "/static/live.js", "/static/review.js"} {
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
