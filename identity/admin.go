package identity

import (
	"context"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// Workspace administration, for the caller in context, who must be an admin
// of their workspace: they see and change that workspace's members, tokens
// and sessions, nothing of any other. A token that also works in a workspace
// they do not administer (an unbound token of someone who belongs there too)
// is shown, since it reaches into theirs, but is not theirs to revoke: they
// can take the member out of their workspace instead.

// A WorkspaceToken is a token as its workspace's admin sees it; the secret
// is never here.
type WorkspaceToken struct {
	atrium.Token
	Revocable bool // the caller may revoke it
}

// A WorkspaceSession is a signed-in browser as its workspace's admin sees it.
type WorkspaceSession struct {
	BrowserSession
	Revocable bool // the caller may end it
}

// A Member is a principal of a workspace and its role there.
type Member struct {
	Principal atrium.Principal
	Role      atrium.Role
}

// Administration is what the admin page shows of the caller's workspace.
type Administration struct {
	Members  []Member
	Tokens   []WorkspaceToken
	Sessions []WorkspaceSession
	// Workspaces are the caller's own memberships, this one among them.
	Workspaces []Membership
}

// requireAdmin is the caller, who must be an admin of their workspace.
func requireAdmin(ctx context.Context) (*atrium.Actor, error) {
	return atrium.RequireActor(ctx, atrium.RoleAdmin)
}

// administer runs fn in one write for the caller, who must be an admin of
// their workspace.
func (s *Service) administer(ctx context.Context, fn func(*store.Tx, *atrium.Actor) error) error {
	a, err := requireAdmin(ctx)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error { return fn(tx, a) })
}

// Administration reads everything the admin page shows, in one snapshot.
func (s *Service) Administration(ctx context.Context) (Administration, error) {
	var out Administration
	a, err := requireAdmin(ctx)
	if err != nil {
		return out, err
	}
	ws := a.Workspace.ID
	err = s.db.View(ctx, func(tx *store.Tx) error {
		members, err := tx.Members(ctx, ws)
		if err != nil {
			return err
		}
		for _, m := range members {
			out.Members = append(out.Members, Member(m))
		}
		shared, err := tx.MembersElsewhere(ctx, ws, a.Principal.ID)
		if err != nil {
			return err
		}
		tokens, err := tx.WorkspaceTokens(ctx, ws)
		if err != nil {
			return err
		}
		revocable := map[int64]bool{}
		for _, t := range tokens {
			revocable[t.ID] = t.WorkspaceID == ws || !shared[t.PrincipalID] || t.PrincipalID == a.Principal.ID
			out.Tokens = append(out.Tokens, WorkspaceToken{Token: t, Revocable: revocable[t.ID]})
		}
		sessions, err := tx.WorkspaceSessions(ctx, ws)
		if err != nil {
			return err
		}
		for _, bs := range sessions {
			out.Sessions = append(out.Sessions, WorkspaceSession{BrowserSession: BrowserSession(bs), Revocable: revocable[bs.TokenID]})
		}
		out.Workspaces, err = memberships(ctx, tx, a.Principal, atrium.Workspace{})
		return err
	})
	return out, err
}

// workspaceToken returns token id if it works in the caller's workspace, and
// refuses one the caller may not revoke. A token of another workspace is
// not found: its existence is that workspace's business.
func workspaceToken(ctx context.Context, tx *store.Tx, a *atrium.Actor, id int64) (atrium.Token, error) {
	t, err := tx.TokenByID(ctx, id)
	notFound := atrium.Errorf(atrium.ENotFound, "token %d does not work in workspace %s", id, a.Workspace.Name)
	switch {
	case atrium.ErrorCode(err) == atrium.ENotFound:
		return t, notFound
	case err != nil:
		return t, err
	case t.WorkspaceID == a.Workspace.ID:
		return t, nil
	case t.WorkspaceID != 0:
		return t, notFound
	}
	role, err := tx.Role(ctx, a.Workspace.ID, t.PrincipalID)
	if err != nil {
		return t, err
	}
	if role == "" {
		return t, notFound
	}
	if t.PrincipalID == a.Principal.ID {
		// Their own: shared or not, revoking it takes nothing from
		// anyone else.
		return t, nil
	}
	shared, err := tx.BelongsElsewhere(ctx, t.PrincipalID, a.Principal.ID)
	if err != nil {
		return t, err
	}
	if shared {
		return t, atrium.Errorf(atrium.EPermission, "token %d of %s also works in workspaces you do not administer, so it is not yours to revoke: remove %s from workspace %s instead",
			id, t.Principal, t.Principal, a.Workspace.Name)
	}
	return t, nil
}

// RevokeWorkspaceToken revokes a token that works in the caller's workspace;
// it stops working at once, and so do the browsers signed in with it.
func (s *Service) RevokeWorkspaceToken(ctx context.Context, id int64) (atrium.Token, error) {
	var t atrium.Token
	err := s.administer(ctx, func(tx *store.Tx, a *atrium.Actor) error {
		var err error
		if t, err = workspaceToken(ctx, tx, a, id); err != nil {
			return err
		}
		if err := tx.RevokeToken(ctx, id); err != nil {
			return err
		}
		if t, err = tx.TokenByID(ctx, id); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, "token.revoked", t.Principal, map[string]any{"token_id": id})
	})
	return t, err
}

// RevokeWorkspaceSession signs out a browser whose token the caller may
// revoke; its next request is anonymous.
func (s *Service) RevokeWorkspaceSession(ctx context.Context, id int64) error {
	return s.administer(ctx, func(tx *store.Tx, a *atrium.Actor) error {
		bs, err := tx.SessionByID(ctx, id)
		if err == nil {
			_, err = workspaceToken(ctx, tx, a, bs.TokenID)
		}
		switch atrium.ErrorCode(err) {
		case "":
		case atrium.ENotFound:
			return atrium.Errorf(atrium.ENotFound, "no browser session %d in workspace %s", id, a.Workspace.Name)
		case atrium.EPermission:
			return atrium.Errorf(atrium.EPermission, "session %d is of %s, who also belongs to workspaces you do not administer: remove %s from workspace %s instead",
				id, bs.Principal, bs.Principal, a.Workspace.Name)
		default:
			return err
		}
		if _, err := tx.RevokeSession(ctx, id, ""); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, "session.revoked", bs.Principal, map[string]any{"session": id})
	})
}

// WorkspaceTokenRequest asks for a token bound to the caller's workspace.
type WorkspaceTokenRequest struct {
	Principal string               // handle; created when missing
	Kind      atrium.PrincipalKind // of a principal created here; default human
	Role      atrium.Role          // its role in the workspace; empty: keep a member's, writer for a new one
	Name      string               // what the token is for
}

// IssueWorkspaceToken creates a token bound to the caller's workspace, for a
// new principal, one that belongs only to workspaces the caller administers,
// or the caller. Its secret is in the result only: it is never shown again.
func (s *Service) IssueWorkspaceToken(ctx context.Context, r WorkspaceTokenRequest) (Issued, error) {
	var is Issued
	err := s.administer(ctx, func(tx *store.Tx, a *atrium.Actor) error {
		if err := checkTokenRequest(r.Principal, &r.Kind, r.Role); err != nil {
			return err
		}
		p, err := tx.PrincipalByHandle(ctx, r.Principal)
		switch code := atrium.ErrorCode(err); {
		case code == atrium.ENotFound:
			is.NewPrincipal = true
			if p, err = ensurePrincipal(ctx, tx, r.Principal, r.Kind, ""); err != nil {
				return err
			}
		case err != nil:
			return err
		case p.ID != a.Principal.ID:
			shared, err := tx.BelongsElsewhere(ctx, p.ID, a.Principal.ID)
			if err != nil {
				return err
			}
			if shared {
				return atrium.Errorf(atrium.EPermission, "%s also belongs to workspaces you do not administer, so it is not yours to give a token: the server's operator can, with: atrium token create --principal %s --workspace %s",
					p.Handle, p.Handle, a.Workspace.Name)
			}
		}
		if is.Changed, err = changeRole(ctx, tx, a, p, r.Role, false); err != nil {
			return err
		}
		if is.Grants, err = memberships(ctx, tx, p, a.Workspace); err != nil {
			return err
		}
		is.Secret, is.Token, err = createToken(ctx, tx, p, a.Workspace, r.Name, a.Principal.ID)
		return err
	})
	if err != nil {
		return Issued{}, err
	}
	return is, nil
}

// SetMemberRole changes a member's role in the caller's workspace. The last
// admin cannot step down: the workspace would have no one to run it.
func (s *Service) SetMemberRole(ctx context.Context, handle string, role atrium.Role) (*RoleChange, error) {
	var c *RoleChange
	err := s.administer(ctx, func(tx *store.Tx, a *atrium.Actor) error {
		if err := checkRole(role); err != nil {
			return err
		}
		p, err := member(ctx, tx, a, handle)
		if err != nil {
			return err
		}
		c, err = changeRole(ctx, tx, a, p, role, true)
		return err
	})
	return c, err
}

// RemoveMember takes a principal out of the caller's workspace: its tokens
// and sessions stop working there. The last admin cannot leave.
func (s *Service) RemoveMember(ctx context.Context, handle string) error {
	return s.administer(ctx, func(tx *store.Tx, a *atrium.Actor) error {
		p, err := member(ctx, tx, a, handle)
		if err != nil {
			return err
		}
		if err := keepAnAdmin(ctx, tx, a, p, ""); err != nil {
			return err
		}
		if _, err := tx.RemoveMember(ctx, a.Workspace.ID, p.ID); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, "member.removed", p.Handle, nil)
	})
}

// member is the principal handle, who must belong to the caller's workspace.
func member(ctx context.Context, tx *store.Tx, a *atrium.Actor, handle string) (atrium.Principal, error) {
	g, err := tx.HandleGrant(ctx, handle, a.Workspace.Name)
	if err == nil && g.Role == "" {
		err = atrium.Errorf(atrium.ENotFound, "principal %q not found", handle)
	}
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return g.Principal, atrium.Errorf(atrium.ENotFound, "%s is not a member of workspace %s", handle, a.Workspace.Name)
	}
	return g.Principal, err
}

// changeRole sets p's role in the caller's workspace (for a new member,
// writer when role is empty), keeping an admin, and records the change.
func changeRole(ctx context.Context, tx *store.Tx, a *atrium.Actor, p atrium.Principal, role atrium.Role, mustBeMember bool) (*RoleChange, error) {
	had, err := tx.Role(ctx, a.Workspace.ID, p.ID)
	if err != nil {
		return nil, err
	}
	if had == "" && mustBeMember {
		return nil, atrium.Errorf(atrium.ENotFound, "%s is not a member of workspace %s", p.Handle, a.Workspace.Name)
	}
	if role == "" && had == "" {
		role = atrium.RoleWriter
	}
	if role == "" || role == had {
		return nil, nil
	}
	if err := keepAnAdmin(ctx, tx, a, p, role); err != nil {
		return nil, err
	}
	if err := tx.SetRole(ctx, a.Workspace.ID, p.ID, role); err != nil {
		return nil, err
	}
	if err := tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, "member.role_set", p.Handle, map[string]any{"role": role, "was": had}); err != nil {
		return nil, err
	}
	return &RoleChange{Workspace: a.Workspace.Name, From: had, To: role}, nil
}

// keepAnAdmin refuses to take the admin role from p (giving it role, ""
// for none) when p is the workspace's last admin.
func keepAnAdmin(ctx context.Context, tx *store.Tx, a *atrium.Actor, p atrium.Principal, role atrium.Role) error {
	had, err := tx.Role(ctx, a.Workspace.ID, p.ID)
	if err != nil || had != atrium.RoleAdmin || role == atrium.RoleAdmin {
		return err
	}
	n, err := tx.CountRole(ctx, a.Workspace.ID, atrium.RoleAdmin)
	if err != nil || n > 1 {
		return err
	}
	who := p.Handle + " is"
	if p.ID == a.Principal.ID {
		who = "you are"
	}
	return atrium.Errorf(atrium.EConflict, "%s the last admin of workspace %s: make another member admin first, or the workspace has no one to run it", who, a.Workspace.Name)
}
