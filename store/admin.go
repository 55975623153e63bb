package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/atrium-hq/atrium"
)

// The queries of one workspace's administration: what its admin sees of the
// tokens and sessions that reach into it, and who else has a say over its
// members.

// workspaceTokens selects the tokens that work in workspace ? (twice): those
// bound to it, and the unbound ones of its members.
const workspaceTokens = `(t.workspace_id = ? OR t.workspace_id IS NULL AND EXISTS
	(SELECT 1 FROM memberships m WHERE m.workspace_id = ? AND m.principal_id = t.principal_id))`

// WorkspaceTokens lists the tokens that work in workspace ws, revoked ones
// too, oldest first.
func (tx *Tx) WorkspaceTokens(ctx context.Context, ws int64) ([]atrium.Token, error) {
	return queryAll(ctx, tx, scanToken, tokenSelect+" WHERE "+workspaceTokens+" ORDER BY t.id", ws, ws)
}

// WorkspaceSessions lists the live browser sessions of the tokens that work
// in workspace ws, newest first.
func (tx *Tx) WorkspaceSessions(ctx context.Context, ws int64) ([]BrowserSession, error) {
	return queryAll(ctx, tx, scanSession, sessionSelect+" AND "+workspaceTokens+" ORDER BY s.created_at DESC, s.id DESC", micros(tx.now), ws, ws)
}

// SessionByID returns the live session id, or not_found.
func (tx *Tx) SessionByID(ctx context.Context, id int64) (BrowserSession, error) {
	s, err := scanSession(tx.queryRow(ctx, sessionSelect+" AND s.id = ?", micros(tx.now), id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, atrium.Errorf(atrium.ENotFound, "no browser session %d", id)
	}
	return s, err
}

// Memberships lists the workspaces principal p belongs to, by name, with its
// role in each.
func (tx *Tx) Memberships(ctx context.Context, p int64) ([]Membership, error) {
	return queryAll(ctx, tx, func(sc scanner) (m Membership, err error) {
		var created int64
		var role string
		err = sc.Scan(&m.Workspace.ID, &m.Workspace.Name, &created, &role)
		m.Workspace.CreatedAt, m.Role = fromMicros(created), atrium.Role(role)
		return m, err
	}, `SELECT w.id, w.name, w.created_at, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.principal_id = ? ORDER BY w.name`, p)
}

// A Membership is a principal's role in one workspace.
type Membership struct {
	Workspace atrium.Workspace
	Role      atrium.Role
}

// elsewhere selects the principals of the set before it that belong to a
// workspace where principal ? is not an admin.
const elsewhere = ` AND NOT EXISTS (SELECT 1 FROM memberships a
	WHERE a.workspace_id = m.workspace_id AND a.principal_id = ? AND a.role = 'admin')`

// MembersElsewhere returns which members of workspace ws also belong to a
// workspace that principal admin does not administer: others have a say
// over them too.
func (tx *Tx) MembersElsewhere(ctx context.Context, ws, admin int64) (map[int64]bool, error) {
	ids, err := queryAll(ctx, tx, func(sc scanner) (id int64, err error) { return id, sc.Scan(&id) },
		`SELECT DISTINCT m.principal_id FROM memberships m
		WHERE m.principal_id IN (SELECT principal_id FROM memberships WHERE workspace_id = ?)`+elsewhere, ws, admin)
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, err
}

// BelongsElsewhere reports whether principal p belongs to a workspace that
// principal admin does not administer.
func (tx *Tx) BelongsElsewhere(ctx context.Context, p, admin int64) (bool, error) {
	var n int
	err := tx.queryRow(ctx, "SELECT COUNT(*) FROM memberships m WHERE m.principal_id = ?"+elsewhere, p, admin).Scan(&n)
	return n > 0, err
}

// RemoveMember ends principal p's membership of workspace ws, and reports
// whether it had one.
func (tx *Tx) RemoveMember(ctx context.Context, ws, p int64) (bool, error) {
	res, err := tx.exec(ctx, "DELETE FROM memberships WHERE workspace_id = ? AND principal_id = ?", ws, p)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
