// Package web is Atrium's browser surface. For now it is the front door: a
// landing page that says what is running and how to connect, and the one-time
// login link that turns a token into a browser session cookie.
package web

import (
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
)

// Handler serves the browser routes.
type Handler struct {
	Auth   *authn.Authenticator
	Logger *slog.Logger
}

// Register mounts the routes on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	mux.Handle("GET /{$}", h.Auth.Browser(http.HandlerFunc(h.index)))
	mux.HandleFunc("GET /login", h.login)
}

var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Atrium</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:3rem auto;padding:0 1rem;color:#222}code{background:#f3f3f3;padding:.1em .3em;border-radius:3px}</style>
</head><body>
<h1>Atrium</h1>
{{if .Actor}}<p>Signed in as <strong>{{.Actor.Principal.Handle}}</strong> ({{.Actor.Role}}) in workspace <strong>{{.Actor.Workspace.Name}}</strong>.</p>
{{else}}<p>Not signed in. Open the login link that <code>atrium serve</code> printed, or create a token with <code>atrium token create</code>.</p>{{end}}
<p>Agents connect over MCP: Streamable HTTP at <code>{{.Base}}/mcp</code>, or stdio with <code>atrium mcp</code>.</p>
<p>Version {{.Version}}.</p>
</body></html>`))

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	actor := atrium.ActorFromContext(r.Context())
	if actor != nil && actor.Role == "" {
		actor = nil // anonymous
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	base := (&url.URL{Scheme: "http", Host: r.Host}).String()
	if err := indexPage.Execute(w, map[string]any{"Actor": actor, "Base": base, "Version": atrium.Version}); err != nil {
		h.Logger.Warn("render index", "err", err)
	}
}

// login checks the token in the link, keeps it in an HttpOnly, same-site
// cookie and sends the browser home without the token in its address bar.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	r2 := r.Clone(r.Context())
	r2.Header.Set("Authorization", "Bearer "+token)
	if _, err := h.Auth.Authenticate(r.Context(), r2); err != nil {
		authn.WriteError(w, r, h.Logger, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: authn.SessionCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil, Expires: time.Now().Add(30 * 24 * time.Hour),
	})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
