package httpserve

import (
	"encoding/json"
	"net/http"
)

// NoOAuthMessage is what a client that tries OAuth after a 401 is told.
const NoOAuthMessage = "invalid or revoked token (or none was sent): Atrium does not issue tokens over OAuth; create one with `atrium token create` and send it as Authorization: Bearer <token>"

// noOAuth answers the OAuth discovery and registration endpoints that MCP
// clients try after a 401 (RFC 9728 protected-resource metadata, RFC 8414
// authorization-server metadata, OpenID configuration, dynamic registration,
// the legacy /authorize and /token) with a JSON OAuth error rather than the
// mux's plain-text 404. Clients parse it and show its description, so the
// user reads why the token was refused and how to get one — not "Invalid
// OAuth error response … 404 page not found".
func noOAuth(mux *http.ServeMux) {
	for _, p := range []string{
		"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/",
		"/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/",
		"/.well-known/openid-configuration", "/.well-known/openid-configuration/",
		"/register", "/authorize", "/token",
	} {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusNotFound)
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(map[string]string{
				"error":             "invalid_token",
				"error_description": NoOAuthMessage,
			})
		})
	}
}
