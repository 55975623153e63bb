package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// The dispatcher wakes agents. Every inbox item for an agent with a launch
// preset is a delivery, made in the transaction that made the item; each
// replica that runs sessions claims due deliveries (one agent and task at a
// time, in order) and puts them into the agent's running session on the
// task through its channel, or starts a session whose first prompt carries
// them. The agent acknowledges a delivery by reading it (task_inbox, or
// task_get_context for its task); a session that ends before that fails its
// deliveries, which are retried with backoff in a new session.

// EventDelivery is a delivery changing state.
const EventDelivery = "agent.delivery"

// Retry timing.
const (
	maxAttempts  = 8
	firstBackoff = 5 * time.Second
	maxBackoff   = 10 * time.Minute
	// busyRetry is when a busy terminal is tried again; limitRetry when a
	// limit of sessions may have room.
	busyRetry  = 2 * time.Second
	limitRetry = 10 * time.Second
	// claimBatch bounds one claim: the deliveries of one agent and task
	// that go into one message.
	claimBatch = 200
	// dispatchers bounds the groups handled at once by a replica.
	dispatchers = 8
)

// backoff is the wait before attempt n+1 after n failed.
func backoff(n int) time.Duration {
	d := firstBackoff
	for i := 1; i < n && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

type dispatcher struct {
	s    *Service
	cfg  RunnerConfig
	kick chan struct{}

	mu   sync.Mutex
	busy map[store.DeliveryGroup]bool
	sem  chan struct{}
	wg   sync.WaitGroup
}

// run dispatches until ctx ends: on every task or agent event (from any
// process or replica), when kicked, and every Poll for retries and leases.
func (d *dispatcher) run(ctx context.Context) {
	events, stop := d.s.db.Subscribe(256)
	defer func() { stop() }() // the subscription of the moment: it is renewed below
	t := time.NewTicker(time.Duration(cmp(int(d.cfg.Poll), int(time.Second))))
	defer t.Stop()
	defer d.wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				stop()
				events, stop = d.s.db.Subscribe(256)
				continue
			}
			if !strings.HasPrefix(e.Kind, "task.") && !strings.HasPrefix(e.Kind, "agent.") {
				continue
			}
		case <-t.C:
		case <-d.kick:
		}
		d.tick(ctx)
	}
}

// nudge makes the dispatcher look again soon.
func (d *dispatcher) nudge() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

func (d *dispatcher) tick(ctx context.Context) {
	var groups []store.DeliveryGroup
	err := d.s.db.View(ctx, func(tx *store.Tx) (err error) {
		groups, err = tx.DueDeliveryGroups(ctx, time.Now(), 4*dispatchers)
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			d.s.log.Error("list due deliveries", "err", err)
		}
		return
	}
	for _, g := range groups {
		d.mu.Lock()
		if d.busy[g] {
			d.mu.Unlock()
			continue
		}
		select {
		case d.sem <- struct{}{}:
		default:
			d.mu.Unlock()
			return // full: the next tick takes the rest
		}
		d.busy[g] = true
		d.mu.Unlock()
		d.wg.Go(func() {
			defer func() {
				d.mu.Lock()
				delete(d.busy, g)
				d.mu.Unlock()
				<-d.sem
			}()
			if err := d.handle(ctx, g); err != nil && ctx.Err() == nil {
				d.s.log.Error("deliver to an agent", "workspace", g.WorkspaceID, "agent", g.PrincipalID, "task", g.TaskID, "err", err)
			}
		})
	}
}

// handle claims a group's due deliveries and puts them into the agent's
// session, starting one if none runs.
func (d *dispatcher) handle(ctx context.Context, g store.DeliveryGroup) error {
	replica := d.cfg.Replica
	var claim store.Claim
	var open store.AgentSessionRow
	err := d.s.db.Update(ctx, func(tx *store.Tx) (err error) {
		if claim, err = tx.ClaimDeliveries(ctx, g, replica, cmpDur(d.cfg.Lease, 2*time.Minute), claimBatch); err != nil || len(claim.Deliveries) == 0 {
			return err
		}
		if open, err = tx.OpenAgentSession(ctx, g.WorkspaceID, g.PrincipalID, g.TaskID); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, g.WorkspaceID, 0, EventDelivery, "@"+claim.Deliveries[0].Agent, deliveryEvent(claim.Deliveries, store.DeliveryWaking))
	})
	if err != nil || len(claim.Deliveries) == 0 {
		return err
	}
	ds := claim.Deliveries
	if open.ID != 0 {
		d.s.mu.Lock()
		ru := d.s.running[open.UID]
		d.s.mu.Unlock()
		if ru == nil { // ending on this replica right now: the next session takes them
			return d.release(ctx, ds, store.DeliveryPending, time.Now().Add(busyRetry), "the agent's session "+open.UID+" is ending: they go to its next session")
		}
		return d.into(ctx, ds, open, ru)
	}
	// No session: one starts, its first prompt carrying them.
	a, err := d.actorFor(ctx, ds[0])
	if err != nil {
		return err
	}
	// Recorded delivered into the new session's generation as soon as it
	// has one, before its process can read them: an agent quick to read
	// its inbox then acknowledges a delivery, not a claim.
	var recorded bool
	ses, ru, err := d.s.start(ctx, a, StartRequest{Agent: ds[0].Agent, Task: ds[0].TaskNumber, Why: wakeWhy(ds)}, func(row store.AgentSessionRow, wake string) error {
		recorded = true
		return d.delivered(ctx, ds, row.ID, wake, "in the first prompt of a new session "+row.UID)
	})
	switch {
	case err != nil && recorded:
		return nil // the session's failure failed them (failUnread), to be retried
	case atrium.ErrorCode(err) == atrium.EConflict && strings.Contains(err.Error(), "limit"):
		return d.release(ctx, ds, store.DeliveryPending, time.Now().Add(limitRetry), err.Error())
	case atrium.ErrorCode(err) == atrium.EConflict:
		// A session began on the task a moment ago (another start won):
		// the next pass puts them into it.
		return d.release(ctx, ds, store.DeliveryPending, time.Now(), err.Error())
	case err != nil:
		return d.fail(ctx, ds, "the session could not start: "+err.Error())
	case ru == nil:
		return d.fail(ctx, ds, "the session could not start: "+ses.Reason)
	}
	return nil
}

// into puts ds into the running session open through its channel.
func (d *dispatcher) into(ctx context.Context, ds []store.DeliveryRow, open store.AgentSessionRow, ru *run) error {
	if ok, why := ru.ch.ready(); !ok {
		next := busyRetry
		if ru.wake == WakeNone || ru.wake == "" {
			next = limitRetry
		}
		return d.release(ctx, ds, store.DeliveryPending, time.Now().Add(next), why)
	}
	// Refused before a word is sent: a delivery meant for another session
	// generation never acts on this one.
	var mine, others []store.DeliveryRow
	for _, r := range ds {
		if r.SessionID != 0 && r.SessionID != open.ID {
			others = append(others, r)
		} else {
			mine = append(mine, r)
		}
	}
	if len(others) > 0 {
		if err := d.release(ctx, others, store.DeliveryFailed, time.Now().Add(backoff(others[0].Attempts)),
			fmt.Sprintf("meant for session generation %d, not %d (%s): refused", others[0].SessionID, open.ID, open.UID)); err != nil {
			return err
		}
	}
	if len(mine) == 0 {
		return nil
	}
	// Recorded first: the agent may read them the moment they go in.
	if err := d.delivered(ctx, mine, open.ID, ru.ch.name(), "into session "+open.UID+" as a message"); err != nil {
		return err
	}
	if err := ru.ch.send(wakeMessage(mine, open.UID)); err != nil {
		reason := "the session " + open.UID + " did not take it: " + err.Error()
		return d.s.db.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			return tx.FailDelivered(ctx, deliveryIDs(mine), time.Now().Add(backoff(mine[0].Attempts)), reason)
		})
	}
	return nil
}

// delivered records ds as put into session; those the store refuses (the
// session ended meanwhile) are failed, to be retried in a new one.
func (d *dispatcher) delivered(ctx context.Context, ds []store.DeliveryRow, session int64, channel, note string) error {
	var done []int64
	err := d.s.db.Update(context.WithoutCancel(ctx), func(tx *store.Tx) (err error) {
		if done, err = tx.MarkDelivered(ctx, deliveryIDs(ds), d.cfg.Replica, session, channel, note+" ("+channel+")"); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, ds[0].WorkspaceID, 0, EventDelivery, "@"+ds[0].Agent, map[string]any{"deliveries": done, "state": store.DeliveryDelivered})
	})
	if err != nil {
		return err
	}
	var left []store.DeliveryRow
	for _, r := range ds {
		if !slices.Contains(done, r.ID) {
			left = append(left, r)
		}
	}
	if len(left) > 0 {
		return d.fail(ctx, left, "the session ended before it took them")
	}
	return nil
}

// fail fails ds: retried with backoff, or, past the attempts, left for an
// admin to retry.
func (d *dispatcher) fail(ctx context.Context, ds []store.DeliveryRow, reason string) error {
	next, more := retryAfter(ds[0].Attempts)
	return d.release(ctx, ds, store.DeliveryFailed, next, reason+more)
}

// retryAfter is when a delivery that failed its nth attempt is tried again
// (zero: not again; an admin retries it), and what its reason adds.
func retryAfter(n int) (time.Time, string) {
	if n >= maxAttempts {
		return time.Time{}, fmt.Sprintf(" (attempt %d of %d: given up; an admin can retry it)", n, maxAttempts)
	}
	return time.Now().Add(backoff(n)), fmt.Sprintf(" (attempt %d of %d; retried in %s)", n, maxAttempts, backoff(n))
}

func (d *dispatcher) release(ctx context.Context, ds []store.DeliveryRow, state string, next time.Time, reason string) error {
	return d.s.db.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		if err := tx.ReleaseDeliveries(ctx, deliveryIDs(ds), d.cfg.Replica, state, next, reason); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, ds[0].WorkspaceID, 0, EventDelivery, "@"+ds[0].Agent, deliveryEvent(ds, state))
	})
}

// actorFor is who a session started for a delivery is started by: who
// caused it, with their role; or the agent itself when they are gone.
func (d *dispatcher) actorFor(ctx context.Context, r store.DeliveryRow) (*atrium.Actor, error) {
	var a atrium.Actor
	err := d.s.db.View(ctx, func(tx *store.Tx) (err error) {
		if a.Workspace, err = tx.WorkspaceByID(ctx, r.WorkspaceID); err != nil {
			return err
		}
		if r.FromID != 0 {
			if a.Principal, err = tx.PrincipalByID(ctx, r.FromID); err != nil {
				return err
			}
			a.Role, err = tx.Role(ctx, r.WorkspaceID, r.FromID)
			if err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
				return err
			}
		}
		if !a.Role.Allows(atrium.RoleWriter) {
			a.Role = atrium.RoleWriter
			a.Principal, err = tx.PrincipalByID(ctx, r.PrincipalID)
		}
		return err
	})
	return &a, err
}

// wakeWhy is why a session starts for ds: said first after its
// instructions, so that it knows what woke it.
func wakeWhy(ds []store.DeliveryRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Atrium woke you for task #%d (%s)", ds[0].TaskNumber, ds[0].TaskTitle)
	if n := ds[0].Attempts; n > 1 {
		fmt.Fprintf(&b, " (attempt %d: an earlier one did not reach you)", n)
	}
	b.WriteString(":\n")
	writeItems(&b, ds)
	b.WriteString("Read them with task_inbox (that tells Atrium you have them); the task's context follows")
	return b.String()
}

// wakeMessage is the message that carries ds into a running session.
func wakeMessage(ds []store.DeliveryRow, session string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Atrium] New for you, @%s, on task #%d (%s), for this session (%s):\n", ds[0].Agent, ds[0].TaskNumber, ds[0].TaskTitle, session)
	writeItems(&b, ds)
	b.WriteString("Read them with task_inbox (that tells Atrium you have them), then go on with the task.\n")
	return b.String()
}

func writeItems(b *strings.Builder, ds []store.DeliveryRow) {
	for _, r := range ds {
		fmt.Fprintf(b, "- (delivery %d) %s", r.ID, itemLine(r))
		if r.CommentBody != "" {
			body := r.CommentBody
			if len(body) > 600 {
				body = body[:600] + "…"
			}
			fmt.Fprintf(b, ": %q", body)
		}
		b.WriteString("\n")
	}
}

// itemLine says what an inbox item is, as its agent reads it.
func itemLine(r store.DeliveryRow) string {
	from := "@" + r.From
	if r.From == "" {
		from = "someone"
	}
	switch r.Kind {
	case atrium.InboxQuestion:
		return from + " asked you a question"
	case atrium.InboxAnswer:
		return from + " answered your question"
	case atrium.InboxAssigned:
		return from + " assigned the task to you"
	case atrium.InboxHandoff:
		return from + " handed the task to you (its last phase is complete)"
	case atrium.InboxMention:
		return from + " mentioned you"
	case atrium.InboxResume:
		what := "what woke you"
		if r.ResumesKind != "" {
			what = itemLine(store.DeliveryRow{Kind: r.ResumesKind, From: r.ResumesFrom})
		}
		return "Atrium stopped while you were at work on this task, and your session ended with it, after you had read this: " + what + ". Go on where you left off (see first where the task stands: you may have done part of it)"
	}
	return from + ": " + string(r.Kind)
}

func deliveryIDs(ds []store.DeliveryRow) []int64 {
	ids := make([]int64, len(ds))
	for i, r := range ds {
		ids[i] = r.ID
	}
	return ids
}

func deliveryEvent(ds []store.DeliveryRow, state string) map[string]any {
	return map[string]any{"deliveries": deliveryIDs(ds), "state": state, "task": ds[0].TaskNumber}
}

func cmpDur(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// An unreadFate is what becomes of the deliveries that went into a session
// unread, decided in the transaction that ends it (endSession): the
// delivery IDs it moved.
type unreadFate func(context.Context, *store.Tx) ([]int64, error)

// failUnread fails the deliveries that went into a session that ended
// before its agent read them, and has the dispatcher retry them.
func failUnread(row store.AgentSessionRow, reason string) unreadFate {
	return func(ctx context.Context, tx *store.Tx) ([]int64, error) {
		return tx.FailUnread(ctx, row.ID, reason, retryAfter)
	}
}

// returnUnread gives back, uncounted and due at once, the deliveries of a
// session that Atrium's own shutdown ended: another replica, or this one
// when it starts again, takes them; and wakes the agent again on the task
// if it had read them, and so was at work (ResumeRead).
func returnUnread(row store.AgentSessionRow, reason string) unreadFate {
	return func(ctx context.Context, tx *store.Tx) ([]int64, error) {
		ids, err := tx.ReturnUnread(ctx, row.ID, reason)
		if err != nil {
			return nil, err
		}
		_, err = tx.ResumeRead(ctx, row.ID)
		return ids, err
	}
}

// endSession records that a session ended, and what becomes of its unread
// deliveries, in one transaction: in two, a kill between them (a stop that
// overran its grace and was killed) left the deliveries in a session that
// was over, where nothing takes them up again.
func (s *Service) endSession(row store.AgentSessionRow, state, reason string, code *int, fate unreadFate) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		if err := recordState(ctx, tx, row, state, reason, code, true); err != nil {
			return err
		}
		ids, err := fate(ctx, tx)
		if err != nil || len(ids) == 0 {
			return err
		}
		return tx.EmitJSON(ctx, row.WorkspaceID, 0, EventDelivery, row.UID, map[string]any{"deliveries": ids, "state": store.DeliveryFailed})
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		s.log.Error("record an agent session's end and its unread deliveries", "session", row.UID, "state", state, "err", err)
	}
	s.nudge()
}
