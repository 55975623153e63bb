package web

import (
	"net/http"

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
	a := atrium.ActorFromContext(r.Context())
	v := &gatewayView{File: h.Gateway.Path(), Upstreams: h.Gateway.Status(a.Role), Admin: a.Role == atrium.RoleAdmin, Report: rep}
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
