package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/atrium-hq/atrium"
)

// CreateWorkspace adds a workspace; a taken name is a conflict.
func (tx *Tx) CreateWorkspace(ctx context.Context, name string) (atrium.Workspace, error) {
	w := atrium.Workspace{Name: name, CreatedAt: tx.now}
	err := tx.queryRow(ctx, "INSERT INTO workspaces (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING RETURNING id", name, micros(tx.now)).Scan(&w.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return w, atrium.Errorf(atrium.EConflict, "workspace %q already exists", name)
	}
	return w, err
}

// WorkspaceByName returns the named workspace, or not_found.
func (tx *Tx) WorkspaceByName(ctx context.Context, name string) (atrium.Workspace, error) {
	w := atrium.Workspace{Name: name}
	var created int64
	err := tx.queryRow(ctx, "SELECT id, created_at FROM workspaces WHERE name = ?", name).Scan(&w.ID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return w, atrium.Errorf(atrium.ENotFound, "workspace %q not found", name)
	}
	w.CreatedAt = fromMicros(created)
	return w, err
}

// WorkspaceByID returns a workspace by its ID, or not_found.
func (tx *Tx) WorkspaceByID(ctx context.Context, id int64) (atrium.Workspace, error) {
	w := atrium.Workspace{ID: id}
	var created int64
	err := tx.queryRow(ctx, "SELECT name, created_at FROM workspaces WHERE id = ?", id).Scan(&w.Name, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return w, atrium.Errorf(atrium.ENotFound, "workspace %d not found", id)
	}
	w.CreatedAt = fromMicros(created)
	return w, err
}

// Workspaces lists every workspace by name.
func (tx *Tx) Workspaces(ctx context.Context) ([]atrium.Workspace, error) {
	return queryAll(ctx, tx, func(sc scanner) (w atrium.Workspace, err error) {
		var created int64
		if err := sc.Scan(&w.ID, &w.Name, &created); err != nil {
			return w, err
		}
		w.CreatedAt = fromMicros(created)
		return w, nil
	}, "SELECT id, name, created_at FROM workspaces ORDER BY name")
}

// CreatePrincipal adds a principal; a taken handle is a conflict.
func (tx *Tx) CreatePrincipal(ctx context.Context, p atrium.Principal) (atrium.Principal, error) {
	p.CreatedAt = tx.now
	err := tx.queryRow(ctx, "INSERT INTO principals (handle, kind, display_name, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (handle) DO NOTHING RETURNING id",
		p.Handle, string(p.Kind), p.DisplayName, micros(tx.now)).Scan(&p.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return p, atrium.Errorf(atrium.EConflict, "principal %q already exists", p.Handle)
	}
	return p, err
}

const principalCols = "id, handle, kind, display_name, created_at"

func scanPrincipal(sc scanner) (atrium.Principal, error) {
	var p atrium.Principal
	var kind string
	var created int64
	err := sc.Scan(&p.ID, &p.Handle, &kind, &p.DisplayName, &created)
	p.Kind, p.CreatedAt = atrium.PrincipalKind(kind), fromMicros(created)
	return p, err
}

// PrincipalByHandle returns the principal with handle, or not_found.
func (tx *Tx) PrincipalByHandle(ctx context.Context, handle string) (atrium.Principal, error) {
	p, err := scanPrincipal(tx.queryRow(ctx, "SELECT "+principalCols+" FROM principals WHERE handle = ?", handle))
	if errors.Is(err, sql.ErrNoRows) {
		return p, atrium.Errorf(atrium.ENotFound, "principal %q not found", handle)
	}
	return p, err
}

// PrincipalByID returns the principal with id, or not_found.
func (tx *Tx) PrincipalByID(ctx context.Context, id int64) (atrium.Principal, error) {
	p, err := scanPrincipal(tx.queryRow(ctx, "SELECT "+principalCols+" FROM principals WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, atrium.Errorf(atrium.ENotFound, "principal %d not found", id)
	}
	return p, err
}

// A Member is a principal with its role in one workspace.
type Member struct {
	Principal atrium.Principal
	Role      atrium.Role
}

// Members lists the principals of workspace ws by handle.
func (tx *Tx) Members(ctx context.Context, ws int64) ([]Member, error) {
	return queryAll(ctx, tx, func(sc scanner) (m Member, err error) {
		var kind, role string
		var created int64
		if err := sc.Scan(&m.Principal.ID, &m.Principal.Handle, &kind, &m.Principal.DisplayName, &created, &role); err != nil {
			return m, err
		}
		m.Principal.Kind, m.Principal.CreatedAt, m.Role = atrium.PrincipalKind(kind), fromMicros(created), atrium.Role(role)
		return m, nil
	}, `SELECT p.id, p.handle, p.kind, p.display_name, p.created_at, m.role
		FROM memberships m JOIN principals p ON p.id = m.principal_id
		WHERE m.workspace_id = ? ORDER BY p.handle`, ws)
}

// Role returns the role of principal p in workspace ws, or "" when p is not a member.
func (tx *Tx) Role(ctx context.Context, ws, p int64) (atrium.Role, error) {
	var role string
	err := tx.queryRow(ctx, "SELECT role FROM memberships WHERE workspace_id = ? AND principal_id = ?", ws, p).Scan(&role)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return atrium.Role(role), err
}

// SetRole makes principal p a member of workspace ws with role, or changes its role.
func (tx *Tx) SetRole(ctx context.Context, ws, p int64, role atrium.Role) error {
	_, err := tx.exec(ctx, `INSERT INTO memberships (workspace_id, principal_id, role, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (workspace_id, principal_id) DO UPDATE SET role = excluded.role`, ws, p, string(role), micros(tx.now))
	return err
}

// CountRole counts the members of ws with role.
func (tx *Tx) CountRole(ctx context.Context, ws int64, role atrium.Role) (int, error) {
	var n int
	err := tx.queryRow(ctx, "SELECT COUNT(*) FROM memberships WHERE workspace_id = ? AND role = ?", ws, string(role)).Scan(&n)
	return n, err
}

// CreateToken stores a token by the hash of its secret.
func (tx *Tx) CreateToken(ctx context.Context, t atrium.Token, hash string) (atrium.Token, error) {
	t.CreatedAt = tx.now
	err := tx.queryRow(ctx, "INSERT INTO tokens (principal_id, workspace_id, name, hash, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
		t.PrincipalID, nullID(t.WorkspaceID), t.Name, hash, micros(tx.now)).Scan(&t.ID)
	return t, err
}

const tokenSelect = `SELECT t.id, t.principal_id, p.handle, t.workspace_id, COALESCE(w.name, ''), t.name, t.created_at, t.last_used_at, t.revoked_at,
	t.client_id, t.resource, t.role_cap, COALESCE(ap.handle, '')
	FROM tokens t JOIN principals p ON p.id = t.principal_id LEFT JOIN workspaces w ON w.id = t.workspace_id
	LEFT JOIN principals ap ON ap.id = t.approved_by`

func scanToken(sc scanner) (atrium.Token, error) {
	var t atrium.Token
	var ws, used, revoked sql.NullInt64
	var created int64
	var roleCap string
	err := sc.Scan(&t.ID, &t.PrincipalID, &t.Principal, &ws, &t.Workspace, &t.Name, &created, &used, &revoked,
		&t.Client, &t.Resource, &roleCap, &t.ApprovedBy)
	t.WorkspaceID, t.CreatedAt, t.LastUsedAt, t.RevokedAt = ws.Int64, fromMicros(created), fromNullMicros(used), fromNullMicros(revoked)
	t.RoleCap = atrium.Role(roleCap)
	return t, err
}

// TokenByHash returns the token whose secret hashes to hash, revoked or not, or not_found.
func (tx *Tx) TokenByHash(ctx context.Context, hash string) (atrium.Token, error) {
	t, err := scanToken(tx.queryRow(ctx, tokenSelect+" WHERE t.hash = ?", hash))
	if errors.Is(err, sql.ErrNoRows) {
		return t, atrium.Errorf(atrium.ENotFound, "token not found")
	}
	return t, err
}

// TokenByID returns a token by ID, or not_found.
func (tx *Tx) TokenByID(ctx context.Context, id int64) (atrium.Token, error) {
	t, err := scanToken(tx.queryRow(ctx, tokenSelect+" WHERE t.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return t, atrium.Errorf(atrium.ENotFound, "token %d not found", id)
	}
	return t, err
}

// Tokens lists tokens, of one principal when principal is not 0: its own
// and the OAuth grants it consented to for agents.
func (tx *Tx) Tokens(ctx context.Context, principal int64) ([]atrium.Token, error) {
	q, args := tokenSelect, []any{}
	if principal != 0 {
		q += " WHERE t.principal_id = ? OR t.approved_by = ?"
		args = append(args, principal, principal)
	}
	return queryAll(ctx, tx, scanToken, q+" ORDER BY t.id", args...)
}

// RevokeToken marks a token revoked; revoking twice keeps the first time.
func (tx *Tx) RevokeToken(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", micros(tx.now), id)
	return err
}

// TouchToken records that a token was used at t.
func (tx *Tx) TouchToken(ctx context.Context, id int64, t time.Time) error {
	_, err := tx.exec(ctx, "UPDATE tokens SET last_used_at = ? WHERE id = ?", micros(t), id)
	return err
}

// Meta returns the value stored under key, and whether there was one.
func (tx *Tx) Meta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := tx.queryRow(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("meta %s: %w", key, err)
	}
	return v, true, nil
}

// DeleteMeta removes key and its value.
func (tx *Tx) DeleteMeta(ctx context.Context, key string) error {
	_, err := tx.exec(ctx, "DELETE FROM meta WHERE key = ?", key)
	return err
}

// TakeTurn makes the write transactions that call it with the same name
// take turns, each until it commits, across processes and replicas: on
// PostgreSQL by an advisory lock; SQLite has one writer already.
func (tx *Tx) TakeTurn(ctx context.Context, name string) error {
	if tx.db.engine != Postgres {
		return nil
	}
	_, err := tx.exec(ctx, "SELECT pg_advisory_xact_lock(hashtext(? || current_schema()))", "atrium."+name+".")
	return err
}

// SetMeta stores value under key.
func (tx *Tx) SetMeta(ctx context.Context, key, value string) error {
	_, err := tx.exec(ctx, "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", key, value)
	return err
}

// A Grant is what a token or a local handle is allowed in one workspace.
type Grant struct {
	TokenID   int64 // 0 for a local handle
	Revoked   bool
	BoundTo   string // the workspace a token is bound to, or ""
	Principal atrium.Principal
	Workspace atrium.Workspace // ID 0: no such workspace
	Role      atrium.Role      // "": not a member
	// Of an OAuth grant: its client, the MCP URL it works at, and the role
	// the person consented to; empty for an API token.
	Client   string
	Resource string
	RoleCap  atrium.Role
}

// TokenGrant resolves the token whose secret hashes to hash in workspace (empty:
// the token's own workspace, else "default"), in one statement: it is on the
// path of every HTTP request. A token bound to another workspace than the one
// asked for comes back with Workspace for its own; the caller refuses it.
func (tx *Tx) TokenGrant(ctx context.Context, hash, workspace string) (Grant, error) {
	g, err := tx.grant(ctx, "", "t.hash = ?", hash, workspace)
	if errors.Is(err, sql.ErrNoRows) {
		return g, atrium.Errorf(atrium.ENotFound, "token not found")
	}
	return g, err
}

// SessionGrant is TokenGrant for the browser session whose secret hashes to
// hash: the grant of the token it was made from, revoked when either is, or
// when the session has expired at now.
func (tx *Tx) SessionGrant(ctx context.Context, hash, workspace string) (Grant, error) {
	g, err := tx.grant(ctx, "JOIN browser_sessions s ON s.token_id = t.id AND s.revoked_at IS NULL AND s.expires_at > ?",
		"s.hash = ?", hash, workspace, micros(tx.now))
	if errors.Is(err, sql.ErrNoRows) {
		return g, atrium.Errorf(atrium.ENotFound, "session not found")
	}
	return g, err
}

// grant reads the grant of the token that join and where select, in one
// statement.
func (tx *Tx) grant(ctx context.Context, join, where, key, workspace string, joinArgs ...any) (Grant, error) {
	if workspace == "" {
		workspace = atrium.DefaultWorkspace
	}
	var (
		g                   Grant
		revoked, wsID, wsAt sql.NullInt64
		bound, wsName, role sql.NullString
		kind, roleCap       string
		pAt                 int64
	)
	args := append(append([]any{}, joinArgs...), workspace, key)
	err := tx.queryRow(ctx, `SELECT t.id, t.revoked_at, bw.name, p.id, p.handle, p.kind, p.display_name, p.created_at, w.id, w.name, w.created_at, m.role,
		t.client_id, t.resource, t.role_cap
		FROM tokens t `+join+`
		JOIN principals p ON p.id = t.principal_id
		LEFT JOIN workspaces bw ON bw.id = t.workspace_id
		LEFT JOIN workspaces w ON w.id = COALESCE(t.workspace_id, (SELECT id FROM workspaces WHERE name = ?))
		LEFT JOIN memberships m ON m.workspace_id = w.id AND m.principal_id = p.id
		WHERE `+where, args...).Scan(&g.TokenID, &revoked, &bound, &g.Principal.ID, &g.Principal.Handle, &kind, &g.Principal.DisplayName, &pAt, &wsID, &wsName, &wsAt, &role,
		&g.Client, &g.Resource, &roleCap)
	if err != nil {
		return g, err
	}
	g.Revoked, g.BoundTo, g.RoleCap = revoked.Valid, bound.String, atrium.Role(roleCap)
	g.Principal.Kind, g.Principal.CreatedAt = atrium.PrincipalKind(kind), fromMicros(pAt)
	if wsID.Valid {
		g.Workspace = atrium.Workspace{ID: wsID.Int64, Name: wsName.String, CreatedAt: fromMicros(wsAt.Int64)}
	}
	g.Role = atrium.Role(role.String)
	return g, nil
}

// A BrowserSession is a signed-in browser.
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

// InsertSession stores a new session of token, by the hash of its secret.
func (tx *Tx) InsertSession(ctx context.Context, s *BrowserSession, hash string) error {
	s.CreatedAt, s.LastSeen = tx.now, tx.now
	return tx.queryRow(ctx, `INSERT INTO browser_sessions (token_id, hash, user_agent, created_at, last_seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		s.TokenID, hash, s.UserAgent, micros(tx.now), micros(tx.now), micros(s.ExpiresAt)).Scan(&s.ID)
}

// RevokeSession ends the session whose secret hashes to hash, or with id;
// it reports whether there was one.
func (tx *Tx) RevokeSession(ctx context.Context, id int64, hash string) (bool, error) {
	res, err := tx.exec(ctx, "UPDATE browser_sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? OR hash = ?", micros(tx.now), id, hash)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// TouchSession records that the session was used at t.
func (tx *Tx) TouchSession(ctx context.Context, hash string, t time.Time) error {
	_, err := tx.exec(ctx, "UPDATE browser_sessions SET last_seen_at = ? WHERE hash = ?", micros(t), hash)
	return err
}

// sessionSelect reads the live sessions (at ?) and their principals; the
// caller adds its conditions with AND.
const sessionSelect = `SELECT s.id, s.token_id, p.handle, s.user_agent, s.created_at, s.last_seen_at, s.expires_at
	FROM browser_sessions s JOIN tokens t ON t.id = s.token_id JOIN principals p ON p.id = t.principal_id
	WHERE s.revoked_at IS NULL AND t.revoked_at IS NULL AND s.expires_at > ?`

func scanSession(sc scanner) (s BrowserSession, err error) {
	var created, seen, expires int64
	err = sc.Scan(&s.ID, &s.TokenID, &s.Principal, &s.UserAgent, &created, &seen, &expires)
	s.CreatedAt, s.LastSeen, s.ExpiresAt = fromMicros(created), fromMicros(seen), fromMicros(expires)
	return s, err
}

// Sessions lists the live sessions of principal handle ("" for everyone's),
// newest first.
func (tx *Tx) Sessions(ctx context.Context, handle string) ([]BrowserSession, error) {
	q, args := sessionSelect, []any{micros(tx.now)}
	if handle != "" {
		q += " AND p.handle = ?"
		args = append(args, handle)
	}
	return queryAll(ctx, tx, scanSession, q+" ORDER BY s.created_at DESC, s.id DESC", args...)
}

// HandleGrant resolves principal handle in workspace in one statement. A
// missing principal is not_found; a missing workspace or membership comes
// back as a zero Workspace or empty Role.
func (tx *Tx) HandleGrant(ctx context.Context, handle, workspace string) (Grant, error) {
	var (
		g            Grant
		wsID, wsAt   sql.NullInt64
		wsName, role sql.NullString
		kind         string
		pAt          int64
	)
	err := tx.queryRow(ctx, `SELECT p.id, p.handle, p.kind, p.display_name, p.created_at, w.id, w.name, w.created_at, m.role
		FROM principals p
		LEFT JOIN workspaces w ON w.name = ?
		LEFT JOIN memberships m ON m.workspace_id = w.id AND m.principal_id = p.id
		WHERE p.handle = ?`, workspace, handle).Scan(&g.Principal.ID, &g.Principal.Handle, &kind, &g.Principal.DisplayName, &pAt, &wsID, &wsName, &wsAt, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return g, atrium.Errorf(atrium.ENotFound, "principal %q not found", handle)
	}
	if err != nil {
		return g, err
	}
	g.Principal.Kind, g.Principal.CreatedAt = atrium.PrincipalKind(kind), fromMicros(pAt)
	if wsID.Valid {
		g.Workspace = atrium.Workspace{ID: wsID.Int64, Name: wsName.String, CreatedAt: fromMicros(wsAt.Int64)}
	}
	g.Role = atrium.Role(role.String)
	return g, nil
}
