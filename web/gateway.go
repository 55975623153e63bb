package web

import (
	"context"
	"net/http"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/gateway"
)

// The gateway page: the MCP servers Atrium runs behind it (--gateway FILE),
// each with its state, transport, tools exposed and held back (with why),
// restarts, recent errors and, for admins, the tail of its stderr; and a
// form that probes them all now. It goes live on the gateway's own changes,
// which /events sends to the pages that ask (see events): they belong to
// this Atrium process, not to a workspace, so they are not in the event
// log. Any member may look, as any member may call get_status; what a
// server printed is for admins only (gateway.Status decides).

type gatewayView struct {
	view
	File      string
	Upstreams []gateway.UpstreamStatus
	Ready     int
	Admin     bool
	Report    *gateway.HealthReport // the answer to "check health now"
	// SignIn is a sign-in under way: the server and its authorization
	// page, which the admin follows from here.
	SignIn *gatewaySignIn
	Notice string
}

type gatewaySignIn struct{ Server, URL string }

// gatewayLogin starts signing the gateway in to a server that takes OAuth,
// for an admin: the sign-in runs in the background (it waits for the
// authorization server's answer) and the page links to its authorization
// page. A link, not a redirect: the page's form-action allows this server
// only, and the browser would stop a form's redirect elsewhere. A server
// whose kept tokens still work is signed in at once.
func (h *Handler) gatewayLogin(w http.ResponseWriter, r *http.Request) {
	if !h.gatewayAllowed(w, r) {
		return
	}
	if a := atrium.ActorFromContext(r.Context()); a.Role != atrium.RoleAdmin {
		h.fail(w, r, atrium.Errorf(atrium.EPermission, "signing the gateway in to a server is for admins"))
		return
	}
	name := r.PathValue("name")
	urlc, errc := make(chan string, 1), make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		errc <- h.Gateway.SignIn(ctx, name, func(_ context.Context, u string) error { urlc <- u; return nil })
	}()
	select {
	case u := <-urlc:
		h.showGatewayWith(w, r, &gatewayView{SignIn: &gatewaySignIn{Server: name, URL: u}})
	case err := <-errc:
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.showGatewayWith(w, r, &gatewayView{Notice: name + " is signed in: its kept tokens still work."})
	case <-time.After(30 * time.Second):
		h.fail(w, r, atrium.Errorf(atrium.EUnavailable, "%s's authorization server did not answer in time", name))
	}
}

// gatewayCallback is where an upstream's authorization server sends the
// admin back: the answer goes to the sign-in waiting for it, which keeps
// the tokens and has the gateway reach the server at once.
func (h *Handler) gatewayCallback(w http.ResponseWriter, r *http.Request) {
	if !h.gatewayAllowed(w, r) {
		return
	}
	if a := atrium.ActorFromContext(r.Context()); a.Role != atrium.RoleAdmin {
		h.fail(w, r, atrium.Errorf(atrium.EPermission, "signing the gateway in to a server is for admins"))
		return
	}
	if h.OAuthCallbacks == nil || !h.OAuthCallbacks.Deliver(r.URL.Query()) {
		h.fail(w, r, atrium.Errorf(atrium.ENotFound, "no sign-in is waiting for this answer: it ended (ten minutes at most) or was answered; start it again from the gateway page"))
		return
	}
	http.Redirect(w, r, "/gateway", http.StatusSeeOther)
}

func (h *Handler) gatewayPage(w http.ResponseWriter, r *http.Request) {
	h.showGateway(w, r, nil)
}

// gatewayHealth runs every server's probes and shows the report above the
// servers. It changes nothing; it is a POST because it makes Atrium reach
// every upstream, which a link followed or prefetched must not do.
func (h *Handler) gatewayHealth(w http.ResponseWriter, r *http.Request) {
	if !h.gatewayAllowed(w, r) {
		return
	}
	rep := h.Gateway.Health(r.Context())
	h.showGateway(w, r, &rep)
}

func (h *Handler) showGateway(w http.ResponseWriter, r *http.Request, rep *gateway.HealthReport) {
	if !h.gatewayAllowed(w, r) {
		return
	}
	h.showGatewayWith(w, r, &gatewayView{Report: rep})
}

func (h *Handler) showGatewayWith(w http.ResponseWriter, r *http.Request, v *gatewayView) {
	a := atrium.ActorFromContext(r.Context())
	v.File, v.Upstreams, v.Admin = h.Gateway.Path(), h.Gateway.Status(a.Role), a.Role == atrium.RoleAdmin
	for _, u := range v.Upstreams {
		if u.State == gateway.Ready {
			v.Ready++
		}
	}
	h.render(w, r, http.StatusOK, "gateway", v)
}

// gatewayAllowed answers for the page when the caller may not see it, or
// there is nothing to see: an anonymous visitor is sent to sign in.
func (h *Handler) gatewayAllowed(w http.ResponseWriter, r *http.Request) bool {
	a := atrium.ActorFromContext(r.Context())
	switch {
	case a == nil || !a.Role.Allows(atrium.RoleReader):
		if r.Method == http.MethodGet {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return false
		}
		h.fail(w, r, atrium.Errorf(atrium.EUnauthenticated, "the gateway's servers are shown to members of the workspace: sign in"))
		return false
	case h.Gateway == nil:
		h.fail(w, r, atrium.Errorf(atrium.ENotFound, "no gateway is configured: start Atrium with --gateway FILE (env ATRIUM_GATEWAY), a file in the mcpServers format"))
		return false
	}
	return true
}
