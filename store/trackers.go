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
	CommentsETag             string
	CommentsSince            time.Time
	LastSyncAt               time.Time
	LastError                string
	RateLimit, RateRemaining int
	RateReset                time.Time
	CreatedAt                time.Time
}

const trackerLinkCols = `workspace_id, kind, repo, api_url, claimed_by, poll_etag, poll_since, comments_etag, comments_since, last_sync_at, last_error, rate_limit, rate_remaining, rate_reset, created_at`

func scanTrackerLink(sc scanner) (TrackerLink, error) {
	var l TrackerLink
	var since, csince, synced, reset, created int64
	err := sc.Scan(&l.WorkspaceID, &l.Kind, &l.Repo, &l.APIURL, &l.ClaimedBy, &l.PollETag, &since, &l.CommentsETag, &csince, &synced, &l.LastError, &l.RateLimit, &l.RateRemaining, &reset, &created)
	l.PollSince, l.CommentsSince, l.LastSyncAt, l.RateReset, l.CreatedAt = maybeMicros(since), maybeMicros(csince), maybeMicros(synced), maybeMicros(reset), fromMicros(created)
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
// Rows pushed a week ago go: the event log is the record, and a retry's
// search for what a crashed try made looks back minutes, not weeks.
func (tx *Tx) ReleaseTracker(ctx context.Context, l TrackerLink, replica string) error {
	if _, err := tx.exec(ctx, "DELETE FROM tracker_outbox WHERE workspace_id = ? AND state = 'done' AND done_at < ?", l.WorkspaceID, micros(tx.now.Add(-7*24*time.Hour))); err != nil {
		return err
	}
	_, err := tx.exec(ctx, `UPDATE tracker_links SET claimed_by = '', claim_until = 0, poll_etag = ?, poll_since = ?, comments_etag = ?, comments_since = ?,
		last_sync_at = ?, last_error = ?, rate_limit = ?, rate_remaining = ?, rate_reset = ? WHERE workspace_id = ? AND claimed_by = ?`,
		l.PollETag, timeMicros(l.PollSince), l.CommentsETag, timeMicros(l.CommentsSince), micros(tx.now), l.LastError, l.RateLimit, l.RateRemaining, timeMicros(l.RateReset), l.WorkspaceID, replica)
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
	TaskNumber                         int64
	Kind                               string
	Attempts, Failures                 int
	LastError                          string
	CreatedAt, NextAt                  time.Time
}

const outboxCols = `o.id, o.workspace_id, o.task_id, o.comment_id, t.number, o.kind, o.attempts, o.failures, o.last_error, o.created_at, o.next_at`

func scanOutbox(sc scanner) (r OutboxRow, err error) {
	var at, next int64
	err = sc.Scan(&r.ID, &r.WorkspaceID, &r.TaskID, &r.CommentID, &r.TaskNumber, &r.Kind, &r.Attempts, &r.Failures, &r.LastError, &at, &next)
	r.CreatedAt, r.NextAt = fromMicros(at), maybeMicros(next)
	return r, err
}

// PendingOutbox lists workspace ws's changes not pushed yet after row
// after, in order,
// those waiting out a failure's backoff too: they hold back their task's
// later rows.
func (tx *Tx) PendingOutbox(ctx context.Context, ws, after int64, limit int) ([]OutboxRow, error) {
	return queryAll(ctx, tx, scanOutbox, `SELECT `+outboxCols+` FROM tracker_outbox o JOIN tasks t ON t.id = o.task_id
		WHERE o.workspace_id = ? AND o.state = 'pending' AND o.id > ? ORDER BY o.id LIMIT ?`, ws, after, limit)
}

// DeadOutbox lists workspace ws's dead rows, oldest first.
func (tx *Tx) DeadOutbox(ctx context.Context, ws int64, limit int) ([]OutboxRow, error) {
	return queryAll(ctx, tx, scanOutbox, `SELECT `+outboxCols+` FROM tracker_outbox o JOIN tasks t ON t.id = o.task_id
		WHERE o.workspace_id = ? AND o.state = 'dead' ORDER BY o.id LIMIT ?`, ws, limit)
}

// TrackersDue lists the workspaces with an outbox row due for the push.
func (tx *Tx) TrackersDue(ctx context.Context) ([]int64, error) {
	return queryAll(ctx, tx, func(sc scanner) (ws int64, err error) { return ws, sc.Scan(&ws) },
		"SELECT DISTINCT workspace_id FROM tracker_outbox WHERE state = 'pending' AND next_at <= ? ORDER BY workspace_id", micros(tx.now))
}

// BeginOutbox records that a try of row id begins, before it reaches the
// tracker.
func (tx *Tx) BeginOutbox(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "UPDATE tracker_outbox SET attempts = attempts + 1 WHERE id = ?", id)
	return err
}

// FinishOutbox marks row id pushed.
func (tx *Tx) FinishOutbox(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "UPDATE tracker_outbox SET state = 'done', last_error = '', done_at = ? WHERE id = ?", micros(tx.now), id)
	return err
}

// FailOutbox records why row id was not pushed: counted as a failure that
// waits until next (zero: not counted, the next sync tries again), or dead.
func (tx *Tx) FailOutbox(ctx context.Context, id int64, errText string, next time.Time, dead bool) error {
	switch {
	case dead:
		_, err := tx.exec(ctx, "UPDATE tracker_outbox SET state = 'dead', failures = failures + 1, last_error = ? WHERE id = ?", errText, id)
		return err
	case next.IsZero():
		_, err := tx.exec(ctx, "UPDATE tracker_outbox SET last_error = ? WHERE id = ?", errText, id)
		return err
	}
	_, err := tx.exec(ctx, "UPDATE tracker_outbox SET failures = failures + 1, next_at = ?, last_error = ? WHERE id = ?", micros(next), errText, id)
	return err
}

// RetryOutbox puts workspace ws's dead rows (those of ids; all when none)
// back in the queue with their failures forgotten, and forgets the issues
// of their tasks that are gone from the tracker, so that each is made anew.
// It returns the rows requeued.
func (tx *Tx) RetryOutbox(ctx context.Context, ws int64, ids []int64) (int, error) {
	where, args := andIDs("workspace_id = ? AND state = 'dead'", []any{ws}, ids)
	if _, err := tx.exec(ctx, "DELETE FROM tracker_issues WHERE gone AND task_id IN (SELECT task_id FROM tracker_outbox WHERE "+where+")", args...); err != nil {
		return 0, err
	}
	res, err := tx.exec(ctx, "UPDATE tracker_outbox SET state = 'pending', failures = 0, next_at = 0 WHERE "+where, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// A TrackerIssue is a mirrored task's issue and the fields last agreed on.
type TrackerIssue struct {
	TaskID, WorkspaceID int64
	Number              int
	Synced              string
	// Gone: the tracker no longer has it (deleted, or moved away).
	Gone bool
	// SeenAt is its updated_at as the mirror's own last write left it.
	SeenAt time.Time
}

const trackerIssueCols = "task_id, workspace_id, issue_number, synced, gone, seen_at"

func scanTrackerIssue(sc scanner) (i TrackerIssue, err error) {
	var seen int64
	err = sc.Scan(&i.TaskID, &i.WorkspaceID, &i.Number, &i.Synced, &i.Gone, &seen)
	i.SeenAt = maybeMicros(seen)
	return i, err
}

// TrackerIssueOf returns task's issue; ok is false when it has none yet.
func (tx *Tx) TrackerIssueOf(ctx context.Context, task int64) (TrackerIssue, bool, error) {
	i, err := scanTrackerIssue(tx.queryRow(ctx, "SELECT "+trackerIssueCols+" FROM tracker_issues WHERE task_id = ?", task))
	if errors.Is(err, sql.ErrNoRows) {
		return i, false, nil
	}
	return i, err == nil, err
}

// TrackerIssueByNumber returns the task of issue n of workspace ws's link.
func (tx *Tx) TrackerIssueByNumber(ctx context.Context, ws int64, n int) (TrackerIssue, bool, error) {
	i, err := scanTrackerIssue(tx.queryRow(ctx, "SELECT "+trackerIssueCols+" FROM tracker_issues WHERE workspace_id = ? AND issue_number = ?", ws, n))
	if errors.Is(err, sql.ErrNoRows) {
		return i, false, nil
	}
	return i, err == nil, err
}

// SetTrackerIssue records (or updates) a task's issue.
func (tx *Tx) SetTrackerIssue(ctx context.Context, i TrackerIssue) error {
	_, err := tx.exec(ctx, `INSERT INTO tracker_issues (task_id, workspace_id, issue_number, synced, gone, seen_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (task_id) DO UPDATE SET issue_number = excluded.issue_number, synced = excluded.synced, gone = excluded.gone, seen_at = excluded.seen_at`,
		i.TaskID, i.WorkspaceID, i.Number, i.Synced, i.Gone, timeMicros(i.SeenAt))
	return err
}

// TrackerCommentOf returns comment id's twin; ok is false when it has none.
func (tx *Tx) TrackerCommentOf(ctx context.Context, id int64) (TrackerComment, bool, error) {
	c, err := scanTrackerComment(tx.queryRow(ctx, "SELECT comment_id, remote_id, origin, remote_updated FROM tracker_comments WHERE comment_id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	return c, err == nil, err
}

// A TrackerComment ties a comment to its twin on the tracker.
type TrackerComment struct {
	CommentID, RemoteID int64
	// Origin is where it was written first: "atrium" or "tracker".
	Origin string
	// RemoteUpdated is when the twin was last seen changed.
	RemoteUpdated time.Time
}

func scanTrackerComment(sc scanner) (c TrackerComment, err error) {
	var at int64
	err = sc.Scan(&c.CommentID, &c.RemoteID, &c.Origin, &at)
	c.RemoteUpdated = maybeMicros(at)
	return c, err
}

// TrackerCommentByRemote returns the comment whose twin is remote; ok is
// false when there is none.
func (tx *Tx) TrackerCommentByRemote(ctx context.Context, ws, remote int64) (TrackerComment, bool, error) {
	c, err := scanTrackerComment(tx.queryRow(ctx, "SELECT comment_id, remote_id, origin, remote_updated FROM tracker_comments WHERE workspace_id = ? AND remote_id = ?", ws, remote))
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	return c, err == nil, err
}

// TrackerCommentsOfTask lists the twins of task's comments.
func (tx *Tx) TrackerCommentsOfTask(ctx context.Context, task int64) ([]TrackerComment, error) {
	return queryAll(ctx, tx, scanTrackerComment, `SELECT tc.comment_id, tc.remote_id, tc.origin, tc.remote_updated FROM tracker_comments tc
		JOIN task_comments c ON c.id = tc.comment_id WHERE c.task_id = ? ORDER BY tc.comment_id`, task)
}

// SetTrackerComment records that comment id and remote are twins, the
// comment written first at origin ("atrium" or "tracker").
func (tx *Tx) SetTrackerComment(ctx context.Context, ws, id, remote int64, origin string, remoteUpdated time.Time) error {
	_, err := tx.exec(ctx, "INSERT INTO tracker_comments (comment_id, workspace_id, remote_id, origin, remote_updated) VALUES (?, ?, ?, ?, ?) ON CONFLICT (comment_id) DO NOTHING",
		id, ws, remote, origin, timeMicros(remoteUpdated))
	return err
}

// TouchTrackerComment records when comment id's twin was last seen changed.
func (tx *Tx) TouchTrackerComment(ctx context.Context, id int64, remoteUpdated time.Time) error {
	_, err := tx.exec(ctx, "UPDATE tracker_comments SET remote_updated = ? WHERE comment_id = ?", timeMicros(remoteUpdated), id)
	return err
}

// ForgetTrackerComment drops comment id's twin: it is gone from the tracker.
func (tx *Tx) ForgetTrackerComment(ctx context.Context, id int64) error {
	_, err := tx.exec(ctx, "DELETE FROM tracker_comments WHERE comment_id = ?", id)
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

// DismissTrackerConflicts drops workspace ws's conflicts of ids (all when
// none): someone settled them. It returns how many went.
func (tx *Tx) DismissTrackerConflicts(ctx context.Context, ws int64, ids []int64) (int, error) {
	q, args := andIDs("DELETE FROM tracker_conflicts WHERE workspace_id = ?", []any{ws}, ids)
	res, err := tx.exec(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// TrackerConflicts lists workspace ws's conflicts, newest first.
func (tx *Tx) TrackerConflicts(ctx context.Context, ws int64, limit int) ([]TrackerConflict, error) {
	return queryAll(ctx, tx, scanTrackerConflict, `SELECT c.id, c.task_id, t.number, c.field, c.atrium_value, c.remote_value, c.created_at FROM tracker_conflicts c JOIN tasks t ON t.id = c.task_id
		WHERE c.workspace_id = ? ORDER BY c.id DESC LIMIT ?`, ws, limit)
}

// TrackerConflictsOfTask lists the conflicts of workspace ws's task number
// n, newest first: for the task's page, which the workspace's list, capped,
// may not reach.
func (tx *Tx) TrackerConflictsOfTask(ctx context.Context, ws, n int64, limit int) ([]TrackerConflict, error) {
	return queryAll(ctx, tx, scanTrackerConflict, `SELECT c.id, c.task_id, t.number, c.field, c.atrium_value, c.remote_value, c.created_at FROM tracker_conflicts c JOIN tasks t ON t.id = c.task_id
		WHERE c.workspace_id = ? AND t.workspace_id = ? AND t.number = ? ORDER BY c.id DESC LIMIT ?`, ws, ws, n, limit)
}

func scanTrackerConflict(sc scanner) (c TrackerConflict, err error) {
	var at int64
	err = sc.Scan(&c.ID, &c.TaskID, &c.TaskNumber, &c.Field, &c.Atrium, &c.Remote, &at)
	c.CreatedAt = fromMicros(at)
	return c, err
}

// TrackerCounts are a link's numbers for its status.
type TrackerCounts struct {
	Issues, Comments, Pending, Conflicts int
	// Waiting are the pending rows waiting out a failure; Dead the rows
	// given up on; Gone the issues the tracker no longer has.
	Waiting, Dead, Gone int
}

// TrackerCountsOf counts workspace ws's mirrored issues and comments, its
// changes waiting for the push and its conflicts.
func (tx *Tx) TrackerCountsOf(ctx context.Context, ws int64) (TrackerCounts, error) {
	var c TrackerCounts
	err := tx.queryRow(ctx, `SELECT (SELECT COUNT(*) FROM tracker_issues WHERE workspace_id = ?), (SELECT COUNT(*) FROM tracker_comments WHERE workspace_id = ?),
		(SELECT COUNT(*) FROM tracker_outbox WHERE workspace_id = ? AND state = 'pending'), (SELECT COUNT(*) FROM tracker_conflicts WHERE workspace_id = ?),
		(SELECT COUNT(*) FROM tracker_outbox WHERE workspace_id = ? AND state = 'pending' AND failures > 0),
		(SELECT COUNT(*) FROM tracker_outbox WHERE workspace_id = ? AND state = 'dead'),
		(SELECT COUNT(*) FROM tracker_issues WHERE workspace_id = ? AND gone)`,
		ws, ws, ws, ws, ws, ws, ws).Scan(&c.Issues, &c.Comments, &c.Pending, &c.Conflicts, &c.Waiting, &c.Dead, &c.Gone)
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

// andIDs narrows where (with its args) to the rows of ids; none: all.
func andIDs(where string, args []any, ids []int64) (string, []any) {
	if len(ids) == 0 {
		return where, args
	}
	for _, id := range ids {
		args = append(args, id)
	}
	return where + " AND id IN (" + placeholders(len(ids)) + ")", args
}
