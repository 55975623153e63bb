// Package web is Atrium's browser surface: server-rendered pages over the
// same services as MCP and REST. Browsers sign in with a token (the login
// link, or the form) and then hold a server-side session in an HttpOnly
// cookie; every state-changing request from another site is refused.
package web

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/tasks"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Handler serves the browser routes.
type Handler struct {
	Auth *authn.Authenticator
	// Services serve every page and action.
	Services *services.Services
	Docs     *pages.Service
	Review   *review.Service
	Tasks    *tasks.Service
	Activity *activity.Service
	// Gateway is the MCP servers behind Atrium (--gateway), nil when none:
	// /gateway then says so, and the navigation does not offer it.
	Gateway *gateway.Gateway
	Logger  *slog.Logger
	// Heartbeat is how often an idle event stream says it is alive and
	// checks that its session is still good; 0 means 15 s.
	Heartbeat time.Duration

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
	for _, name := range []string{"index", "login", "logout", "page", "error", "search", "edit", "delete", "history", "trash", "tree", "new", "activity"} {
		templates[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/treeitems.html", "templates/activityrows.html", "templates/"+name+".html"))
	}
}

var funcs = template.FuncMap{"pageURL": pageURL, "folderURL": folderURL, "kb": kb}

// kb says a size in bytes for people: 812 B, 4.2 KB, 63 KB, 1.4 MB.
func kb(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " B"
	case n < 10_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " KB"
	case n < 1_000_000:
		return strconv.Itoa((n+500)/1000) + " KB"
	default:
		return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + " MB"
	}
}

// Register mounts the routes on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	if s := h.Services; s != nil {
		h.Docs, h.Review, h.Tasks, h.Activity, h.Logger = s.Pages, s.Review, s.Tasks, s.Activity, s.Log
	}
	h.closing = make(chan struct{})
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", secure(http.StripPrefix("/static/", http.FileServerFS(static))))
	h.routes(func(pattern string, fn http.HandlerFunc, signedIn bool) {
		var handler http.Handler = fn
		if signedIn {
			handler = h.Auth.Browser(handler)
		}
		mux.Handle(pattern, secure(handler))
	})
}

// Routes lists the patterns of the pages and actions Register mounts (the
// static assets aside), so that test sweeps cover each without a list to keep.
func Routes() []string {
	var out []string
	(&Handler{}).routes(func(pattern string, _ http.HandlerFunc, _ bool) { out = append(out, pattern) })
	return out
}

// routes names every page and action; signedIn routes learn who is asking
// from the session (or a bearer token), the others handle signing in.
func (h *Handler) routes(route func(pattern string, fn http.HandlerFunc, signedIn bool)) {
	route("GET /{$}", h.index, true)
	route("GET /login", h.loginPage, false)
	route("POST /login", h.login, false)
	route("GET /logout", h.logoutPage, false)
	route("POST /logout", h.logout, false)
	route("GET /pages/{path...}", h.page, true)
	route("POST /pages/{path...}", h.save, true)
	route("POST /threads", h.comment, true)
	route("POST /threads/{id}/{action}", h.threadAction, true)
	route("GET /threads/{id}/delete", h.confirmDelete, true)
	route("POST /reviews", h.submitReview, true)
	route("GET /trash", h.trash, true)
	route("POST /trash/{id}/restore", h.restoreFromTrash, true)
	route("GET /events", h.events, true)
	route("GET /search", h.search, true)
	route("GET /activity", h.activityPage, true)
	route("GET /admin", h.admin, true)
	route("POST /admin/tokens", h.adminCreateToken, true)
	route("POST /admin/tokens/{id}/revoke", h.adminRevokeToken, true)
	route("POST /admin/sessions/{id}/revoke", h.adminRevokeSession, true)
	route("POST /admin/members/{handle}/role", h.adminSetRole, true)
	route("POST /admin/members/{handle}/remove", h.adminRemoveMember, true)
	route("GET /desk", h.myDesk, true)
	route("GET /desk/{handle}", h.desk, true)
	route("POST /desk/todos", h.deskAddTodo, true)
	route("POST /desk/todos/{id}", h.deskUpdateTodo, true)
	route("POST /desk/progress", h.deskAddProgress, true)
	route("POST /desk/progress/archive", h.deskArchiveProgress, true)
	route("GET /tree", h.tree, true)
	route("GET /new", h.newPage, true)
	route("GET /gateway", h.gatewayPage, true)
	route("POST /gateway/health", h.gatewayHealth, true)
	h.registerTasks(route)
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
	Code    string // the error's code (not_found, permission_denied …)
	Gateway bool   // a gateway is configured: the navigation offers /gateway
}

func (v *view) common() *view { return v }

type viewData interface{ common() *view }

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, data viewData) {
	v := data.common()
	if a := atrium.ActorFromContext(r.Context()); a != nil && a.Role != "" {
		v.Actor = a
	}
	v.Version = atrium.Version
	v.Gateway = h.Gateway != nil
	// The page is made whole before a byte of it is sent: a failure half
	// way is an error, not half a page, and the answer has its length.
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 {
			buf.Reset()
			renderBuffers.Put(buf)
		}
	}()
	if err := templates[name].ExecuteTemplate(buf, "layout", data); err != nil {
		h.Logger.Error("render page", "page", name, "err", err)
		http.Error(w, "internal error: the page could not be shown", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderBuffers hold pages being rendered.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

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
