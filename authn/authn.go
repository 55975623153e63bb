// Package authn authenticates HTTP requests: it turns a bearer token (or, with
// --auth none on a loopback listener, nothing at all) into the Actor of the
// request, in the workspace the request chose. Every HTTP surface — MCP, REST,
// the browser UI — goes through it, so access is decided in one place. It also
// owns the one mapping of error codes to HTTP statuses.
package authn

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/oidc"
)

// Mode is how HTTP callers prove who they are.
type Mode string

const (
	// ModeToken requires a bearer token on every request (the default).
	ModeToken Mode = "token"
	// ModeNone makes every caller the local admin. Only for a loopback listener.
	ModeNone Mode = "none"
)

// WorkspaceHeader chooses the workspace of a request when the token allows several.
const WorkspaceHeader = "X-Atrium-Workspace"

// SessionCookie holds a browser's session (never a bearer token) once it has
// signed in.
const SessionCookie = "atrium_session"

// Authenticator resolves requests to actors.
type Authenticator struct {
	Mode     Mode
	Identity *identity.Service
	Logger   *slog.Logger
	// OAuth takes OAuth access tokens at the MCP endpoints (package oauth
	// issues them) and points clients refused there at the authorization
	// server. API tokens are checked first and keep working as before.
	OAuth bool
	// PublicURL is the server's address as clients reach it (the OAuth
	// issuer and the base of its MCP URLs); empty: the request's own.
	PublicURL string
	// OIDC, when set, takes the JWTs an external issuer signed for an MCP
	// URL of this server (--auth oidc=ISSUER), beside API tokens.
	OIDC *oidc.Verifier
}

// credentials are the bearer token of r, or, for browser routes (cookies
// true) that send no Authorization header, its session cookie. MCP never
// reads cookies: a browser must not be able to call tools on a user's behalf.
func credentials(r *http.Request, cookies bool) (token, session string, err error) {
	t, err := ParseAuthorization(r)
	if t != "" || err != nil || !cookies {
		return t, "", err
	}
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		return "", c.Value, nil
	}
	return "", "", nil
}

// crossOrigin refuses a state-changing request that a browser sent from
// another site (Sec-Fetch-Site, else Origin against Host): with a cookie, such
// a request would act as the signed-in person without their knowing (CSRF).
var crossOrigin = http.NewCrossOriginProtection()

// CheckSameOrigin is that refusal as an error, for handlers that act on a
// browser's behalf before it has a session (signing in).
func CheckSameOrigin(r *http.Request) error {
	if err := crossOrigin.Check(r); err != nil {
		return atrium.Errorf(atrium.EPermission, "refused: this request came from another site (cross-site request forgery protection)")
	}
	return nil
}

// Workspace returns the workspace a request asks for: the {workspace} path
// segment of /w/{workspace}/…, else the X-Atrium-Workspace header, else "".
func Workspace(r *http.Request) string {
	if ws := r.PathValue("workspace"); ws != "" {
		return ws
	}
	return strings.TrimSpace(r.Header.Get(WorkspaceHeader))
}

// BearerToken returns the token of an "Authorization: Bearer …" header, or ""
// when there is none or the header is malformed (see ParseAuthorization).
func BearerToken(r *http.Request) string {
	t, _ := ParseAuthorization(r)
	return t
}

// ParseAuthorization returns the bearer token of r: "" when r sends no
// Authorization header, or an unauthenticated error saying what is wrong with
// the one it sends. A header in another form is never read as no header: a
// client that sends its token wrongly would otherwise be served as anonymous,
// see an empty workspace and not know why. The error never repeats the header,
// which may hold a secret.
func ParseAuthorization(r *http.Request) (string, error) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return "", nil
	}
	if len(values) > 1 {
		return "", malformed("send one Authorization header, not %d", len(values))
	}
	v := strings.TrimSpace(values[0])
	scheme, rest, _ := strings.Cut(v, " ")
	switch {
	case v == "":
		return "", malformed("the header is empty")
	case strings.EqualFold(scheme, "bearer"):
	case strings.HasPrefix(v, identity.TokenPrefix):
		return "", malformed("the token is there but the Bearer scheme before it is missing")
	case rest == "" || !isSchemeName(scheme):
		return "", malformed("the header has no scheme")
	default:
		return "", malformed("Atrium does not accept the %q scheme", scheme)
	}
	tok := strings.TrimSpace(rest)
	switch {
	case tok == "":
		return "", malformed("the token after Bearer is missing")
	case strings.ContainsAny(tok, " \t"):
		return "", malformed("send one token, with no spaces in it")
	}
	return tok, nil
}

func malformed(format string, args ...any) error {
	return atrium.Errorf(atrium.EUnauthenticated, "Authorization must be 'Bearer <token>': "+format, args...)
}

// isSchemeName reports whether s looks like an auth scheme (Basic, Token,
// Digest …), and so may be named back in an error.
func isSchemeName(s string) bool {
	if len(s) == 0 || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

// Refuse answers a request that failed authentication: 401 (with
// WWW-Authenticate, so that clients know to send a bearer token) or 403.
func Refuse(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if atrium.ErrorCode(err) == atrium.EUnauthenticated {
		w.Header().Set("WWW-Authenticate", challenge(r, err))
	}
	WriteError(w, r, log, err)
}

// challenge is the WWW-Authenticate of a 401. When a token was sent, it says
// plainly why it was refused (RFC 6750's invalid_token, with the message as
// its description), for clients that show the header rather than the body.
func challenge(r *http.Request, err error) string {
	if r.Header.Get("Authorization") == "" {
		return `Bearer realm="atrium"`
	}
	desc := strings.Map(func(c rune) rune {
		if c == '"' || c == '\\' || c < 0x20 || c > 0x7e {
			return '\''
		}
		return c
	}, atrium.ErrorMessage(err))
	return `Bearer realm="atrium", error="invalid_token", error_description="` + desc + `"`
}

// Authenticate returns the actor of r, from its bearer token.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (*atrium.Actor, error) {
	return a.authenticate(ctx, r, false, false)
}

func (a *Authenticator) authenticate(ctx context.Context, r *http.Request, cookies, anonymous bool) (*atrium.Actor, error) {
	ws := Workspace(r)
	if ws != "" {
		if err := atrium.ValidateName("workspace name", ws); err != nil {
			return nil, err
		}
	}
	if a.Mode == ModeNone {
		actor, err := a.Identity.AdminActor(ctx, ws)
		if atrium.ErrorCode(err) == atrium.ENotFound {
			return nil, atrium.Errorf(atrium.EPermission, "no access to workspace %q", ws)
		}
		return actor, err
	}
	tok, session, err := credentials(r, cookies)
	if err != nil {
		return nil, err
	}
	if session != "" {
		if err := CheckSameOrigin(r); err != nil {
			return nil, err
		}
		actor, err := a.Identity.AuthenticateSession(ctx, session, ws)
		if atrium.ErrorCode(err) != atrium.EUnauthenticated {
			return actor, err
		}
		// An ended session leaves an anonymous visitor, as before signing
		// in; the browser forgets the cookie (see middleware).
		return nil, errSessionEnded
	}
	if tok == "" && anonymous {
		w, err := a.Identity.Workspace(ctx, ws)
		if err != nil {
			return nil, err
		}
		return &atrium.Actor{Workspace: w}, nil // no principal, no role: public pages only
	}
	if tok == "" {
		return nil, atrium.Errorf(atrium.EUnauthenticated, "missing bearer token: send Authorization: Bearer <token> (create one with: atrium token create)")
	}
	if isAccessToken(tok) {
		return a.oauthToken(ctx, r, tok, ws)
	}
	if a.OIDC != nil && oidc.LooksLikeJWT(tok) {
		return a.oidcToken(ctx, r, tok, ws)
	}
	return a.Identity.Authenticate(ctx, tok, ws)
}

// Middleware authenticates every request by its bearer token and puts its
// actor in the request context; a request that fails gets 401 or 403 with a
// JSON {error, code} body and goes no further.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return a.middleware(next, false, false)
}

// Browser is Middleware for browser and REST routes: the token may also come
// from the session cookie, and a caller with none is anonymous, an actor with
// no role who may read public pages only.
func (a *Authenticator) Browser(next http.Handler) http.Handler {
	return a.middleware(next, true, true)
}

// Recheck authenticates a browser route's request again, as Browser did when
// it came: a request that lasts (an event stream) learns that its session or
// token has ended since. An ended session is unauthenticated here, not
// anonymous.
func (a *Authenticator) Recheck(ctx context.Context, r *http.Request) (*atrium.Actor, error) {
	actor, err := a.authenticate(ctx, r, true, false)
	if errors.Is(err, errSessionEnded) {
		return nil, atrium.Errorf(atrium.EUnauthenticated, "your browser session has ended: sign in again")
	}
	return actor, err
}

// RecheckToken authenticates a bearer-token request (MCP) again, as
// Middleware did when it came: a session's lasting streams learn that its
// token was revoked, or its role changed, since.
func (a *Authenticator) RecheckToken(ctx context.Context, r *http.Request) (*atrium.Actor, error) {
	return a.authenticate(ctx, r, false, false)
}

// errSessionEnded: the cookie names a session that has ended.
var errSessionEnded = errors.New("session ended")

func (a *Authenticator) middleware(next http.Handler, cookies, anonymous bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		actor, err := a.authenticate(r.Context(), r, cookies, anonymous)
		if errors.Is(err, errSessionEnded) {
			ClearSession(w, r)
			var ws atrium.Workspace
			if ws, err = a.Identity.Workspace(r.Context(), Workspace(r)); err == nil {
				actor = &atrium.Actor{Workspace: ws}
			}
		}
		if err != nil {
			a.Refuse(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(atrium.NewContextWithActor(r.Context(), actor)))
	})
}

// Status maps an error code to its HTTP status.
func Status(code string) int {
	switch code {
	case atrium.EInvalid:
		return http.StatusBadRequest
	case atrium.ENotFound:
		return http.StatusNotFound
	case atrium.EConflict:
		return http.StatusConflict
	case atrium.EPermission:
		return http.StatusForbidden
	case atrium.EUnauthenticated:
		return http.StatusUnauthorized
	case atrium.ETooLarge:
		return http.StatusRequestEntityTooLarge
	case atrium.EUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON body of every failed HTTP request.
type ErrorBody struct {
	Error   string         `json:"error"`
	Code    string         `json:"code"`
	Details map[string]any `json:"details,omitempty"`
}

// WriteError writes err as a JSON error body with the status of its code. The
// text of an internal error is logged, never sent.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	code := atrium.ErrorCode(err)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = atrium.Errorf(atrium.ETooLarge, "request body is larger than %d bytes", mbe.Limit)
		code = atrium.ETooLarge
	}
	if code == atrium.EInternal {
		if log == nil {
			log = slog.Default()
		}
		log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if code == atrium.EUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "5") // unavailable is retryable: say when
	}
	w.WriteHeader(Status(code))
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(ErrorBody{Error: atrium.ErrorMessage(err), Code: code, Details: atrium.ErrorDetails(err)})
}

// SetSession gives the browser its session cookie: HttpOnly (no script reads
// it), SameSite=Lax (sent when a person follows a link here, not on other
// sites' requests), Secure over TLS.
func SetSession(w http.ResponseWriter, r *http.Request, secret string) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil, MaxAge: int(identity.SessionLifetime.Seconds())})
}

// ClearSession makes the browser forget its session cookie.
func ClearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil, MaxAge: -1})
}
