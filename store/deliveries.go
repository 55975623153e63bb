package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"time"

	"github.com/atrium-hq/atrium"
)

// Delivery states. A delivery is made pending with its inbox item; a
// dispatcher claims it (waking, under a lease that a crashed replica's
// claims outlive by no more than the lease), puts it into a session
// (delivered) or gives it back (pending again, or failed with a time to
// retry); the agent reading it acknowledges it.
const (
	DeliveryPending      = "pending"
	DeliveryWaking       = "waking"
	DeliveryDelivered    = "delivered"
	DeliveryAcknowledged = "acknowledged"
	DeliveryFailed       = "failed"
	DeliveryCancelled    = "cancelled"
)

// A DeliveryRow is one delivery, with what it carries.
type DeliveryRow struct {
	ID, WorkspaceID, PrincipalID int64
	Agent                        string // the agent's handle
	InboxID                      int64
	TaskID, TaskNumber           int64
	TaskTitle                    string
	Kind                         atrium.InboxKind
	State                        string
	SessionID                    int64 // the generation it is for, or went into; 0: the next
	SessionUID                   string
	Channel                      string
	Attempts                     int
	NextAt                       time.Time // zero: not scheduled (failed for good, or not failed)
	ClaimedBy                    string
	ClaimUntil                   time.Time
	Reason                       string
	From                         string // who caused it
	FromID                       int64
	CommentID                    int64
	CommentType                  atrium.CommentType
	CommentBody                  string
	// A resume's: the kind of the item it resumes, and who caused that.
	ResumesKind          atrium.InboxKind
	ResumesFrom          string
	CreatedAt, UpdatedAt time.Time
	DeliveredAt, AckedAt time.Time
}

const deliveryCols = `d.id, d.workspace_id, d.principal_id, p.handle, d.inbox_id, d.task_id, t.number, t.title, d.kind, d.state,
	COALESCE(d.session_id, 0), COALESCE(s.uid, ''), d.channel, d.attempts, COALESCE(d.next_at, 0), d.claimed_by, COALESCE(d.claim_until, 0), d.reason,
	COALESCE(f.handle, ''), COALESCE(i.actor_id, 0), COALESCE(i.comment_id, 0), COALESCE(c.type, ''), COALESCE(c.body, ''),
	COALESCE(ri.kind, ''), COALESCE(rf.handle, ''), d.created_at, d.updated_at, COALESCE(d.delivered_at, 0), COALESCE(d.acked_at, 0)`

const deliveryFrom = ` FROM agent_deliveries d JOIN principals p ON p.id = d.principal_id JOIN tasks t ON t.id = d.task_id
	JOIN inbox_items i ON i.id = d.inbox_id LEFT JOIN principals f ON f.id = i.actor_id LEFT JOIN task_comments c ON c.id = i.comment_id
	LEFT JOIN agent_sessions s ON s.id = d.session_id
	LEFT JOIN inbox_items ri ON ri.id = i.resumes LEFT JOIN principals rf ON rf.id = ri.actor_id`

func scanDelivery(sc scanner) (DeliveryRow, error) {
	var (
		r                                           DeliveryRow
		kind, typ, resumes                          string
		next, claim, created, updated, deliv, acked int64
	)
	err := sc.Scan(&r.ID, &r.WorkspaceID, &r.PrincipalID, &r.Agent, &r.InboxID, &r.TaskID, &r.TaskNumber, &r.TaskTitle, &kind, &r.State,
		&r.SessionID, &r.SessionUID, &r.Channel, &r.Attempts, &next, &r.ClaimedBy, &claim, &r.Reason,
		&r.From, &r.FromID, &r.CommentID, &typ, &r.CommentBody, &resumes, &r.ResumesFrom, &created, &updated, &deliv, &acked)
	r.Kind, r.CommentType, r.ResumesKind = atrium.InboxKind(kind), atrium.CommentType(typ), atrium.InboxKind(resumes)
	r.NextAt, r.ClaimUntil, r.DeliveredAt, r.AckedAt = maybeMicros(next), maybeMicros(claim), maybeMicros(deliv), maybeMicros(acked)
	r.CreatedAt, r.UpdatedAt = fromMicros(created), fromMicros(updated)
	return r, err
}

func maybeMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return fromMicros(us)
}

// addDeliveries makes the inbox item a delivery when its principal is an
// agent with a launch preset in the workspace: in the same statement, so in
// the same transaction as the item and its event. The delivery is for the
// agent's open session on the task, if one runs.
func (tx *Tx) addDeliveries(ctx context.Context, e InboxEntry, inboxID int64) error {
	now := micros(tx.now)
	_, err := tx.exec(ctx, `INSERT INTO agent_deliveries (workspace_id, principal_id, inbox_id, task_id, kind, state, session_id, next_at, created_at, updated_at)
		SELECT a.workspace_id, a.principal_id, ?, ?, ?, 'pending',
			(SELECT s.id FROM agent_sessions s WHERE s.workspace_id = a.workspace_id AND s.principal_id = a.principal_id AND s.task_id = ? AND s.ended_at IS NULL),
			?, ?, ?
		FROM agents a WHERE a.workspace_id = ? AND a.principal_id = ?`,
		inboxID, e.Task, string(e.Kind), e.Task, now, now, now, e.Workspace, e.Principal)
	return err
}

// A DeliveryGroup is one agent's deliveries on one task: they are handled
// together, in order, by one replica at a time.
type DeliveryGroup struct {
	WorkspaceID, PrincipalID, TaskID int64
}

// dueDelivery is what the dispatcher may take now: pending, failed with a
// retry due, or waking under a claim whose lease ran out (its replica died).
const dueDelivery = `(d.state = 'pending' OR d.state = 'failed' AND d.next_at IS NOT NULL OR d.state = 'waking' AND d.claim_until < ?) AND COALESCE(d.next_at, 0) <= ?`

// DueDeliveryGroups lists the groups with deliveries due at now whose agent
// is not paused, those waiting longest first, at most limit.
func (tx *Tx) DueDeliveryGroups(ctx context.Context, now time.Time, limit int) ([]DeliveryGroup, error) {
	us := micros(now)
	return queryAll(ctx, tx, func(sc scanner) (g DeliveryGroup, err error) {
		var first int64
		return g, sc.Scan(&g.WorkspaceID, &g.PrincipalID, &g.TaskID, &first)
	}, `SELECT d.workspace_id, d.principal_id, d.task_id, MIN(d.id) FROM agent_deliveries d
		JOIN agents a ON a.workspace_id = d.workspace_id AND a.principal_id = d.principal_id
		WHERE `+dueDelivery+` AND a.paused = FALSE
		GROUP BY d.workspace_id, d.principal_id, d.task_id ORDER BY 4 LIMIT ?`, us, us, limit)
}

// A Claim is what ClaimDeliveries took, or why it took nothing.
type Claim struct {
	Deliveries []DeliveryRow
	// Elsewhere names the replica that runs the agent's session on the task,
	// or holds a live claim on the group: it delivers them, not this one.
	Elsewhere string
}

// ClaimDeliveries claims group g's due deliveries, oldest first, at most
// limit, for replica until the lease ends. The agent's row is locked first
// (PostgreSQL), so two replicas claim one group one after the other, and
// neither takes a group whose session, or earlier claim, is another's.
// Deliveries for a session that has ended are for the next one from now on.
func (tx *Tx) ClaimDeliveries(ctx context.Context, g DeliveryGroup, replica string, lease time.Duration, limit int) (Claim, error) {
	var out Claim
	if tx.db.engine == Postgres {
		var one int
		err := tx.queryRow(ctx, "SELECT 1 FROM agents WHERE workspace_id = ? AND principal_id = ? FOR UPDATE", g.WorkspaceID, g.PrincipalID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return out, nil // the agent was removed: its deliveries wait for it
		}
		if err != nil {
			return out, err
		}
	}
	now := micros(tx.now)
	err := tx.queryRow(ctx, `SELECT COALESCE((SELECT s.replica FROM agent_sessions s WHERE s.workspace_id = ? AND s.principal_id = ? AND s.task_id = ? AND s.ended_at IS NULL AND s.replica <> ?),
		(SELECT MIN(d.claimed_by) FROM agent_deliveries d WHERE d.workspace_id = ? AND d.principal_id = ? AND d.task_id = ? AND d.state = 'waking' AND d.claim_until >= ? AND d.claimed_by <> ?), '')`,
		g.WorkspaceID, g.PrincipalID, g.TaskID, replica, g.WorkspaceID, g.PrincipalID, g.TaskID, now, replica).Scan(&out.Elsewhere)
	if err != nil || out.Elsewhere != "" {
		return out, err
	}
	ended, err := queryAll(ctx, tx, scanID, `UPDATE agent_deliveries SET session_id = NULL, updated_at = ?
		WHERE workspace_id = ? AND principal_id = ? AND task_id = ? AND state IN ('pending', 'failed', 'waking') AND session_id IS NOT NULL
			AND EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = agent_deliveries.session_id AND s.ended_at IS NOT NULL) RETURNING id`,
		now, g.WorkspaceID, g.PrincipalID, g.TaskID)
	if err != nil {
		return out, err
	}
	if err := tx.logDeliveries(ctx, ended, DeliveryPending, "the session it was for has ended: it goes to the agent's next session"); err != nil {
		return out, err
	}
	ids, err := queryAll(ctx, tx, scanID, `UPDATE agent_deliveries SET state = 'waking', claimed_by = ?, claim_until = ?, attempts = attempts + 1, updated_at = ?
		WHERE id IN (SELECT d.id FROM agent_deliveries d WHERE d.workspace_id = ? AND d.principal_id = ? AND d.task_id = ? AND `+dueDelivery+` ORDER BY d.id LIMIT ?)
		RETURNING id`, replica, micros(tx.now.Add(lease)), now, g.WorkspaceID, g.PrincipalID, g.TaskID, now, now, limit)
	if err != nil || len(ids) == 0 {
		return out, err
	}
	slices.Sort(ids)
	if err := tx.logDeliveries(ctx, ids, DeliveryWaking, "claimed by replica "+replica); err != nil {
		return out, err
	}
	out.Deliveries, err = tx.deliveriesByID(ctx, ids)
	return out, err
}

func scanID(sc scanner) (id int64, err error) { return id, sc.Scan(&id) }

func (tx *Tx) deliveriesByID(ctx context.Context, ids []int64) ([]DeliveryRow, error) {
	return queryAll(ctx, tx, scanDelivery, "SELECT "+deliveryCols+deliveryFrom+" WHERE d.id IN ("+placeholders(len(ids))+") ORDER BY d.id", idArgs(ids)...)
}

func (tx *Tx) logDeliveries(ctx context.Context, ids []int64, state, note string) error {
	for _, id := range ids {
		if _, err := tx.exec(ctx, "INSERT INTO agent_delivery_log (delivery_id, at, state, note) VALUES (?, ?, ?, ?)", id, micros(tx.now), state, note); err != nil {
			return err
		}
	}
	return nil
}

// MarkDelivered records that replica put its claimed deliveries ids into
// session (the generation) through channel. A delivery meant for another
// generation is refused: it stays claimed, and the ids returned say which
// went in.
func (tx *Tx) MarkDelivered(ctx context.Context, ids []int64, replica string, session int64, channel, note string) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	now := micros(tx.now)
	// Only into a session still open: one that ended a moment ago has
	// failed its deliveries already (FailUnread), and would not read these.
	done, err := queryAll(ctx, tx, scanID, `UPDATE agent_deliveries SET state = 'delivered', session_id = ?, channel = ?, delivered_at = ?, updated_at = ?, claimed_by = '', claim_until = NULL, next_at = NULL, reason = ''
		WHERE state = 'waking' AND claimed_by = ? AND (session_id IS NULL OR session_id = ?)
			AND EXISTS (SELECT 1 FROM agent_sessions s WHERE s.id = ? AND s.ended_at IS NULL) AND id IN (`+placeholders(len(ids))+`) RETURNING id`,
		append([]any{session, channel, now, now, replica, session, session}, idArgs(ids)...)...)
	if err != nil {
		return nil, err
	}
	slices.Sort(done)
	return done, tx.logDeliveries(ctx, done, DeliveryDelivered, note)
}

// ReleaseDeliveries gives back replica's claimed deliveries ids: pending
// again at next (a session is busy, a limit is reached), or failed with a
// retry at next (zero: none; an admin retries it). Pending again, they were
// not tried, and the attempt their claim counted is given back: a terminal
// busy for a minute must not use up a delivery's attempts.
func (tx *Tx) ReleaseDeliveries(ctx context.Context, ids []int64, replica, state string, next time.Time, reason string) error {
	if len(ids) == 0 {
		return nil
	}
	var nextAt sql.NullInt64
	if !next.IsZero() {
		nextAt = sql.NullInt64{Int64: micros(next), Valid: true}
	}
	refund := 0
	if state == DeliveryPending {
		refund = 1
	}
	done, err := queryAll(ctx, tx, scanID, `UPDATE agent_deliveries SET state = ?, next_at = ?, reason = ?, claimed_by = '', claim_until = NULL,
			attempts = CASE WHEN attempts >= ? THEN attempts - ? ELSE 0 END, updated_at = ?
		WHERE state = 'waking' AND claimed_by = ? AND id IN (`+placeholders(len(ids))+`) RETURNING id`,
		append([]any{state, nextAt, reason, refund, refund, micros(tx.now), replica}, idArgs(ids)...)...)
	if err != nil {
		return err
	}
	return tx.logDeliveries(ctx, done, state, reason)
}

// FailUnread fails the deliveries that went into session and were never
// acknowledged (it ended first), to be retried in a new session when retry,
// given how many attempts each has had, says (zero time: not again).
func (tx *Tx) FailUnread(ctx context.Context, session int64, reason string, retry func(attempts int) (time.Time, string)) ([]int64, error) {
	type row struct {
		id       int64
		attempts int
	}
	rows, err := queryAll(ctx, tx, func(sc scanner) (r row, err error) { return r, sc.Scan(&r.id, &r.attempts) },
		"SELECT id, attempts FROM agent_deliveries WHERE session_id = ? AND state = 'delivered'", session)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, r := range rows {
		next, more := retry(r.attempts)
		var nextAt sql.NullInt64
		if !next.IsZero() {
			nextAt = sql.NullInt64{Int64: micros(next), Valid: true}
		}
		if _, err := tx.exec(ctx, "UPDATE agent_deliveries SET state = 'failed', next_at = ?, reason = ?, session_id = NULL, updated_at = ? WHERE id = ? AND state = 'delivered'",
			nextAt, reason+more, micros(tx.now), r.id); err != nil {
			return nil, err
		}
		if err := tx.logDeliveries(ctx, []int64{r.id}, DeliveryFailed, reason+more); err != nil {
			return nil, err
		}
		ids = append(ids, r.id)
	}
	return ids, nil
}

// ReturnUnread gives back the deliveries that went into session and were
// never acknowledged because Atrium itself ended under the session (a crash,
// a restart): that is no attempt of theirs, so it is not counted against
// them, and they are due again at once. Counted, a delivery caught by a few
// restarts would be given up on its next ordinary failure.
func (tx *Tx) ReturnUnread(ctx context.Context, session int64, reason string) ([]int64, error) {
	ids, err := queryAll(ctx, tx, scanID, `UPDATE agent_deliveries SET state = 'failed', next_at = ?, reason = ?, session_id = NULL,
			attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, updated_at = ?
		WHERE session_id = ? AND state = 'delivered' RETURNING id`, micros(tx.now), reason, micros(tx.now), session)
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return ids, tx.logDeliveries(ctx, ids, DeliveryFailed, reason)
}

// ResumeRead wakes the agent of session again on its task when Atrium's own
// end cut the session short after the agent had read what woke it: the
// agent was at work on it, and the delivery, acknowledged, would never wake
// it again. It adds a resume item to the agent's inbox (and so a delivery)
// naming the last item read in the session and carrying its comment, and
// reports whether the session had read one.
func (tx *Tx) ResumeRead(ctx context.Context, session int64) (bool, error) {
	var ws, principal, task, item int64
	var comment sql.NullInt64
	// A resume cut short in turn names what the first one did.
	err := tx.queryRow(ctx, `SELECT d.workspace_id, d.principal_id, d.task_id, CASE WHEN i.kind = 'resume' AND i.resumes IS NOT NULL THEN i.resumes ELSE i.id END, i.comment_id
		FROM agent_deliveries d JOIN inbox_items i ON i.id = d.inbox_id
		WHERE d.session_id = ? AND d.state = 'acknowledged' ORDER BY d.id DESC LIMIT 1`, session).Scan(&ws, &principal, &task, &item, &comment)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, tx.AddInbox(ctx, InboxEntry{Workspace: ws, Principal: principal, Task: task, Comment: comment.Int64, Kind: atrium.InboxResume, Resumes: item})
}

// AckDeliveries acknowledges agent principal's deliveries in workspace ws
// that the agent has now read: those of the inbox items inbox and those put
// into the calling session, or, with task set, every one on that task; a
// session's token, only those on its task. Each is acknowledged once.
func (tx *Tx) AckDeliveries(ctx context.Context, ws, principal, token, task int64, inbox []int64, how string) (int64, error) {
	now := micros(tx.now)
	// A session reads for its task: what it sees of another task in its
	// inbox still wakes the agent on that task (a session is for one task,
	// and will not act on another's question). token says which session
	// calls (0, or not a session's: the agent outside any session).
	q := `UPDATE agent_deliveries SET state = 'acknowledged', acked_at = ?, updated_at = ?, claimed_by = '', claim_until = NULL, next_at = NULL, reason = ''
		WHERE workspace_id = ? AND principal_id = ? AND state IN ('pending', 'waking', 'delivered', 'failed')
			AND (task_id IN (SELECT s.task_id FROM agent_sessions s WHERE s.token_id = ? AND s.ended_at IS NULL)
				OR NOT EXISTS (SELECT 1 FROM agent_sessions s WHERE s.token_id = ? AND s.ended_at IS NULL AND s.task_id IS NOT NULL))`
	args := []any{now, now, ws, principal, token, token}
	switch {
	case task != 0:
		q += " AND task_id = ?"
		args = append(args, task)
	default:
		// What the inbox listed, and what went into the calling session
		// (its messages carried them): a long inbox's first page may not
		// reach the session's own items.
		q += " AND (session_id IN (SELECT s.id FROM agent_sessions s WHERE s.token_id = ? AND s.ended_at IS NULL)"
		args = append(args, token)
		if len(inbox) > 0 {
			q += " OR inbox_id IN (" + placeholders(len(inbox)) + ")"
			args = append(args, idArgs(inbox)...)
		}
		q += ")"
	}
	ids, err := queryAll(ctx, tx, scanID, q+" RETURNING id", args...)
	if err != nil {
		return 0, err
	}
	return int64(len(ids)), tx.logDeliveries(ctx, ids, DeliveryAcknowledged, how)
}

// A DeliveryFilter narrows a listing of deliveries.
type DeliveryFilter struct {
	Principal int64  // 0: every agent
	State     string // "": every state
	Task      int64  // 0: every task
	Before    int64  // a delivery id: only older ones (paging)
	Limit     int
}

// Deliveries lists workspace ws's deliveries, newest first.
func (tx *Tx) Deliveries(ctx context.Context, ws int64, f DeliveryFilter) ([]DeliveryRow, error) {
	q := "SELECT " + deliveryCols + deliveryFrom + " WHERE d.workspace_id = ?"
	args := []any{ws}
	if f.Principal != 0 {
		q += " AND d.principal_id = ?"
		args = append(args, f.Principal)
	}
	if f.State != "" {
		q += " AND d.state = ?"
		args = append(args, f.State)
	}
	if f.Task != 0 {
		q += " AND d.task_id = ?"
		args = append(args, f.Task)
	}
	if f.Before != 0 {
		q += " AND d.id < ?"
		args = append(args, f.Before)
	}
	return queryAll(ctx, tx, scanDelivery, q+" ORDER BY d.id DESC LIMIT ?", append(args, f.Limit)...)
}

// DeliveryByID is workspace ws's delivery id.
func (tx *Tx) DeliveryByID(ctx context.Context, ws, id int64) (DeliveryRow, error) {
	r, err := scanDelivery(tx.queryRow(ctx, "SELECT "+deliveryCols+deliveryFrom+" WHERE d.workspace_id = ? AND d.id = ?", ws, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, atrium.Errorf(atrium.ENotFound, "no delivery %d in this workspace (atrium agent deliveries lists them)", id)
	}
	return r, err
}

// A DeliveryLogEntry is one step of a delivery's history.
type DeliveryLogEntry struct {
	At    time.Time
	State string
	Note  string
}

// DeliveryLog is delivery id's history, oldest first.
func (tx *Tx) DeliveryLog(ctx context.Context, id int64) ([]DeliveryLogEntry, error) {
	return queryAll(ctx, tx, func(sc scanner) (e DeliveryLogEntry, err error) {
		var at int64
		err = sc.Scan(&at, &e.State, &e.Note)
		e.At = fromMicros(at)
		return e, err
	}, "SELECT at, state, note FROM agent_delivery_log WHERE delivery_id = ? ORDER BY id", id)
}

// SetDelivery moves delivery id of workspace ws to state by hand (an
// admin's retry or cancel) from one of from; it reports whether it moved.
func (tx *Tx) SetDelivery(ctx context.Context, ws, id int64, state string, from []string, note string) (bool, error) {
	var next sql.NullInt64
	if state == DeliveryPending {
		next = sql.NullInt64{Int64: micros(tx.now), Valid: true}
	}
	args := []any{state, next, micros(tx.now), ws, id}
	for _, s := range from {
		args = append(args, s)
	}
	res, err := tx.exec(ctx, `UPDATE agent_deliveries SET state = ?, next_at = ?, reason = '', claimed_by = '', claim_until = NULL, updated_at = ?
		WHERE workspace_id = ? AND id = ? AND state IN (`+placeholders(len(from))+`)`, args...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil || n == 0 {
		return false, err
	}
	return true, tx.logDeliveries(ctx, []int64{id}, state, note)
}

// SetAgentPaused pauses or resumes agent principal of workspace ws: a paused
// agent's deliveries queue and none wakes it.
func (tx *Tx) SetAgentPaused(ctx context.Context, ws, principal int64, paused bool) error {
	_, err := tx.exec(ctx, "UPDATE agents SET paused = ?, updated_at = ? WHERE workspace_id = ? AND principal_id = ?", paused, micros(tx.now), ws, principal)
	return err
}

// SetSessionStatus records a session's status as its best source says, the
// CLI's own session id when it has told it, and when it was last active.
func (tx *Tx) SetSessionStatus(ctx context.Context, id int64, status, cliSession string, activity time.Time) error {
	_, err := tx.exec(ctx, "UPDATE agent_sessions SET status = ?, cli_session = CASE WHEN ? = '' THEN cli_session ELSE ? END, activity_at = ? WHERE id = ?",
		status, cliSession, cliSession, micros(activity), id)
	return err
}

// OpenSessionsOf counts agent principal's open sessions in workspace ws, and
// the workspace's.
func (tx *Tx) OpenSessionsOf(ctx context.Context, ws, principal int64) (agent, all int, err error) {
	err = tx.queryRow(ctx, `SELECT COALESCE(SUM(CASE WHEN principal_id = ? THEN 1 ELSE 0 END), 0), COUNT(*) FROM agent_sessions WHERE workspace_id = ? AND ended_at IS NULL`,
		principal, ws).Scan(&agent, &all)
	return agent, all, err
}

// HasOpenDeliveries reports whether agent principal has deliveries in
// workspace ws not yet acknowledged (or cancelled): a read before the write
// that would acknowledge them, so that reading an inbox stays a read when
// there is nothing to acknowledge.
func (tx *Tx) HasOpenDeliveries(ctx context.Context, ws, principal int64) (bool, error) {
	var one int
	err := tx.queryRow(ctx, "SELECT 1 FROM agent_deliveries WHERE workspace_id = ? AND principal_id = ? AND state IN ('pending', 'waking', 'delivered', 'failed') LIMIT 1", ws, principal).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// ReleaseClaims gives back every claim replica holds: it is starting again,
// so none of them is in flight, and its deliveries need not wait out the
// lease of a replica that no longer runs.
func (tx *Tx) ReleaseClaims(ctx context.Context, replica string) error {
	// The claim counted an attempt that never was: given back.
	ids, err := queryAll(ctx, tx, scanID, `UPDATE agent_deliveries SET state = 'pending', claimed_by = '', claim_until = NULL, next_at = ?,
			attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END, updated_at = ?
		WHERE state = 'waking' AND claimed_by = ? RETURNING id`, micros(tx.now), micros(tx.now), replica)
	if err != nil {
		return err
	}
	return tx.logDeliveries(ctx, ids, DeliveryPending, "its replica "+replica+" restarted before it delivered them")
}

// FailDelivered fails deliveries ids that were recorded delivered but did
// not go in after all (the channel refused them), to be retried at next.
func (tx *Tx) FailDelivered(ctx context.Context, ids []int64, next time.Time, reason string) error {
	if len(ids) == 0 {
		return nil
	}
	done, err := queryAll(ctx, tx, scanID, `UPDATE agent_deliveries SET state = 'failed', next_at = ?, reason = ?, session_id = NULL, updated_at = ?
		WHERE state = 'delivered' AND id IN (`+placeholders(len(ids))+`) RETURNING id`,
		append([]any{micros(next), reason, micros(tx.now)}, idArgs(ids)...)...)
	if err != nil {
		return err
	}
	return tx.logDeliveries(ctx, done, DeliveryFailed, reason)
}
