package identity

import (
	"context"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// AccessPrefix starts every OAuth access token (package oauth issues them):
// a bearer credential of a grant a person consented to, for one MCP URL.
const AccessPrefix = "ato_"

// AuthenticateAccess is Authenticate for an OAuth access token, presented at
// resource (the MCP URL of the request): a token works only at the URL it was
// issued for (RFC 8707), only until it expires, and never with more than the
// role the person consented to.
func (s *Service) AuthenticateAccess(ctx context.Context, secret, workspace, resource string) (*atrium.Actor, error) {
	if !strings.HasPrefix(secret, AccessPrefix) {
		return nil, atrium.Errorf(atrium.EUnauthenticated, "invalid token")
	}
	var g store.Grant
	err := s.db.Read(ctx, func(tx *store.Tx) (err error) {
		g, err = tx.AccessGrant(ctx, HashToken(secret), workspace)
		return err
	})
	switch {
	case atrium.ErrorCode(err) == atrium.ENotFound || err == nil && g.Revoked:
		return nil, atrium.Errorf(atrium.EUnauthenticated, "invalid, expired or revoked access token: refresh it or sign in again")
	case err != nil:
		return nil, err
	case g.Resource != resource:
		return nil, atrium.Errorf(atrium.EUnauthenticated, "this access token was issued for %s, not %s", g.Resource, resource)
	case g.BoundTo != "" && workspace != "" && workspace != g.BoundTo:
		return nil, atrium.Errorf(atrium.EPermission, "this access token is for workspace %q, not %q", g.BoundTo, workspace)
	}
	a, err := actorOf(g, workspace)
	if err != nil {
		return nil, err
	}
	if g.RoleCap.Valid() && !g.RoleCap.Allows(a.Role) {
		a.Capped, a.Role = a.Role, g.RoleCap
	}
	s.touch(g.TokenID)
	return a, nil
}
