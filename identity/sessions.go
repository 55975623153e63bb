package identity

import (
	"context"
	"crypto/rand"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// SessionPrefix starts every browser session secret. A browser's cookie holds
// one of these, never a bearer token: a session can be listed, expires and is
// revoked alone, and a stolen cookie is not a token that works over MCP.
const SessionPrefix = "ats_"

// SessionLifetime is how long a browser stays signed in.
const SessionLifetime = 30 * 24 * time.Hour

// Login turns a bearer token into a browser session in workspace and returns
// the session's secret, shown to no one but the browser's cookie.
func (s *Service) Login(ctx context.Context, token, workspace, userAgent string) (string, *atrium.Actor, error) {
	a, err := s.Authenticate(ctx, token, workspace)
	if err != nil {
		return "", nil, err
	}
	secret := SessionPrefix + rand.Text()
	if len(userAgent) > 200 {
		userAgent = userAgent[:200]
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		g, err := tx.TokenGrant(ctx, HashToken(token), workspace)
		if err != nil {
			return err
		}
		bs := store.BrowserSession{TokenID: g.TokenID, UserAgent: userAgent, ExpiresAt: tx.Now().Add(SessionLifetime)}
		if err := tx.InsertSession(ctx, &bs, HashToken(secret)); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, "session.created", a.Principal.Handle, map[string]any{"session": bs.ID})
	})
	if err != nil {
		return "", nil, err
	}
	return secret, a, nil
}

// AuthenticateSession is Authenticate for a browser session's secret.
func (s *Service) AuthenticateSession(ctx context.Context, secret, workspace string) (*atrium.Actor, error) {
	const ended = "your browser session has ended (signed out, expired or revoked): sign in again"
	if len(secret) <= len(SessionPrefix) || secret[:len(SessionPrefix)] != SessionPrefix {
		return nil, atrium.Errorf(atrium.EUnauthenticated, ended)
	}
	var g store.Grant
	hash := HashToken(secret)
	err := s.db.Read(ctx, func(tx *store.Tx) (err error) {
		g, err = tx.SessionGrant(ctx, hash, workspace)
		return err
	})
	switch {
	case atrium.ErrorCode(err) == atrium.ENotFound || err == nil && g.Revoked:
		return nil, atrium.Errorf(atrium.EUnauthenticated, ended)
	case err != nil:
		return nil, err
	case g.BoundTo != "" && workspace != "" && workspace != g.BoundTo:
		return nil, atrium.Errorf(atrium.EPermission, "this session is for workspace %q, not %q", g.BoundTo, workspace)
	}
	a, err := actorOf(g, workspace)
	if err != nil {
		return nil, err
	}
	s.touchSession(hash)
	return a, nil
}

// touchSession records a session's use, as touch does a token's.
func (s *Service) touchSession(hash string) {
	s.recordUse(hash, func(ctx context.Context, tx *store.Tx, now time.Time) error { return tx.TouchSession(ctx, hash, now) })
}

// Logout ends the session whose secret a browser held. Ending one that has
// already ended is no error. Like a revocation it writes session.revoked,
// which ends the session's open event streams at once.
func (s *Service) Logout(ctx context.Context, secret string) error {
	hash := HashToken(secret)
	return s.db.Update(ctx, func(tx *store.Tx) error {
		g, err := tx.SessionGrant(ctx, hash, "")
		switch {
		case atrium.ErrorCode(err) == atrium.ENotFound:
			return nil // expired, revoked or never was: nothing to end
		case err != nil:
			return err
		}
		if _, err := tx.RevokeSession(ctx, 0, hash); err != nil {
			return err
		}
		return sessionEnded(ctx, tx, g.TokenID, g.Principal.ID, g.Principal.Handle, map[string]any{"signed_out": true})
	})
}

// sessionEnded records that a session of token ended, by actor (0: the
// system). The event belongs to the token's workspace; a token that works
// in any of its principal's workspaces gets one of no workspace, which
// every event stream checks itself against (see activity.Follow).
func sessionEnded(ctx context.Context, tx *store.Tx, token, actor int64, handle string, payload map[string]any) error {
	t, err := tx.TokenByID(ctx, token)
	if err != nil {
		return err
	}
	return tx.EmitJSON(ctx, t.WorkspaceID, actor, "session.revoked", handle, payload)
}

// Sessions lists the live browser sessions of principal handle, or of
// everyone when handle is "".
func (s *Service) Sessions(ctx context.Context, handle string) ([]BrowserSession, error) {
	var out []BrowserSession
	err := s.db.View(ctx, func(tx *store.Tx) error {
		sessions, err := tx.Sessions(ctx, handle)
		for _, bs := range sessions {
			out = append(out, BrowserSession(bs))
		}
		return err
	})
	return out, err
}

// A BrowserSession is a signed-in browser: the token it signed in with,
// whose it is, what browser, and its times.
type BrowserSession struct {
	ID        int64
	TokenID   int64
	Principal string
	UserAgent string
	CreatedAt time.Time
	LastSeen  time.Time
	ExpiresAt time.Time
	Revoked   bool
}

// RevokeSession ends session id (an operator's sign-out of someone's
// browser, from the command line); its open event streams end at once.
func (s *Service) RevokeSession(ctx context.Context, id int64) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		bs, err := tx.SessionByID(ctx, id) // a live one
		live := err == nil
		if err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
			return err
		}
		found, err := tx.RevokeSession(ctx, id, "")
		switch {
		case err != nil:
			return err
		case !found:
			return atrium.Errorf(atrium.ENotFound, "no browser session %d (atrium session list shows them)", id)
		case !live:
			return nil // it had ended already: nothing more to say
		}
		return sessionEnded(ctx, tx, bs.TokenID, 0, bs.Principal, map[string]any{"session": id})
	})
}

// SessionPerson is the principal a browser session's secret signs in, and
// the workspace its token is bound to ("" : any of theirs), whatever
// workspace they are in: the consent page asks who is there before it asks
// where.
func (s *Service) SessionPerson(ctx context.Context, secret string) (atrium.Principal, string, error) {
	return s.person(ctx, "your browser session has ended: sign in again", func(tx *store.Tx) (store.Grant, error) {
		return tx.SessionGrant(ctx, HashToken(secret), "")
	})
}

// TokenPerson is SessionPerson for an API token: a script may answer a
// consent page with the person's token instead of a browser's session.
func (s *Service) TokenPerson(ctx context.Context, secret string) (atrium.Principal, string, error) {
	return s.person(ctx, "invalid or revoked token", func(tx *store.Tx) (store.Grant, error) {
		if !strings.HasPrefix(secret, TokenPrefix) {
			return store.Grant{}, atrium.Errorf(atrium.ENotFound, "not a token")
		}
		return tx.TokenGrant(ctx, HashToken(secret), "")
	})
}

// person is the principal and bound workspace of the grant read reads, or
// unauthenticated with ended when there is none or it was revoked.
func (s *Service) person(ctx context.Context, ended string, read func(*store.Tx) (store.Grant, error)) (atrium.Principal, string, error) {
	var g store.Grant
	err := s.db.Read(ctx, func(tx *store.Tx) (err error) {
		g, err = read(tx)
		return err
	})
	if atrium.ErrorCode(err) == atrium.ENotFound || err == nil && g.Revoked {
		return atrium.Principal{}, "", atrium.Errorf(atrium.EUnauthenticated, "%s", ended)
	}
	return g.Principal, g.BoundTo, err
}
