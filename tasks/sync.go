package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// The mirror of a workspace's tasks to a tracker (issue 22). Atrium is the
// truth; the tracker's repository mirrors it:
//
//   - each change of a task (not a desk's todo) queues an outbox row in the
//     transaction of its event; a sync pushes the rows in order. Each issue
//     carries its task's marker and each comment its comment's, and a try
//     is recorded before it reaches the tracker, so a try after a crash
//     looks for what it may have made before making it again;
//   - a poll reads the issues changed since its cursor (an ETag makes an
//     unchanged answer free): comments written there become the task's,
//     by a principal gh-LOGIN; state, title and labels changed there flow
//     in; a field changed on both sides since they last agreed is a
//     conflict, listed, and Atrium's value stays;
//   - an issue filed there becomes a task, and then Atrium owns it.

// TrackerKinds are the trackers a workspace may link to.
var TrackerKinds = []string{"github"}

// TaskMarker is the hidden line that ties an issue to its task.
func TaskMarker(id int64) string { return fmt.Sprintf("<!-- atrium:task:%d -->", id) }

// CommentMarker is the hidden line that ties a remote comment to its comment.
func CommentMarker(id int64) string { return fmt.Sprintf("<!-- atrium:comment:%d -->", id) }

var (
	taskMarkerRE    = regexp.MustCompile(`<!-- atrium:task:(\d+) -->`)
	commentMarkerRE = regexp.MustCompile(`<!-- atrium:comment:\d+ -->`)
)

// GitHubHandle is the principal of a tracker's user login.
func GitHubHandle(login string) string {
	h := strings.ToLower(login)
	h = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, h)
	return "gh-" + strings.Trim(h, "-")
}

// trackerHandle is who the tracker's own changes (state, labels) are by: its
// API does not say which user made them without another call per issue.
const trackerHandle = "github"

// A TrackerLink is where a workspace's tasks are mirrored.
type TrackerLink struct {
	Workspace     string    `json:"workspace"`
	WorkspaceID   int64     `json:"-"`
	Kind          string    `json:"kind"`
	Repo          string    `json:"repo"`
	APIURL        string    `json:"api_url,omitempty"`
	PollSince     time.Time `json:"poll_since,omitzero"`
	LastSyncAt    time.Time `json:"last_sync_at,omitzero"`
	LastError     string    `json:"last_error,omitempty"`
	RateLimit     int       `json:"rate_limit"`
	RateRemaining int       `json:"rate_remaining"`
	RateReset     time.Time `json:"rate_reset,omitzero"`
}

// A TrackerConflict is a field changed on both sides.
type TrackerConflict struct {
	ID     int64     `json:"id"`
	Task   int64     `json:"task"`
	Field  string    `json:"field"`
	Atrium string    `json:"atrium"`
	Remote string    `json:"remote"`
	At     time.Time `json:"at"`
}

// TrackerStatus is a link and how its mirror stands.
type TrackerStatus struct {
	Link     TrackerLink `json:"link"`
	Issues   int         `json:"issues"`
	Comments int         `json:"comments"`
	Pending  int         `json:"pending"`
	// Waiting of the pending changes wait out a failure; Dead were given
	// up on (listed in DeadLetters until retried); Gone issues were deleted
	// or moved away on the tracker.
	Waiting     int               `json:"waiting"`
	Dead        int               `json:"dead"`
	Gone        int               `json:"gone"`
	DeadLetters []DeadLetter      `json:"dead_letters"`
	Conflicts   []TrackerConflict `json:"conflicts"`
}

// A DeadLetter is a change the mirror gave up pushing, and why.
type DeadLetter struct {
	ID       int64     `json:"id"`
	Task     int64     `json:"task"`
	Comment  int64     `json:"comment_id,omitempty"`
	Kind     string    `json:"kind"`
	Failures int       `json:"failures"`
	Error    string    `json:"error"`
	At       time.Time `json:"at"`
}

// LinkTracker links the caller's workspace to repo of a tracker (admin).
func (s *Service) LinkTracker(ctx context.Context, kind, repo, apiURL string) (TrackerLink, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return TrackerLink{}, err
	}
	if !slices.Contains(TrackerKinds, kind) {
		return TrackerLink{}, atrium.Errorf(atrium.EInvalid, "a tracker is one of %s, not %q", strings.Join(TrackerKinds, ", "), kind)
	}
	if o, r, ok := strings.Cut(repo, "/"); !ok || o == "" || r == "" || strings.Contains(r, "/") {
		return TrackerLink{}, atrium.Errorf(atrium.EInvalid, "a repository is OWNER/REPO, not %q", repo)
	}
	if apiURL != "" && !strings.HasPrefix(apiURL, "https://") && !strings.HasPrefix(apiURL, "http://") {
		return TrackerLink{}, atrium.Errorf(atrium.EInvalid, "--api-url is an http(s) URL, not %q", apiURL)
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.LinkTracker(ctx, store.TrackerLink{WorkspaceID: a.Workspace.ID, Kind: kind, Repo: repo, APIURL: apiURL}); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, "tracker.linked", kind+":"+repo, map[string]string{"kind": kind, "repo": repo})
	})
	if err != nil {
		return TrackerLink{}, err
	}
	st, err := s.TrackerStatus(ctx)
	return st.Link, err
}

// TrackerStatus is the caller's workspace's link and its numbers.
func (s *Service) TrackerStatus(ctx context.Context) (TrackerStatus, error) {
	a, err := reader(ctx)
	if err != nil {
		return TrackerStatus{}, err
	}
	var st TrackerStatus
	err = s.db.View(ctx, func(tx *store.Tx) error {
		l, err := tx.TrackerLinkOf(ctx, a.Workspace.ID)
		if err != nil {
			return err
		}
		st.Link = linkOut(l, a.Workspace.Name)
		c, err := tx.TrackerCountsOf(ctx, a.Workspace.ID)
		if err != nil {
			return err
		}
		st.Issues, st.Comments, st.Pending, st.Waiting, st.Dead, st.Gone = c.Issues, c.Comments, c.Pending, c.Waiting, c.Dead, c.Gone
		dead, err := tx.DeadOutbox(ctx, a.Workspace.ID, 100)
		if err != nil {
			return err
		}
		st.DeadLetters = []DeadLetter{}
		for _, r := range dead {
			st.DeadLetters = append(st.DeadLetters, DeadLetter{ID: r.ID, Task: r.TaskNumber, Comment: r.CommentID, Kind: r.Kind, Failures: r.Failures, Error: r.LastError, At: r.CreatedAt})
		}
		cs, err := tx.TrackerConflicts(ctx, a.Workspace.ID, 100)
		st.Conflicts = []TrackerConflict{}
		for _, c := range cs {
			st.Conflicts = append(st.Conflicts, conflictOut(c))
		}
		return err
	})
	return st, err
}

// TrackerConflictsOf lists task number n's conflicts with the tracker,
// newest first; none when the workspace has no link.
func (s *Service) TrackerConflictsOf(ctx context.Context, n int64) ([]TrackerConflict, error) {
	a, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	out := []TrackerConflict{}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		cs, err := tx.TrackerConflictsOfTask(ctx, a.Workspace.ID, n, 100)
		for _, c := range cs {
			out = append(out, conflictOut(c))
		}
		return err
	})
	return out, err
}

func conflictOut(c store.TrackerConflict) TrackerConflict {
	return TrackerConflict{ID: c.ID, Task: c.TaskNumber, Field: c.Field, Atrium: c.Atrium, Remote: c.Remote, At: c.CreatedAt}
}

// RetryTracker puts the caller's workspace's dead changes (those of ids;
// all when none) back in the queue, a task whose issue is gone getting a
// new one, and wakes the mirror (admin). It returns how many were requeued.
func (s *Service) RetryTracker(ctx context.Context, ids []int64) (int, error) {
	a, n, err := s.settle(ctx, "tracker.retried", "changes", ids, (*store.Tx).RetryOutbox)
	if err == nil && n > 0 {
		s.wake(a.Workspace.ID)
	}
	return n, err
}

// DismissTrackerConflicts drops the caller's workspace's conflicts of ids
// (all when none) once someone has settled them — in Atrium, on the
// tracker, or by deciding Atrium's value stands (admin). The event log
// keeps who dismissed what.
func (s *Service) DismissTrackerConflicts(ctx context.Context, ids []int64) (int, error) {
	_, n, err := s.settle(ctx, "tracker.conflicts_dismissed", "conflicts", ids, (*store.Tx).DismissTrackerConflicts)
	return n, err
}

// settle is an admin's act on the link's listed rows (of ids; all when
// none): do acts, and an event of kind says who and how many (as what).
func (s *Service) settle(ctx context.Context, kind, what string, ids []int64, do func(*store.Tx, context.Context, int64, []int64) (int, error)) (*atrium.Actor, int, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return nil, 0, err
	}
	var n int
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l, err := tx.TrackerLinkOf(ctx, a.Workspace.ID)
		if err != nil {
			return err
		}
		if n, err = do(tx, ctx, a.Workspace.ID, ids); err != nil || n == 0 {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, kind, l.Kind+":"+l.Repo, map[string]any{what: n, "ids": ids})
	})
	return a, n, err
}

// SyncTrackerSoon asks this server's mirror to sync the caller's
// workspace now rather than at its next tick (admin); what it does shows in
// the status.
func (s *Service) SyncTrackerSoon(ctx context.Context) error {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return err
	}
	if err := s.db.View(ctx, func(tx *store.Tx) error { _, err := tx.TrackerLinkOf(ctx, a.Workspace.ID); return err }); err != nil {
		return err
	}
	s.wake(a.Workspace.ID)
	return nil
}

func linkOut(l store.TrackerLink, ws string) TrackerLink {
	return TrackerLink{Workspace: ws, WorkspaceID: l.WorkspaceID, Kind: l.Kind, Repo: l.Repo, APIURL: l.APIURL, PollSince: l.PollSince,
		LastSyncAt: l.LastSyncAt, LastError: l.LastError, RateLimit: l.RateLimit, RateRemaining: l.RateRemaining, RateReset: l.RateReset}
}

// TrackerLinks lists every workspace's link: for a server's sync worker,
// which acts for no caller.
func (s *Service) TrackerLinks(ctx context.Context) ([]TrackerLink, error) {
	var out []TrackerLink
	err := s.db.View(ctx, func(tx *store.Tx) error {
		ls, err := tx.TrackerLinks(ctx)
		for _, l := range ls {
			out = append(out, linkOut(l, ""))
		}
		return err
	})
	return out, err
}

// TrackersDue lists the workspaces whose outbox holds a change due for the
// push: for a server's worker, which acts for no caller.
func (s *Service) TrackersDue(ctx context.Context) ([]int64, error) {
	var out []int64
	err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = tx.TrackersDue(ctx)
		return err
	})
	return out, err
}

// SyncOptions tune one sync.
type SyncOptions struct {
	// DryRun counts what a sync would do, and changes nothing on either side.
	DryRun bool
	// Replica names who syncs, for the claim; Lease is how long it holds it.
	Replica string
	Lease   time.Duration
	// Dead reports whether the replica holding a claim is known to have
	// died (a process of this host that no longer runs): its claim is void.
	Dead func(holder string) bool
	// Limit caps the outbox rows pushed in one sync (0: all of them).
	Limit int
	// PushOnly pushes the outbox and reads nothing from the tracker: for
	// the changes made in Atrium since the last sync, at once.
	PushOnly bool
}

// SyncReport is what a sync did (or, dry, would do).
type SyncReport struct {
	DryRun         bool      `json:"dry_run,omitempty"`
	Skipped        bool      `json:"skipped,omitempty"` // another replica holds the link
	IssuesCreated  int       `json:"issues_created"`
	IssuesUpdated  int       `json:"issues_updated"`
	CommentsPushed int       `json:"comments_pushed"`
	Recovered      int       `json:"recovered"` // found on the tracker after a crash, not made again
	Pushed         int       `json:"pushed"`    // outbox rows done
	Pending        int       `json:"pending"`   // outbox rows left
	Dead           int       `json:"dead"`      // outbox rows given up on in this sync
	IssuesChanged  int       `json:"issues_changed"`
	TasksCreated   int       `json:"tasks_created"`
	TasksUpdated   int       `json:"tasks_updated"`
	CommentsPulled int       `json:"comments_pulled"`
	CommentsEdited int       `json:"comments_edited"`  // written there and edited there since
	CommentsGone   int       `json:"comments_deleted"` // written there and deleted there since
	IssuesGone     int       `json:"issues_gone"`      // deleted or moved there
	Conflicts      int       `json:"conflicts"`
	Calls          int       `json:"calls"`
	NotModified    int       `json:"not_modified"`
	RateLimit      int       `json:"rate_limit"`
	RateRemaining  int       `json:"rate_remaining"`
	RateReset      time.Time `json:"rate_reset,omitzero"`
}

// SyncTracker syncs workspace ws's link with tr: it pulls what changed on
// the tracker, then pushes the outbox. It acts for no caller: a server's
// worker and `atrium tracker sync` call it for a link they read.
func (s *Service) SyncTracker(ctx context.Context, ws int64, tr Tracker, o SyncOptions) (SyncReport, error) {
	rep := SyncReport{DryRun: o.DryRun}
	if o.Replica == "" {
		o.Replica = "local"
	}
	if o.Lease == 0 {
		o.Lease = 5 * time.Minute
	}
	var link store.TrackerLink
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if link, err = tx.TrackerLinkOf(ctx, ws); err != nil || o.DryRun {
			return err
		}
		void := ""
		if link.ClaimedBy != "" && link.ClaimedBy != o.Replica && o.Dead != nil && o.Dead(link.ClaimedBy) {
			void = link.ClaimedBy
		}
		ok, err := tx.ClaimTracker(ctx, ws, o.Replica, void, o.Lease)
		rep.Skipped = !ok
		return err
	})
	if err != nil || rep.Skipped {
		return rep, err
	}
	m := &mirror{s: s, tr: tr, ws: ws, rep: &rep, dry: o.DryRun, replica: o.Replica, lease: o.Lease}
	var syncErr error
	if !o.PushOnly {
		syncErr = m.pull(ctx, &link)
	}
	if syncErr == nil {
		syncErr = m.push(ctx, o.Limit)
	}
	b := tr.Budget()
	rep.Calls, rep.NotModified, rep.RateLimit, rep.RateRemaining, rep.RateReset = b.Calls, b.NotModified, b.Limit, b.Remaining, b.Reset
	err = s.db.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		c, err := tx.TrackerCountsOf(ctx, ws)
		if err != nil {
			return err
		}
		rep.Pending = c.Pending
		if o.DryRun {
			return nil
		}
		link.LastError = ""
		if syncErr != nil {
			link.LastError = syncErr.Error()
		}
		if b.Limit >= 0 {
			link.RateLimit, link.RateRemaining, link.RateReset = b.Limit, b.Remaining, b.Reset
		}
		return tx.ReleaseTracker(ctx, link, o.Replica)
	})
	return rep, errors.Join(syncErr, err)
}

// mirror is one sync of one link.
type mirror struct {
	s   *Service
	tr  Tracker
	ws  int64
	rep *SyncReport
	dry bool
	// replica holds the link's claim for lease, renewed as a push goes on.
	replica string
	lease   time.Duration
}

// fields are an issue's mirrored fields, as both sides last agreed on them.
type fields struct {
	Title  string   `json:"title"`
	Closed bool     `json:"closed"`
	Labels []string `json:"labels"` // without status:* and assignee:*
	Status string   `json:"status"` // Atrium's, for the status:* label
	// Body and Assignee are nil in what was agreed before they were
	// mirrored: never compared, so not changed on either side.
	Body *string `json:"body,omitempty"`
	// Assignee is a principal's handle: gh-LOGIN is the tracker's user
	// LOGIN, assigned there; any other shows as the label assignee:HANDLE
	// (a tracker cannot assign who has no account there).
	Assignee *string `json:"assignee,omitempty"`
}

// assigneeLabel marks, on the tracker, an assignee who has no account there.
const assigneeLabel = "assignee:"

func (f fields) json() string { b, _ := json.Marshal(f); return string(b) }

func parseFields(s string) (fields, bool) {
	var f fields
	return f, s != "" && json.Unmarshal([]byte(s), &f) == nil
}

func taskFields(t atrium.Task) fields {
	body, who := strings.TrimSpace(t.Body), t.Assignee
	f := fields{Title: t.Title, Closed: t.Status.Closed(), Status: string(t.Status), Labels: []string{}, Body: &body, Assignee: &who}
	for _, l := range t.Labels {
		if !strings.HasPrefix(l, "status:") && !strings.HasPrefix(l, assigneeLabel) {
			f.Labels = append(f.Labels, l)
		}
	}
	slices.Sort(f.Labels)
	return f
}

func issueFields(i Issue) fields {
	body := strings.TrimSpace(taskMarkerRE.ReplaceAllString(i.Body, ""))
	who := ""
	if len(i.Assignees) > 0 {
		who = GitHubHandle(i.Assignees[0])
	}
	f := fields{Title: i.Title, Closed: i.Closed, Labels: []string{}, Body: &body}
	for _, l := range i.Labels {
		if st, ok := strings.CutPrefix(l, "status:"); ok {
			f.Status = st
		} else if h, ok := strings.CutPrefix(l, assigneeLabel); ok {
			if who == "" {
				who = h
			}
		} else {
			f.Labels = append(f.Labels, l)
		}
	}
	f.Assignee = &who
	slices.Sort(f.Labels)
	return f
}

// labels are the issue's labels for f: the task's, its status, and its
// assignee when the tracker cannot assign them.
func (f fields) labels() []string {
	out := append(append([]string{}, f.Labels...), "status:"+f.Status)
	if h := f.assignee(); h != "" && !strings.HasPrefix(h, "gh-") {
		out = append(out, assigneeLabel+h)
	}
	return out
}

// assignees are the tracker's assignees for f.
func (f fields) assignees() []string {
	if login, ok := strings.CutPrefix(f.assignee(), "gh-"); ok {
		return []string{login}
	}
	return []string{}
}

func (f fields) assignee() string {
	if f.Assignee == nil {
		return ""
	}
	return *f.Assignee
}

func (f fields) body() string {
	if f.Body == nil {
		return ""
	}
	return *f.Body
}

func issueBody(t atrium.Task) string {
	return strings.TrimSpace(t.Body) + "\n\n" + TaskMarker(t.ID)
}

// commentBody is comment c as its issue shows it: 002's typed format, the
// author named unless the comment is posted as the author's own identity,
// and the marker.
func commentBody(c atrium.TaskComment, own bool) string {
	if own {
		return fmt.Sprintf("%s\n\n%s", c.Shown(), CommentMarker(c.ID))
	}
	return fmt.Sprintf("**@%s** (%s):\n\n%s\n\n%s", c.Author, c.AuthorType, c.Shown(), CommentMarker(c.ID))
}

// Failures of one outbox row: each waits longer before the next try, from
// backoffBase doubling up to backoffMax; after maxFailures (some four hours
// of the tracker failing that row) the row is dead, listed until retried.
const (
	backoffBase = 10 * time.Second
	backoffMax  = time.Hour
	maxFailures = 12
)

func backoff(failures int) time.Duration {
	d := backoffBase
	for range failures {
		if d *= 2; d >= backoffMax {
			return backoffMax
		}
	}
	return d
}

// errGone is an outbox row's error when its task's issue is gone from the
// tracker: a new issue is made only when someone retries it.
type errGone int

func (n errGone) Error() string {
	return fmt.Sprintf("issue %d is gone from the tracker (deleted or moved): retry to make it a new issue", int(n))
}

// verdict is what a push error means for its row and the rest of the pass.
type verdict int

const (
	again verdict = iota // the link's trouble (credentials, budget, network, shutdown): stop, count nothing
	later                // this row's, maybe passing (5xx): count, back off, stop
	dead                 // this row's for good (refused as invalid, its issue gone)
)

func judge(err error) verdict {
	var gone errGone
	switch {
	case errors.As(err, &gone):
		return dead
	case atrium.ErrorCode(err) == atrium.EInvalid:
		return dead
	case errors.Is(err, ErrTrackerFailed):
		return later
	}
	return again
}

// pushBatch is how many outbox rows a push reads at a time; it renews its
// claim on the link after each batch, so a long first push (thousands of
// rows at GitHub's pace) is never taken for an abandoned one.
const pushBatch = 200

// push pushes the outbox in order per task: a row that fails holds back its
// own task's later rows, so no change overtakes an earlier one of the same
// task, and the other tasks go on; a failure that is the link's stops it.
// It pushes at most limit rows (0: all).
func (m *mirror) push(ctx context.Context, limit int) error {
	held := map[int64]bool{}
	var last error
	after, done := int64(0), 0
	for {
		n := pushBatch
		if limit > 0 {
			n = min(n, limit-done)
		}
		var rows []store.OutboxRow
		if err := m.s.db.View(ctx, func(tx *store.Tx) (err error) {
			rows, err = tx.PendingOutbox(ctx, m.ws, after, n)
			return err
		}); err != nil || m.dry || len(rows) == 0 {
			return errors.Join(err, last)
		}
		for _, r := range rows {
			after = r.ID
			if held[r.TaskID] || r.NextAt.After(time.Now()) {
				held[r.TaskID] = true
				continue
			}
			v, err := m.pushOne(ctx, r)
			if err == nil {
				continue
			}
			if v != dead {
				return err
			}
			held[r.TaskID], last = true, err
		}
		if done += len(rows); len(rows) < n || limit > 0 && done >= limit {
			return last
		}
		if err := m.renew(ctx); err != nil {
			return errors.Join(err, last)
		}
	}
}

// renew extends this replica's claim on the link; losing it ends the push.
func (m *mirror) renew(ctx context.Context) error {
	return m.s.db.Update(ctx, func(tx *store.Tx) error {
		ok, err := tx.ClaimTracker(ctx, m.ws, m.replica, "", m.lease)
		if err == nil && !ok {
			err = atrium.Errorf(atrium.EConflict, "another replica took the link over: this push stops")
		}
		return err
	})
}

// pushOne pushes row r and records how it went.
func (m *mirror) pushOne(ctx context.Context, r store.OutboxRow) (verdict, error) {
	err := m.pushRow(ctx, r)
	v := judge(err)
	if err2 := m.s.db.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
		switch {
		case err == nil:
			return tx.FinishOutbox(ctx, r.ID)
		case v == dead:
			return tx.FailOutbox(ctx, r.ID, err.Error(), time.Time{}, true)
		case v == later && r.Failures+1 >= maxFailures:
			return tx.FailOutbox(ctx, r.ID, err.Error(), time.Time{}, true)
		case v == later:
			return tx.FailOutbox(ctx, r.ID, err.Error(), time.Now().Add(backoff(r.Failures)), false)
		}
		return tx.FailOutbox(ctx, r.ID, err.Error(), time.Time{}, false)
	}); err2 != nil {
		return again, err2
	}
	switch {
	case err == nil:
		m.rep.Pushed++
		return v, nil
	case v == dead:
		m.rep.Dead++
	}
	return v, fmt.Errorf("push #%d: %w", r.TaskNumber, err)
}

func (m *mirror) begin(ctx context.Context, r store.OutboxRow) error {
	return m.s.db.Update(ctx, func(tx *store.Tx) error { return tx.BeginOutbox(ctx, r.ID) })
}

func (m *mirror) pushRow(ctx context.Context, r store.OutboxRow) error {
	var (
		t     atrium.Task
		issue store.TrackerIssue
		has   bool
		c     atrium.TaskComment
		twin  bool
	)
	err := m.s.db.View(ctx, func(tx *store.Tx) (err error) {
		if t, err = tx.TaskByID(ctx, m.ws, r.TaskID); err != nil {
			return err
		}
		if issue, has, err = tx.TrackerIssueOf(ctx, t.ID); err != nil || r.CommentID == 0 {
			return err
		}
		if c, err = tx.CommentByID(ctx, m.ws, r.CommentID); err != nil {
			return err
		}
		_, twin, err = tx.TrackerCommentOf(ctx, c.ID)
		return err
	})
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return nil // gone since: nothing to mirror
	}
	if err != nil {
		return err
	}
	if has && issue.Gone {
		return errGone(issue.Number)
	}
	want := taskFields(t)
	if !has {
		if issue, err = m.ensureIssue(ctx, r, t, want); err != nil {
			return err
		}
	}
	if r.CommentID != 0 {
		if !twin {
			return m.gone(ctx, issue, m.ensureComment(ctx, r, issue, c))
		}
		return nil
	}
	if issue.Synced == want.json() {
		return nil
	}
	// Read before writing: a change made there since both sides last
	// agreed would be overwritten unseen by a push that did not pull first
	// (the push that follows a task's event at once). It is merged first —
	// taken, or listed as a conflict — and then Atrium's value is pushed.
	cur, err := m.tr.Issue(ctx, issue.Number)
	if err != nil {
		return m.gone(ctx, issue, err)
	}
	if issueFields(cur).json() != issue.Synced {
		if _, err := m.pullIssue(ctx, cur); err != nil {
			return err
		}
		if err := m.s.db.View(ctx, func(tx *store.Tx) (err error) {
			if t, err = tx.TaskByID(ctx, m.ws, r.TaskID); err != nil {
				return err
			}
			issue, _, err = tx.TrackerIssueOf(ctx, t.ID)
			return err
		}); err != nil {
			return err
		}
		if want = taskFields(t); issue.Synced == want.json() {
			return nil
		}
	}
	i, err := m.tr.UpdateIssue(ctx, issue.Number, want.request(t))
	if err != nil {
		return m.gone(ctx, issue, err)
	}
	m.rep.IssuesUpdated++
	issue.Synced, issue.SeenAt = want.json(), i.UpdatedAt
	return m.s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetTrackerIssue(ctx, issue) })
}

// gone records, when err says the tracker has no issue.Number any more,
// that it is gone, and says so; other errors pass as they are.
func (m *mirror) gone(ctx context.Context, issue store.TrackerIssue, err error) error {
	if atrium.ErrorCode(err) != atrium.ENotFound {
		return err
	}
	issue.Gone = true
	if err := m.s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetTrackerIssue(ctx, issue) }); err != nil {
		return err
	}
	return errGone(issue.Number)
}

// ensureIssue finds task t's issue on the tracker, after a try that may
// have made it, or makes it.
func (m *mirror) ensureIssue(ctx context.Context, r store.OutboxRow, t atrium.Task, want fields) (store.TrackerIssue, error) {
	out := store.TrackerIssue{TaskID: t.ID, WorkspaceID: m.ws}
	if r.Attempts > 0 {
		is, _, _, err := m.tr.IssuesSince(ctx, r.CreatedAt.Add(-time.Minute), "")
		if err != nil {
			return out, err
		}
		for _, i := range is {
			if strings.Contains(i.Body, TaskMarker(t.ID)) {
				out.Number, out.Synced, out.SeenAt = i.Number, issueFields(i).json(), i.UpdatedAt
				m.rep.Recovered++
				return out, m.s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetTrackerIssue(ctx, out) })
			}
		}
	}
	if err := m.begin(ctx, r); err != nil {
		return out, err
	}
	i, err := m.tr.CreateIssue(ctx, want.request(t))
	if err != nil {
		return out, err
	}
	m.rep.IssuesCreated++
	out.Number, out.Synced, out.SeenAt = i.Number, want.json(), i.UpdatedAt
	return out, m.s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetTrackerIssue(ctx, out) })
}

// ensureComment finds comment c on issue n, after a try that may have
// posted it, or posts it.
func (m *mirror) ensureComment(ctx context.Context, r store.OutboxRow, issue store.TrackerIssue, c atrium.TaskComment) error {
	var remote IssueComment
	n := issue.Number
	if r.Attempts > 0 {
		cs, err := m.tr.Comments(ctx, n)
		if err != nil {
			return err
		}
		for _, x := range cs {
			if strings.Contains(x.Body, CommentMarker(c.ID)) {
				remote = x
				m.rep.Recovered++
			}
		}
	}
	if remote.ID == 0 {
		if err := m.begin(ctx, r); err != nil {
			return err
		}
		x, err := m.tr.PostComment(ctx, n, c.Author, commentBody(c, m.tr.Own(c.Author)))
		if err != nil {
			return err
		}
		remote = x
		m.rep.CommentsPushed++
		// A comment touches its issue: this one was the mirror's own.
		if issue.SeenAt.Before(x.CreatedAt) {
			issue.SeenAt = x.CreatedAt
		}
	}
	return m.s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.SetTrackerIssue(ctx, issue); err != nil {
			return err
		}
		return tx.SetTrackerComment(ctx, m.ws, c.ID, remote.ID, originAtrium, remote.UpdatedAt)
	})
}

// Where a mirrored comment was written first.
const (
	originAtrium  = "atrium"
	originTracker = "tracker"
)

// request is what a create or update of task t's issue sets.
func (f fields) request(t atrium.Task) IssueFields {
	title, body, closed, labels, who := f.Title, issueBody(t), f.Closed, f.labels(), f.assignees()
	return IssueFields{Title: &title, Body: &body, Closed: &closed, Labels: &labels, Assignees: &who}
}

// pull reads the issues changed since the link's cursor and brings their
// changes in, then the comments made or edited since its other cursor, then
// reads whole the comments of the issues someone else touched (a deletion
// shows only as an absence).
func (m *mirror) pull(ctx context.Context, link *store.TrackerLink) error {
	recheck := m.s.takeRecheck(m.ws)
	is, etag, unchanged, err := m.tr.IssuesSince(ctx, link.PollSince, link.PollETag)
	if err != nil {
		return err
	}
	if !unchanged {
		since := link.PollSince
		for _, i := range is {
			if i.PullRequest {
				continue
			}
			m.rep.IssuesChanged++
			if !m.dry {
				touched, err := m.pullIssue(ctx, i)
				if err != nil {
					return fmt.Errorf("pull issue %d: %w", i.Number, err)
				}
				if touched {
					recheck[i.Number] = true
				}
			}
			if i.UpdatedAt.After(link.PollSince) {
				link.PollSince = i.UpdatedAt // GitHub's since is inclusive: the boundary is read again, and deduplicated
			}
		}
		// The ETag is of the answer at this cursor; when the cursor moves,
		// the request differs and so does its ETag, so it is kept only
		// while it still names the request the next poll makes.
		link.PollETag = ""
		if link.PollSince.Equal(since) {
			link.PollETag = etag
		}
	}
	cs, etag, unchanged, err := m.tr.CommentsSince(ctx, link.CommentsSince, link.CommentsETag)
	if err != nil {
		return err
	}
	if !unchanged {
		since := link.CommentsSince
		for _, c := range cs {
			if !m.dry {
				if err := m.pullComment(ctx, c); err != nil {
					return fmt.Errorf("pull comment %d: %w", c.ID, err)
				}
			}
			if c.UpdatedAt.After(link.CommentsSince) {
				link.CommentsSince = c.UpdatedAt
			}
		}
		link.CommentsETag = ""
		if link.CommentsSince.Equal(since) {
			link.CommentsETag = etag
		}
	}
	if m.dry {
		return nil
	}
	for _, n := range slices.Sorted(maps.Keys(recheck)) {
		if err := m.recheckComments(ctx, n); err != nil {
			return fmt.Errorf("read the comments of issue %d: %w", n, err)
		}
	}
	return nil
}

func (m *mirror) actor(ctx context.Context, tx *store.Tx, handle string) (*atrium.Actor, error) {
	p, err := tx.EnsureMember(ctx, m.ws, handle, atrium.KindHuman, handle, atrium.RoleWriter)
	if err != nil {
		return nil, err
	}
	return &atrium.Actor{Principal: p, Workspace: atrium.Workspace{ID: m.ws}, Role: atrium.RoleWriter}, nil
}

// pullIssue brings issue i's changes in; touched reports that someone
// other than the mirror changed it since the mirror's last write.
func (m *mirror) pullIssue(ctx context.Context, i Issue) (touched bool, err error) {
	err = m.s.db.Update(ctx, func(tx *store.Tx) error {
		issue, has, err := tx.TrackerIssueByNumber(ctx, m.ws, i.Number)
		if err != nil {
			return err
		}
		if !has {
			if mk := taskMarkerRE.FindStringSubmatch(i.Body); mk != nil {
				// Ours, made by a try whose record was lost: the push's
				// search finds it too; knowing it here saves that call.
				id, _ := strconv.ParseInt(mk[1], 10, 64)
				if _, err := tx.TaskByID(ctx, m.ws, id); err != nil {
					return nil // another workspace's, or gone: not ours to touch
				}
				return tx.SetTrackerIssue(ctx, store.TrackerIssue{TaskID: id, WorkspaceID: m.ws, Number: i.Number, Synced: issueFields(i).json(), SeenAt: i.UpdatedAt})
			}
			return m.adopt(ctx, tx, i)
		}
		// Times are whole seconds: a change in the second of the mirror's own
		// write shows in the fields, if not in the time.
		touched = i.UpdatedAt.After(issue.SeenAt) || issueFields(i).json() != issue.Synced
		issue.SeenAt, issue.Gone = i.UpdatedAt, false
		t, err := tx.TaskByID(ctx, m.ws, issue.TaskID)
		if err != nil {
			return err
		}
		return m.merge(ctx, tx, i, &issue, t)
	})
	return touched, err
}

// adopt makes an issue filed on the tracker a task; from now on Atrium owns it.
func (m *mirror) adopt(ctx context.Context, tx *store.Tx, i Issue) error {
	a, err := m.actor(ctx, tx, GitHubHandle(i.Author))
	if err != nil {
		return err
	}
	f := issueFields(i)
	t := atrium.Task{WorkspaceID: m.ws, Kind: atrium.KindTask, Title: i.Title, Body: f.body(), Status: atrium.TaskOpen, CreatorID: a.Principal.ID, Creator: a.Principal.Handle,
		Labels: f.Labels, Specs: []string{}, Plans: []string{}, BlockedBy: []int64{}}
	if i.Closed {
		t.Status = atrium.TaskDone
	}
	if h := f.assignee(); h != "" {
		if p, err := m.assignee(ctx, tx, h); err == nil {
			t.AssigneeID, t.Assignee = p.ID, p.Handle
		}
	}
	if t.Number, err = tx.NextTaskNumber(ctx, m.ws); err != nil {
		return err
	}
	if err := tx.InsertTask(ctx, &t); err != nil {
		return err
	}
	if err := tx.SetTrackerIssue(ctx, store.TrackerIssue{TaskID: t.ID, WorkspaceID: m.ws, Number: i.Number, Synced: f.json(), SeenAt: i.UpdatedAt}); err != nil {
		return err
	}
	m.rep.TasksCreated++
	return emit(ctx, tx, a, EventCreated, t, Event{}) // its push adds the marker and the status label
}

// assignee is the principal an issue's assignee names: a tracker user
// (gh-LOGIN) is made a member; another must be one already.
func (m *mirror) assignee(ctx context.Context, tx *store.Tx, handle string) (atrium.Principal, error) {
	if strings.HasPrefix(handle, "gh-") {
		a, err := m.actor(ctx, tx, handle)
		if err != nil {
			return atrium.Principal{}, err
		}
		return a.Principal, nil
	}
	p, err := tx.PrincipalByHandle(ctx, handle)
	if err != nil {
		return p, err
	}
	if r, err := tx.Role(ctx, m.ws, p.ID); err != nil || r == "" {
		return p, errors.Join(err, atrium.Errorf(atrium.ENotFound, "@%s is not a member", handle))
	}
	return p, nil
}

// merge brings in what changed on the tracker since both sides agreed; a
// field changed on both sides is a conflict: listed, and Atrium's stays.
func (m *mirror) merge(ctx context.Context, tx *store.Tx, i Issue, issue *store.TrackerIssue, t atrium.Task) error {
	base, ok := parseFields(issue.Synced)
	remote, local := issueFields(i), taskFields(t)
	if !ok {
		base = local // never agreed: the push makes the issue Atrium's
	}
	if base.Body == nil { // agreed before bodies and assignees were mirrored
		base.Body = local.Body
	}
	if base.Assignee == nil {
		base.Assignee = local.Assignee
	}
	next, changed, assigned := t, false, false
	conflict := func(field, atriumV, remoteV string) error {
		m.rep.Conflicts++
		return tx.AddTrackerConflict(ctx, m.ws, store.TrackerConflict{TaskID: t.ID, Field: field, Atrium: atriumV, Remote: remoteV})
	}
	// merge3 settles one field: taken from the tracker when only the
	// tracker changed it, a conflict when both did.
	merge3 := func(field, b, r, l string, take func(string) error) error {
		switch {
		case r == b || r == l:
			return nil
		case l != b:
			return conflict(field, l, r)
		}
		changed = true
		return take(r)
	}
	if err := merge3("title", base.Title, remote.Title, local.Title, func(v string) error { next.Title = v; return nil }); err != nil {
		return err
	}
	if err := merge3("body", base.body(), remote.body(), local.body(), func(v string) error { next.Body = v; return nil }); err != nil {
		return err
	}
	if err := merge3("assignee", base.assignee(), remote.assignee(), local.assignee(), func(h string) error {
		if h == "" {
			next.AssigneeID, next.Assignee = 0, ""
			return nil
		}
		p, err := m.assignee(ctx, tx, h)
		if atrium.ErrorCode(err) == atrium.ENotFound {
			changed = false
			return conflict("assignee", local.assignee(), h+" (not a member here)")
		}
		next.AssigneeID, next.Assignee, assigned = p.ID, p.Handle, true
		return err
	}); err != nil {
		return err
	}
	if remote.Closed != base.Closed && remote.Closed != local.Closed {
		st := map[bool]string{true: "closed", false: "open"}
		if local.Closed != base.Closed || local.Status != base.Status { // Atrium moved the status too
			if err := conflict("state", st[local.Closed]+" ("+local.Status+")", st[remote.Closed]); err != nil {
				return err
			}
		} else if remote.Closed {
			next.Status, changed = atrium.TaskDone, true
		} else {
			next.Status, changed = atrium.TaskOpen, true
		}
	}
	if !slices.Equal(remote.Labels, base.Labels) && !slices.Equal(remote.Labels, local.Labels) {
		if !slices.Equal(local.Labels, base.Labels) {
			if err := conflict("labels", strings.Join(local.Labels, ","), strings.Join(remote.Labels, ",")); err != nil {
				return err
			}
		} else {
			// The task's own assignee:* and status:* labels stay as they are.
			keep := slices.DeleteFunc(slices.Clone(t.Labels), func(l string) bool {
				return !strings.HasPrefix(l, "status:") && !strings.HasPrefix(l, assigneeLabel)
			})
			next.Labels, changed = append(keep, remote.Labels...), true
		}
	}
	// What the tracker shows now is the new base: a conflict's Atrium value
	// is pushed over it by the outbox, after being listed.
	issue.Synced = remote.json()
	if err := tx.SetTrackerIssue(ctx, *issue); err != nil {
		return err
	}
	if !changed {
		if remote.json() != local.json() {
			return tx.AddTrackerOutbox(ctx, m.ws, t.ID, 0, "tracker.reconcile")
		}
		return nil
	}
	a, err := m.actor(ctx, tx, trackerHandle)
	if err != nil {
		return err
	}
	if err := tx.UpdateTask(ctx, &next, t.Revision, !slices.Equal(next.Labels, t.Labels)); err != nil {
		return err
	}
	m.rep.TasksUpdated++
	if err := assignedInbox(ctx, tx, a, next, changes{assigned: assigned}); err != nil {
		return err
	}
	return emit(ctx, tx, a, EventUpdated, next, Event{})
}

// pullComment brings in comment c: a new one written on the tracker, or an
// edit there of one written there. An edit there of one of Atrium's is a
// conflict, listed once; Atrium's text stays here.
func (m *mirror) pullComment(ctx context.Context, c IssueComment) error {
	return m.s.db.Update(ctx, func(tx *store.Tx) error {
		twin, ok, err := tx.TrackerCommentByRemote(ctx, m.ws, c.ID)
		if err != nil {
			return err
		}
		if !ok {
			if commentMarkerRE.MatchString(c.Body) {
				return nil // one of Atrium's, from a try whose record was lost: the push finds it
			}
			issue, has, err := tx.TrackerIssueByNumber(ctx, m.ws, c.Issue)
			if err != nil || !has {
				return err // a pull request's, or an issue not mirrored
			}
			t, err := tx.TaskByID(ctx, m.ws, issue.TaskID)
			if err != nil {
				return err
			}
			a, err := m.actor(ctx, tx, GitHubHandle(c.Author))
			if err != nil {
				return err
			}
			typ, body := typedComment(c.Body)
			cm := atrium.TaskComment{TaskID: t.ID, TaskNumber: t.Number, AuthorID: a.Principal.ID, Author: a.Principal.Handle, Type: typ, Body: body}
			if err := tx.InsertComment(ctx, m.ws, &cm); err != nil {
				return err
			}
			if err := tx.SetTrackerComment(ctx, m.ws, cm.ID, c.ID, originTracker, c.UpdatedAt); err != nil {
				return err
			}
			m.rep.CommentsPulled++
			return emit(ctx, tx, a, EventCommented, t, Event{Comment: cm.ID, Type: string(typ)})
		}
		// A tracker's times are whole seconds: an edit in the second the
		// comment was made has its time, so the text is what tells.
		if c.UpdatedAt.Before(twin.RemoteUpdated) {
			return nil // older than what was seen
		}
		cm, err := tx.CommentByID(ctx, m.ws, twin.CommentID)
		if err != nil {
			return err
		}
		if twin.Origin == originAtrium {
			if c.Body == commentBody(cm, m.tr.Own(cm.Author)) {
				return nil
			}
			// Listed once: the edit's time is marked seen, just past it, so
			// the same edit is not listed again and a later one still is.
			if err := tx.TouchTrackerComment(ctx, twin.CommentID, c.UpdatedAt.Add(time.Microsecond)); err != nil {
				return err
			}
			m.rep.Conflicts++
			return tx.AddTrackerConflict(ctx, m.ws, store.TrackerConflict{TaskID: cm.TaskID, Field: fmt.Sprintf("comment %d", cm.ID), Atrium: cm.Shown(), Remote: "edited there: " + c.Body})
		}
		if err := tx.TouchTrackerComment(ctx, twin.CommentID, c.UpdatedAt); err != nil {
			return err
		}
		typ, body := typedComment(c.Body)
		if typ == cm.Type && body == cm.Body {
			return nil
		}
		if err := tx.EditComment(ctx, m.ws, cm.ID, typ, body); err != nil {
			return err
		}
		m.rep.CommentsEdited++
		return m.commentEvent(ctx, tx, cm, EventCommentEdited, cm.Shown())
	})
}

// recheckComments reads issue n's comments whole: new and edited ones come
// in as pullComment brings them; a twin no longer there was deleted there.
// A deleted comment written there is marked so here (its text stays, for
// the record); one of Atrium's is a conflict, listed, not posted again.
func (m *mirror) recheckComments(ctx context.Context, n int) error {
	var issue store.TrackerIssue
	var has bool
	if err := m.s.db.View(ctx, func(tx *store.Tx) (err error) {
		issue, has, err = tx.TrackerIssueByNumber(ctx, m.ws, n)
		return err
	}); err != nil || !has || issue.Gone {
		return err
	}
	cs, err := m.tr.Comments(ctx, n)
	if atrium.ErrorCode(err) == atrium.ENotFound {
		m.rep.IssuesGone++
		if err := m.gone(ctx, issue, err); !errors.As(err, new(errGone)) {
			return err
		}
		return nil
	}
	if err != nil {
		return err
	}
	present := map[int64]bool{}
	for _, c := range cs {
		present[c.ID] = true
		c.Issue = n
		if err := m.pullComment(ctx, c); err != nil {
			return err
		}
	}
	return m.s.db.Update(ctx, func(tx *store.Tx) error {
		twins, err := tx.TrackerCommentsOfTask(ctx, issue.TaskID)
		if err != nil {
			return err
		}
		for _, tw := range twins {
			if present[tw.RemoteID] {
				continue
			}
			cm, err := tx.CommentByID(ctx, m.ws, tw.CommentID)
			if err != nil {
				return err
			}
			if err := tx.ForgetTrackerComment(ctx, tw.CommentID); err != nil {
				return err
			}
			if tw.Origin == originAtrium {
				m.rep.Conflicts++
				if err := tx.AddTrackerConflict(ctx, m.ws, store.TrackerConflict{TaskID: cm.TaskID, Field: fmt.Sprintf("comment %d", cm.ID), Atrium: cm.Shown(), Remote: "deleted there"}); err != nil {
					return err
				}
				continue
			}
			if err := tx.MarkCommentDeleted(ctx, m.ws, cm.ID); err != nil {
				return err
			}
			m.rep.CommentsGone++
			if err := m.commentEvent(ctx, tx, cm, EventCommentDeleted, cm.Shown()); err != nil {
				return err
			}
		}
		return nil
	})
}

// commentEvent records that comment cm was edited or deleted on the
// tracker, with the text it had: the event log keeps it. Nothing of it goes
// back to the tracker, where it happened.
func (m *mirror) commentEvent(ctx context.Context, tx *store.Tx, cm atrium.TaskComment, kind, before string) error {
	a, err := m.actor(ctx, tx, cm.Author)
	if err != nil {
		return err
	}
	return tx.EmitJSON(ctx, m.ws, a.Principal.ID, kind, subject(cm.TaskNumber), map[string]any{"number": cm.TaskNumber, "kind": "task", "comment_id": cm.ID, "before": before})
}

// typedComment reads 002's typed format back: a body that starts with a
// type's marker is a comment of that type.
func typedComment(body string) (atrium.CommentType, string) {
	body = strings.TrimSpace(body)
	for _, typ := range []atrium.CommentType{atrium.CommentStatus, atrium.CommentCompletion, atrium.CommentQuestion, atrium.CommentAnswer, atrium.CommentBlocked, atrium.CommentClarification} {
		if rest, ok := strings.CutPrefix(body, typ.Marker()); ok {
			return typ, strings.TrimSpace(rest)
		}
	}
	return atrium.CommentNote, body
}
