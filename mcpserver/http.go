package mcpserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
)

// HTTPOptions configure the HTTP transports.
type HTTPOptions struct {
	// Auth authenticates every request; required.
	Auth *authn.Authenticator
	// SessionTimeout closes a 2025-era session idle this long. Default 30 minutes.
	SessionTimeout time.Duration
	// MaxBodyBytes bounds a request body. Default MaxMessageBytes (35 MiB:
	// an attachment of 25 MiB in base64, and its call).
	MaxBodyBytes int64
}

// HTTPHandler serves MCP over HTTP: Streamable HTTP at /mcp, legacy HTTP+SSE
// at /mcp/sse, and both under /w/{workspace}/ to choose a workspace by path.
type HTTPHandler struct {
	s         *Server
	opts      HTTPOptions
	stateful  *mcp.StreamableHTTPHandler
	stateless *mcp.StreamableHTTPHandler
	sse       *sseHandler
	live      lasting
}

// protocolVersionHeader carries the protocol version of a Streamable HTTP request.
const protocolVersionHeader = "Mcp-Protocol-Version"

// firstStatelessVersion is the first protocol version without sessions (SEP-2575).
const firstStatelessVersion = "2026-07-28"

// HTTP returns the HTTP transports of s.
func (s *Server) HTTP(opts HTTPOptions) *HTTPHandler {
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = MaxMessageBytes
	}
	h := &HTTPHandler{s: s, opts: opts, live: lasting{reqs: map[*lastingRequest]struct{}{}}}
	s.mu.Lock()
	s.onAccess = append(s.onAccess, h.accessChanged)
	s.mu.Unlock()
	// Host and Origin checks run once, before authentication, for every route
	// (httpserve); the SDK's own loopback check would refuse allowed hosts.
	h.stateful = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{
		SessionTimeout:             opts.SessionTimeout,
		MaxRequestBodyBytes:        opts.MaxBodyBytes,
		DisableLocalhostProtection: true,
		Logger:                     s.sdkLog,
	})
	h.stateless = mcp.NewStreamableHTTPHandler(h.server, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		MaxRequestBodyBytes:          opts.MaxBodyBytes,
		DisableLocalhostProtection:   true,
		PropagateRequestCancellation: true,
		Logger:                       s.sdkLog,
	})
	h.sse = newSSEHandler(h.server, opts.MaxBodyBytes, s.log)
	return h
}

// Register mounts the MCP routes on mux.
func (h *HTTPHandler) Register(mux *http.ServeMux) {
	streamable := h.authenticated(h.lasting(h.checked(http.HandlerFunc(h.serveStreamable))))
	sse := h.authenticated(h.lasting(h.checked(h.sse)))
	mux.Handle("/mcp", streamable)
	mux.Handle("/w/{workspace}/mcp", streamable)
	mux.Handle("/mcp/sse", sse)
	mux.Handle("/w/{workspace}/mcp/sse", sse)
}

// Close ends every SSE stream and session; in-flight calls should have
// finished before (see httpserve's shutdown).
func (h *HTTPHandler) Close() {
	h.sse.closeAll()
	h.s.Close()
}

// serveStreamable sends each request to the handler of its protocol
// generation: 2026-07-28 and later are stateless (any replica can answer them);
// older clients initialize a session and keep it.
func (h *HTTPHandler) serveStreamable(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get(protocolVersionHeader) >= firstStatelessVersion {
		h.stateless.ServeHTTP(w, r)
		return
	}
	h.stateful.ServeHTTP(w, r)
}

// server is the MCP server of the authenticated caller's workspace.
func (h *HTTPHandler) server(r *http.Request) *mcp.Server {
	a := atrium.ActorFromContext(r.Context())
	if a == nil {
		return nil
	}
	return h.s.ForWorkspace(a.Workspace)
}

// ownerKey identifies a caller in a workspace: a session answers only to the
// caller that opened it.
func ownerKey(a *atrium.Actor) string { return fmt.Sprintf("%d/%d", a.Principal.ID, a.Workspace.ID) }

// authenticated authenticates r (authn) and hands the actor to the SDK as the
// request's token info: the SDK passes it to handlers in req.Extra (and in the
// session context on SSE) and binds each session to its owner.
func (h *HTTPHandler) authenticated(next http.Handler) http.Handler {
	bearer := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		a := atrium.ActorFromContext(ctx)
		if a == nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: ownerKey(a), Expiration: time.Now().Add(time.Hour), Extra: map[string]any{actorKey: a}}, nil
	}, nil)(next)
	adapt := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if authn.BearerToken(r) == "" {
			// --auth none: authn let the request in without a token, but the
			// SDK's middleware wants one to carry the token info.
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer local")
		}
		bearer.ServeHTTP(w, r)
	})
	return h.opts.Auth.Middleware(adapt)
}
