// Package oauth is Atrium's OAuth 2.1 authorization server, for MCP clients
// that cannot be handed a bearer token (hosted connectors, IDE clients that
// drop configured headers once a server answers discovery). A person signs
// the client in with the browser session they already have and consents to
// what it gets: one workspace, a role never above their own, acting as
// themselves or as an agent they administer. The grant is a token row like
// an API token's — listed, revoked and audited the same way — and its access
// tokens work only at the one MCP URL they were issued for.
//
// Authorization code with PKCE (S256) is the only flow. Clients are known by
// their Client ID Metadata Document (fetched with SSRF protection and cached,
// with the last good copy kept for when its host fails) or, while the flag
// allows it, by dynamic registration. Refresh tokens rotate, and the one
// before the newest is still taken for a short grace: some clients drop a
// rotated token.
package oauth

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/store"
)

// Prefixes of the secrets the server issues, so that a leaked one is easy to
// find and each is told from the others before any lookup.
const (
	AccessPrefix  = identity.AccessPrefix
	RefreshPrefix = "atf_"
	CodePrefix    = "atc_"
	// dcrPrefix starts the IDs of dynamically registered clients; any
	// other ID that is not a URL is unknown.
	dcrPrefix = "atrium-dcr-"
)

// The scopes a client may ask for; each is a ceiling on the role the person
// may grant it. offline_access is accepted (refresh tokens are always
// issued) so that clients that ask for it are not refused.
const (
	ScopeRead  = atrium.ScopeRead
	ScopeWrite = atrium.ScopeWrite
	ScopeAdmin = atrium.ScopeAdmin
)

// Scopes are the scopes supported, in order.
var Scopes = []string{ScopeRead, ScopeWrite, ScopeAdmin, "offline_access"}

// ceiling is the highest role a requested scope allows: admin when it names
// no scope of Atrium's (the person then chooses).
func ceiling(scope string) atrium.Role {
	fields := strings.Fields(scope)
	has := func(s string) bool {
		for _, f := range fields {
			if f == s {
				return true
			}
		}
		return false
	}
	switch {
	case has(ScopeAdmin):
		return atrium.RoleAdmin
	case has(ScopeWrite):
		return atrium.RoleWriter
	case has(ScopeRead):
		return atrium.RoleReader
	}
	return atrium.RoleAdmin
}

// Config configures the authorization server. Zero durations take defaults.
type Config struct {
	// DCR allows dynamic client registration (RFC 7591): deprecated by the
	// 2026-07-28 specification, still what Claude and VS Code use.
	DCR bool
	// AllowPrivateDocuments lets client metadata documents come from
	// loopback and private addresses, and over plain http: for tests only.
	AllowPrivateDocuments bool
	// DocumentTimeout bounds the fetch of a metadata document; default 5 s.
	DocumentTimeout time.Duration

	AccessLifetime  time.Duration // default 1 hour
	RefreshLifetime time.Duration // default 30 days
	RefreshGrace    time.Duration // the previous refresh token still works this long; default 2 minutes
	CodeLifetime    time.Duration // default 1 minute
	IdleClients     time.Duration // unused registered clients are collected after this; default 7 days

	// RegisterLimit bounds registrations per address per RegisterWindow,
	// and 20 times that from everyone. Default 20 per 10 minutes.
	RegisterLimit  int
	RegisterWindow time.Duration

	Logger *slog.Logger
}

// Service is the authorization server.
type Service struct {
	db   *store.DB
	cfg  Config
	log  *slog.Logger
	http *http.Client // fetches client metadata documents

	mu      sync.Mutex
	windows map[string]*window // registrations per address, and "" for all
}

// New returns the authorization server over db.
func New(db *store.DB, cfg Config) *Service {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.AccessLifetime, time.Hour)
	def(&cfg.RefreshLifetime, 30*24*time.Hour)
	def(&cfg.RefreshGrace, 2*time.Minute)
	def(&cfg.CodeLifetime, time.Minute)
	def(&cfg.IdleClients, 7*24*time.Hour)
	def(&cfg.RegisterWindow, 10*time.Minute)
	def(&cfg.DocumentTimeout, 5*time.Second)
	if cfg.RegisterLimit <= 0 {
		cfg.RegisterLimit = 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Service{db: db, cfg: cfg, log: cfg.Logger, http: documentClient(cfg.AllowPrivateDocuments, cfg.DocumentTimeout), windows: map[string]*window{}}
}

// DCR reports whether dynamic registration is on.
func (s *Service) DCR() bool { return s.cfg.DCR }

// An Error is an OAuth error response: its code (RFC 6749 §5.2 and the
// like), a description for people, and the HTTP status it is sent with.
type Error struct {
	Code        string
	Description string
	Status      int
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

func oauthErr(status int, code, format string, args ...any) *Error {
	return &Error{Code: code, Description: fmt.Sprintf(format, args...), Status: status}
}

func invalidRequest(format string, args ...any) *Error {
	return oauthErr(http.StatusBadRequest, "invalid_request", format, args...)
}

func invalidGrant(format string, args ...any) *Error {
	return oauthErr(http.StatusBadRequest, "invalid_grant", format, args...)
}

// invalidClient is 401, which makes clients that registered dynamically
// register again (Claude does).
func invalidClient(format string, args ...any) *Error {
	return oauthErr(http.StatusUnauthorized, "invalid_client", format, args...)
}

// secret is a new random secret with prefix.
func secret(prefix string) string { return prefix + rand.Text() + rand.Text() }

// mcpWorkspace reports whether resource is an MCP endpoint of issuer —
// issuer+"/mcp" or issuer+"/w/{workspace}/mcp" — and the workspace it names.
func mcpWorkspace(issuer, resource string) (ws string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSuffix(resource, "/"), issuer)
	if !found {
		return "", false
	}
	if rest == "/mcp" {
		return "", true
	}
	name, found := strings.CutPrefix(rest, "/w/")
	if !found {
		return "", false
	}
	name, found = strings.CutSuffix(name, "/mcp")
	if !found || atrium.ValidateName("workspace name", name) != nil {
		return "", false
	}
	return name, true
}

// Resource is the canonical form of an MCP URL: no trailing slash.
func Resource(u string) string { return strings.TrimSuffix(u, "/") }

// ServerMetadata is the authorization server's metadata (RFC 8414) for issuer.
func (s *Service) ServerMetadata(issuer string) map[string]any {
	m := map[string]any{
		"issuer":                                         issuer,
		"authorization_endpoint":                         issuer + "/oauth/authorize",
		"token_endpoint":                                 issuer + "/oauth/token",
		"revocation_endpoint":                            issuer + "/oauth/revoke",
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"none"},
		"revocation_endpoint_auth_methods_supported":     []string{"none"},
		"scopes_supported":                               Scopes,
		"client_id_metadata_document_supported":          true,
		"authorization_response_iss_parameter_supported": true,
	}
	if s.cfg.DCR {
		m["registration_endpoint"] = issuer + "/oauth/register"
	}
	return m
}

// ResourceMetadata is the protected resource metadata (RFC 9728) of the MCP
// URL resource, whose authorization server is issuer.
func ResourceMetadata(issuer, resource string) map[string]any {
	return map[string]any{
		"resource":                 resource,
		"authorization_servers":    []string{issuer},
		"scopes_supported":         Scopes[:3],
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "Atrium",
	}
}

// update runs fn in a write transaction.
func (s *Service) update(ctx context.Context, fn func(tx *store.Tx) error) error {
	return s.db.Update(ctx, fn)
}
