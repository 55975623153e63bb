package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/atrium-hq/atrium"
)

// A Presence is one connected MCP session.
type Presence struct {
	Principal string
	Kind      atrium.PrincipalKind
	Transport string
	Client    string
	Since     time.Time
	LastSeen  time.Time
}

// SeePresence records that session key of principal p is active now, and
// reports whether it is new.
func (tx *Tx) SeePresence(ctx context.Context, ws, p int64, key, transport, client string) (bool, error) {
	res, err := tx.exec(ctx, "UPDATE presence SET seen_at = ?, principal_id = ? WHERE workspace_id = ? AND session_key = ?", micros(tx.now), p, ws, key)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return false, err
	}
	_, err = tx.exec(ctx, `INSERT INTO presence (workspace_id, session_key, principal_id, transport, client, started_at, seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, session_key) DO UPDATE SET seen_at = excluded.seen_at`, ws, key, p, transport, client, micros(tx.now), micros(tx.now))
	return err == nil, err
}

// Present lists the sessions of workspace ws seen since the given time,
// longest connected first, at most limit.
func (tx *Tx) Present(ctx context.Context, ws int64, since time.Time, limit int) ([]Presence, error) {
	return queryAll(ctx, tx, func(sc scanner) (p Presence, err error) {
		var kind string
		var start, seen int64
		err = sc.Scan(&p.Principal, &kind, &p.Transport, &p.Client, &start, &seen)
		p.Kind, p.Since, p.LastSeen = atrium.PrincipalKind(kind), fromMicros(start), fromMicros(seen)
		return p, err
	}, `SELECT pr.handle, pr.kind, s.transport, s.client, s.started_at, s.seen_at FROM presence s JOIN principals pr ON pr.id = s.principal_id
		WHERE s.workspace_id = ? AND s.seen_at >= ? ORDER BY s.started_at, pr.handle LIMIT ?`, ws, micros(since), limit)
}

// ForgetPresence deletes the rows of workspace ws not seen since the given time.
func (tx *Tx) ForgetPresence(ctx context.Context, ws int64, before time.Time) error {
	_, err := tx.exec(ctx, "DELETE FROM presence WHERE workspace_id = ? AND seen_at < ?", ws, micros(before))
	return err
}

// EndPresence deletes session key of workspace ws, the session having
// closed, and reports whose it was (0 if it was not recorded or already gone).
func (tx *Tx) EndPresence(ctx context.Context, ws int64, key string) (int64, error) {
	var p int64
	err := tx.queryRow(ctx, "DELETE FROM presence WHERE workspace_id = ? AND session_key = ? RETURNING principal_id", ws, key).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return p, err
}

// StalePresence reports whether any workspace has a session not seen since
// the given time: a read, so that finding none costs no write.
func (tx *Tx) StalePresence(ctx context.Context, before time.Time) (bool, error) {
	var one int
	err := tx.queryRow(ctx, "SELECT 1 FROM presence WHERE seen_at < ? LIMIT 1", micros(before)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// A Departure is a session that stopped being seen.
type Departure struct {
	Workspace, Principal int64
	Handle               string
}

// ExpirePresence deletes the sessions of every workspace not seen since the
// given time and reports them, each once however many processes expire at
// the same moment: a process killed without a goodbye leaves this way.
func (tx *Tx) ExpirePresence(ctx context.Context, before time.Time) ([]Departure, error) {
	gone, err := queryAll(ctx, tx, func(sc scanner) (d Departure, err error) {
		return d, sc.Scan(&d.Workspace, &d.Principal)
	}, "DELETE FROM presence WHERE seen_at < ? RETURNING workspace_id, principal_id", micros(before))
	if err != nil {
		return nil, err
	}
	for i := range gone {
		p, err := tx.PrincipalByID(ctx, gone[i].Principal)
		if err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
			return nil, err
		}
		gone[i].Handle = p.Handle
	}
	return gone, nil
}
