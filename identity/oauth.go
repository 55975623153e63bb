package identity

import (
	"context"
	"strings"
	"time"

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
	// A client's use is in the audit log, not only its last-used time: at
	// most one token.used a minute per grant, written in the background.
	id, ws, principal, handle, client := g.TokenID, a.Workspace.ID, a.Principal.ID, a.Principal.Handle, g.Client
	s.recordUse(id, func(ctx context.Context, tx *store.Tx, now time.Time) error {
		if err := tx.TouchToken(ctx, id, now); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, ws, principal, "token.used", handle, map[string]any{"token_id": id, "client": client, "resource": resource})
	})
	return a, nil
}

// Connections are the OAuth grants of the caller: those acting as them and
// those they approved for agents, newest first, revoked ones included.
func (s *Service) Connections(ctx context.Context) ([]atrium.Token, error) {
	a := atrium.ActorFromContext(ctx)
	if a == nil || a.Principal.ID == 0 {
		return nil, atrium.Errorf(atrium.EUnauthenticated, "sign in to see the clients you connected")
	}
	var out []atrium.Token
	err := s.db.View(ctx, func(tx *store.Tx) error {
		all, err := tx.Tokens(ctx, a.Principal.ID)
		for i := len(all) - 1; i >= 0; i-- {
			if all[i].Client != "" {
				out = append(out, all[i])
			}
		}
		return err
	})
	return out, err
}

// RevokeConnection revokes an OAuth grant of the caller's (see
// Connections): it and every token issued under it stop working at once.
func (s *Service) RevokeConnection(ctx context.Context, id int64) error {
	a := atrium.ActorFromContext(ctx)
	if a == nil || a.Principal.ID == 0 {
		return atrium.Errorf(atrium.EUnauthenticated, "sign in to revoke a client you connected")
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		t, err := tx.TokenByID(ctx, id)
		if err != nil || t.Client == "" || t.PrincipalID != a.Principal.ID && t.ApprovedBy != a.Principal.Handle {
			return atrium.Errorf(atrium.ENotFound, "no connected client %d of yours", id)
		}
		if err := tx.RevokeToken(ctx, id); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, t.WorkspaceID, a.Principal.ID, "token.revoked", t.Principal, map[string]any{"token_id": id, "reason": "revoked by the person who connected it"})
	})
}

// ExternalActor is the actor of principal handle, whom an external issuer's
// token names, in workspace: an existing principal with its role there,
// never one made up on the way (an issuer's users are not Atrium's until an
// admin gives them a role).
func (s *Service) ExternalActor(ctx context.Context, handle, workspace string) (*atrium.Actor, error) {
	if workspace == "" {
		workspace = atrium.DefaultWorkspace
	}
	var g store.Grant
	err := s.db.Read(ctx, func(tx *store.Tx) (err error) {
		g, err = tx.HandleGrant(ctx, handle, workspace)
		return err
	})
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return nil, atrium.Errorf(atrium.EPermission, "%s is signed in by the issuer but is no principal of Atrium: an admin gives them a role (atrium token create --principal %s --workspace NAME --role R)", handle, handle)
	}
	if err != nil {
		return nil, err
	}
	return actorOf(g, workspace)
}
