package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
)

// A ProgressItem is one entry of a desk's progress log.
type ProgressItem struct {
	ID          int64
	Description string
	DoneAt      time.Time
	ArchivedAt  *time.Time
}

// AddProgress adds an item to principal p's progress log in workspace ws.
func (tx *Tx) AddProgress(ctx context.Context, ws, p int64, it *ProgressItem) error {
	if it.DoneAt.IsZero() {
		it.DoneAt = tx.now
	}
	err := tx.queryRow(ctx, `INSERT INTO progress_items (workspace_id, principal_id, description, done_at, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		ws, p, it.Description, micros(it.DoneAt), micros(tx.now)).Scan(&it.ID)
	if err != nil {
		return fmt.Errorf("insert progress item: %w", err)
	}
	return nil
}

// Progress lists principal p's progress items not yet archived, oldest first.
func (tx *Tx) Progress(ctx context.Context, ws, p int64, limit int) ([]ProgressItem, error) {
	return queryAll(ctx, tx, func(sc scanner) (it ProgressItem, err error) {
		var at int64
		var archived sql.NullInt64
		err = sc.Scan(&it.ID, &it.Description, &at, &archived)
		it.DoneAt, it.ArchivedAt = fromMicros(at), fromNullMicros(archived)
		return it, err
	}, `SELECT id, description, done_at, archived_at FROM progress_items
		WHERE workspace_id = ? AND principal_id = ? AND archived_at IS NULL ORDER BY done_at, id LIMIT ?`, ws, p, limit)
}

// ArchiveProgress archives principal p's open progress items, and reports how many.
func (tx *Tx) ArchiveProgress(ctx context.Context, ws, p int64) (int64, error) {
	res, err := tx.exec(ctx, "UPDATE progress_items SET archived_at = ? WHERE workspace_id = ? AND principal_id = ? AND archived_at IS NULL",
		micros(tx.now), ws, p)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// A TaskFile is a file attached to a task.
type TaskFile struct {
	ID        string
	Name      string
	MIMEType  string
	Size      int64
	SHA256    string
	CreatedAt time.Time
}

// AddTaskFile stores a file of task id.
func (tx *Tx) AddTaskFile(ctx context.Context, ws, task, actor int64, f *TaskFile, data []byte) error {
	f.ID = "file_" + strings.ToLower(rand.Text()[:16])
	f.CreatedAt = tx.now
	_, err := tx.exec(ctx, `INSERT INTO task_files (uid, workspace_id, task_id, name, mime_type, size, sha256, data, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, f.ID, ws, task, f.Name, f.MIMEType, f.Size, f.SHA256, data, nullID(actor), micros(tx.now))
	if err != nil {
		return fmt.Errorf("insert task file: %w", err)
	}
	return nil
}

// TaskFiles lists the files of task id, oldest first.
func (tx *Tx) TaskFiles(ctx context.Context, task int64) ([]TaskFile, error) {
	byTask, err := tx.FilesOfTasks(ctx, []int64{task})
	return byTask[task], err
}

// FilesOfTasks lists the files of several tasks in one query, by task id.
func (tx *Tx) FilesOfTasks(ctx context.Context, tasks []int64) (map[int64][]TaskFile, error) {
	out := map[int64][]TaskFile{}
	if len(tasks) == 0 {
		return out, nil
	}
	args := idArgs(tasks)
	type row struct {
		task int64
		f    TaskFile
	}
	rows, err := queryAll(ctx, tx, func(sc scanner) (r row, err error) {
		var at int64
		err = sc.Scan(&r.task, &r.f.ID, &r.f.Name, &r.f.MIMEType, &r.f.Size, &r.f.SHA256, &at)
		r.f.CreatedAt = fromMicros(at)
		return r, err
	}, "SELECT task_id, uid, name, mime_type, size, sha256, created_at FROM task_files WHERE task_id IN ("+placeholders(len(tasks))+") ORDER BY id", args...)
	for _, r := range rows {
		out[r.task] = append(out[r.task], r.f)
	}
	return out, err
}

// TaskFileData returns the content of file uid of task id, or not_found.
func (tx *Tx) TaskFileData(ctx context.Context, task int64, uid string) ([]byte, error) {
	var b []byte
	err := tx.queryRow(ctx, "SELECT data FROM task_files WHERE task_id = ? AND uid = ?", task, uid).Scan(&b)
	if err == sql.ErrNoRows {
		return nil, atrium.Errorf(atrium.ENotFound, "File not found: %s", uid)
	}
	return b, err
}

// RemoveTaskFile deletes file uid of task id, or reports not_found.
func (tx *Tx) RemoveTaskFile(ctx context.Context, task int64, uid string) error {
	res, err := tx.exec(ctx, "DELETE FROM task_files WHERE task_id = ? AND uid = ?", task, uid)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return atrium.Errorf(atrium.ENotFound, "File not found on this todo: %s", uid)
	}
	return nil
}
