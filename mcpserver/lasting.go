package mcpserver

import (
	"context"
	"net/http"
	"sync"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
)

// A request to /mcp may last: a 2025-era session's GET stream, a legacy SSE
// stream, a 2026-07-28 subscriptions/listen, a long tool call. Each hears
// resource notifications for as long as it lasts, so each is checked again
// when an event may have changed its caller's access — a token or session
// revoked, a membership removed, a role set — and ended at once when the
// caller is no longer who it was, with the role it had; its 2025-era session
// is closed too. The browser's event streams do the same (web/events.go).

// lastingRequest is a request in progress, with how to end it.
type lastingRequest struct {
	r       *http.Request // its credentials, to check again
	actor   *atrium.Actor // who it was when it came
	cancel  context.CancelFunc
	session string // its Mcp-Session-Id, if any
}

type lasting struct {
	mu   sync.Mutex
	reqs map[*lastingRequest]struct{}
	// checking is 1 while a recheck runs; again says another was asked for
	// meanwhile, so that a burst of revokes costs two passes, not one each.
	checking, again bool
}

// lasting registers every request while it runs, so that a change of access
// can end it.
func (h *HTTPHandler) lasting(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := atrium.ActorFromContext(r.Context())
		if a == nil || h.opts.Auth.Mode == authn.ModeNone {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		lr := &lastingRequest{r: r.Clone(context.WithoutCancel(r.Context())), actor: a, cancel: cancel, session: r.Header.Get("Mcp-Session-Id")}
		h.live.mu.Lock()
		h.live.reqs[lr] = struct{}{}
		h.live.mu.Unlock()
		defer func() {
			h.live.mu.Lock()
			delete(h.live.reqs, lr)
			h.live.mu.Unlock()
			cancel()
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// accessChanged checks every request in progress again, in the background.
func (h *HTTPHandler) accessChanged() {
	h.live.mu.Lock()
	if h.live.checking {
		h.live.again = true
		h.live.mu.Unlock()
		return
	}
	h.live.checking = true
	h.live.mu.Unlock()
	go func() {
		for {
			h.recheck()
			h.live.mu.Lock()
			if !h.live.again {
				h.live.checking = false
				h.live.mu.Unlock()
				return
			}
			h.live.again = false
			h.live.mu.Unlock()
		}
	}()
}

// recheck ends the requests whose caller's access ended or changed.
func (h *HTTPHandler) recheck() {
	h.live.mu.Lock()
	reqs := make([]*lastingRequest, 0, len(h.live.reqs))
	for lr := range h.live.reqs {
		reqs = append(reqs, lr)
	}
	h.live.mu.Unlock()
	ctx := h.s.ctx
	for _, lr := range reqs {
		now, err := h.opts.Auth.RecheckToken(ctx, lr.r)
		switch atrium.ErrorCode(err) {
		case "":
			if now != nil && now.Principal.ID == lr.actor.Principal.ID && now.Workspace.ID == lr.actor.Workspace.ID && now.Role == lr.actor.Role {
				continue
			}
		case atrium.EUnauthenticated, atrium.EPermission, atrium.ENotFound:
		default:
			// The store could not say (unavailable): keep the stream
			// rather than end it on a guess; the next change checks again.
			h.s.log.Warn("check an MCP stream's access again", "principal", lr.actor.Principal.Handle, "err", err)
			continue
		}
		h.s.log.Info("MCP stream ended: its caller's access changed", "principal", lr.actor.Principal.Handle, "workspace", lr.actor.Workspace.Name)
		lr.cancel()
		if lr.session != "" {
			h.closeSession(lr.actor.Workspace, lr.session)
		}
	}
}

// closeSession closes the 2025-era session id of workspace ws.
func (h *HTTPHandler) closeSession(ws atrium.Workspace, id string) {
	ms := h.s.ForWorkspace(ws)
	if ms == nil {
		return
	}
	for ss := range ms.Sessions() {
		if ss.ID() == id {
			_ = ss.Close()
		}
	}
}
