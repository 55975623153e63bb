package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/atrium-hq/atrium"
)

// trashKey is the path key of a trashed page and of its attachments and
// threads: no path has one (':' is not allowed in paths), so the page's path
// is free again and no lookup by path, folder or thread finds what is trashed.
func trashKey(uid string) string { return "trash:" + uid }

// live is the condition that leaves trashed pages out.
const live = " AND trashed_at IS NULL"

// TrashPage moves p to the trash: it keeps its history, attachments and
// threads, and leaves the folders, links, tags and search index.
func (tx *Tx) TrashPage(ctx context.Context, p atrium.Page, actor int64) error {
	var lens [SearchFields]int
	var access string
	err := tx.queryRow(ctx, "SELECT access, "+lenColumns()+" FROM pages WHERE id = ?"+live, p.ID).
		Scan(append([]any{&access}, lenDest(&lens)...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return atrium.Errorf(atrium.ENotFound, "Page not found at path: %s", p.Path)
	}
	if err != nil {
		return err
	}
	key := trashKey(p.UID)
	if _, err := tx.exec(ctx, "UPDATE pages SET path_key = ?, parent_key = ?, trashed_at = ?, trashed_by = ? WHERE id = ?",
		key, "trash:", micros(tx.now), nullID(actor), p.ID); err != nil {
		return err
	}
	if err := tx.dropIndex(ctx, p.ID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, "UPDATE attachments SET path_key = 'trash:' || uid WHERE page_id = ?", p.ID); err != nil {
		return err
	}
	if err := tx.MoveAnnotations(ctx, p.WorkspaceID, p.Path, key); err != nil {
		return err
	}
	if err := tx.addFolders(ctx, p.WorkspaceID, p.Path, -1, access == string(atrium.AccessPublic)); err != nil {
		return err
	}
	return tx.adjustStats(ctx, p.WorkspaceID, -1, lens, -1)
}

// dropIndex removes a page's tags, links and search entry.
func (tx *Tx) dropIndex(ctx context.Context, page int64) error {
	for _, q := range []string{"DELETE FROM page_tags WHERE page_id = ?", "DELETE FROM page_links WHERE source_id = ?"} {
		if _, err := tx.exec(ctx, q, page); err != nil {
			return err
		}
	}
	return tx.dropPostings(ctx, page)
}

// A TrashedPage is a page in the trash.
type TrashedPage struct {
	Page        atrium.Page
	TrashedAt   time.Time
	TrashedBy   string // handle
	Attachments int
	Threads     int
}

const trashCols = `, p.trashed_at, COALESCE(tb.handle, ''),
	(SELECT COUNT(*) FROM attachments a WHERE a.page_id = p.id),
	(SELECT COUNT(*) FROM annotations n WHERE n.workspace_id = p.workspace_id AND n.doc_key = p.path_key AND n.parent_id IS NULL)`

const trashFrom = pageFrom + ` LEFT JOIN principals tb ON tb.id = p.trashed_by`

func scanTrashed(sc scanner) (TrashedPage, error) {
	var (
		t  TrashedPage
		r  pageRow
		at int64
	)
	if err := sc.Scan(append(r.dest(), &at, &t.TrashedBy, &t.Attachments, &t.Threads)...); err != nil {
		return t, err
	}
	t.TrashedAt = fromMicros(at)
	var err error
	t.Page, err = r.page()
	return t, err
}

// Trash lists a workspace's trashed pages, most recently trashed first, after
// the cursor (a trashed page's ID, 0 for the start) and at most limit.
func (tx *Tx) Trash(ctx context.Context, ws int64, path string, after int64, limit int) ([]TrashedPage, error) {
	q := "SELECT " + pageCols + trashCols + trashFrom + " WHERE p.workspace_id = ? AND p.trashed_at IS NOT NULL"
	args := []any{ws}
	if path != "" {
		q += " AND p.path = ?"
		args = append(args, path)
	}
	if after > 0 {
		q += " AND (p.trashed_at, p.id) < (SELECT trashed_at, id FROM pages WHERE id = ?)"
		args = append(args, after)
	}
	q += " ORDER BY p.trashed_at DESC, p.id DESC LIMIT ?"
	return queryAll(ctx, tx, scanTrashed, q, append(args, limit)...)
}

// TrashedPage returns the trashed page with uid, or not_found.
func (tx *Tx) TrashedPage(ctx context.Context, ws int64, uid string) (TrashedPage, error) {
	t, err := scanTrashed(tx.queryRow(ctx, "SELECT "+pageCols+trashCols+trashFrom+" WHERE p.workspace_id = ? AND p.uid = ? AND p.trashed_at IS NOT NULL", ws, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return t, atrium.Errorf(atrium.ENotFound, "No page %s in the trash", uid)
	}
	return t, err
}

// RestorePage takes p out of the trash to path, where no page may be, with
// idx derived from its content again. Its attachments return to their paths
// and its threads to the page.
func (tx *Tx) RestorePage(ctx context.Context, p *atrium.Page, path string, idx PageIndex) error {
	key := PathKey(path)
	var taken int
	if err := tx.queryRow(ctx, "SELECT COUNT(*) FROM pages WHERE workspace_id = ? AND path_key = ?", p.WorkspaceID, key).Scan(&taken); err != nil {
		return err
	}
	if taken > 0 {
		return atrium.Errorf(atrium.EConflict, "A page already exists at path: %s; restore to another path, or move that page first", path).
			WithDetails(map[string]any{"path": path})
	}
	atts, err := tx.Attachments(ctx, p.WorkspaceID, p.ID)
	if err != nil {
		return err
	}
	for _, a := range atts {
		if taken, err := tx.AttachmentPathTaken(ctx, p.WorkspaceID, a.Path); err != nil {
			return err
		} else if taken {
			return atrium.Errorf(atrium.EConflict, "The page's attachment %s has been replaced by another file at that path; move or delete that file first", a.Path)
		}
	}
	old := trashKey(p.UID)
	p.Path = path
	if _, err := tx.exec(ctx, "UPDATE pages SET path = ?, path_key = ?, parent_key = ?, stem_key = ?, trashed_at = NULL, trashed_by = NULL WHERE id = ?",
		path, key, parentKey(key), StemKey(path), p.ID); err != nil {
		return err
	}
	for _, a := range atts {
		if _, err := tx.exec(ctx, "UPDATE attachments SET path_key = ? WHERE id = ?", PathKey(a.Path), a.ID); err != nil {
			return err
		}
	}
	if err := tx.MoveAnnotations(ctx, p.WorkspaceID, old, path); err != nil {
		return err
	}
	if err := tx.addFolders(ctx, p.WorkspaceID, path, 1, p.Access == atrium.AccessPublic); err != nil {
		return err
	}
	// The row keeps what idx derives: a rebuild of the index while the page
	// was in the trash passed it by.
	if err := tx.setDerived(ctx, p, idx); err != nil {
		return err
	}
	if err := tx.adjustStats(ctx, p.WorkspaceID, 1, idx.Lens, 1); err != nil {
		return err
	}
	return tx.writeIndex(ctx, p, idx, unindexed)
}

// PurgePage deletes a trashed page for good: its history, attachments and
// threads.
func (tx *Tx) PurgePage(ctx context.Context, p atrium.Page) error {
	key := trashKey(p.UID)
	for _, q := range []string{
		// Replies go with their roots (ON DELETE CASCADE).
		"DELETE FROM annotations WHERE workspace_id = ? AND doc_key = ? AND parent_id IS NULL",
		"DELETE FROM reviews WHERE workspace_id = ? AND doc_key = ?",
	} {
		if _, err := tx.exec(ctx, q, p.WorkspaceID, key); err != nil {
			return err
		}
	}
	res, err := tx.exec(ctx, "DELETE FROM pages WHERE id = ? AND trashed_at IS NOT NULL", p.ID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return atrium.Errorf(atrium.ENotFound, "No page %s in the trash", p.UID)
	}
	return nil
}

// ExpiredTrash lists up to limit pages of every workspace trashed before t.
//
// On PostgreSQL the rows are locked, and rows another replica's purge holds
// are skipped: replicas purging at the same moment take different pages,
// and none is purged (and announced) twice.
func (tx *Tx) ExpiredTrash(ctx context.Context, before time.Time, limit int) ([]atrium.Page, error) {
	q := "SELECT " + pageCols + pageFrom + " WHERE p.trashed_at < ? ORDER BY p.trashed_at LIMIT ?"
	if tx.db.engine == Postgres {
		q += " FOR UPDATE OF p SKIP LOCKED"
	}
	return queryAll(ctx, tx, scanPage, q, micros(before), limit)
}
