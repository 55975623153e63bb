// Package oauthhttp serves the authorization server of package oauth over
// HTTP: the metadata documents (RFC 9728 for each MCP endpoint, RFC 8414 for
// the server), the token, registration and revocation endpoints. The consent
// page is the browser's (package web), where the person's session is.
// Errors are OAuth's own JSON ({error, error_description}), which clients
// parse, never Atrium's {error, code}.
package oauthhttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/oauth"
)

// Handler serves the endpoints.
type Handler struct {
	OAuth *oauth.Service
	Auth  *authn.Authenticator
	Log   *slog.Logger
	// Issuer, when set, is an external authorization server (--auth
	// oidc=ISSUER): the resource metadata names it, and this server serves
	// no authorization endpoints of its own.
	Issuer string
}

// Routes lists the patterns Register mounts, for the sweeps that walk every
// route.
func Routes() []string {
	var out []string
	(&Handler{}).routes(func(p string, _ http.HandlerFunc) { out = append(out, p) })
	return out
}

// Register mounts the endpoints on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	if h.Log == nil {
		h.Log = slog.Default()
	}
	h.routes(func(p string, fn http.HandlerFunc) { mux.Handle(p, fn) })
}

func (h *Handler) routes(route func(string, http.HandlerFunc)) {
	route("GET /.well-known/oauth-protected-resource", h.resourceMetadata)
	route("GET /.well-known/oauth-protected-resource/mcp", h.resourceMetadata)
	route("GET /.well-known/oauth-protected-resource/w/{workspace}/mcp", h.resourceMetadata)
	if h.Issuer != "" {
		return
	}
	route("GET /.well-known/oauth-authorization-server", h.serverMetadata)
	route("POST /oauth/token", h.token)
	route("POST /oauth/register", h.register)
	route("POST /oauth/revoke", h.revoke)
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
		"/.well-known/oauth-protected-resource/w/{workspace}/mcp", "/.well-known/oauth-authorization-server",
		"/oauth/token", "/oauth/register", "/oauth/revoke"} {
		route("OPTIONS "+p, preflight)
	}
}

// Public reports whether path is one of these endpoints: they take no
// cookie and no API token, so a request from another origin (a browser-based
// client) may reach them, and an Authorization header that is not Bearer
// (HTTP Basic, for client authentication) is theirs to read.
func Public(path string) bool {
	return strings.HasPrefix(path, "/.well-known/oauth-") || path == "/oauth/token" || path == "/oauth/register" || path == "/oauth/revoke"
}

func preflight(w http.ResponseWriter, r *http.Request) {
	cors(w)
	w.Header().Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Mcp-Protocol-Version")
	w.Header().Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}

func cors(w http.ResponseWriter) { w.Header().Set("Access-Control-Allow-Origin", "*") }

func (h *Handler) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	path := "/mcp"
	if ws := r.PathValue("workspace"); ws != "" {
		if err := atrium.ValidateName("workspace name", ws); err != nil {
			writeErr(w, h.Log, &oauth.Error{Code: "invalid_request", Description: atrium.ErrorMessage(err), Status: http.StatusNotFound})
			return
		}
		path = "/w/" + ws + "/mcp"
	}
	base := h.Auth.Base(r)
	issuer := base
	if h.Issuer != "" {
		issuer = h.Issuer
	}
	writeJSON(w, http.StatusOK, oauth.ResourceMetadata(issuer, base+path))
}

func (h *Handler) serverMetadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.OAuth.ServerMetadata(h.Auth.Base(r)))
}

// maxForm bounds the body of a token or revocation request.
const maxForm = 64 << 10

// client is the client a token or revocation request authenticates as:
// client_id in the form, or HTTP Basic with an empty secret. Atrium's
// clients are public: a secret is refused, as it was never issued.
func client(r *http.Request) (string, error) {
	id := r.PostForm.Get("client_id")
	if user, pass, ok := r.BasicAuth(); ok {
		if pass != "" {
			return "", &oauth.Error{Code: "invalid_client", Description: "Atrium's clients are public: no client_secret was issued", Status: http.StatusUnauthorized}
		}
		if id != "" && id != user {
			return "", &oauth.Error{Code: "invalid_request", Description: "client_id differs between the form and the Authorization header", Status: http.StatusBadRequest}
		}
		id = user
	} else if r.Header.Get("Authorization") != "" {
		return "", &oauth.Error{Code: "invalid_client", Description: "client authentication must be none (client_id in the form)", Status: http.StatusUnauthorized}
	}
	if r.PostForm.Get("client_secret") != "" {
		return "", &oauth.Error{Code: "invalid_client", Description: "Atrium's clients are public: no client_secret was issued", Status: http.StatusUnauthorized}
	}
	return id, nil
}

func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		return &oauth.Error{Code: "invalid_request", Description: "send the request as application/x-www-form-urlencoded", Status: http.StatusBadRequest}
	}
	if err := r.ParseForm(); err != nil {
		return &oauth.Error{Code: "invalid_request", Description: "the form could not be read: " + err.Error(), Status: http.StatusBadRequest}
	}
	for k, v := range r.PostForm {
		if len(v) > 1 {
			return &oauth.Error{Code: "invalid_request", Description: "parameter " + k + " is repeated", Status: http.StatusBadRequest}
		}
	}
	return nil
}

func (h *Handler) token(w http.ResponseWriter, r *http.Request) {
	cors(w)
	if err := parseForm(w, r); err != nil {
		writeErr(w, h.Log, err)
		return
	}
	id, err := client(r)
	if err != nil {
		writeErr(w, h.Log, err)
		return
	}
	out, err := h.OAuth.Token(r.Context(), r.PostForm, id)
	if err != nil {
		writeErr(w, h.Log, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) revoke(w http.ResponseWriter, r *http.Request) {
	cors(w)
	if err := parseForm(w, r); err != nil {
		writeErr(w, h.Log, err)
		return
	}
	id, err := client(r)
	if err == nil {
		err = h.OAuth.Revoke(r.Context(), r.PostForm.Get("token"), id)
	}
	if err != nil {
		writeErr(w, h.Log, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

func (h *Handler) register(w http.ResponseWriter, r *http.Request) {
	cors(w)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxForm+1))
	if err != nil {
		writeErr(w, h.Log, &oauth.Error{Code: "invalid_request", Description: "the body could not be read", Status: http.StatusBadRequest})
		return
	}
	addr, _, _ := net.SplitHostPort(r.RemoteAddr)
	out, err := h.OAuth.Register(r.Context(), body, addr)
	if err != nil {
		writeErr(w, h.Log, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	cors(w)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeErr sends err as OAuth's error JSON. Errors that are not OAuth's
// (the store failing) are logged and sent as server_error, their text kept.
func writeErr(w http.ResponseWriter, log *slog.Logger, err error) {
	var oe *oauth.Error
	if !errors.As(err, &oe) {
		code := atrium.ErrorCode(err)
		status := authn.Status(code)
		desc := atrium.ErrorMessage(err)
		if code == atrium.EInternal {
			if !errors.Is(err, context.Canceled) {
				log.Error("OAuth request failed", "err", err)
			}
			desc = "internal error"
		}
		oe = &oauth.Error{Code: "server_error", Description: desc, Status: status}
		if status == http.StatusServiceUnavailable {
			oe.Code = "temporarily_unavailable"
			w.Header().Set("Retry-After", "5")
		}
	}
	if oe.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="atrium", error="`+oe.Code+`"`)
	}
	if oe.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "60")
	}
	writeJSON(w, oe.Status, map[string]string{"error": oe.Code, "error_description": oe.Description})
}
