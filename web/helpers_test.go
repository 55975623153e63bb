package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/web"
)

// site is the browser surface in process over a fresh SQLite store, with an
// admin's token, and a gateway of one disabled server (so that /gateway has
// something to show, and no process to start).
type site struct {
	mux    *http.ServeMux
	secret string
	ctx    context.Context // the admin, for the services
	docs   *pages.Service
	rev    *review.Service
	ids    *identity.Service
	gw     *gateway.Gateway
	svc    *services.Services
}

func newSite(tb testing.TB) *site {
	tb.Helper()
	return newSiteWithGateway(tb, map[string]any{"off": map[string]any{"command": "true", "disabled": true}})
}

// newSiteWithGateway is newSite with a gateway of servers (nil: none).
func newSiteWithGateway(tb testing.TB, servers map[string]any) *site {
	tb.Helper()
	var gw *gateway.Gateway
	if servers != nil {
		path := filepath.Join(tb.TempDir(), "gateway.json")
		b, _ := json.Marshal(map[string]any{"mcpServers": servers})
		if err := os.WriteFile(path, b, 0o600); err != nil {
			tb.Fatal(err)
		}
		var err error
		if gw, err = gateway.Start(path, gateway.Options{Logger: slog.New(slog.DiscardHandler), BackoffBase: 50 * time.Millisecond, BackoffMax: time.Second, StopGrace: 300 * time.Millisecond}); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(gw.Close)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := gw.Settled(ctx); err != nil {
			tb.Fatal(err)
		}
	}
	db := storetest.MustOpen(tb, store.SQLite, &store.Options{Conns: 4})
	svc := servicestest.Over(tb, db)
	ids, docs, rev := svc.Identity, svc.Pages, svc.Review
	// The server runs agent sessions, as atrium serve does.
	if err := svc.Agents.Enable(context.Background(), agents.RunnerConfig{DataDir: tb.TempDir(), URL: "http://127.0.0.1:1", Binary: "/bin/true", Replica: "web-test"}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(svc.Agents.Shutdown)
	secret, _, err := ids.CreateToken(context.Background(), identity.TokenRequest{Principal: "dede", Workspace: atrium.DefaultWorkspace, Role: atrium.RoleAdmin})
	if err != nil {
		tb.Fatal(err)
	}
	a, err := ids.Authenticate(context.Background(), secret, "")
	if err != nil {
		tb.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	h := &web.Handler{Auth: &authn.Authenticator{Mode: authn.ModeToken, Identity: ids, Logger: logger, OAuth: true}, Services: svc, Gateway: gw}
	mux := http.NewServeMux()
	h.Register(mux)
	tb.Cleanup(h.Close)
	return &site{mux: mux, secret: secret, ctx: atrium.NewContextWithActor(context.Background(), a), docs: docs, rev: rev, ids: ids, gw: gw, svc: svc}
}

// do serves one request; signed in with the admin's token unless anonymous.
func (s *site) do(method, target string, form url.Values, header http.Header, anonymous bool) (int, string) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, target, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if !anonymous {
		req.Header.Set("Authorization", "Bearer "+s.secret)
	}
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, req)
	out, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(out)
}

func (s *site) get(target string) (int, string) { return s.do("GET", target, nil, nil, false) }

func (s *site) write(tb testing.TB, path, content string) {
	tb.Helper()
	if _, err := s.docs.WritePage(s.ctx, pages.WriteRequest{Path: path, Content: content, Overwrite: true}); err != nil {
		tb.Fatal(err)
	}
}
