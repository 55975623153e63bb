package store

import "context"

// SyncState is what the mirror last synced for one file.
type SyncState struct {
	Path     string
	Hash     string
	Revision int64 // 0 for attachments
	// Read is the revision the file's content was last read from the file
	// (or found equal to it); below Revision when the mirror has written
	// store content over the file since.
	Read int64
}

// MirrorStates returns the sync state of every file of folder dir, by path key.
func (tx *Tx) MirrorStates(ctx context.Context, ws int64, dir string) (map[string]SyncState, error) {
	rows, err := tx.query(ctx, "SELECT path_key, path, hash, revision, read_revision FROM mirror_state WHERE workspace_id = ? AND dir = ?", ws, dir)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]SyncState{}
	for rows.Next() {
		var k string
		var s SyncState
		if err := rows.Scan(&k, &s.Path, &s.Hash, &s.Revision, &s.Read); err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, rows.Err()
}

// SetMirrorState records what was synced for a file.
func (tx *Tx) SetMirrorState(ctx context.Context, ws int64, dir string, s SyncState) error {
	_, err := tx.exec(ctx, `INSERT INTO mirror_state (workspace_id, dir, path_key, path, hash, revision, read_revision) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, dir, path_key) DO UPDATE SET path = excluded.path, hash = excluded.hash, revision = excluded.revision, read_revision = excluded.read_revision`,
		ws, dir, PathKey(s.Path), s.Path, s.Hash, s.Revision, s.Read)
	return err
}

// DeleteMirrorState forgets a file.
func (tx *Tx) DeleteMirrorState(ctx context.Context, ws int64, dir, path string) error {
	_, err := tx.exec(ctx, "DELETE FROM mirror_state WHERE workspace_id = ? AND dir = ? AND path_key = ?", ws, dir, PathKey(path))
	return err
}
