package authn

import (
	"context"
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
)

// challengeScope is what a 401 on an MCP endpoint asks for: reading and
// writing, the usual grant.
var challengeScope = atrium.RoleWriter.Scope()

// Base is the public URL of this server, with no trailing slash: PublicURL
// when it is set (behind a TLS proxy or a tunnel it must be), else the
// scheme and Host the request came with — which the server's Host check has
// already held to loopback or an allowed name.
func (a *Authenticator) Base(r *http.Request) string {
	if a.PublicURL != "" {
		return strings.TrimSuffix(a.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// MCPPath is the MCP endpoint a request's path is at ("/mcp" or
// "/w/NAME/mcp", the legacy "/sse" suffix dropped), or "" for any other route.
func MCPPath(path string) string {
	p := strings.TrimSuffix(path, "/sse")
	if p == "/mcp" {
		return p
	}
	if rest, ok := strings.CutPrefix(p, "/w/"); ok {
		if name, ok := strings.CutSuffix(rest, "/mcp"); ok && name != "" && !strings.Contains(name, "/") {
			return p
		}
	}
	return ""
}

// Resource is the MCP URL a request is made to, as OAuth names it (RFC
// 8707): the URL an access token must have been issued for. "" when the
// request is not to an MCP endpoint, where OAuth tokens are not taken.
func (a *Authenticator) Resource(r *http.Request) string {
	if p := MCPPath(r.URL.Path); p != "" {
		return a.Base(r) + p
	}
	return ""
}

// ResourceMetadataURL is where the protected resource metadata (RFC 9728)
// of the MCP endpoint r is at lives.
func (a *Authenticator) ResourceMetadataURL(r *http.Request) string {
	return a.Base(r) + "/.well-known/oauth-protected-resource" + MCPPath(r.URL.Path)
}

// oauthToken authenticates an OAuth access token: only at an MCP endpoint,
// and only the one it was issued for.
func (a *Authenticator) oauthToken(ctx context.Context, r *http.Request, tok, ws string) (*atrium.Actor, error) {
	res := a.Resource(r)
	if !a.OAuth || res == "" {
		return nil, atrium.Errorf(atrium.EUnauthenticated, "an OAuth access token works only at the MCP endpoint it was issued for; use an API token here (atrium token create)")
	}
	return a.Identity.AuthenticateAccess(ctx, tok, ws, res)
}

// oidcToken authenticates an external issuer's token: only at an MCP
// endpoint, for which it must have been issued (its aud).
func (a *Authenticator) oidcToken(ctx context.Context, r *http.Request, tok, ws string) (*atrium.Actor, error) {
	res := a.Resource(r)
	if res == "" {
		return nil, atrium.Errorf(atrium.EUnauthenticated, "a token of the OIDC issuer works only at the MCP endpoints; use an API token here (atrium token create)")
	}
	handle, err := a.OIDC.Verify(ctx, tok, res)
	if err != nil {
		return nil, err
	}
	return a.Identity.ExternalActor(ctx, handle, ws)
}

// Refuse is the package's Refuse for a request to this server: a 401 on an
// MCP endpoint, with OAuth on, also says where the resource's metadata is
// and which scope to ask for, so that a client can sign in (RFC 9728 §5.1).
func (a *Authenticator) Refuse(w http.ResponseWriter, r *http.Request, err error) {
	if (a.OAuth || a.OIDC != nil) && atrium.ErrorCode(err) == atrium.EUnauthenticated && MCPPath(r.URL.Path) != "" {
		w.Header().Set("WWW-Authenticate", challenge(r, err)+`, resource_metadata="`+a.ResourceMetadataURL(r)+`", scope="`+challengeScope+`"`)
		WriteError(w, r, a.Logger, err)
		return
	}
	Refuse(w, r, a.Logger, err)
}

func isAccessToken(tok string) bool { return strings.HasPrefix(tok, identity.AccessPrefix) }

// RefuseScope answers a call that needs role need, which the caller's OAuth
// grant holds it below: 403 insufficient_scope, naming the scope that would
// do (RFC 6750 §3.1), so that the client asks the person again (step-up).
func (a *Authenticator) RefuseScope(w http.ResponseWriter, r *http.Request, need atrium.Role) {
	w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="`+need.Scope()+`", resource_metadata="`+a.ResourceMetadataURL(r)+`", error_description="this call needs the `+string(need)+` role, more than the person granted this client"`)
	WriteError(w, r, a.Logger, atrium.Errorf(atrium.EPermission, "this call needs the %s role, more than the person granted this client (insufficient_scope): sign in again for %s", need, need.Scope()))
}
