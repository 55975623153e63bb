package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/atrium-hq/atrium"
)

// An OAuthClient is a remote MCP client known to the authorization server:
// registered dynamically (kind "dcr") or described by the metadata document
// its client ID names (kind "cimd", the last good copy kept).
type OAuthClient struct {
	ClientID     string
	Kind         string
	Name         string
	RedirectURIs string // JSON array
	Metadata     string // JSON
	Remote       string
	CreatedAt    time.Time
	FetchedAt    time.Time
	FreshUntil   time.Time
	LastUsedAt   time.Time
}

// PutOAuthClient stores c, replacing what was stored under its client ID.
func (tx *Tx) PutOAuthClient(ctx context.Context, c OAuthClient) error {
	_, err := tx.exec(ctx, `INSERT INTO oauth_clients (client_id, kind, name, redirect_uris, metadata, remote, created_at, fetched_at, fresh_until, last_used_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (client_id) DO UPDATE SET kind = excluded.kind, name = excluded.name, redirect_uris = excluded.redirect_uris,
			metadata = excluded.metadata, fetched_at = excluded.fetched_at, fresh_until = excluded.fresh_until`,
		c.ClientID, c.Kind, c.Name, c.RedirectURIs, c.Metadata, c.Remote, micros(tx.now), micros(c.FetchedAt), micros(c.FreshUntil), micros(tx.now))
	return err
}

// OAuthClientByID returns the client stored under id, or not_found.
func (tx *Tx) OAuthClientByID(ctx context.Context, id string) (OAuthClient, error) {
	var c OAuthClient
	var created, fetched, fresh, used int64
	err := tx.queryRow(ctx, `SELECT client_id, kind, name, redirect_uris, metadata, remote, created_at, fetched_at, fresh_until, last_used_at
		FROM oauth_clients WHERE client_id = ?`, id).Scan(&c.ClientID, &c.Kind, &c.Name, &c.RedirectURIs, &c.Metadata, &c.Remote, &created, &fetched, &fresh, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return c, atrium.Errorf(atrium.ENotFound, "client not found")
	}
	c.CreatedAt, c.FetchedAt, c.FreshUntil, c.LastUsedAt = fromMicros(created), fromMicros(fetched), fromMicros(fresh), fromMicros(used)
	return c, err
}

// DeleteOAuthClient forgets a client (a metadata document its host says is
// gone). Grants it holds stay until revoked.
func (tx *Tx) DeleteOAuthClient(ctx context.Context, id string) error {
	_, err := tx.exec(ctx, "DELETE FROM oauth_clients WHERE client_id = ?", id)
	return err
}

// TouchOAuthClient records that a client was used.
func (tx *Tx) TouchOAuthClient(ctx context.Context, id string) error {
	_, err := tx.exec(ctx, "UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?", micros(tx.now), id)
	return err
}

// CollectIdleClients deletes dynamically registered clients unused since
// before that hold no live grant: a client that registers anew on every
// connection (Claude does) would otherwise pile them up.
func (tx *Tx) CollectIdleClients(ctx context.Context, before time.Time) (int64, error) {
	res, err := tx.exec(ctx, `DELETE FROM oauth_clients WHERE kind = 'dcr' AND last_used_at < ?
		AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.client_id = oauth_clients.client_id AND t.revoked_at IS NULL)`, micros(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// An OAuthCode is an authorization code a person's consent made: who the
// client will act as, where, with which role, for which MCP URL, and the
// PKCE challenge its exchange must answer.
type OAuthCode struct {
	ClientID    string
	PrincipalID int64
	WorkspaceID int64
	ApprovedBy  int64
	Role        atrium.Role
	Resource    string
	RedirectURI string
	Challenge   string
	ExpiresAt   time.Time
	TokenID     int64 // the grant it was exchanged for; 0: not yet
}

// InsertOAuthCode stores a code by the hash of its secret, and drops codes
// that expired a while ago.
func (tx *Tx) InsertOAuthCode(ctx context.Context, c OAuthCode, hash string) error {
	if _, err := tx.exec(ctx, "DELETE FROM oauth_codes WHERE expires_at < ?", micros(tx.now.Add(-time.Hour))); err != nil {
		return err
	}
	_, err := tx.exec(ctx, `INSERT INTO oauth_codes (hash, client_id, principal_id, workspace_id, approved_by, role, resource, redirect_uri, challenge, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		hash, c.ClientID, c.PrincipalID, c.WorkspaceID, c.ApprovedBy, string(c.Role), c.Resource, c.RedirectURI, c.Challenge, micros(tx.now), micros(c.ExpiresAt))
	return err
}

// OAuthCodeByHash returns the code whose secret hashes to hash, used or not,
// or not_found. On PostgreSQL it locks the row: two exchanges of one code
// take turns, and the second sees the first's grant.
func (tx *Tx) OAuthCodeByHash(ctx context.Context, hash string) (OAuthCode, error) {
	var c OAuthCode
	var role string
	var expires int64
	var token sql.NullInt64
	err := tx.queryRow(ctx, `SELECT client_id, principal_id, workspace_id, approved_by, role, resource, redirect_uri, challenge, expires_at, token_id
		FROM oauth_codes WHERE hash = ?`+tx.forUpdate(), hash).Scan(&c.ClientID, &c.PrincipalID, &c.WorkspaceID, &c.ApprovedBy, &role, &c.Resource, &c.RedirectURI, &c.Challenge, &expires, &token)
	if errors.Is(err, sql.ErrNoRows) {
		return c, atrium.Errorf(atrium.ENotFound, "code not found")
	}
	c.Role, c.ExpiresAt, c.TokenID = atrium.Role(role), fromMicros(expires), token.Int64
	return c, err
}

// SetOAuthCodeGrant records the grant a code was exchanged for, which uses it up.
func (tx *Tx) SetOAuthCodeGrant(ctx context.Context, hash string, token int64) error {
	_, err := tx.exec(ctx, "UPDATE oauth_codes SET token_id = ? WHERE hash = ?", token, hash)
	return err
}

// CreateOAuthGrant stores a grant: a token row for its principal, bound to
// its workspace, naming its client, resource, role cap and approver. Its
// hash is of a secret no one holds: the grant is used only through the
// access tokens issued under it.
func (tx *Tx) CreateOAuthGrant(ctx context.Context, t atrium.Token, approvedBy int64, hash string) (atrium.Token, error) {
	t.CreatedAt = tx.now
	err := tx.queryRow(ctx, `INSERT INTO tokens (principal_id, workspace_id, name, hash, created_at, client_id, resource, role_cap, approved_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		t.PrincipalID, nullID(t.WorkspaceID), t.Name, hash, micros(tx.now), t.Client, t.Resource, string(t.RoleCap), approvedBy).Scan(&t.ID)
	return t, err
}

// An OAuthSecret is an access or refresh token of a grant.
type OAuthSecret struct {
	TokenID   int64
	Kind      string // access or refresh
	CreatedAt time.Time
	ExpiresAt time.Time
	RotatedAt time.Time // refresh: when it was exchanged for a new one
	// Of its grant:
	Client   string
	Resource string
	Revoked  bool
}

// InsertOAuthSecret stores a secret of grant token by its hash, and drops
// secrets that expired a day ago.
func (tx *Tx) InsertOAuthSecret(ctx context.Context, token int64, kind, hash string, expires time.Time) error {
	if _, err := tx.exec(ctx, "DELETE FROM oauth_secrets WHERE expires_at < ?", micros(tx.now.Add(-24*time.Hour))); err != nil {
		return err
	}
	_, err := tx.exec(ctx, "INSERT INTO oauth_secrets (hash, token_id, kind, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
		hash, token, kind, micros(tx.now), micros(expires))
	return err
}

// OAuthSecretByHash returns the secret whose value hashes to hash, with its
// grant's client and state, or not_found. On PostgreSQL it locks the row, so
// that two refreshes with one token take turns.
func (tx *Tx) OAuthSecretByHash(ctx context.Context, hash string) (OAuthSecret, error) {
	var s OAuthSecret
	var created, expires, rotated int64
	var revoked sql.NullInt64
	err := tx.queryRow(ctx, `SELECT o.token_id, o.kind, o.created_at, o.expires_at, o.rotated_at, t.client_id, t.resource, t.revoked_at
		FROM oauth_secrets o JOIN tokens t ON t.id = o.token_id WHERE o.hash = ?`+tx.forUpdate("o"), hash).
		Scan(&s.TokenID, &s.Kind, &created, &expires, &rotated, &s.Client, &s.Resource, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return s, atrium.Errorf(atrium.ENotFound, "token not found")
	}
	s.CreatedAt, s.ExpiresAt, s.Revoked = fromMicros(created), fromMicros(expires), revoked.Valid
	if rotated != 0 {
		s.RotatedAt = fromMicros(rotated)
	}
	return s, err
}

// NewestRefresh reports whether the refresh token hashing to hash is the one
// rotated most recently in its grant: the only old one still taken.
func (tx *Tx) NewestRefresh(ctx context.Context, token int64, hash string) (bool, error) {
	var newest string
	err := tx.queryRow(ctx, `SELECT hash FROM oauth_secrets WHERE token_id = ? AND kind = 'refresh' AND rotated_at > 0
		ORDER BY rotated_at DESC, created_at DESC LIMIT 1`, token).Scan(&newest)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return newest == hash, err
}

// RotateOAuthSecret marks a refresh token exchanged (the first time only).
func (tx *Tx) RotateOAuthSecret(ctx context.Context, hash string) error {
	_, err := tx.exec(ctx, "UPDATE oauth_secrets SET rotated_at = ? WHERE hash = ? AND rotated_at = 0", micros(tx.now), hash)
	return err
}

// AccessGrant is TokenGrant for an OAuth access token: the grant it was
// issued under, while the token has not expired. One statement, like
// TokenGrant: it is on the path of every call such a client makes.
func (tx *Tx) AccessGrant(ctx context.Context, hash, workspace string) (Grant, error) {
	g, err := tx.grant(ctx, "JOIN oauth_secrets o ON o.token_id = t.id AND o.kind = 'access' AND o.expires_at > ?",
		"o.hash = ?", hash, workspace, micros(tx.now))
	if errors.Is(err, sql.ErrNoRows) {
		return g, atrium.Errorf(atrium.ENotFound, "token not found")
	}
	return g, err
}

// forUpdate is the locking clause of a SELECT that a transaction goes on to
// change, on PostgreSQL (of the table aliased of, when the query joins);
// SQLite's writers take turns anyway.
func (tx *Tx) forUpdate(of ...string) string {
	if tx.db.engine != Postgres {
		return ""
	}
	if len(of) > 0 {
		return " FOR UPDATE OF " + of[0]
	}
	return " FOR UPDATE"
}
