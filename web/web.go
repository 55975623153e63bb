// Package web is Atrium's browser surface: server-rendered pages over the
// same services as MCP and REST. Browsers sign in with a token (the login
// link, or the form) and then hold a server-side session in an HttpOnly
// cookie; every state-changing request from another site is refused.
package web

import (
	"bytes"
	"embed"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/oauthclient"
	"github.com/atrium-hq/atrium/services"
)

//go:embed static
var staticFS embed.FS

// Handler serves the browser routes.
type Handler struct {
	Auth *authn.Authenticator
	// Services serve every page and action.
	Services *services.Services
	// Gateway is the MCP servers behind Atrium (--gateway), nil when none:
	// /gateway then says so, and the navigation does not offer it.
	Gateway *gateway.Gateway
	// OAuthCallbacks takes the answers of the authorization servers the
	// gateway signs in to from its page (see gatewayLogin).
	OAuthCallbacks *oauthclient.Callbacks
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
		h.Services.Log.Error("render page", "page", name, "err", err)
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
