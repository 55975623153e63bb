package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/atrium-hq/atrium"
)

const attachmentCols = `a.id, a.uid, a.page_id, a.path, a.name, a.mime_type, a.size, a.sha256, COALESCE(pr.handle, ''), a.created_at`

func scanAttachment(sc scanner) (atrium.Attachment, error) {
	var a atrium.Attachment
	var at int64
	err := sc.Scan(&a.ID, &a.UID, &a.PageID, &a.Path, &a.Name, &a.MIMEType, &a.Size, &a.SHA256, &a.CreatedBy, &at)
	a.CreatedAt = fromMicros(at)
	return a, err
}

// AttachmentPathTaken reports whether an attachment exists at path in workspace ws.
func (tx *Tx) AttachmentPathTaken(ctx context.Context, ws int64, path string) (bool, error) {
	var n int
	err := tx.queryRow(ctx, "SELECT COUNT(*) FROM attachments WHERE workspace_id = ? AND path_key = ?", ws, PathKey(path)).Scan(&n)
	return n > 0, err
}

// InsertAttachment stores a file of a page; a taken path is a conflict.
func (tx *Tx) InsertAttachment(ctx context.Context, ws int64, a *atrium.Attachment, data []byte, actor int64) error {
	a.UID = "at_" + strings.ToLower(rand.Text()[:16])
	a.CreatedAt = tx.now
	err := tx.queryRow(ctx, `INSERT INTO attachments (uid, workspace_id, page_id, path, path_key, name, mime_type, size, sha256, data, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workspace_id, path_key) DO NOTHING RETURNING id`,
		a.UID, ws, a.PageID, a.Path, PathKey(a.Path), a.Name, a.MIMEType, a.Size, a.SHA256, data, nullID(actor), micros(tx.now)).Scan(&a.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return atrium.Errorf(atrium.EConflict, "An attachment already exists at path: %s", a.Path)
	}
	if err != nil {
		return fmt.Errorf("insert attachment: %w", err)
	}
	return nil
}

// AttachmentByPath returns the attachment at path in workspace ws, with its data.
func (tx *Tx) AttachmentByPath(ctx context.Context, ws int64, path string) (atrium.Attachment, []byte, error) {
	var data []byte
	var a atrium.Attachment
	var at int64
	err := tx.queryRow(ctx, `SELECT `+attachmentCols+`, a.data FROM attachments a LEFT JOIN principals pr ON pr.id = a.created_by
		WHERE a.workspace_id = ? AND a.path_key = ?`, ws, PathKey(path)).
		Scan(&a.ID, &a.UID, &a.PageID, &a.Path, &a.Name, &a.MIMEType, &a.Size, &a.SHA256, &a.CreatedBy, &at, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return a, nil, atrium.Errorf(atrium.ENotFound, "Attachment not found at path: %s", path)
	}
	a.CreatedAt = fromMicros(at)
	return a, data, err
}

// Attachments lists the attachments of a page (0: of the whole workspace ws), by path.
func (tx *Tx) Attachments(ctx context.Context, ws, page int64) ([]atrium.Attachment, error) {
	q := `SELECT ` + attachmentCols + ` FROM attachments a LEFT JOIN principals pr ON pr.id = a.created_by WHERE a.workspace_id = ?`
	args := []any{ws}
	if page != 0 {
		q += " AND a.page_id = ?"
		args = append(args, page)
	} else {
		q += " AND a.path_key NOT LIKE 'trash:%'"
	}
	return queryAll(ctx, tx, scanAttachment, q+" ORDER BY a.path_key", args...)
}

// MoveAttachment gives an attachment a new path (its page moved folders).
func (tx *Tx) MoveAttachment(ctx context.Context, ws, id int64, path string) error {
	_, err := tx.exec(ctx, "UPDATE attachments SET path = ?, path_key = ? WHERE workspace_id = ? AND id = ?", path, PathKey(path), ws, id)
	return err
}

// ReassignAttachment gives an attachment another page to belong to, at its
// own path: a file that lived beside a page now in the trash stays where it
// is, with the page nearest it.
func (tx *Tx) ReassignAttachment(ctx context.Context, ws, id, page int64, path string) error {
	_, err := tx.exec(ctx, "UPDATE attachments SET page_id = ?, path_key = ? WHERE workspace_id = ? AND id = ?", page, PathKey(path), ws, id)
	return err
}

// DeleteAttachment removes one attachment.
func (tx *Tx) DeleteAttachment(ctx context.Context, ws, id int64) error {
	_, err := tx.exec(ctx, "DELETE FROM attachments WHERE workspace_id = ? AND id = ?", ws, id)
	return err
}

// AttachmentsByKey finds the attachments of workspace ws that link keys (in
// lower case) may mean: those at a key's path, and those whose file name is
// a key without a folder. Links name attachments either way (Obsidian's
// ![[x.png]] by name, anywhere in the vault), so the caller picks among them.
func (tx *Tx) AttachmentsByKey(ctx context.Context, ws int64, keys []string) ([]atrium.Attachment, error) {
	var out []atrium.Attachment
	for len(keys) > 0 {
		chunk := keys[:min(len(keys), 200)]
		keys = keys[len(chunk):]
		var conds []string
		args := []any{ws}
		for _, k := range chunk {
			conds = append(conds, "a.path_key = ?")
			args = append(args, k)
			if !strings.Contains(k, "/") {
				conds = append(conds, `a.path_key LIKE ? ESCAPE '\'`)
				args = append(args, "%/"+likeEscape(k))
			}
		}
		list, err := queryAll(ctx, tx, scanAttachment, `SELECT `+attachmentCols+` FROM attachments a LEFT JOIN principals pr ON pr.id = a.created_by
			WHERE a.workspace_id = ? AND a.path_key NOT LIKE 'trash:%' AND (`+strings.Join(conds, " OR ")+`) ORDER BY a.path_key`, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	return out, nil
}

// likeEscape makes s match itself in a LIKE pattern escaped by '\'.
func likeEscape(s string) string { return likeEscaper.Replace(s) }

var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)
