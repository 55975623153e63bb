// Package tasks is the service of work items that people and agents hand to
// each other (002's task tools) and of each principal's desk (001's console).
// Its rules hold for every surface — MCP, REST, the browser — because they
// live only here:
//
//   - a task's number is allocated by the store and never reused;
//   - a change made from a revision (base_revision) is checked against it, so
//     of concurrent writers from one revision exactly one wins and the others
//     get conflict, on both engines; a change made from no revision (a status
//     update, update_todo, a claim) locks the task and applies to it as it
//     is, so it never gets a conflict it did not ask for;
//   - blocked_by never forms a cycle, also when two changes race (the
//     workspace's dependency graph is changed by one writer at a time);
//   - a todo is changed only by the owner of its desk or an admin;
//   - a question records whom the task waits on until they answer; blocked sets
//     the status and the blocked:agent label until the wait is cleared or the
//     status moves on;
//   - @mentions name principals of the workspace, or the comment is refused
//     naming the unknown ones; each mention, question, answer, assignment and
//     hand-off is an inbox item;
//   - every change is an event, written in the same transaction.
package tasks

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// Event kinds; the subject is the task as people write it, #123.
const (
	EventCreated   = "task.created"
	EventUpdated   = "task.updated"
	EventClaimed   = "task.claimed"
	EventCommented = "task.commented"
	// A comment written on a linked tracker, edited or deleted there.
	EventCommentEdited  = "task.comment_edited"
	EventCommentDeleted = "task.comment_deleted"
	EventCompleted      = "task.completed"
	EventInboxRead      = "inbox.read"
)

// BlockedLabel marks a task that waits on someone (002).
const BlockedLabel = "blocked:agent"

// Limits of one task.
const (
	maxTitle    = 300
	maxBody     = 256 << 10
	maxLabels   = 32
	maxLabel    = 64
	maxLinks    = 32
	maxBlockers = 64
	maxComment  = 64 << 10
)

// Service is the tasks service.
type Service struct {
	db  *store.DB
	log *slog.Logger
	// BaseURL is where people open Atrium's UI (http://host:port): the
	// configured public URL, or the address this process serves at; a task's
	// url is its page there. Empty: the address a serving Atrium announced
	// on the store (see Announce), read again as it changes; or, with none,
	// urls are paths.
	BaseURL string
	// announced caches the address a serving Atrium last announced.
	announced atomic.Pointer[announcedURL]
	// Pages keeps the desks' drafts and plans; without it they are unavailable.
	Pages *pages.Service
	// hooked wakes the tracker sync when a webhook says a linked
	// repository changed (see TrackerHook and TrackerWake).
	hooked chan int64
	// recheck holds, per workspace, the issues deliveries named.
	recheckMu sync.Mutex
	recheck   map[int64]map[int]bool
}

// New returns the tasks service.
func New(db *store.DB, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{db: db, log: log, hooked: make(chan int64, 64), recheck: map[int64]map[int]bool{}}
}

// URL is where task n is shown in the UI.
func (s *Service) URL(n int64) string { return fmt.Sprintf("%s/tasks/%d", s.Base(), n) }

// CommentURL is where one comment of task n is shown.
func (s *Service) CommentURL(n, comment int64) string {
	return fmt.Sprintf("%s#comment-%d", s.URL(n), comment)
}

// Event is the payload of task events.
type Event struct {
	Number  int64  `json:"number"`
	Kind    string `json:"kind,omitempty"` // task or todo
	Comment int64  `json:"comment_id,omitempty"`
	Type    string `json:"type,omitempty"`
	Status  string `json:"status,omitempty"`
	// Desk is, for a todo, the handle of the desk it is on; FromDesk the
	// desk it left when it was handed to another. Who listens to one desk
	// (its resources, its page) need not read every task event's task.
	Desk     string `json:"desk,omitempty"`
	FromDesk string `json:"from_desk,omitempty"`
}

func subject(n int64) string { return fmt.Sprintf("#%d", n) }

func emit(ctx context.Context, tx *store.Tx, a *atrium.Actor, kind string, t atrium.Task, e Event) error {
	e.Number, e.Kind = t.Number, string(t.Kind)
	if e.Status == "" {
		e.Status = string(t.Status)
	}
	if t.Kind == atrium.KindTodo {
		_, e.Desk = deskOf(t)
		if e.FromDesk == e.Desk {
			e.FromDesk = ""
		}
	}
	if err := tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, kind, subject(t.Number), e); err != nil {
		return err
	}
	if t.Kind == atrium.KindTask { // a desk's todo is nobody's issue
		return tx.AddTrackerOutbox(ctx, a.Workspace.ID, t.ID, e.Comment, kind)
	}
	return nil
}

// deskOf is whose desk todo t is on: its assignee's, or its creator's while
// nobody holds it.
func deskOf(t atrium.Task) (int64, string) {
	if t.AssigneeID != 0 {
		return t.AssigneeID, t.Assignee
	}
	return t.CreatorID, t.Creator
}

// mayChange is the desk rule, for every surface: a todo is changed — its
// fields, status, files, archiving — only by the owner of the desk it is on
// or by an admin of the workspace. Other members read it and comment on it,
// as on any task. Plain tasks are the whole team's: any writer changes them.
func mayChange(a *atrium.Actor, t atrium.Task) error {
	if t.Kind != atrium.KindTodo {
		return nil
	}
	owner, handle := deskOf(t)
	if owner == a.Principal.ID || a.Role.Allows(atrium.RoleAdmin) {
		return nil
	}
	return atrium.Errorf(atrium.EPermission, "%s is on @%s's desk: only @%s or an admin of the workspace may change it (comment on #%d instead)",
		TodoID(t.Number), handle, handle, t.Number).WithDetails(map[string]any{"desk": handle})
}

func reader(ctx context.Context) (*atrium.Actor, error) {
	return atrium.RequireActor(ctx, atrium.RoleReader)
}
func writer(ctx context.Context) (*atrium.Actor, error) {
	return atrium.RequireActor(ctx, atrium.RoleWriter)
}

// Fields is what a create or an update sets; nil leaves a field as it is.
type Fields struct {
	Title      *string
	Body       *string
	Status     *atrium.TaskStatus
	StatusText *string
	Progress   *int
	Phase      *string
	Labels     *[]string
	Assignee   *string // a handle; "" unassigns
	Specs      *[]string
	Plans      *[]string
	BlockedBy  *[]int64
}

// CreateRequest creates a task (or a todo).
type CreateRequest struct {
	Kind atrium.TaskKind // task (the default) or todo
	Fields
}

// Create adds a task, numbered by the store.
func (s *Service) Create(ctx context.Context, r CreateRequest) (atrium.Task, error) {
	a, err := writer(ctx)
	if err != nil {
		return atrium.Task{}, err
	}
	t := atrium.Task{WorkspaceID: a.Workspace.ID, Kind: r.Kind, Status: atrium.TaskOpen, CreatorID: a.Principal.ID, Creator: a.Principal.Handle,
		Labels: []string{}, Specs: []string{}, Plans: []string{}, BlockedBy: []int64{}}
	if t.Kind == "" {
		t.Kind = atrium.KindTask
	}
	if t.Kind != atrium.KindTask && t.Kind != atrium.KindTodo {
		return t, atrium.Errorf(atrium.EInvalid, "kind is task or todo, not %q", r.Kind)
	}
	if r.Title == nil || strings.TrimSpace(*r.Title) == "" {
		return t, atrium.Errorf(atrium.EInvalid, "title is required")
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		ch, err := s.apply(ctx, tx, a, &t, r.Fields)
		if err != nil {
			return err
		}
		if t.Number, err = tx.NextTaskNumber(ctx, a.Workspace.ID); err != nil {
			return err
		}
		if err := tx.InsertTask(ctx, &t); err != nil {
			return err
		}
		if err := s.writeBlockers(ctx, tx, &t, ch.blockers); err != nil {
			return err
		}
		if err := assignedInbox(ctx, tx, a, t, ch); err != nil {
			return err
		}
		return emit(ctx, tx, a, EventCreated, t, Event{})
	})
	return t, err
}

// Get returns task #n.
func (s *Service) Get(ctx context.Context, n int64) (atrium.Task, error) {
	a, err := reader(ctx)
	if err != nil {
		return atrium.Task{}, err
	}
	var t atrium.Task
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		t, err = tx.TaskByNumber(ctx, a.Workspace.ID, n)
		return err
	})
	return t, err
}

// UpdateRequest changes task #Number, made from BaseRevision (0: from
// whatever is stored now, for callers that do not care what they overwrite).
type UpdateRequest struct {
	Number       int64
	BaseRevision int64
	Fields
	// todoID, when set, is how a console tool named the task: it must be a todo.
	todoID string
}

// Update changes a task. A stale base revision is a conflict naming both.
func (s *Service) Update(ctx context.Context, r UpdateRequest) (atrium.Task, error) {
	a, err := writer(ctx)
	if err != nil {
		return atrium.Task{}, err
	}
	var t atrium.Task
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if t, err = tx.LockTask(ctx, a.Workspace.ID, r.Number); err != nil {
			return err
		}
		if r.todoID != "" && t.Kind != atrium.KindTodo {
			return notTodo(r.todoID, t)
		}
		if err := mayChange(a, t); err != nil {
			return err
		}
		base := t.Revision
		if r.BaseRevision != 0 && r.BaseRevision != t.Revision {
			return staleRevision(t, r.BaseRevision)
		}
		before := t.Status
		_, fromDesk := deskOf(t)
		ch, err := s.apply(ctx, tx, a, &t, r.Fields)
		if err != nil {
			return err
		}
		if before == atrium.TaskBlocked && t.Status != atrium.TaskBlocked {
			// The status moved on: nobody is waited on for the block any more.
			if _, err := tx.ClearWaits(ctx, t.ID, 0, "blocked"); err != nil {
				return err
			}
			if r.Labels == nil {
				ch.labels = removeLabel(&t, BlockedLabel) || ch.labels
			}
		}
		if err := tx.UpdateTask(ctx, &t, base, ch.labels); err != nil {
			return err
		}
		if err := s.writeBlockers(ctx, tx, &t, ch.blockers); err != nil {
			return err
		}
		if err := assignedInbox(ctx, tx, a, t, ch); err != nil {
			return err
		}
		return emit(ctx, tx, a, EventUpdated, t, Event{FromDesk: fromDesk})
	})
	if err != nil {
		return atrium.Task{}, err
	}
	return s.Get(ctx, r.Number)
}

func staleRevision(t atrium.Task, base int64) error {
	return atrium.Errorf(atrium.EConflict, "task #%d is at revision %d, not %d: someone changed it meanwhile; read it again and retry", t.Number, t.Revision, base).
		WithDetails(map[string]any{"current_revision": t.Revision, "base_revision": base})
}

// Claim atomically makes the caller the task's assignee and starts it, or
// fails naming who holds it. Claiming a task one already holds succeeds.
func (s *Service) Claim(ctx context.Context, n int64) (atrium.Task, error) {
	a, err := writer(ctx)
	if err != nil {
		return atrium.Task{}, err
	}
	var t atrium.Task
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		// Locked: of claimers side by side, each reads what the one before
		// it committed, and is told who holds the task.
		if t, err = tx.LockTask(ctx, a.Workspace.ID, n); err != nil {
			return err
		}
		switch {
		case t.AssigneeID != 0 && t.AssigneeID != a.Principal.ID:
			return heldBy(t)
		case mayChange(a, t) != nil:
			return mayChange(a, t) // an unheld todo is still its creator's
		case t.Status.Closed():
			return atrium.Errorf(atrium.EConflict, "task #%d is %s; only open tasks can be claimed", n, t.Status)
		case t.AssigneeID == a.Principal.ID && t.Status != atrium.TaskOpen:
			return nil // already the caller's, and started
		}
		open, err := tx.OpenBlockers(ctx, t.ID)
		if err != nil {
			return err
		}
		if len(open) > 0 {
			return atrium.Errorf(atrium.EConflict, "task #%d is blocked by %s, not done yet", n, numbers(open)).
				WithDetails(map[string]any{"blocked_by": open})
		}
		base := t.Revision
		t.AssigneeID, t.Assignee = a.Principal.ID, a.Principal.Handle
		if t.Status == atrium.TaskOpen {
			t.Status = atrium.TaskInProgress
		}
		if err := tx.UpdateTask(ctx, &t, base, false); err != nil {
			return err
		}
		return emit(ctx, tx, a, EventClaimed, t, Event{})
	})
	return t, err
}

func heldBy(t atrium.Task) error {
	return atrium.Errorf(atrium.EConflict, "task #%d is already claimed by @%s", t.Number, t.Assignee).
		WithDetails(map[string]any{"assignee": t.Assignee})
}

func numbers(ns []int64) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = subject(n)
	}
	return strings.Join(parts, ", ")
}

// changes says what apply changed that needs more than the task row.
type changes struct {
	labels   bool
	blockers []int64 // row ids; nil: unchanged
	assigned bool    // the assignee changed to someone
}

// apply validates f and sets it on t.
func (s *Service) apply(ctx context.Context, tx *store.Tx, a *atrium.Actor, t *atrium.Task, f Fields) (changes, error) {
	var ch changes
	if f.Title != nil {
		title := strings.TrimSpace(*f.Title)
		switch {
		case title == "":
			return ch, atrium.Errorf(atrium.EInvalid, "title cannot be empty")
		case utf8.RuneCountInString(title) > maxTitle:
			return ch, atrium.Errorf(atrium.EInvalid, "title is %d characters; at most %d", utf8.RuneCountInString(title), maxTitle)
		case strings.ContainsAny(title, "\r\n"):
			return ch, atrium.Errorf(atrium.EInvalid, "title is one line")
		}
		t.Title = title
	}
	if f.Body != nil {
		if len(*f.Body) > maxBody {
			return ch, atrium.Errorf(atrium.ETooLarge, "body is %d bytes; at most %d", len(*f.Body), maxBody)
		}
		t.Body = *f.Body
	}
	if f.Status != nil {
		if !f.Status.Valid() {
			return ch, atrium.Errorf(atrium.EInvalid, "status is open, in_progress, blocked, done or archived, not %q", *f.Status)
		}
		t.Status = *f.Status
	}
	if f.StatusText != nil {
		if len(*f.StatusText) > 1000 {
			return ch, atrium.Errorf(atrium.EInvalid, "status text is %d bytes; at most 1000", len(*f.StatusText))
		}
		t.StatusText = strings.TrimSpace(*f.StatusText)
	}
	if f.Progress != nil {
		if *f.Progress < 0 || *f.Progress > 100 {
			return ch, atrium.Errorf(atrium.EInvalid, "progress is a percentage, 0 to 100, not %d", *f.Progress)
		}
		t.Progress = *f.Progress
	}
	if f.Phase != nil {
		phase := strings.TrimSpace(*f.Phase)
		if len(phase) > maxLabel || strings.ContainsAny(phase, "\r\n") {
			return ch, atrium.Errorf(atrium.EInvalid, "phase is one line of at most %d bytes", maxLabel)
		}
		t.Phase = phase
	}
	if f.Labels != nil {
		labels, err := cleanLabels(*f.Labels)
		if err != nil {
			return ch, err
		}
		t.Labels, ch.labels = labels, true
	}
	for _, l := range []struct {
		in  *[]string
		out *[]string
	}{{f.Specs, &t.Specs}, {f.Plans, &t.Plans}} {
		if l.in == nil {
			continue
		}
		paths, err := cleanPaths(*l.in)
		if err != nil {
			return ch, err
		}
		*l.out = paths
	}
	if f.Assignee != nil {
		h := strings.TrimPrefix(strings.TrimSpace(*f.Assignee), "@")
		if h == "" {
			t.AssigneeID, t.Assignee = 0, ""
		} else {
			p, err := member(ctx, tx, a, h)
			if err != nil {
				return ch, err
			}
			ch.assigned = p.ID != t.AssigneeID
			t.AssigneeID, t.Assignee = p.ID, p.Handle
		}
	}
	if f.BlockedBy != nil {
		if len(*f.BlockedBy) > maxBlockers {
			return ch, atrium.Errorf(atrium.EInvalid, "blocked_by names %d tasks; at most %d", len(*f.BlockedBy), maxBlockers)
		}
		ns := slices.Clone(*f.BlockedBy)
		slices.Sort(ns)
		ns = slices.Compact(ns)
		if t.Number != 0 && slices.Contains(ns, t.Number) {
			return ch, atrium.Errorf(atrium.EInvalid, "task #%d cannot be blocked by itself", t.Number)
		}
		ids, err := tx.TaskIDs(ctx, a.Workspace.ID, ns)
		if err != nil {
			return ch, err
		}
		if t.ID != 0 {
			// A new task has nothing waiting on it, so no cycle; an existing
			// one takes the workspace's graph for the check and the write.
			if err := tx.LockTaskGraph(ctx, a.Workspace.ID); err != nil {
				return ch, err
			}
			for i, id := range ids {
				// Adding t → id makes a cycle if id already waits on t.
				if cyc, err := tx.Reaches(ctx, id, t.ID); err != nil {
					return ch, err
				} else if cyc {
					return ch, atrium.Errorf(atrium.EInvalid, "task #%d cannot be blocked by #%d: #%d already waits on #%d, which would make a cycle", t.Number, ns[i], ns[i], t.Number)
				}
			}
		}
		ch.blockers, t.BlockedBy = ids, ns
	}
	return ch, nil
}

func (s *Service) writeBlockers(ctx context.Context, tx *store.Tx, t *atrium.Task, ids []int64) error {
	if ids == nil {
		return nil
	}
	return tx.SetBlockers(ctx, t.ID, ids)
}

// assignedInbox tells a new assignee, unless they assigned themselves.
func assignedInbox(ctx context.Context, tx *store.Tx, a *atrium.Actor, t atrium.Task, ch changes) error {
	if !ch.assigned || t.AssigneeID == a.Principal.ID {
		return nil
	}
	return tx.AddInbox(ctx, store.InboxEntry{Workspace: a.Workspace.ID, Principal: t.AssigneeID, Task: t.ID, Actor: a.Principal.ID, Kind: atrium.InboxAssigned})
}

func cleanLabels(in []string) ([]string, error) {
	if len(in) > maxLabels {
		return nil, atrium.Errorf(atrium.EInvalid, "%d labels; at most %d", len(in), maxLabels)
	}
	out := make([]string, 0, len(in))
	for _, l := range in {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			continue
		case len(l) > maxLabel || strings.ContainsAny(l, "\r\n,"):
			return nil, atrium.Errorf(atrium.EInvalid, "label %q: one line of at most %d bytes, no commas", l, maxLabel)
		}
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out, nil
}

func cleanPaths(in []string) ([]string, error) {
	if len(in) > maxLinks {
		return nil, atrium.Errorf(atrium.EInvalid, "%d linked pages; at most %d", len(in), maxLinks)
	}
	out := make([]string, 0, len(in))
	for _, p := range in {
		clean, err := pages.NormalizePath(strings.TrimPrefix(strings.TrimSpace(p), "/"))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, clean) {
			out = append(out, clean)
		}
	}
	return out, nil
}

func addLabel(t *atrium.Task, l string) bool {
	if t.HasLabel(l) {
		return false
	}
	t.Labels = append(t.Labels, l)
	return true
}

func removeLabel(t *atrium.Task, l string) bool {
	i := slices.Index(t.Labels, l)
	if i < 0 {
		return false
	}
	t.Labels = slices.Delete(t.Labels, i, i+1)
	return true
}

// member returns the principal with handle h if it belongs to a's workspace.
func member(ctx context.Context, tx *store.Tx, a *atrium.Actor, h string) (atrium.Principal, error) {
	p, err := tx.PrincipalByHandle(ctx, h)
	if err == nil {
		var role atrium.Role
		if role, err = tx.Role(ctx, a.Workspace.ID, p.ID); err == nil && role == "" {
			err = atrium.Errorf(atrium.ENotFound, "principal %q not found", h)
		}
	}
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return p, atrium.Errorf(atrium.EInvalid, "unknown principal @%s in workspace %s (an agent exists once it has connected; a person once given a token: atrium token create --principal HANDLE)", h, a.Workspace.Name).
			WithDetails(map[string]any{"unknown": []string{h}})
	}
	return p, err
}

// uiURLKey is where a serving Atrium records the address people open it at,
// so that local agents (atrium mcp on the same store) link to the same UI.
const uiURLKey = "ui_url"

// Announce sets BaseURL and records it for other processes on the store.
func (s *Service) Announce(ctx context.Context, url string) error {
	s.BaseURL = strings.TrimSuffix(url, "/")
	return s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetMeta(ctx, uiURLKey, s.BaseURL) })
}

// announcedURL is an address read from the store, and when.
type announcedURL struct {
	url string
	at  time.Time
}

// announcedFresh is how long an announced address is used before it is read
// again: a serve that starts again on another port is followed within it.
const announcedFresh = 2 * time.Second

// LoadBaseURL reads the address a serving Atrium announced on this store, if
// any: urls use it while BaseURL is empty, and read it again as it changes
// (Base). It never sets BaseURL, so that a serve that starts on another
// address announces its own rather than keep the last one's.
func (s *Service) LoadBaseURL(ctx context.Context) error {
	_, err := s.loadAnnounced(ctx)
	return err
}

func (s *Service) loadAnnounced(ctx context.Context) (string, error) {
	var url string
	err := s.db.Read(ctx, func(tx *store.Tx) error {
		var err error
		url, _, err = tx.Meta(ctx, uiURLKey)
		return err
	})
	if err != nil {
		return "", err
	}
	s.announced.Store(&announcedURL{url: url, at: time.Now()})
	return url, nil
}

// Base is the address urls begin with: BaseURL, or else the address a
// serving Atrium announced (read again once announcedFresh has passed), or
// "" (urls are then paths).
func (s *Service) Base() string {
	if s.BaseURL != "" {
		return s.BaseURL
	}
	a := s.announced.Load()
	if a != nil && time.Since(a.at) < announcedFresh {
		return a.url
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	url, err := s.loadAnnounced(ctx)
	if err != nil {
		if a != nil {
			return a.url // the store is slow or away: the last one known
		}
		return ""
	}
	return url
}
