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

// SessionCookie holds a browser's token after it followed a login link.
const SessionCookie = "atrium_session"

// Authenticator resolves requests to actors.
type Authenticator struct {
	Mode     Mode
	Identity *identity.Service
	Logger   *slog.Logger
}

// token is the bearer token of r, or, for browser routes (cookies true), its
// session cookie. MCP never reads cookies: a browser must not be able to call
// tools on a user's behalf.
func token(r *http.Request, cookies bool) string {
	if t := BearerToken(r); t != "" || !cookies {
		return t
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		return c.Value
	}
	return ""
}

// Workspace returns the workspace a request asks for: the {workspace} path
// segment of /w/{workspace}/…, else the X-Atrium-Workspace header, else "".
func Workspace(r *http.Request) string {
	if ws := r.PathValue("workspace"); ws != "" {
		return ws
	}
	return strings.TrimSpace(r.Header.Get(WorkspaceHeader))
}

// BearerToken returns the token of an "Authorization: Bearer …" header, or "".
func BearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return ""
	}
	return strings.TrimSpace(token)
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
	tok := token(r, cookies)
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

func (a *Authenticator) middleware(next http.Handler, cookies, anonymous bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		actor, err := a.authenticate(r.Context(), r, cookies, anonymous)
		if err != nil {
			if atrium.ErrorCode(err) == atrium.EUnauthenticated {
				w.Header().Set("WWW-Authenticate", `Bearer realm="atrium"`)
			}
			WriteError(w, r, a.Logger, err)
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
	w.WriteHeader(Status(code))
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(ErrorBody{Error: atrium.ErrorMessage(err), Code: code, Details: atrium.ErrorDetails(err)})
}
