package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/store"
)

// An AuthRequest is what a client asks of /oauth/authorize.
type AuthRequest struct {
	ClientID            string
	RedirectURI         string
	ResponseType        string
	CodeChallenge       string
	CodeChallengeMethod string
	Resource            string
	Scope               string
	State               string
}

// AuthRequestOf reads an authorization request from query or form values.
func AuthRequestOf(v url.Values) AuthRequest {
	return AuthRequest{
		ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"), ResponseType: v.Get("response_type"),
		CodeChallenge: v.Get("code_challenge"), CodeChallengeMethod: v.Get("code_challenge_method"),
		Resource: v.Get("resource"), Scope: v.Get("scope"), State: v.Get("state"),
	}
}

// Values are the request's parameters, for a form that carries it on.
func (r AuthRequest) Values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"client_id": r.ClientID, "redirect_uri": r.RedirectURI, "response_type": r.ResponseType,
		"code_challenge": r.CodeChallenge, "code_challenge_method": r.CodeChallengeMethod, "resource": r.Resource, "scope": r.Scope, "state": r.State} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// A Pending authorization is a checked request, waiting for the person.
type Pending struct {
	Request AuthRequest
	Client  Client
	Issuer  string
	// Workspace is the one the resource names ("" : the person chooses).
	Workspace string
	// Ceiling is the highest role the requested scope allows.
	Ceiling atrium.Role
}

// A RedirectError is an error the client is told by redirect (its
// redirect_uri is known good); any other error of CheckAuthorize must be
// shown to the person instead, never sent to an unchecked address.
type RedirectError struct {
	Err *Error
	To  string
}

func (e *RedirectError) Error() string { return e.Err.Error() }

// CheckAuthorize checks an authorization request made to issuer. An
// unknown client or a redirect_uri it did not register is an *Error to show
// the person; anything else wrong is a *RedirectError.
func (s *Service) CheckAuthorize(ctx context.Context, issuer string, req AuthRequest) (*Pending, error) {
	c, err := s.Client(ctx, req.ClientID)
	if err != nil {
		return nil, err
	}
	if req.RedirectURI == "" {
		if len(c.RedirectURIs) != 1 {
			return nil, invalidRequest("redirect_uri is missing")
		}
		req.RedirectURI = c.RedirectURIs[0]
	}
	if !c.redirectAllowed(req.RedirectURI) {
		return nil, invalidRequest("redirect_uri %q is not one the client %q registered", clip(req.RedirectURI, 200), c.Name)
	}
	fail := func(code, format string, args ...any) error {
		return &RedirectError{Err: oauthErr(http.StatusBadRequest, code, format, args...), To: errorRedirect(req, issuer, code, format, args...)}
	}
	switch {
	case req.ResponseType != "code":
		return nil, fail("unsupported_response_type", "response_type must be code")
	case req.CodeChallenge == "":
		return nil, fail("invalid_request", "code_challenge is missing: PKCE (S256) is required")
	case req.CodeChallengeMethod != "S256":
		return nil, fail("invalid_request", "code_challenge_method must be S256")
	case len(req.CodeChallenge) != 43 || !base64url(req.CodeChallenge):
		return nil, fail("invalid_request", "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)")
	case req.Resource == "":
		return nil, fail("invalid_target", "resource is missing: name the MCP URL the token is for (RFC 8707)")
	case len(req.State) > 1000 || len(req.Scope) > 1000:
		return nil, fail("invalid_request", "state or scope is too long")
	}
	ws, ok := mcpWorkspace(issuer, req.Resource)
	if !ok {
		return nil, fail("invalid_target", "resource %q is not an MCP endpoint of this server (%s/mcp, or %s/w/WORKSPACE/mcp)", clip(req.Resource, 200), issuer, issuer)
	}
	req.Resource = Resource(req.Resource)
	return &Pending{Request: req, Client: c, Issuer: issuer, Workspace: ws, Ceiling: ceiling(req.Scope)}, nil
}

func base64url(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// errorRedirect is the client's redirect_uri carrying an error, its state
// and the issuer (RFC 9207).
func errorRedirect(req AuthRequest, issuer, code, format string, args ...any) string {
	v := url.Values{"error": {code}, "error_description": {oauthErr(0, code, format, args...).Description}, "iss": {issuer}}
	if req.State != "" {
		v.Set("state", req.State)
	}
	return withQuery(req.RedirectURI, v)
}

func withQuery(uri string, v url.Values) string {
	sep := "?"
	if strings.Contains(uri, "?") {
		sep = "&"
	}
	return uri + sep + v.Encode()
}

// Denied is where the client is sent when the person says no.
func (p *Pending) Denied() string {
	return errorRedirect(p.Request, p.Issuer, "access_denied", "the person declined")
}

// A Choice is a workspace the person may grant, with the roles they may
// give and the agents the client may act as there.
type Choice struct {
	Workspace string
	Role      atrium.Role // the person's own
	Roles     []atrium.Role
	Agents    []string // agents the person administers there (admins only)
}

// Choices are what person may consent to for p: each workspace they belong
// to (only the one the resource names, if it names one), the roles up to
// their own and the scope's ceiling, and, where they are admin, the agents
// that are members there.
func (s *Service) Choices(ctx context.Context, person int64, p *Pending) ([]Choice, error) {
	var out []Choice
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ms, err := tx.Memberships(ctx, person)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if p.Workspace != "" && m.Workspace.Name != p.Workspace {
				continue
			}
			c := Choice{Workspace: m.Workspace.Name, Role: m.Role}
			for _, r := range []atrium.Role{atrium.RoleReader, atrium.RoleWriter, atrium.RoleAdmin} {
				if m.Role.Allows(r) && p.Ceiling.Allows(r) {
					c.Roles = append(c.Roles, r)
				}
			}
			if m.Role == atrium.RoleAdmin {
				members, err := tx.Members(ctx, m.Workspace.ID)
				if err != nil {
					return err
				}
				for _, a := range members {
					if a.Principal.Kind == atrium.KindAgent {
						c.Agents = append(c.Agents, a.Principal.Handle)
					}
				}
			}
			out = append(out, c)
		}
		return nil
	})
	return out, err
}

// A Consent is what the person chose: the workspace, the role, and whom the
// client acts as ("" : the person).
type Consent struct {
	Workspace string
	Role      atrium.Role
	As        string
}

// Approve records person's consent to p and returns where to send the
// browser: the client's redirect_uri with a code, the state and the issuer.
// The consent is checked again here, against the store as it is now: a
// role above the person's own, a workspace they are not in, or an agent
// they do not administer is refused and nothing is granted.
func (s *Service) Approve(ctx context.Context, person atrium.Principal, p *Pending, c Consent) (string, error) {
	code := secret(CodePrefix)
	err := s.update(ctx, func(tx *store.Tx) error {
		if p.Workspace != "" && c.Workspace != p.Workspace {
			return atrium.Errorf(atrium.EPermission, "this client asked for workspace %q", p.Workspace)
		}
		ws, err := tx.WorkspaceByName(ctx, c.Workspace)
		if atrium.ErrorCode(err) == atrium.ENotFound {
			return atrium.Errorf(atrium.EPermission, "no access to workspace %q", c.Workspace)
		}
		if err != nil {
			return err
		}
		own, err := tx.Role(ctx, ws.ID, person.ID)
		if err != nil {
			return err
		}
		switch {
		case own == "":
			return atrium.Errorf(atrium.EPermission, "no access to workspace %q", c.Workspace)
		case !c.Role.Valid():
			return atrium.Errorf(atrium.EInvalid, "choose a role: reader, writer or admin")
		case !own.Allows(c.Role):
			return atrium.Errorf(atrium.EPermission, "you are %s in %q, so you cannot grant %s", own, c.Workspace, c.Role)
		case !p.Ceiling.Allows(c.Role):
			return atrium.Errorf(atrium.EPermission, "the client asked for at most %s", p.Ceiling)
		}
		actAs := person
		if c.As != "" && c.As != person.Handle {
			if own != atrium.RoleAdmin {
				return atrium.Errorf(atrium.EPermission, "only an admin of %q may let a client act as an agent", c.Workspace)
			}
			agent, err := tx.PrincipalByHandle(ctx, c.As)
			if atrium.ErrorCode(err) == atrium.ENotFound || err == nil && agent.Kind != atrium.KindAgent {
				return atrium.Errorf(atrium.ENotFound, "no agent %q", c.As)
			}
			if err != nil {
				return err
			}
			if r, err := tx.Role(ctx, ws.ID, agent.ID); err != nil || r == "" {
				if err == nil {
					err = atrium.Errorf(atrium.ENotFound, "agent %q is not a member of %q", c.As, c.Workspace)
				}
				return err
			}
			actAs = agent
		}
		return tx.InsertOAuthCode(ctx, store.OAuthCode{
			ClientID: p.Client.ID, PrincipalID: actAs.ID, WorkspaceID: ws.ID, ApprovedBy: person.ID, Role: c.Role,
			Resource: p.Request.Resource, RedirectURI: p.Request.RedirectURI, Challenge: p.Request.CodeChallenge,
			ExpiresAt: tx.Now().Add(s.cfg.CodeLifetime),
		}, identity.HashToken(code))
	})
	if err != nil {
		return "", err
	}
	v := url.Values{"code": {code}, "iss": {p.Issuer}}
	if p.Request.State != "" {
		v.Set("state", p.Request.State)
	}
	return withQuery(p.Request.RedirectURI, v), nil
}

// A TokenResponse is the token endpoint's answer.
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

// Token answers the token endpoint: form is the request's body, clientID
// the client it authenticated as (the form's client_id, or HTTP Basic's).
func (s *Service) Token(ctx context.Context, form url.Values, clientID string) (TokenResponse, error) {
	if clientID == "" {
		return TokenResponse{}, invalidClient("client_id is missing")
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		return s.exchange(ctx, form, clientID)
	case "refresh_token":
		return s.refresh(ctx, form, clientID)
	case "":
		return TokenResponse{}, invalidRequest("grant_type is missing")
	}
	return TokenResponse{}, oauthErr(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
}

// exchange trades a code for a grant's first tokens. A code used twice
// revokes the grant the first use made: one of the two was a thief.
func (s *Service) exchange(ctx context.Context, form url.Values, clientID string) (TokenResponse, error) {
	code, verifier := form.Get("code"), form.Get("code_verifier")
	switch {
	case !strings.HasPrefix(code, CodePrefix):
		return TokenResponse{}, invalidGrant("the code is invalid, expired or used")
	case verifier == "":
		return TokenResponse{}, invalidRequest("code_verifier is missing: PKCE is required")
	case len(verifier) < 43 || len(verifier) > 128:
		return TokenResponse{}, invalidGrant("code_verifier must be 43 to 128 characters")
	}
	if _, err := s.Client(ctx, clientID); err != nil {
		return TokenResponse{}, err
	}
	var out TokenResponse
	var replayed bool
	hash := identity.HashToken(code)
	err := s.update(ctx, func(tx *store.Tx) error {
		c, err := tx.OAuthCodeByHash(ctx, hash)
		if atrium.ErrorCode(err) == atrium.ENotFound {
			return invalidGrant("the code is invalid, expired or used")
		}
		if err != nil {
			return err
		}
		if c.TokenID != 0 {
			replayed = true
			if err := tx.RevokeToken(ctx, c.TokenID); err != nil {
				return err
			}
			return tx.EmitJSON(ctx, c.WorkspaceID, 0, "token.revoked", clientID, map[string]any{"token_id": c.TokenID, "reason": "authorization code replayed"})
		}
		switch {
		case c.ClientID != clientID:
			return invalidGrant("the code was issued to another client")
		case !tx.Now().Before(c.ExpiresAt):
			return invalidGrant("the code is invalid, expired or used")
		case form.Get("redirect_uri") != "" && form.Get("redirect_uri") != c.RedirectURI:
			return invalidGrant("redirect_uri differs from the authorization request's")
		case !verifies(verifier, c.Challenge):
			return invalidGrant("code_verifier does not match the code_challenge")
		case form.Get("resource") != "" && Resource(form.Get("resource")) != c.Resource:
			return oauthErr(http.StatusBadRequest, "invalid_target", "resource differs from the authorization request's (%s)", c.Resource)
		}
		cl, err := tx.OAuthClientByID(ctx, clientID)
		name := clientID
		if err == nil {
			name = cl.Name
		}
		p, err := tx.PrincipalByID(ctx, c.PrincipalID)
		if err != nil {
			return err
		}
		grant, err := tx.CreateOAuthGrant(ctx, atrium.Token{PrincipalID: c.PrincipalID, WorkspaceID: c.WorkspaceID, Name: clip("OAuth: "+name, 120),
			Client: clientID, Resource: c.Resource, RoleCap: c.Role}, c.ApprovedBy, identity.HashToken(secret("grant_")))
		if err != nil {
			return err
		}
		if err := tx.SetOAuthCodeGrant(ctx, hash, grant.ID); err != nil {
			return err
		}
		if err := tx.TouchOAuthClient(ctx, clientID); err != nil {
			return err
		}
		if err := tx.EmitJSON(ctx, c.WorkspaceID, c.ApprovedBy, "token.created", p.Handle, map[string]any{
			"token_id": grant.ID, "name": grant.Name, "client": clientID, "resource": c.Resource, "role": c.Role}); err != nil {
			return err
		}
		out, err = s.issue(ctx, tx, grant.ID, c.Role)
		return err
	})
	if err == nil && replayed {
		return TokenResponse{}, invalidGrant("the code is invalid, expired or used")
	}
	return out, err
}

// verifies reports whether verifier answers the PKCE S256 challenge.
func verifies(verifier, challenge string) bool {
	sum := sha256.Sum256([]byte(verifier))
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(want), []byte(challenge)) == 1
}

// issue makes a new access and refresh token of grant.
func (s *Service) issue(ctx context.Context, tx *store.Tx, grant int64, role atrium.Role) (TokenResponse, error) {
	access, refresh := secret(AccessPrefix), secret(RefreshPrefix)
	if err := tx.InsertOAuthSecret(ctx, grant, "access", identity.HashToken(access), tx.Now().Add(s.cfg.AccessLifetime)); err != nil {
		return TokenResponse{}, err
	}
	if err := tx.InsertOAuthSecret(ctx, grant, "refresh", identity.HashToken(refresh), tx.Now().Add(s.cfg.RefreshLifetime)); err != nil {
		return TokenResponse{}, err
	}
	return TokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(s.cfg.AccessLifetime / time.Second), RefreshToken: refresh, Scope: role.Scope()}, nil
}

// refresh trades a refresh token for a new pair. The token given is rotated
// out; the one rotated just before is still taken within the grace, and any
// older one — or that one after the grace — revokes the grant: a refresh
// token used twice has been copied.
func (s *Service) refresh(ctx context.Context, form url.Values, clientID string) (TokenResponse, error) {
	tok := form.Get("refresh_token")
	if !strings.HasPrefix(tok, RefreshPrefix) {
		return TokenResponse{}, invalidGrant("the refresh token is invalid, expired or revoked")
	}
	var out TokenResponse
	var reused bool
	hash := identity.HashToken(tok)
	err := s.update(ctx, func(tx *store.Tx) error {
		sec, err := tx.OAuthSecretByHash(ctx, hash)
		if atrium.ErrorCode(err) == atrium.ENotFound {
			return invalidGrant("the refresh token is invalid, expired or revoked")
		}
		if err != nil {
			return err
		}
		switch {
		case sec.Kind != "refresh" || sec.Revoked || !tx.Now().Before(sec.ExpiresAt):
			return invalidGrant("the refresh token is invalid, expired or revoked")
		case sec.Client != clientID:
			return invalidGrant("the refresh token was issued to another client")
		case form.Get("resource") != "" && Resource(form.Get("resource")) != sec.Resource:
			return oauthErr(http.StatusBadRequest, "invalid_target", "this grant is for %s", sec.Resource)
		}
		if !sec.RotatedAt.IsZero() {
			newest, err := tx.NewestRefresh(ctx, sec.TokenID, hash)
			if err != nil {
				return err
			}
			if !newest || tx.Now().Sub(sec.RotatedAt) > s.cfg.RefreshGrace {
				reused = true
				if err := tx.RevokeToken(ctx, sec.TokenID); err != nil {
					return err
				}
				t, err := tx.TokenByID(ctx, sec.TokenID)
				if err != nil {
					return err
				}
				return tx.EmitJSON(ctx, t.WorkspaceID, 0, "token.revoked", t.Principal, map[string]any{"token_id": sec.TokenID, "reason": "refresh token reused"})
			}
		} else if err := tx.RotateOAuthSecret(ctx, hash); err != nil {
			return err
		}
		t, err := tx.TokenByID(ctx, sec.TokenID)
		if err != nil {
			return err
		}
		if err := tx.TouchOAuthClient(ctx, clientID); err != nil {
			return err
		}
		out, err = s.issue(ctx, tx, sec.TokenID, t.RoleCap)
		return err
	})
	if err == nil && reused {
		return TokenResponse{}, invalidGrant("this refresh token was already used: the grant is revoked; sign in again")
	}
	return out, err
}

// Revoke revokes the grant of an access or refresh token (RFC 7009), and
// every token issued under it. An unknown token, or one of another client,
// is no error: the answer says nothing about tokens the caller does not hold.
func (s *Service) Revoke(ctx context.Context, token, clientID string) error {
	if token == "" {
		return invalidRequest("token is missing")
	}
	if !strings.HasPrefix(token, AccessPrefix) && !strings.HasPrefix(token, RefreshPrefix) {
		return nil
	}
	hash := identity.HashToken(token)
	return s.update(ctx, func(tx *store.Tx) error {
		sec, err := tx.OAuthSecretByHash(ctx, hash)
		if atrium.ErrorCode(err) == atrium.ENotFound || err == nil && (sec.Revoked || clientID != "" && sec.Client != clientID) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := tx.RevokeToken(ctx, sec.TokenID); err != nil {
			return err
		}
		t, err := tx.TokenByID(ctx, sec.TokenID)
		if err != nil {
			return err
		}
		return tx.EmitJSON(ctx, t.WorkspaceID, 0, "token.revoked", t.Principal, map[string]any{"token_id": sec.TokenID, "reason": "revoked by its client"})
	})
}
