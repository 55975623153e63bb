package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
)

// A TrackerLink is a workspace's mirror to an outside tracker's repository.
type TrackerLink struct {
	WorkspaceID              int64
	Kind, Repo, APIURL       string
	ClaimedBy                string
	PollETag                 string
	PollSince                time.Time
	LastSyncAt               time.Time
	LastError                string
	RateLimit, RateRemaining int
	RateReset                time.Time
	CreatedAt                time.Time
}

const trackerLinkCols = `workspace_id, kind, repo, api_url, claimed_by, poll_etag, poll_since, last_sync_at, last_error, rate_limit, rate_remaining, rate_reset, created_at`

func scanTrackerLink(sc scanner) (TrackerLink, error) {
	var l TrackerLink
	var since, synced, reset, created int64
	err := sc.Scan(&l.WorkspaceID, &l.Kind, &l.Repo, &l.APIURL, &l.ClaimedBy, &l.PollETag, &since, &synced, &l.LastError, &l.RateLimit, &l.RateRemaining, &reset, &created)
	l.PollSince, l.LastSyncAt, l.RateReset, l.CreatedAt = maybeMicros(since), maybeMicros(synced), maybeMicros(reset), fromMicros(created)
	return l, err
}

// LinkTracker links workspace ws to a tracker's repository, or moves its
// link to another. Every task of the workspace (not desks' todos) and each
// of its comments is queued for the first push, in order.
func (tx *Tx) LinkTracker(ctx context.Context, l TrackerLink) error {
	now := micros(tx.now)
	var old string
	err := tx.queryRow(ctx, "SELECT kind || ':' || repo || ':' || api_url FROM tracker_links WHERE workspace_id = ?", l.WorkspaceID).Scan(&old)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if old == l.Kind+":"+l.Repo+":"+l.APIURL {
		return nil // as it is
	}
	if old != "" { // a new repository: nothing of the old one's holds
		for _, q := range []string{"DELETE FROM tracker_issues WHERE workspace_id = ?", "DELETE FROM tracker_comments WHERE workspace_id = ?",
			"DELETE FROM tracker_outbox WHERE workspace_id = ?", "DELETE FROM tracker_conflicts WHERE workspace_id = ?", "DELETE FROM tracker_links WHERE workspace_id = ?"} {
			if _, err := tx.exec(ctx, q, l.WorkspaceID); err != nil {
				return err
			}
		}
	}
	if _, err := tx.exec(ctx, `INSERT INTO tracker_links (workspace_id, kind, repo, api_url, created_at) VALUES (?, ?, ?, ?, ?)`,
		l.WorkspaceID, l.Kind, l.Repo, l.APIURL, now); err != nil {
		return err
	}
	_, err = tx.exec(ctx, `INSERT INTO tracker_outbox (workspace_id, task_id, comment_id, kind, created_at)
		SELECT workspace_id, task_id, comment_id, kind, ? FROM (
			SELECT t.workspace_id, t.id AS task_id, 0 AS comment_id, 'task.linked' AS kind, t.created_at AS at, 0 AS ord FROM tasks t WHERE t.workspace_id = ? AND t.kind = 'task'
			UNION ALL
			SELECT c.workspace_id, c.task_id, c.id, 'task.commented', c.created_at, c.id FROM task_comments c JOIN tasks t ON t.id = c.task_id WHERE c.workspace_id = ? AND t.kind = 'task'
		) q ORDER BY task_id, ord`, now, l.WorkspaceID, l.WorkspaceID)
	return err
}

// TrackerLinkOf returns workspace ws's link, or not_found.
func (tx *Tx) TrackerLinkOf(ctx context.Context, ws int64) (TrackerLink, error) {
	l, err := scanTrackerLink(tx.queryRow(ctx, "SELECT "+trackerLinkCols+" FROM tracker_links WHERE workspace_id = ?", ws))
	if errors.Is(err, sql.ErrNoRows) {
		return l, atrium.Errorf(atrium.ENotFound, "this workspace is linked to no tracker: link it with 'atrium tracker link github OWNER/REPO'")
	}
	return l, err
}

// TrackerLinks lists every workspace's link.
func (tx *Tx) TrackerLinks(ctx context.Context) ([]TrackerLink, error) {
	return queryAll(ctx, tx, scanTrackerLink, "SELECT "+trackerLinkCols+" FROM tracker_links ORDER BY workspace_id")
}

// ClaimTracker makes replica the one that syncs workspace ws's link until
// the lease ends, unless another holds a live claim (other than void's: a
// holder known to have died). On PostgreSQL the row is taken with SKIP
// LOCKED: a replica that finds it locked moves on.
func (tx *Tx) ClaimTracker(ctx context.Context, ws int64, replica, void string, lease time.Duration) (bool, error) {
	now := micros(tx.now)
	if tx.db.engine == Postgres {
		var one int
		err := tx.queryRow(ctx, "SELECT 1 FROM tracker_links WHERE workspace_id = ? FOR UPDATE SKIP LOCKED", ws).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
	res, err := tx.exec(ctx, `UPDATE tracker_links SET claimed_by = ?, claim_until = ? WHERE workspace_id = ? AND (claimed_by = ? OR claim_until < ? OR claimed_by = ? AND ? <> '')`,
		replica, micros(tx.now.Add(lease)), ws, replica, now, void, void)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// ReleaseTracker gives up replica's claim and records how the sync went.
func (tx *Tx) ReleaseTracker(ctx context.Context, l TrackerLink, replica string) error {
	_, err := tx.exec(ctx, `UPDATE tracker_links SET claimed_by = '', claim_until = 0, poll_etag = ?, poll_since = ?, last_sync_at = ?, last_error = ?,
		rate_limit = ?, rate_remaining = ?, rate_reset = ? WHERE workspace_id = ? AND claimed_by = ?`,
		l.PollETag, timeMicros(l.PollSince), micros(tx.now), l.LastError, l.RateLimit, l.RateRemaining, timeMicros(l.RateReset), l.WorkspaceID, replica)
	return err
}

func timeMicros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return micros(t)
}

// AddTrackerOutbox queues a change of task (and comment, if not 0) for the
// push when the workspace is linked: in the same transaction as its event.
func (tx *Tx) AddTrackerOutbox(ctx context.Context, ws, task, comment int64, kind string) error {
	_, err := tx.exec(ctx, `INSERT INTO tracker_outbox (workspace_id, task_id, comment_id, kind, created_at)
		SELECT workspace_id, ?, ?, ?, ? FROM tracker_links WHERE workspace_id = ?`, task, comment, kind, micros(tx.now), ws)
	return err
}

// An OutboxRow is one queued change.
type OutboxRow struct {
	ID, WorkspaceID, TaskID, CommentID int64
	Kind                               string
	Attempts                           int
	CreatedAt                          time.Time
}

// PendingOutbox lists workspace ws's changes not pushed yet, in order.
func (tx *Tx) PendingOutbox(ctx context.Context, ws int64, limit int) ([]OutboxRow, error) {
	return queryAll(ctx, tx, func(sc scanner) (r OutboxRow, err error) {
		var at int64
		err = sc.Scan(&r.ID, &r.WorkspaceID, &r.TaskID, &r.CommentID, &r.Kind, &r.Attempts, &at)
		r.CreatedAt = fromMicros(at)
		return r, err
	}, `SELECT id, workspace_id, task_id, comment_id, kind, attempts, created_at FROM tracker_outbox
		WHERE workspace_id = ? AND state = 'pending' ORDER BY id LIMIT ?`, ws, limit)
}

// BeginOutbox records that a try of row id begins, before it reaches the
// tracker.
func (tx *Tx) BeginOutbox(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "UPDATE tracker_outbox SET attempts = attempts + 1 WHERE id = ?", id)
	return err
}

// FinishOutbox marks row id pushed, or records why it was not (errText).
func (tx *Tx) FinishOutbox(ctx context.Context, id int64, errText string) error {
	if errText != "" {
		_, err := tx.exec(ctx, "UPDATE tracker_outbox SET last_error = ? WHERE id = ?", errText, id)
		return err
	}
	_, err := tx.exec(ctx, "UPDATE tracker_outbox SET state = 'done', last_error = '', done_at = ? WHERE id = ?", micros(tx.now), id)
	return err
}

// A TrackerIssue is a mirrored task's issue and the fields last agreed on.
type TrackerIssue struct {
	TaskID, WorkspaceID int64
	Number              int
	Synced              string
}

// TrackerIssueOf returns task's issue; ok is false when it has none yet.
func (tx *Tx) TrackerIssueOf(ctx context.Context, task int64) (TrackerIssue, bool, error) {
	var i TrackerIssue
	err := tx.queryRow(ctx, "SELECT task_id, workspace_id, issue_number, synced FROM tracker_issues WHERE task_id = ?", task).Scan(&i.TaskID, &i.WorkspaceID, &i.Number, &i.Synced)
	if errors.Is(err, sql.ErrNoRows) {
		return i, false, nil
	}
	return i, err == nil, err
}

// TrackerIssueByNumber returns the task of issue n of workspace ws's link.
func (tx *Tx) TrackerIssueByNumber(ctx context.Context, ws int64, n int) (TrackerIssue, bool, error) {
	var i TrackerIssue
	err := tx.queryRow(ctx, "SELECT task_id, workspace_id, issue_number, synced FROM tracker_issues WHERE workspace_id = ? AND issue_number = ?", ws, n).Scan(&i.TaskID, &i.WorkspaceID, &i.Number, &i.Synced)
	if errors.Is(err, sql.ErrNoRows) {
		return i, false, nil
	}
	return i, err == nil, err
}

// SetTrackerIssue records (or updates) a task's issue.
func (tx *Tx) SetTrackerIssue(ctx context.Context, i TrackerIssue) error {
	_, err := tx.exec(ctx, `INSERT INTO tracker_issues (task_id, workspace_id, issue_number, synced) VALUES (?, ?, ?, ?)
		ON CONFLICT (task_id) DO UPDATE SET issue_number = excluded.issue_number, synced = excluded.synced`, i.TaskID, i.WorkspaceID, i.Number, i.Synced)
	return err
}

// TrackerComment returns the remote twin of comment id (0: none).
func (tx *Tx) TrackerComment(ctx context.Context, id int64) (int64, error) {
	var remote int64
	err := tx.queryRow(ctx, "SELECT remote_id FROM tracker_comments WHERE comment_id = ?", id).Scan(&remote)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return remote, err
}

// TrackerCommentByRemote returns the comment whose twin is remote (0: none).
func (tx *Tx) TrackerCommentByRemote(ctx context.Context, ws, remote int64) (int64, error) {
	var id int64
	err := tx.queryRow(ctx, "SELECT comment_id FROM tracker_comments WHERE workspace_id = ? AND remote_id = ?", ws, remote).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// SetTrackerComment records that comment id and remote are twins.
func (tx *Tx) SetTrackerComment(ctx context.Context, ws, id, remote int64) error {
	_, err := tx.exec(ctx, "INSERT INTO tracker_comments (comment_id, workspace_id, remote_id) VALUES (?, ?, ?) ON CONFLICT (comment_id) DO NOTHING", id, ws, remote)
	return err
}

// A TrackerConflict is a field changed on both sides.
type TrackerConflict struct {
	ID, TaskID, TaskNumber int64
	Field, Atrium, Remote  string
	CreatedAt              time.Time
}

// AddTrackerConflict lists a conflict.
func (tx *Tx) AddTrackerConflict(ctx context.Context, ws int64, c TrackerConflict) error {
	_, err := tx.exec(ctx, `INSERT INTO tracker_conflicts (workspace_id, task_id, field, atrium_value, remote_value, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		ws, c.TaskID, c.Field, c.Atrium, c.Remote, micros(tx.now))
	return err
}

// TrackerConflicts lists workspace ws's conflicts, newest first.
func (tx *Tx) TrackerConflicts(ctx context.Context, ws int64, limit int) ([]TrackerConflict, error) {
	return queryAll(ctx, tx, func(sc scanner) (c TrackerConflict, err error) {
		var at int64
		err = sc.Scan(&c.ID, &c.TaskID, &c.TaskNumber, &c.Field, &c.Atrium, &c.Remote, &at)
		c.CreatedAt = fromMicros(at)
		return c, err
	}, `SELECT c.id, c.task_id, t.number, c.field, c.atrium_value, c.remote_value, c.created_at FROM tracker_conflicts c JOIN tasks t ON t.id = c.task_id
		WHERE c.workspace_id = ? ORDER BY c.id DESC LIMIT ?`, ws, limit)
}

// TrackerCounts are a link's numbers for its status.
type TrackerCounts struct {
	Issues, Comments, Pending, Conflicts int
}

// TrackerCountsOf counts workspace ws's mirrored issues and comments, its
// changes waiting for the push and its conflicts.
func (tx *Tx) TrackerCountsOf(ctx context.Context, ws int64) (TrackerCounts, error) {
	var c TrackerCounts
	err := tx.queryRow(ctx, `SELECT (SELECT COUNT(*) FROM tracker_issues WHERE workspace_id = ?), (SELECT COUNT(*) FROM tracker_comments WHERE workspace_id = ?),
		(SELECT COUNT(*) FROM tracker_outbox WHERE workspace_id = ? AND state = 'pending'), (SELECT COUNT(*) FROM tracker_conflicts WHERE workspace_id = ?)`,
		ws, ws, ws, ws).Scan(&c.Issues, &c.Comments, &c.Pending, &c.Conflicts)
	return c, err
}

// EnsureMember returns the principal with handle, made (of kind) and given
// role in ws if it is not there: the principal of an outside tracker's user.
func (tx *Tx) EnsureMember(ctx context.Context, ws int64, handle string, kind atrium.PrincipalKind, display string, role atrium.Role) (atrium.Principal, error) {
	p, err := tx.PrincipalByHandle(ctx, handle)
	if atrium.ErrorCode(err) == atrium.ENotFound {
		p, err = tx.CreatePrincipal(ctx, atrium.Principal{Handle: handle, Kind: kind, DisplayName: display})
	}
	if err != nil {
		return p, err
	}
	if r, err := tx.Role(ctx, ws, p.ID); err != nil || r != "" {
		return p, err
	}
	return p, tx.SetRole(ctx, ws, p.ID, role)
}

// TaskByID returns task id of workspace ws, or not_found.
func (tx *Tx) TaskByID(ctx context.Context, ws, id int64) (atrium.Task, error) {
	var n int64
	err := tx.queryRow(ctx, "SELECT number FROM tasks WHERE workspace_id = ? AND id = ?", ws, id).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return atrium.Task{}, atrium.Errorf(atrium.ENotFound, "Task not found: %d", id)
	}
	if err != nil {
		return atrium.Task{}, err
	}
	return tx.TaskByNumber(ctx, ws, n)
}

// TrackerLinksOfRepo are the links to repo of a tracker of kind (a
// repository may be mirrored by several workspaces).
func (tx *Tx) TrackerLinksOfRepo(ctx context.Context, kind, repo string) ([]TrackerLink, error) {
	links, err := tx.TrackerLinks(ctx)
	var out []TrackerLink
	for _, l := range links {
		if l.Kind == kind && strings.EqualFold(l.Repo, repo) {
			out = append(out, l)
		}
	}
	return out, err
}

// RecordHookDelivery records webhook delivery id for workspace ws and
// reports whether it is new; deliveries older than a week are dropped.
func (tx *Tx) RecordHookDelivery(ctx context.Context, id string, ws int64, event string) (bool, error) {
	if _, err := tx.exec(ctx, "DELETE FROM tracker_hook_deliveries WHERE received_at < ?", micros(tx.now.Add(-7*24*time.Hour))); err != nil {
		return false, err
	}
	res, err := tx.exec(ctx, `INSERT INTO tracker_hook_deliveries (delivery_id, workspace_id, event, received_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (delivery_id, workspace_id) DO NOTHING`, id, ws, event, micros(tx.now))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
