package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/atrium-hq/atrium"
)

// The import path of `atrium import`, which reads back the tasks, threads and
// desks an export wrote: rows are written as the export holds them — with
// their task numbers, uids, authors and times — where the usual writes number
// them anew and stamp them with the transaction's time. Only the services'
// Import methods call these, for an admin (the operator who holds the store),
// after checking what they write by the services' own rules.

// RestoreTask writes t as an export holds it: a new row with t's number and
// times when t.ID is 0, else over row t.ID (its number and created time
// stay; updated_at becomes t's). The workspace's counter is raised to t's
// number, so that the next task created gets a number never given.
func (tx *Tx) RestoreTask(ctx context.Context, t *atrium.Task) error {
	if t.ID == 0 {
		t.Revision = 1
		err := tx.queryRow(ctx, `INSERT INTO tasks (workspace_id, number, kind, title, body, status, status_text, progress, phase,
			labels, specs, plans, assignee_id, creator_id, revision, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			t.WorkspaceID, t.Number, string(t.Kind), t.Title, t.Body, string(t.Status), t.StatusText, t.Progress, t.Phase,
			jsonStrings(t.Labels), jsonStrings(t.Specs), jsonStrings(t.Plans), nullID(t.AssigneeID), nullID(t.CreatorID),
			t.Revision, micros(t.CreatedAt), micros(t.UpdatedAt)).Scan(&t.ID)
		if err != nil {
			return fmt.Errorf("restore task #%d: %w", t.Number, err)
		}
		if err := tx.writeLabels(ctx, t, false); err != nil {
			return err
		}
	} else {
		err := tx.queryRow(ctx, `UPDATE tasks SET kind = ?, title = ?, body = ?, status = ?, status_text = ?, progress = ?, phase = ?,
			labels = ?, specs = ?, plans = ?, assignee_id = ?, revision = revision + 1, updated_at = ? WHERE id = ? RETURNING revision`,
			string(t.Kind), t.Title, t.Body, string(t.Status), t.StatusText, t.Progress, t.Phase,
			jsonStrings(t.Labels), jsonStrings(t.Specs), jsonStrings(t.Plans), nullID(t.AssigneeID), micros(t.UpdatedAt), t.ID).Scan(&t.Revision)
		if err != nil {
			return fmt.Errorf("restore task #%d: %w", t.Number, err)
		}
		if err := tx.writeLabels(ctx, t, true); err != nil {
			return err
		}
	}
	// CASE rather than MAX/GREATEST: the one spelling both engines read.
	_, err := tx.exec(ctx, `INSERT INTO task_counters (workspace_id, last) VALUES (?, ?)
		ON CONFLICT (workspace_id) DO UPDATE SET last = CASE WHEN task_counters.last < excluded.last THEN excluded.last ELSE task_counters.last END`,
		t.WorkspaceID, t.Number)
	return err
}

// RestoreComment adds comment c to a task of workspace ws with c's time.
func (tx *Tx) RestoreComment(ctx context.Context, ws int64, c *atrium.TaskComment) error {
	err := tx.queryRow(ctx, `INSERT INTO task_comments (workspace_id, task_id, author_id, type, body, answers_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		ws, c.TaskID, nullID(c.AuthorID), string(c.Type), c.Body, nullID(c.Answers), micros(c.CreatedAt)).Scan(&c.ID)
	if err != nil {
		return fmt.Errorf("restore task comment: %w", err)
	}
	return nil
}

// UIDOwner says which row of table (annotations or reviews) holds uid, and
// in which workspace: 0, 0 when none does. Uids are unique across the
// store, so an export imported into a second workspace finds its uids taken.
func (tx *Tx) UIDOwner(ctx context.Context, table, uid string) (ws, id int64, err error) {
	if table != "annotations" && table != "reviews" {
		return 0, 0, fmt.Errorf("uid owner: no uids in %q", table)
	}
	err = tx.queryRow(ctx, "SELECT workspace_id, id FROM "+table+" WHERE uid = ?", uid).Scan(&ws, &id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	return ws, id, err
}

// RestoreAnnotation writes a as an export holds it, with its uid, author and
// times: a new row when a.ID is 0, else over row a.ID.
func (tx *Tx) RestoreAnnotation(ctx context.Context, a *atrium.Annotation) error {
	exact, prefix, suffix := quoteParts(a.Quote)
	if a.ID != 0 {
		_, err := tx.exec(ctx, `UPDATE annotations SET doc_path = ?, doc_key = ?, section = ?, quote_exact = ?, quote_prefix = ?, quote_suffix = ?,
			quote_offset = ?, content = ?, author_id = ?, author_type = ?, status = ?, review_id = ?, orphaned = ?, updated_at = ? WHERE id = ?`,
			a.DocPath, PathKey(a.DocPath), a.Section, exact, prefix, suffix, a.QuoteOffset, a.Content, nullID(a.AuthorID), string(a.AuthorType),
			string(a.Status), nullID(a.ReviewID), a.Orphaned, micros(a.UpdatedAt), a.ID)
		return err
	}
	err := tx.queryRow(ctx, `INSERT INTO annotations (uid, workspace_id, doc_path, doc_key, section, quote_exact, quote_prefix, quote_suffix, quote_offset,
		content, author_id, author_type, status, parent_id, review_id, orphaned, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		a.UID, a.WorkspaceID, a.DocPath, PathKey(a.DocPath), a.Section, exact, prefix, suffix, a.QuoteOffset,
		a.Content, nullID(a.AuthorID), string(a.AuthorType), string(a.Status), nullID(a.ParentID), nullID(a.ReviewID), a.Orphaned,
		micros(a.CreatedAt), micros(a.UpdatedAt)).Scan(&a.ID)
	if err != nil {
		return fmt.Errorf("restore annotation %s: %w", a.UID, err)
	}
	return nil
}

// RestoreReview writes r as an export holds it, with its uid, author and
// times: a new row when r.ID is 0, else over row r.ID.
func (tx *Tx) RestoreReview(ctx context.Context, r *atrium.Review) error {
	if r.ID != 0 {
		_, err := tx.exec(ctx, "UPDATE reviews SET doc_path = ?, doc_key = ?, status = ?, author_id = ?, summary = ?, updated_at = ? WHERE id = ?",
			r.DocPath, PathKey(r.DocPath), string(r.Status), nullID(r.AuthorID), r.Summary, micros(r.UpdatedAt), r.ID)
		return err
	}
	err := tx.queryRow(ctx, `INSERT INTO reviews (uid, workspace_id, doc_path, doc_key, status, author_id, summary, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.UID, r.WorkspaceID, r.DocPath, PathKey(r.DocPath), string(r.Status), nullID(r.AuthorID), r.Summary, micros(r.CreatedAt), micros(r.UpdatedAt)).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("restore review %s: %w", r.UID, err)
	}
	return nil
}

// A DeskItem is a progress item of any desk of a workspace, archived or not.
type DeskItem struct {
	ID          int64
	Principal   int64
	Handle      string
	Description string
	DoneAt      time.Time
	CreatedAt   time.Time
	ArchivedAt  *time.Time
}

// DeskItems lists every progress item of workspace ws, archived ones too,
// by desk owner, then in the order they were done.
func (tx *Tx) DeskItems(ctx context.Context, ws int64) ([]DeskItem, error) {
	return queryAll(ctx, tx, func(sc scanner) (it DeskItem, err error) {
		var done, created int64
		var archived sql.NullInt64
		err = sc.Scan(&it.ID, &it.Principal, &it.Handle, &it.Description, &done, &created, &archived)
		it.DoneAt, it.CreatedAt, it.ArchivedAt = fromMicros(done), fromMicros(created), fromNullMicros(archived)
		return it, err
	}, `SELECT i.id, i.principal_id, p.handle, i.description, i.done_at, i.created_at, i.archived_at
		FROM progress_items i JOIN principals p ON p.id = i.principal_id
		WHERE i.workspace_id = ? ORDER BY p.handle, i.done_at, i.id`, ws)
}

// RestoreDeskItem adds it to the desk of it.Principal in workspace ws with
// its times when it.ID is 0; else it sets row it.ID's archived time.
func (tx *Tx) RestoreDeskItem(ctx context.Context, ws int64, it *DeskItem) error {
	archived := sql.NullInt64{}
	if it.ArchivedAt != nil {
		archived = sql.NullInt64{Int64: micros(*it.ArchivedAt), Valid: true}
	}
	if it.ID != 0 {
		_, err := tx.exec(ctx, "UPDATE progress_items SET archived_at = ? WHERE id = ?", archived, it.ID)
		return err
	}
	err := tx.queryRow(ctx, `INSERT INTO progress_items (workspace_id, principal_id, description, done_at, created_at, archived_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`, ws, it.Principal, it.Description, micros(it.DoneAt), micros(it.CreatedAt), archived).Scan(&it.ID)
	if err != nil {
		return fmt.Errorf("restore progress item: %w", err)
	}
	return nil
}
