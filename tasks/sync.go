package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	Task   int64     `json:"task"`
	Field  string    `json:"field"`
	Atrium string    `json:"atrium"`
	Remote string    `json:"remote"`
	At     time.Time `json:"at"`
}

// TrackerStatus is a link and how its mirror stands.
type TrackerStatus struct {
	Link      TrackerLink       `json:"link"`
	Issues    int               `json:"issues"`
	Comments  int               `json:"comments"`
	Pending   int               `json:"pending"`
	Conflicts []TrackerConflict `json:"conflicts"`
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
		st.Issues, st.Comments, st.Pending = c.Issues, c.Comments, c.Pending
		cs, err := tx.TrackerConflicts(ctx, a.Workspace.ID, 100)
		st.Conflicts = []TrackerConflict{}
		for _, c := range cs {
			st.Conflicts = append(st.Conflicts, TrackerConflict{Task: c.TaskNumber, Field: c.Field, Atrium: c.Atrium, Remote: c.Remote, At: c.CreatedAt})
		}
		return err
	})
	return st, err
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
	// Limit caps the outbox rows pushed in one sync (default 500).
	Limit int
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
	IssuesChanged  int       `json:"issues_changed"`
	TasksCreated   int       `json:"tasks_created"`
	TasksUpdated   int       `json:"tasks_updated"`
	CommentsPulled int       `json:"comments_pulled"`
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
	if o.Limit == 0 {
		o.Limit = 500
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
	m := &mirror{s: s, tr: tr, ws: ws, rep: &rep, dry: o.DryRun}
	syncErr := m.pull(ctx, &link)
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
}

// fields are an issue's mirrored fields, as both sides last agreed on them.
type fields struct {
	Title  string   `json:"title"`
	Closed bool     `json:"closed"`
	Labels []string `json:"labels"` // without status:*
	Status string   `json:"status"` // Atrium's, for the status:* label
}

func (f fields) json() string { b, _ := json.Marshal(f); return string(b) }

func parseFields(s string) (fields, bool) {
	var f fields
	return f, s != "" && json.Unmarshal([]byte(s), &f) == nil
}

func taskFields(t atrium.Task) fields {
	f := fields{Title: t.Title, Closed: t.Status.Closed(), Status: string(t.Status), Labels: []string{}}
	for _, l := range t.Labels {
		if !strings.HasPrefix(l, "status:") {
			f.Labels = append(f.Labels, l)
		}
	}
	slices.Sort(f.Labels)
	return f
}

func issueFields(i Issue) fields {
	f := fields{Title: i.Title, Closed: i.Closed, Labels: []string{}}
	for _, l := range i.Labels {
		if st, ok := strings.CutPrefix(l, "status:"); ok {
			f.Status = st
		} else {
			f.Labels = append(f.Labels, l)
		}
	}
	slices.Sort(f.Labels)
	return f
}

func (f fields) labels() []string {
	return append(append([]string{}, f.Labels...), "status:"+f.Status)
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

// push pushes the outbox in order; the first failure stops it, so a later
// change never overtakes an earlier one.
func (m *mirror) push(ctx context.Context, limit int) error {
	var rows []store.OutboxRow
	if err := m.s.db.View(ctx, func(tx *store.Tx) (err error) {
		rows, err = tx.PendingOutbox(ctx, m.ws, limit)
		return err
	}); err != nil {
		return err
	}
	if m.dry {
		return nil
	}
	for _, r := range rows {
		err := m.pushRow(ctx, r)
		if err2 := m.s.db.Update(context.WithoutCancel(ctx), func(tx *store.Tx) error {
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			return tx.FinishOutbox(ctx, r.ID, msg)
		}); err2 != nil {
			return err2
		}
		if err != nil {
			return fmt.Errorf("push #%d: %w", r.TaskID, err)
		}
		m.rep.Pushed++
	}
	return nil
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
		twin  int64
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
		twin, err = tx.TrackerComment(ctx, c.ID)
		return err
	})
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return nil // gone since: nothing to mirror
	}
	if err != nil {
		return err
	}
	want := taskFields(t)
	if !has {
		if issue, err = m.ensureIssue(ctx, r, t, want); err != nil {
			return err
		}
	}
	if r.CommentID != 0 {
		if twin == 0 {
			return m.ensureComment(ctx, r, issue.Number, c)
		}
		return nil
	}
	if issue.Synced == want.json() {
		return nil
	}
	title, body, closed, labels := want.Title, issueBody(t), want.Closed, want.labels()
	if _, err := m.tr.UpdateIssue(ctx, issue.Number, IssueFields{Title: &title, Body: &body, Closed: &closed, Labels: &labels}); err != nil {
		return err
	}
	m.rep.IssuesUpdated++
	issue.Synced = want.json()
	return m.s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetTrackerIssue(ctx, issue) })
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
				out.Number, out.Synced = i.Number, issueFields(i).json()
				m.rep.Recovered++
				return out, m.s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetTrackerIssue(ctx, out) })
			}
		}
	}
	if err := m.begin(ctx, r); err != nil {
		return out, err
	}
	title, body, closed, labels := want.Title, issueBody(t), want.Closed, want.labels()
	i, err := m.tr.CreateIssue(ctx, IssueFields{Title: &title, Body: &body, Closed: &closed, Labels: &labels})
	if err != nil {
		return out, err
	}
	m.rep.IssuesCreated++
	out.Number, out.Synced = i.Number, want.json()
	return out, m.s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetTrackerIssue(ctx, out) })
}

// ensureComment finds comment c on issue n, after a try that may have
// posted it, or posts it.
func (m *mirror) ensureComment(ctx context.Context, r store.OutboxRow, n int, c atrium.TaskComment) error {
	var remote int64
	if r.Attempts > 0 {
		cs, err := m.tr.Comments(ctx, n)
		if err != nil {
			return err
		}
		for _, x := range cs {
			if strings.Contains(x.Body, CommentMarker(c.ID)) {
				remote = x.ID
				m.rep.Recovered++
			}
		}
	}
	if remote == 0 {
		if err := m.begin(ctx, r); err != nil {
			return err
		}
		x, err := m.tr.PostComment(ctx, n, c.Author, commentBody(c, m.tr.Own(c.Author)))
		if err != nil {
			return err
		}
		remote = x.ID
		m.rep.CommentsPushed++
	}
	return m.s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetTrackerComment(ctx, m.ws, c.ID, remote) })
}

// pull reads the issues changed since the link's cursor and brings their
// changes in.
func (m *mirror) pull(ctx context.Context, link *store.TrackerLink) error {
	is, etag, unchanged, err := m.tr.IssuesSince(ctx, link.PollSince, link.PollETag)
	if err != nil || unchanged {
		return err
	}
	// The ETag is of the answer at this cursor; when the cursor moves, the
	// request differs and so does its ETag, so it is kept only while it
	// still names the request the next poll makes.
	defer func(since time.Time) {
		link.PollETag = ""
		if link.PollSince.Equal(since) {
			link.PollETag = etag
		}
	}(link.PollSince)
	for _, i := range is {
		if i.PullRequest {
			continue
		}
		m.rep.IssuesChanged++
		if !m.dry {
			if err := m.pullIssue(ctx, i); err != nil {
				return fmt.Errorf("pull issue %d: %w", i.Number, err)
			}
		}
		if i.UpdatedAt.After(link.PollSince) {
			link.PollSince = i.UpdatedAt // GitHub's since is inclusive: the boundary is read again, and deduplicated
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

func (m *mirror) pullIssue(ctx context.Context, i Issue) error {
	var (
		issue store.TrackerIssue
		has   bool
		t     atrium.Task
	)
	err := m.s.db.Update(ctx, func(tx *store.Tx) (err error) {
		if issue, has, err = tx.TrackerIssueByNumber(ctx, m.ws, i.Number); err != nil {
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
				issue, has = store.TrackerIssue{TaskID: id, WorkspaceID: m.ws, Number: i.Number, Synced: issueFields(i).json()}, true
				return tx.SetTrackerIssue(ctx, issue)
			}
			return m.adopt(ctx, tx, i, &issue)
		}
		if t, err = tx.TaskByID(ctx, m.ws, issue.TaskID); err != nil {
			return err
		}
		return m.merge(ctx, tx, i, &issue, t)
	})
	if err != nil || issue.Number == 0 {
		return err
	}
	return m.pullComments(ctx, i.Number, issue.TaskID)
}

// adopt makes an issue filed on the tracker a task; from now on Atrium owns it.
func (m *mirror) adopt(ctx context.Context, tx *store.Tx, i Issue, issue *store.TrackerIssue) error {
	a, err := m.actor(ctx, tx, GitHubHandle(i.Author))
	if err != nil {
		return err
	}
	f := issueFields(i)
	t := atrium.Task{WorkspaceID: m.ws, Kind: atrium.KindTask, Title: i.Title, Body: i.Body, Status: atrium.TaskOpen, CreatorID: a.Principal.ID, Creator: a.Principal.Handle,
		Labels: f.Labels, Specs: []string{}, Plans: []string{}, BlockedBy: []int64{}}
	if i.Closed {
		t.Status = atrium.TaskDone
	}
	if t.Number, err = tx.NextTaskNumber(ctx, m.ws); err != nil {
		return err
	}
	if err := tx.InsertTask(ctx, &t); err != nil {
		return err
	}
	*issue = store.TrackerIssue{TaskID: t.ID, WorkspaceID: m.ws, Number: i.Number, Synced: f.json()}
	if err := tx.SetTrackerIssue(ctx, *issue); err != nil {
		return err
	}
	m.rep.TasksCreated++
	return emit(ctx, tx, a, EventCreated, t, Event{}) // its push adds the marker and the status label
}

// merge brings in what changed on the tracker since both sides agreed; a
// field changed on both sides is a conflict: listed, and Atrium's stays.
func (m *mirror) merge(ctx context.Context, tx *store.Tx, i Issue, issue *store.TrackerIssue, t atrium.Task) error {
	base, ok := parseFields(issue.Synced)
	remote, local := issueFields(i), taskFields(t)
	if !ok {
		base = local // never agreed: the push makes the issue Atrium's
	}
	next, changed := t, false
	conflict := func(field, atriumV, remoteV string) error {
		m.rep.Conflicts++
		return tx.AddTrackerConflict(ctx, m.ws, store.TrackerConflict{TaskID: t.ID, Field: field, Atrium: atriumV, Remote: remoteV})
	}
	if remote.Title != base.Title && remote.Title != local.Title {
		if local.Title != base.Title {
			if err := conflict("title", local.Title, remote.Title); err != nil {
				return err
			}
		} else {
			next.Title, changed = remote.Title, true
		}
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
			next.Labels, changed = remote.Labels, true
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
	return emit(ctx, tx, a, EventUpdated, next, Event{})
}

// pullComments brings in the comments written on the tracker.
func (m *mirror) pullComments(ctx context.Context, n int, task int64) error {
	cs, err := m.tr.Comments(ctx, n)
	if err != nil {
		return err
	}
	for _, x := range cs {
		if commentMarkerRE.MatchString(x.Body) {
			continue // one of Atrium's
		}
		err := m.s.db.Update(ctx, func(tx *store.Tx) error {
			if id, err := tx.TrackerCommentByRemote(ctx, m.ws, x.ID); err != nil || id != 0 {
				return err
			}
			t, err := tx.TaskByID(ctx, m.ws, task)
			if err != nil {
				return err
			}
			a, err := m.actor(ctx, tx, GitHubHandle(x.Author))
			if err != nil {
				return err
			}
			typ, body := typedComment(x.Body)
			c := atrium.TaskComment{TaskID: t.ID, TaskNumber: t.Number, AuthorID: a.Principal.ID, Author: a.Principal.Handle, Type: typ, Body: body}
			if err := tx.InsertComment(ctx, m.ws, &c); err != nil {
				return err
			}
			if err := tx.SetTrackerComment(ctx, m.ws, c.ID, x.ID); err != nil {
				return err
			}
			m.rep.CommentsPulled++
			return emit(ctx, tx, a, EventCommented, t, Event{Comment: c.ID, Type: string(typ)})
		})
		if err != nil {
			return err
		}
	}
	return nil
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
