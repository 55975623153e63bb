package tasks

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// ListRequest filters tasks; filters combine.
type ListRequest struct {
	Kind     atrium.TaskKind
	Statuses []atrium.TaskStatus // none: every status but archived
	Assignee string              // a handle; "me" for the caller; "none" for unassigned
	Label    string
	Text     string
	Cursor   string
	Limit    int
}

// ListResult is a page of tasks and the cursor of the next, if any.
type ListResult struct {
	Tasks      []atrium.Task
	NextCursor string
}

const (
	defaultLimit = 50
	maxLimit     = 200
)

// List lists tasks, newest first.
func (s *Service) List(ctx context.Context, r ListRequest) (ListResult, error) {
	return s.list(ctx, r, false)
}

// Ready lists the tasks someone could start now — open, unassigned, with
// nothing open blocking them — oldest first.
func (s *Service) Ready(ctx context.Context, r ListRequest) (ListResult, error) {
	return s.list(ctx, r, true)
}

func (s *Service) list(ctx context.Context, r ListRequest, ready bool) (ListResult, error) {
	a, err := reader(ctx)
	if err != nil {
		return ListResult{}, err
	}
	f := store.TaskFilter{Workspace: a.Workspace.ID, Kind: r.Kind, Label: strings.TrimSpace(r.Label), Text: strings.TrimSpace(r.Text), Ready: ready}
	if f.Limit, err = limitOf(r.Limit); err != nil {
		return ListResult{}, err
	}
	if r.Cursor != "" {
		if f.Before, err = strconv.ParseInt(strings.TrimPrefix(r.Cursor, "n"), 10, 64); err != nil || f.Before <= 0 || !strings.HasPrefix(r.Cursor, "n") {
			return ListResult{}, atrium.Errorf(atrium.EInvalid, "invalid cursor: pass the next_cursor of the previous answer as it was")
		}
	}
	for _, st := range r.Statuses {
		if !st.Valid() {
			return ListResult{}, atrium.Errorf(atrium.EInvalid, "status is open, in_progress, blocked, done or archived, not %q", st)
		}
	}
	f.Statuses = r.Statuses
	if len(f.Statuses) == 0 && !ready {
		f.Statuses = []atrium.TaskStatus{atrium.TaskOpen, atrium.TaskInProgress, atrium.TaskBlocked, atrium.TaskDone}
	}
	var out ListResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		switch h := handle(r.Assignee); h {
		case "":
		case "none":
			f.Unowned = true
		case "me":
			f.Assignee = a.Principal.ID
		default:
			p, err := tx.PrincipalByHandle(ctx, h)
			if atrium.ErrorCode(err) == atrium.ENotFound {
				return atrium.Errorf(atrium.EInvalid, "unknown assignee @%s", h)
			} else if err != nil {
				return err
			}
			f.Assignee = p.ID
		}
		f.Limit++ // one more says whether there is a next page
		tasks, err := tx.Tasks(ctx, f)
		if err != nil {
			return err
		}
		if len(tasks) == f.Limit {
			tasks = tasks[:f.Limit-1]
			out.NextCursor = "n" + strconv.FormatInt(tasks[len(tasks)-1].Number, 10)
		}
		out.Tasks = tasks
		return nil
	})
	if out.Tasks == nil {
		out.Tasks = []atrium.Task{}
	}
	return out, err
}

func limitOf(n int) (int, error) {
	switch {
	case n == 0:
		return defaultLimit, nil
	case n < 0 || n > maxLimit:
		return 0, atrium.Errorf(atrium.EInvalid, "limit is 1 to %d, not %d", maxLimit, n)
	}
	return n, nil
}

// LinkedPage is a spec or plan of a task, with its content.
type LinkedPage struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Revision int64  `json:"revision,omitempty"`
	Missing  bool   `json:"missing,omitempty"` // no page at that path (yet)
}

// Wait is someone a task waits on: the target of an open question or block.
type Wait struct {
	PrincipalID int64
	Handle      string
	Reason      string // question or blocked
	CommentID   int64
}

// Context is all an agent needs to work on a task (002's task_get_context).
type Context struct {
	Task     atrium.Task
	Specs    []LinkedPage
	Plans    []LinkedPage
	Comments []atrium.TaskComment
	Waiting  []Wait
	// Omitted counts the older comments left out: a context carries the
	// newest maxContextComments.
	Omitted int
}

// maxContextComments bounds the comments in a context: the newest are kept.
const maxContextComments = 200

// GetContext returns task #n with its linked pages' content and its comments.
func (s *Service) GetContext(ctx context.Context, n int64) (Context, error) {
	a, err := reader(ctx)
	if err != nil {
		return Context{}, err
	}
	var out Context
	err = s.db.View(ctx, func(tx *store.Tx) error {
		t, err := tx.TaskByNumber(ctx, a.Workspace.ID, n)
		if err != nil {
			return err
		}
		out.Task = t
		for _, l := range []struct {
			paths []string
			out   *[]LinkedPage
		}{{t.Specs, &out.Specs}, {t.Plans, &out.Plans}} {
			*l.out = []LinkedPage{}
			for _, path := range l.paths {
				p, err := tx.PageByPath(ctx, a.Workspace.ID, path)
				switch {
				case atrium.ErrorCode(err) == atrium.ENotFound:
					*l.out = append(*l.out, LinkedPage{Path: path, Missing: true})
				case err != nil:
					return err
				default:
					*l.out = append(*l.out, LinkedPage{Path: p.Path, Content: p.Content, Revision: p.Revision})
				}
			}
		}
		if out.Comments, err = tx.Comments(ctx, store.CommentFilter{Task: t.ID, Limit: maxContextComments, Newest: true}); err != nil {
			return err
		}
		if len(out.Comments) == maxContextComments {
			total, err := tx.CountComments(ctx, t.ID)
			if err != nil {
				return err
			}
			out.Omitted = total - len(out.Comments)
		}
		waits, err := tx.Waits(ctx, t.ID)
		for _, w := range waits {
			out.Waiting = append(out.Waiting, Wait(w))
		}
		return err
	})
	if err == nil {
		err = s.ackDeliveries(ctx, a, out.Task.ID, nil, "the agent read the task (task_get_context)")
	}
	return out, err
}

// Inbox is a principal's inbox: unread items first.
type Inbox struct {
	Items  []atrium.InboxItem
	Unread int
	Acked  int64
	// AckCursor marks every unread item listed here read when passed back.
	AckCursor string
}

// InboxRequest reads the caller's inbox; Ack first marks read the items a
// previous answer's AckCursor covered, so nothing is shown twice as new.
type InboxRequest struct {
	Ack         string
	IncludeRead bool
	Limit       int
}

// ReadInbox returns the caller's inbox.
func (s *Service) ReadInbox(ctx context.Context, r InboxRequest) (Inbox, error) {
	a, err := reader(ctx)
	if err != nil {
		return Inbox{}, err
	}
	limit, err := limitOf(r.Limit)
	if err != nil {
		return Inbox{}, err
	}
	var ack []int64
	if r.Ack != "" {
		if ack, err = parseAck(r.Ack); err != nil {
			return Inbox{}, err
		}
	}
	var out Inbox
	read := func(tx *store.Tx) error {
		if len(ack) > 0 {
			n, err := tx.AckInbox(ctx, a.Workspace.ID, a.Principal.ID, ack)
			if err != nil {
				return err
			}
			out.Acked = n
		}
		items, err := tx.Inbox(ctx, a.Workspace.ID, a.Principal.ID, r.IncludeRead, limit)
		if err != nil {
			return err
		}
		out.Items = items
		var unread []int64
		for _, it := range items {
			if it.ReadAt == nil {
				unread = append(unread, it.ID)
			}
		}
		out.AckCursor = ackCursor(unread)
		out.Unread, err = tx.UnreadCount(ctx, a.Workspace.ID, a.Principal.ID)
		return err
	}
	if len(ack) > 0 {
		// Acknowledging writes, which a reader may do to their own inbox.
		err = s.db.Update(ctx, func(tx *store.Tx) error {
			if err := read(tx); err != nil {
				return err
			}
			if out.Acked == 0 {
				return nil
			}
			return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventInboxRead, "@"+a.Principal.Handle, map[string]int64{"acked": out.Acked})
		})
	} else {
		err = s.db.View(ctx, read)
	}
	if err == nil {
		ids := make([]int64, len(out.Items))
		for i, it := range out.Items {
			ids[i] = it.ID
		}
		err = s.ackDeliveries(ctx, a, 0, ids, "the agent read its inbox (task_inbox)")
	}
	if out.Items == nil {
		out.Items = []atrium.InboxItem{}
	}
	return out, err
}

// EventDeliveryAcked is an agent acknowledging deliveries by reading them.
const EventDeliveryAcked = "agent.delivery"

// ackDeliveries acknowledges what an agent has now read: the deliveries of
// the inbox items listed, or of every item on task. Only agents have
// deliveries; the read before the write keeps a read a read.
func (s *Service) ackDeliveries(ctx context.Context, a *atrium.Actor, task int64, inbox []int64, how string) error {
	if a.Principal.Kind != atrium.KindAgent {
		return nil
	}
	var open bool
	if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		open, err = tx.HasOpenDeliveries(ctx, a.Workspace.ID, a.Principal.ID)
		return err
	}); err != nil || !open {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		n, err := tx.AckDeliveries(ctx, a.Workspace.ID, a.Principal.ID, a.Token, task, inbox, how)
		if err != nil || n == 0 {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventDeliveryAcked, "@"+a.Principal.Handle, map[string]any{"acknowledged": n, "state": store.DeliveryAcknowledged})
	})
}

// ackCursor names the unread items an answer listed, by id: "i12.15-18".
// Not "every item up to 18": on PostgreSQL ids are handed out before commit,
// so an item that commits late can carry an id below one already shown.
func ackCursor(ids []int64) string {
	if len(ids) == 0 {
		return ""
	}
	slices.Sort(ids)
	var b strings.Builder
	b.WriteByte('i')
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.FormatInt(ids[i], 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatInt(ids[j], 10))
		}
		i = j + 1
	}
	return b.String()
}

// parseAck reads an ack cursor back; it names at most maxLimit items, as an
// answer lists no more.
func parseAck(s string) ([]int64, error) {
	bad := atrium.Errorf(atrium.EInvalid, "invalid ack: pass the ack_cursor of a previous answer as it was")
	rest, ok := strings.CutPrefix(s, "i")
	if !ok || rest == "" {
		return nil, bad
	}
	var ids []int64
	for _, part := range strings.Split(rest, ".") {
		from, to, isRange := strings.Cut(part, "-")
		lo, err := strconv.ParseInt(from, 10, 64)
		if err != nil || lo <= 0 {
			return nil, bad
		}
		hi := lo
		if isRange {
			if hi, err = strconv.ParseInt(to, 10, 64); err != nil || hi < lo || hi-lo >= maxLimit {
				return nil, bad
			}
		}
		for id := lo; id <= hi; id++ {
			if len(ids) == maxLimit {
				return nil, bad
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// HandoffRules lists the workspace's hand-off rules.
func (s *Service) HandoffRules(ctx context.Context) ([]atrium.HandoffRule, error) {
	a, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	var out []atrium.HandoffRule
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = tx.HandoffRules(ctx, a.Workspace.ID)
		return err
	})
	return out, err
}

// SetHandoffRule adds or replaces a hand-off rule; admins only.
func (s *Service) SetHandoffRule(ctx context.Context, r atrium.HandoffRule) error {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return err
	}
	r.MatchValue = strings.TrimSpace(r.MatchValue)
	if r.MatchKind != "phase" && r.MatchKind != "label" || r.MatchValue == "" {
		return atrium.Errorf(atrium.EInvalid, "a rule matches a phase or a label: phase=NAME or label=NAME")
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := member(ctx, tx, a, handle(r.Next))
		if err != nil {
			return err
		}
		r.NextID = p.ID
		if err := tx.SetHandoffRule(ctx, a.Workspace.ID, r); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, "handoff.set", r.MatchKind+"="+r.MatchValue, r)
	})
}
