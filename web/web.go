// Package web is Atrium's browser surface: server-rendered pages over the
// same services as MCP and REST. Browsers sign in with a token (the login
// link, or the form) and then hold a server-side session in an HttpOnly
// cookie; every state-changing request from another site is refused.
package web

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Handler serves the browser routes.
type Handler struct {
	Auth     *authn.Authenticator
	Docs     *pages.Service
	Review   *review.Service
	Activity *activity.Service
	Logger   *slog.Logger

	closeOnce sync.Once
	closing   chan struct{} // closed by Close: event streams end
	streams   sync.WaitGroup
}

// Close ends the event streams, so that a shutdown does not wait on them.
func (h *Handler) Close() {
	h.closeOnce.Do(func() {
		if h.closing != nil {
			close(h.closing)
		}
	})
	h.streams.Wait()
}

// templates are the pages, each with the layout.
var templates = map[string]*template.Template{}

func init() {
	for _, name := range []string{"index", "login", "logout", "page", "error", "search", "edit", "delete", "history", "trash"} {
		templates[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
}

var funcs = template.FuncMap{"pageURL": pageURL}

// Register mounts the routes on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	h.closing = make(chan struct{})
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", secure(http.StripPrefix("/static/", http.FileServerFS(static))))
	mux.Handle("GET /{$}", secure(h.Auth.Browser(http.HandlerFunc(h.index))))
	mux.Handle("GET /login", secure(http.HandlerFunc(h.loginPage)))
	mux.Handle("POST /login", secure(http.HandlerFunc(h.login)))
	mux.Handle("GET /logout", secure(http.HandlerFunc(h.logoutPage)))
	mux.Handle("POST /logout", secure(http.HandlerFunc(h.logout)))
	mux.Handle("GET /pages/{path...}", secure(h.Auth.Browser(http.HandlerFunc(h.page))))
	mux.Handle("POST /pages/{path...}", secure(h.Auth.Browser(http.HandlerFunc(h.save))))
	mux.Handle("POST /threads", secure(h.Auth.Browser(http.HandlerFunc(h.comment))))
	mux.Handle("POST /threads/{id}/{action}", secure(h.Auth.Browser(http.HandlerFunc(h.threadAction))))
	mux.Handle("GET /threads/{id}/delete", secure(h.Auth.Browser(http.HandlerFunc(h.confirmDelete))))
	mux.Handle("POST /reviews", secure(h.Auth.Browser(http.HandlerFunc(h.submitReview))))
	mux.Handle("GET /trash", secure(h.Auth.Browser(http.HandlerFunc(h.trash))))
	mux.Handle("POST /trash/{id}/restore", secure(h.Auth.Browser(http.HandlerFunc(h.restoreFromTrash))))
	mux.Handle("GET /events", h.Auth.Browser(http.HandlerFunc(h.events)))
	mux.Handle("GET /search", secure(h.Auth.Browser(http.HandlerFunc(h.search))))
}

// secure sends the headers every page carries: a Content-Security-Policy
// that lets nothing run or load but the server's own scripts and styles (so
// HTML inside a page body never executes), no framing, no sniffing.
func secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// view is what every page template gets; a page's own data embeds it.
type view struct {
	Actor   *atrium.Actor // nil: anonymous
	Version string
	Base    string
	Token   string
	Error   string
}

func (v *view) common() *view { return v }

type viewData interface{ common() *view }

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, data viewData) {
	v := data.common()
	if a := atrium.ActorFromContext(r.Context()); a != nil && a.Role != "" {
		v.Actor = a
	}
	v.Version = atrium.Version
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := templates[name].ExecuteTemplate(w, "layout", data); err != nil {
		h.Logger.Warn("render page", "page", name, "err", err)
	}
}

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	v := &homeView{view: view{Base: scheme + "://" + r.Host}}
	if a := atrium.ActorFromContext(r.Context()); a != nil && a.Role != "" {
		if err := h.home(w, r, v); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	h.render(w, r, http.StatusOK, "index", v)
}
