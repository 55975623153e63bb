package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium"
)

const taskCols = `t.id, t.workspace_id, t.number, t.kind, t.title, t.body, t.status, t.status_text, t.progress, t.phase,
	t.labels, t.specs, t.plans, COALESCE(t.assignee_id, 0), COALESCE(pa.handle, ''), COALESCE(t.creator_id, 0), COALESCE(pc.handle, ''),
	t.revision, t.created_at, t.updated_at`

const taskFrom = ` FROM tasks t LEFT JOIN principals pa ON pa.id = t.assignee_id LEFT JOIN principals pc ON pc.id = t.creator_id`

func scanTask(sc scanner) (atrium.Task, error) {
	var (
		t                    atrium.Task
		kind, status         string
		labels, specs, plans string
		created, updated     int64
	)
	err := sc.Scan(&t.ID, &t.WorkspaceID, &t.Number, &kind, &t.Title, &t.Body, &status, &t.StatusText, &t.Progress, &t.Phase,
		&labels, &specs, &plans, &t.AssigneeID, &t.Assignee, &t.CreatorID, &t.Creator, &t.Revision, &created, &updated)
	if err != nil {
		return t, err
	}
	t.Kind, t.Status = atrium.TaskKind(kind), atrium.TaskStatus(status)
	t.CreatedAt, t.UpdatedAt = fromMicros(created), fromMicros(updated)
	for _, f := range []struct {
		s   string
		out *[]string
	}{{labels, &t.Labels}, {specs, &t.Specs}, {plans, &t.Plans}} {
		if err := jsonUnmarshalStrings(f.s, f.out); err != nil {
			return t, err
		}
		*f.out = nonNil(*f.out)
	}
	t.BlockedBy = []int64{}
	return t, nil
}

func jsonStrings(s []string) string {
	b, _ := json.Marshal(nonNil(s))
	return string(b)
}

// NextTaskNumber allocates the next task number of workspace ws. Numbers are
// never given twice: the counter only grows.
func (tx *Tx) NextTaskNumber(ctx context.Context, ws int64) (int64, error) {
	var n int64
	err := tx.queryRow(ctx, `INSERT INTO task_counters (workspace_id, last) VALUES (?, 1)
		ON CONFLICT (workspace_id) DO UPDATE SET last = task_counters.last + 1 RETURNING last`, ws).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("allocate task number: %w", err)
	}
	return n, nil
}

// InsertTask adds t (its Number already allocated) with its labels; ID,
// revision and times are set here. Dependencies are set with SetBlockers.
func (tx *Tx) InsertTask(ctx context.Context, t *atrium.Task) error {
	t.CreatedAt, t.UpdatedAt, t.Revision = tx.now, tx.now, 1
	err := tx.queryRow(ctx, `INSERT INTO tasks (workspace_id, number, kind, title, body, status, status_text, progress, phase,
		labels, specs, plans, assignee_id, creator_id, revision, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		t.WorkspaceID, t.Number, string(t.Kind), t.Title, t.Body, string(t.Status), t.StatusText, t.Progress, t.Phase,
		jsonStrings(t.Labels), jsonStrings(t.Specs), jsonStrings(t.Plans), nullID(t.AssigneeID), nullID(t.CreatorID),
		t.Revision, micros(tx.now), micros(tx.now)).Scan(&t.ID)
	if err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	return tx.writeLabels(ctx, t, false)
}

func (tx *Tx) writeLabels(ctx context.Context, t *atrium.Task, replace bool) error {
	if replace {
		if _, err := tx.exec(ctx, "DELETE FROM task_labels WHERE task_id = ?", t.ID); err != nil {
			return err
		}
	}
	for _, l := range t.Labels {
		if _, err := tx.exec(ctx, "INSERT INTO task_labels (task_id, workspace_id, label) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", t.ID, t.WorkspaceID, l); err != nil {
			return fmt.Errorf("task label: %w", err)
		}
	}
	return nil
}

// UpdateTask writes t if its stored revision is still base, and bumps the
// revision. Another change since base is a conflict: this check in the
// UPDATE itself is what makes concurrent writers safe on both engines.
func (tx *Tx) UpdateTask(ctx context.Context, t *atrium.Task, base int64, labelsChanged bool) error {
	res, err := tx.exec(ctx, `UPDATE tasks SET kind = ?, title = ?, body = ?, status = ?, status_text = ?, progress = ?, phase = ?,
		labels = ?, specs = ?, plans = ?, assignee_id = ?, revision = revision + 1, updated_at = ?
		WHERE id = ? AND revision = ?`,
		string(t.Kind), t.Title, t.Body, string(t.Status), t.StatusText, t.Progress, t.Phase,
		jsonStrings(t.Labels), jsonStrings(t.Specs), jsonStrings(t.Plans), nullID(t.AssigneeID), micros(tx.now), t.ID, base)
	if err != nil {
		return fmt.Errorf("update task: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return atrium.Errorf(atrium.EConflict, "task #%d changed since revision %d; read it again and retry", t.Number, base).
			WithDetails(map[string]any{"base_revision": base})
	}
	t.Revision, t.UpdatedAt = base+1, tx.now
	if labelsChanged {
		return tx.writeLabels(ctx, t, true)
	}
	return nil
}

// TaskByNumber returns task #n of workspace ws with its blockers, or not_found.
func (tx *Tx) TaskByNumber(ctx context.Context, ws, n int64) (atrium.Task, error) {
	return tx.taskByNumber(ctx, ws, n, "")
}

// LockTask is TaskByNumber for a change: the task's row stays locked until
// the transaction ends, so that of concurrent writers each reads what the
// one before it committed — a caller who sent no revision never meets a
// conflict it did not ask for. SQLite has one writer, which holds everything
// already; PostgreSQL locks the row (NO KEY: the foreign keys of comments and
// dependencies that point at the task still go through).
func (tx *Tx) LockTask(ctx context.Context, ws, n int64) (atrium.Task, error) {
	if tx.db.engine != Postgres {
		return tx.TaskByNumber(ctx, ws, n)
	}
	return tx.taskByNumber(ctx, ws, n, " FOR NO KEY UPDATE OF t")
}

// LockTaskGraph serialises changes to the blocked_by graph of workspace ws
// until the transaction ends, so that two changes that would each be fine
// alone (#1 waits on #2, #2 waits on #1) cannot both pass their cycle check.
// On PostgreSQL it locks the workspace's task counter (creates take it too,
// briefly); SQLite's one writer is serial already.
func (tx *Tx) LockTaskGraph(ctx context.Context, ws int64) error {
	if tx.db.engine != Postgres {
		return nil
	}
	var last int64
	err := tx.queryRow(ctx, "SELECT last FROM task_counters WHERE workspace_id = ? FOR UPDATE", ws).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // no task yet, so no graph
	}
	return err
}

func (tx *Tx) taskByNumber(ctx context.Context, ws, n int64, lock string) (atrium.Task, error) {
	t, err := scanTask(tx.queryRow(ctx, "SELECT "+taskCols+taskFrom+" WHERE t.workspace_id = ? AND t.number = ?"+lock, ws, n))
	if errors.Is(err, sql.ErrNoRows) {
		return t, atrium.Errorf(atrium.ENotFound, "Task not found: #%d", n)
	}
	if err != nil {
		return t, err
	}
	t.BlockedBy, err = tx.blockerNumbers(ctx, t.ID)
	return t, err
}

func (tx *Tx) blockerNumbers(ctx context.Context, id int64) ([]int64, error) {
	out, err := queryAll(ctx, tx, func(sc scanner) (n int64, err error) { return n, sc.Scan(&n) },
		"SELECT b.number FROM task_deps d JOIN tasks b ON b.id = d.blocker_id WHERE d.task_id = ? ORDER BY b.number", id)
	if out == nil {
		out = []int64{}
	}
	return out, err
}

// OpenBlockers returns the numbers of the tasks that still hold up task id.
func (tx *Tx) OpenBlockers(ctx context.Context, id int64) ([]int64, error) {
	return queryAll(ctx, tx, func(sc scanner) (n int64, err error) { return n, sc.Scan(&n) },
		`SELECT b.number FROM task_deps d JOIN tasks b ON b.id = d.blocker_id
		WHERE d.task_id = ? AND b.status NOT IN ('done', 'archived') ORDER BY b.number`, id)
}

// TaskIDs returns the row ids of tasks numbered ns in workspace ws, or
// not_found naming the first that does not exist.
func (tx *Tx) TaskIDs(ctx context.Context, ws int64, ns []int64) ([]int64, error) {
	ids := make([]int64, 0, len(ns))
	for _, n := range ns {
		var id int64
		err := tx.queryRow(ctx, "SELECT id FROM tasks WHERE workspace_id = ? AND number = ?", ws, n).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, atrium.Errorf(atrium.ENotFound, "Task not found: #%d (in blocked_by)", n)
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Reaches reports whether task from is, through blocked_by, held up by task to.
func (tx *Tx) Reaches(ctx context.Context, from, to int64) (bool, error) {
	var one int
	err := tx.queryRow(ctx, `WITH RECURSIVE up(id) AS (
			SELECT blocker_id FROM task_deps WHERE task_id = ?
			UNION SELECT d.blocker_id FROM task_deps d JOIN up ON d.task_id = up.id)
		SELECT 1 FROM up WHERE id = ? LIMIT 1`, from, to).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// SetBlockers replaces the blockers of task id.
func (tx *Tx) SetBlockers(ctx context.Context, id int64, blockers []int64) error {
	if _, err := tx.exec(ctx, "DELETE FROM task_deps WHERE task_id = ?", id); err != nil {
		return err
	}
	for _, b := range blockers {
		if _, err := tx.exec(ctx, "INSERT INTO task_deps (task_id, blocker_id) VALUES (?, ?) ON CONFLICT DO NOTHING", id, b); err != nil {
			return fmt.Errorf("task dependency: %w", err)
		}
	}
	return nil
}

// TaskFilter selects tasks to list, newest first.
type TaskFilter struct {
	Workspace int64
	Kind      atrium.TaskKind // "" for every kind
	Statuses  []atrium.TaskStatus
	Assignee  int64 // 0 for anyone
	Unowned   bool  // only tasks with no assignee
	Label     string
	Text      string // in the title or body, any case
	Ready     bool   // open, unassigned, nothing open blocking it: oldest first
	Before    int64  // a cursor: numbers below this one (after, when Ready)
	Limit     int
}

// Tasks lists tasks. Rows carry no blockers (BlockedBy is empty).
func (tx *Tx) Tasks(ctx context.Context, f TaskFilter) ([]atrium.Task, error) {
	var b strings.Builder
	b.WriteString("SELECT " + taskCols + taskFrom)
	args := []any{f.Workspace}
	if f.Label != "" {
		b.WriteString(" JOIN task_labels l ON l.task_id = t.id AND l.workspace_id = ? AND l.label = ?")
		args = []any{f.Workspace, f.Label, f.Workspace}
	}
	b.WriteString(" WHERE t.workspace_id = ?")
	if f.Kind != "" {
		b.WriteString(" AND t.kind = ?")
		args = append(args, string(f.Kind))
	}
	if len(f.Statuses) > 0 {
		b.WriteString(" AND t.status IN (" + placeholders(len(f.Statuses)) + ")")
		for _, s := range f.Statuses {
			args = append(args, string(s))
		}
	}
	if f.Assignee != 0 {
		b.WriteString(" AND t.assignee_id = ?")
		args = append(args, f.Assignee)
	}
	if f.Unowned {
		b.WriteString(" AND t.assignee_id IS NULL")
	}
	if f.Text != "" {
		b.WriteString(" AND (LOWER(t.title) LIKE ? ESCAPE '\\' OR LOWER(t.body) LIKE ? ESCAPE '\\')")
		pat := "%" + likeEscape(strings.ToLower(f.Text)) + "%"
		args = append(args, pat, pat)
	}
	order := " ORDER BY t.number DESC"
	switch {
	case f.Ready:
		b.WriteString(` AND t.status = 'open' AND t.assignee_id IS NULL AND NOT EXISTS (
			SELECT 1 FROM task_deps d JOIN tasks bl ON bl.id = d.blocker_id
			WHERE d.task_id = t.id AND bl.status NOT IN ('done', 'archived'))`)
		if f.Before > 0 {
			b.WriteString(" AND t.number > ?")
			args = append(args, f.Before)
		}
		order = " ORDER BY t.number"
	case f.Before > 0:
		b.WriteString(" AND t.number < ?")
		args = append(args, f.Before)
	}
	b.WriteString(order + " LIMIT ?")
	args = append(args, f.Limit)
	return queryAll(ctx, tx, scanTask, b.String(), args...)
}

const commentCols = `c.id, c.task_id, t.number, COALESCE(c.author_id, 0), COALESCE(p.handle, ''), COALESCE(p.kind, 'human'), c.type, c.body, COALESCE(c.answers_id, 0), c.created_at, c.edited_at, c.deleted_at`

const commentFrom = ` FROM task_comments c JOIN tasks t ON t.id = c.task_id LEFT JOIN principals p ON p.id = c.author_id`

func scanComment(sc scanner) (atrium.TaskComment, error) {
	var (
		c         atrium.TaskComment
		kind, typ string
		created   int64
		edited    int64
		deleted   int64
	)
	err := sc.Scan(&c.ID, &c.TaskID, &c.TaskNumber, &c.AuthorID, &c.Author, &kind, &typ, &c.Body, &c.Answers, &created, &edited, &deleted)
	c.AuthorType, c.Type, c.CreatedAt = atrium.AuthorTypeOf(atrium.PrincipalKind(kind)), atrium.CommentType(typ), fromMicros(created)
	c.EditedAt, c.DeletedAt = maybeMicros(edited), maybeMicros(deleted)
	return c, err
}

// EditComment replaces comment id's type and body, as edited where it was
// written (a tracker): the copy says when.
func (tx *Tx) EditComment(ctx context.Context, ws, id int64, typ atrium.CommentType, body string) error {
	_, err := tx.exec(ctx, "UPDATE task_comments SET type = ?, body = ?, edited_at = ? WHERE workspace_id = ? AND id = ?", string(typ), body, micros(tx.now), ws, id)
	return err
}

// MarkCommentDeleted records that comment id was deleted where it was
// written; its text stays, for the record.
func (tx *Tx) MarkCommentDeleted(ctx context.Context, ws, id int64) error {
	_, err := tx.exec(ctx, "UPDATE task_comments SET deleted_at = ? WHERE workspace_id = ? AND id = ? AND deleted_at = 0", micros(tx.now), ws, id)
	return err
}

// InsertComment adds a comment to a task of workspace ws; ID and time are set here.
func (tx *Tx) InsertComment(ctx context.Context, ws int64, c *atrium.TaskComment) error {
	c.CreatedAt = tx.now
	err := tx.queryRow(ctx, `INSERT INTO task_comments (workspace_id, task_id, author_id, type, body, answers_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		ws, c.TaskID, nullID(c.AuthorID), string(c.Type), c.Body, nullID(c.Answers), micros(tx.now)).Scan(&c.ID)
	if err != nil {
		return fmt.Errorf("insert task comment: %w", err)
	}
	return nil
}

// CommentByID returns comment id of workspace ws, or not_found.
func (tx *Tx) CommentByID(ctx context.Context, ws, id int64) (atrium.TaskComment, error) {
	c, err := scanComment(tx.queryRow(ctx, "SELECT "+commentCols+commentFrom+" WHERE c.workspace_id = ? AND c.id = ?", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, atrium.Errorf(atrium.ENotFound, "Comment not found: %d", id)
	}
	return c, err
}

// CommentFilter selects the comments of one task, oldest first.
type CommentFilter struct {
	Task   int64
	Since  int64 // microseconds; 0 for all
	Author int64 // 0 for anyone
	After  int64 // a cursor: comment ids above this one
	Limit  int
	Newest bool // the newest Limit (still listed oldest first)
}

// Comments lists a task's comments.
func (tx *Tx) Comments(ctx context.Context, f CommentFilter) ([]atrium.TaskComment, error) {
	q := "SELECT " + commentCols + commentFrom + " WHERE c.task_id = ? AND c.id > ? AND c.created_at >= ?"
	args := []any{f.Task, f.After, f.Since}
	if f.Author != 0 {
		q += " AND c.author_id = ?"
		args = append(args, f.Author)
	}
	if !f.Newest {
		return queryAll(ctx, tx, scanComment, q+" ORDER BY c.id LIMIT ?", append(args, f.Limit)...)
	}
	out, err := queryAll(ctx, tx, scanComment, q+" ORDER BY c.id DESC LIMIT ?", append(args, f.Limit)...)
	slices.Reverse(out)
	return out, err
}

// CountComments counts the comments of task.
func (tx *Tx) CountComments(ctx context.Context, task int64) (int, error) {
	var n int
	err := tx.queryRow(ctx, "SELECT COUNT(*) FROM task_comments WHERE task_id = ?", task).Scan(&n)
	return n, err
}

// LastQuestionTo returns the newest question on task asked of principal p,
// from a wait still open, if any.
func (tx *Tx) LastQuestionTo(ctx context.Context, task, p int64) (int64, bool, error) {
	var id int64
	err := tx.queryRow(ctx, `SELECT comment_id FROM task_waits WHERE task_id = ? AND principal_id = ? AND reason = 'question'`, task, p).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// A Wait is someone a task is waiting on.
type Wait struct {
	PrincipalID int64
	Handle      string
	Reason      string // question or blocked
	CommentID   int64
}

// AddWait records that task waits on principal p, for reason, since comment.
func (tx *Tx) AddWait(ctx context.Context, task, p int64, reason string, comment int64) error {
	_, err := tx.exec(ctx, `INSERT INTO task_waits (task_id, principal_id, reason, comment_id, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (task_id, principal_id, reason) DO UPDATE SET comment_id = excluded.comment_id, created_at = excluded.created_at`,
		task, p, reason, comment, micros(tx.now))
	return err
}

// Waits lists whom task is waiting on.
func (tx *Tx) Waits(ctx context.Context, task int64) ([]Wait, error) {
	return queryAll(ctx, tx, func(sc scanner) (w Wait, err error) {
		return w, sc.Scan(&w.PrincipalID, &w.Handle, &w.Reason, &w.CommentID)
	}, `SELECT w.principal_id, p.handle, w.reason, w.comment_id FROM task_waits w JOIN principals p ON p.id = w.principal_id
		WHERE w.task_id = ? ORDER BY w.created_at, p.handle`, task)
}

// ClearWaits ends task's waits on principal p (every one, when p is 0) for
// reason ("" for any), and reports how many ended.
func (tx *Tx) ClearWaits(ctx context.Context, task, p int64, reason string) (int64, error) {
	q, args := "DELETE FROM task_waits WHERE task_id = ?", []any{task}
	if p != 0 {
		q += " AND principal_id = ?"
		args = append(args, p)
	}
	if reason != "" {
		q += " AND reason = ?"
		args = append(args, reason)
	}
	res, err := tx.exec(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// InboxEntry is an inbox item to add.
type InboxEntry struct {
	Workspace, Principal, Task, Comment, Actor int64
	Kind                                       atrium.InboxKind
	Resumes                                    int64 // a resume's: the item read before Atrium ended
}

// AddInbox adds an item to a principal's inbox.
func (tx *Tx) AddInbox(ctx context.Context, e InboxEntry) error {
	var id int64
	err := tx.queryRow(ctx, `INSERT INTO inbox_items (workspace_id, principal_id, kind, task_id, comment_id, actor_id, created_at, resumes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, e.Workspace, e.Principal, string(e.Kind), e.Task, nullID(e.Comment), nullID(e.Actor), micros(tx.now), nullID(e.Resumes)).Scan(&id)
	if err != nil {
		return err
	}
	return tx.addDeliveries(ctx, e, id)
}

// Inbox lists principal p's inbox in workspace ws: unread items oldest
// first, then, if read is set, read ones newest first, limit in all.
func (tx *Tx) Inbox(ctx context.Context, ws, p int64, read bool, limit int) ([]atrium.InboxItem, error) {
	const cols = `SELECT i.id, i.kind, t.number, t.title, COALESCE(i.comment_id, 0), COALESCE(a.handle, ''), COALESCE(a.kind, ''),
		COALESCE(c.type, ''), COALESCE(c.body, ''), i.created_at, i.read_at
		FROM inbox_items i JOIN tasks t ON t.id = i.task_id LEFT JOIN principals a ON a.id = i.actor_id
		LEFT JOIN task_comments c ON c.id = i.comment_id
		WHERE i.workspace_id = ? AND i.principal_id = ?`
	scan := func(sc scanner) (it atrium.InboxItem, err error) {
		var kind, fromKind, typ, body string
		var created int64
		var readAt sql.NullInt64
		if err := sc.Scan(&it.ID, &kind, &it.TaskNumber, &it.TaskTitle, &it.CommentID, &it.From, &fromKind, &typ, &body, &created, &readAt); err != nil {
			return it, err
		}
		if fromKind != "" {
			it.FromType = atrium.AuthorTypeOf(atrium.PrincipalKind(fromKind))
		}
		it.Kind, it.CreatedAt, it.ReadAt = atrium.InboxKind(kind), fromMicros(created), fromNullMicros(readAt)
		if it.CommentID != 0 {
			it.Text = atrium.TaskComment{Type: atrium.CommentType(typ), Body: body}.Shown()
		}
		return it, nil
	}
	out, err := queryAll(ctx, tx, scan, cols+" AND i.read_at IS NULL ORDER BY i.id LIMIT ?", ws, p, limit)
	if err != nil || !read || len(out) >= limit {
		return out, err
	}
	more, err := queryAll(ctx, tx, scan, cols+" AND i.read_at IS NOT NULL ORDER BY i.id DESC LIMIT ?", ws, p, limit-len(out))
	return append(out, more...), err
}

// UnreadCount counts principal p's unread inbox items in workspace ws.
func (tx *Tx) UnreadCount(ctx context.Context, ws, p int64) (int, error) {
	var n int
	err := tx.queryRow(ctx, "SELECT COUNT(*) FROM inbox_items WHERE workspace_id = ? AND principal_id = ? AND read_at IS NULL", ws, p).Scan(&n)
	return n, err
}

// AckInbox marks read the items ids of principal p's inbox that are unread,
// and reports how many. It takes the ids that were shown, not a bound: on
// PostgreSQL ids are handed out before commit, so an item committed late may
// carry an id below one already shown, and "up to" would mark it read unseen.
func (tx *Tx) AckInbox(ctx context.Context, ws, p int64, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := []any{micros(tx.now), ws, p}
	for _, id := range ids {
		args = append(args, id)
	}
	res, err := tx.exec(ctx, "UPDATE inbox_items SET read_at = ? WHERE workspace_id = ? AND principal_id = ? AND read_at IS NULL AND id IN ("+placeholders(len(ids))+")", args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// HandoffRules lists workspace ws's hand-off rules.
func (tx *Tx) HandoffRules(ctx context.Context, ws int64) ([]atrium.HandoffRule, error) {
	return queryAll(ctx, tx, func(sc scanner) (r atrium.HandoffRule, err error) {
		return r, sc.Scan(&r.MatchKind, &r.MatchValue, &r.NextID, &r.Next, &r.NextPhase)
	}, `SELECT r.match_kind, r.match_value, r.next_id, p.handle, r.next_phase FROM handoff_rules r JOIN principals p ON p.id = r.next_id
		WHERE r.workspace_id = ? ORDER BY r.match_kind DESC, r.match_value`, ws)
}

// SetHandoffRule adds or replaces the rule for its match in workspace ws.
func (tx *Tx) SetHandoffRule(ctx context.Context, ws int64, r atrium.HandoffRule) error {
	_, err := tx.exec(ctx, `INSERT INTO handoff_rules (workspace_id, match_kind, match_value, next_id, next_phase) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, match_kind, match_value) DO UPDATE SET next_id = excluded.next_id, next_phase = excluded.next_phase`,
		ws, r.MatchKind, r.MatchValue, r.NextID, r.NextPhase)
	return err
}

// DeleteHandoffRule removes a rule, and reports whether there was one.
func (tx *Tx) DeleteHandoffRule(ctx context.Context, ws int64, kind, value string) (bool, error) {
	res, err := tx.exec(ctx, "DELETE FROM handoff_rules WHERE workspace_id = ? AND match_kind = ? AND match_value = ?", ws, kind, value)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
