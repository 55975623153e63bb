package web

import (
	"context"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/tasks"
)

// who is a principal as the badge shows them: a person or an AI agent.
type who struct {
	Handle string
	Type   atrium.AuthorType
}

// inboxWords say why an inbox item is there.
var inboxWords = map[atrium.InboxKind]string{
	atrium.InboxMention: "mentioned you on", atrium.InboxQuestion: "asked you on", atrium.InboxAnswer: "answered you on",
	atrium.InboxAssigned: "assigned you", atrium.InboxHandoff: "handed you", atrium.InboxBlocked: "waits on you for",
	atrium.InboxResume: "Atrium restarted: go on with",
}

// boardColumns are the board's columns, in order; archived tasks are off it.
var boardColumns = []struct {
	Status atrium.TaskStatus
	Title  string
}{{atrium.TaskOpen, "Open"}, {atrium.TaskInProgress, "In progress"}, {atrium.TaskBlocked, "Blocked"}, {atrium.TaskDone, "Done"}}

// columnLimit bounds a column: the newest this many, then a hint to filter.
const columnLimit = 100

type column struct {
	Status atrium.TaskStatus
	Title  string
	Tasks  []atrium.Task
	More   bool
}

// boardView is /tasks: the workspace's tasks by status.
type boardView struct {
	view
	Assignee, Label, Text string
	Columns               []column
	LastEvent             int64
	Form                  url.Values // the new-task form as sent, kept when it was refused
}

// board shows the tasks in columns by status, filtered by assignee, label
// and text.
func (h *Handler) board(w http.ResponseWriter, r *http.Request) {
	h.renderBoard(w, r, nil, nil)
}

func (h *Handler) renderBoard(w http.ResponseWriter, r *http.Request, form url.Values, failed error) {
	q := r.URL.Query()
	v := &boardView{Assignee: q.Get("assignee"), Label: q.Get("label"), Text: q.Get("text"), Form: form}
	ctx := r.Context()
	var err error
	if v.LastEvent, err = h.Services.Activity.Latest(ctx); err != nil {
		h.fail(w, r, err)
		return
	}
	for _, c := range boardColumns {
		res, err := h.Services.Tasks.List(ctx, tasks.ListRequest{Statuses: []atrium.TaskStatus{c.Status}, Assignee: v.Assignee, Label: v.Label, Text: v.Text, Limit: columnLimit})
		if err != nil {
			h.renderError(w, r, err, "tasks", v)
			return
		}
		v.Columns = append(v.Columns, column{Status: c.Status, Title: c.Title, Tasks: res.Tasks, More: res.NextCursor != ""})
	}
	if failed != nil {
		h.renderError(w, r, failed, "tasks", v)
		return
	}
	h.render(w, r, http.StatusOK, "tasks", v)
}

// newTask creates a task from the board's form, then shows it.
func (h *Handler) newTask(w http.ResponseWriter, r *http.Request) {
	f := formFields(r)
	t, err := h.Services.Tasks.Create(r.Context(), tasks.CreateRequest{Fields: tasks.Fields{Title: f.text("title"), Body: f.text("body"),
		Assignee: f.text("assignee"), Labels: f.list("labels"), Phase: f.text("phase")}})
	if err != nil {
		h.renderBoard(w, r, r.PostForm, err)
		return
	}
	http.Redirect(w, r, taskURL(t.Number), http.StatusSeeOther)
}

func taskURL(n int64) string { return "/tasks/" + strconv.FormatInt(n, 10) }

// taskView is /tasks/{n}: the task, its thread and the forms that act on it.
type taskView struct {
	view
	tasks.Context
	Body      template.HTML // the task's Markdown, rendered (raw HTML dropped)
	LastEvent int64
	Asker     string // who asked the caller's open question, to answer by default
	// Action and Form are the form that was refused, kept as it was sent.
	Action string
	Form   url.Values
	// Conflict is the task as stored when an edit was made on an older
	// revision: both are shown, and the person's edit is kept in its form.
	Conflict *atrium.Task
	Base     int64 // the revision the edit form is based on
	// Members complete the handle fields (@mention completion, no script).
	Members []tasks.Member
	// AgentSessions are the agents' sessions on the task, each agent's
	// newest, with what it is doing.
	AgentSessions []agents.Session
	// TrackerConflicts are the task's fields changed both here and on the
	// linked tracker (issue 22: listed on the task, never settled silently).
	TrackerConflicts []tasks.TrackerConflict
}

// Kept is what the person typed into field of the form of action, when that
// form was refused; otherwise def.
func (v *taskView) Kept(action, field, def string) string {
	if v.Action != action || v.Form == nil {
		return def
	}
	return v.Form.Get(field)
}

// Statuses are what the edit form offers.
func (v *taskView) Statuses() []atrium.TaskStatus {
	return []atrium.TaskStatus{atrium.TaskOpen, atrium.TaskInProgress, atrium.TaskBlocked, atrium.TaskDone, atrium.TaskArchived}
}

// CommentTypes are what the comment form offers, note first.
func (v *taskView) CommentTypes() []atrium.CommentType {
	return []atrium.CommentType{atrium.CommentNote, atrium.CommentStatus, atrium.CommentClarification, atrium.CommentQuestion, atrium.CommentAnswer, atrium.CommentBlocked, atrium.CommentCompletion}
}

func taskNumber(r *http.Request) (int64, error) { return tasks.ParseNumber(r.PathValue("n")) }

func (h *Handler) task(w http.ResponseWriter, r *http.Request) {
	n, err := taskNumber(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.renderTask(w, r, n, &taskView{}, nil)
}

// renderTask shows task n into v, with failed (a refused form) if any.
func (h *Handler) renderTask(w http.ResponseWriter, r *http.Request, n int64, v *taskView, failed error) {
	ctx := r.Context()
	var err error
	// Read first, so that a change made while the page renders is one the
	// live updates bring.
	if v.LastEvent, err = h.Services.Activity.Latest(ctx); err != nil {
		h.fail(w, r, err)
		return
	}
	if v.Context, err = h.Services.Tasks.GetContext(ctx, n); err != nil {
		h.fail(w, r, err)
		return
	}
	if v.Members, err = h.Services.Tasks.Members(ctx); err != nil {
		h.fail(w, r, err)
		return
	}
	if v.Body, err = h.renderLinked(r, "", v.Task.Body); err != nil {
		h.fail(w, r, err)
		return
	}
	if v.AgentSessions, err = h.newestSessions(ctx, func(s agents.Session) bool { return s.Task == n }); err != nil {
		h.fail(w, r, err)
		return
	}
	if v.TrackerConflicts, err = h.Services.Tasks.TrackerConflictsOf(ctx, n); err != nil {
		h.fail(w, r, err)
		return
	}
	if v.Base == 0 {
		v.Base = v.Task.Revision
	}
	if a := atrium.ActorFromContext(ctx); a != nil {
		for _, wt := range v.Waiting {
			if wt.PrincipalID == a.Principal.ID && wt.Reason == "question" {
				for _, c := range v.Comments {
					if c.ID == wt.CommentID {
						v.Asker = c.Author
					}
				}
			}
		}
	}
	if failed != nil {
		h.renderError(w, r, failed, "task", v)
		return
	}
	h.render(w, r, http.StatusOK, "task", v)
}

// renderLinked renders Markdown that is not itself a page — a task's body,
// a desk's plan shown on the desk — with its wikilinks resolved and its
// embeds shown as the page view does a page's (from is the page it stands
// for, if any): a link to a page that exists goes there, one to nothing is
// marked unresolved.
func (h *Handler) renderLinked(r *http.Request, from, body string) (template.HTML, error) {
	resolve, err := h.Services.Pages.Resolve(r.Context(), from, body)
	if err != nil {
		return "", err
	}
	out, err := markdown.RenderWith(body, h.renderOptions(r, from, resolve))
	return template.HTML(out), err // goldmark's output with raw HTML dropped
}

// form reads a posted form's fields for the service: a text field present
// in the form is set (even empty), an absent one is left alone.
type form struct{ r *http.Request }

func formFields(r *http.Request) form {
	_ = r.ParseForm()
	return form{r}
}

func (f form) has(name string) bool { _, ok := f.r.PostForm[name]; return ok }

func (f form) get(name string) string { return f.r.PostFormValue(name) }

func (f form) text(name string) *string {
	if !f.has(name) {
		return nil
	}
	v := f.get(name)
	return &v
}

// list is a comma- or line-separated field.
func (f form) list(name string) *[]string {
	if !f.has(name) {
		return nil
	}
	out := []string{}
	for _, s := range strings.FieldsFunc(f.get(name), func(r rune) bool { return r == ',' || r == '\n' || r == '\r' }) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return &out
}

// number is an optional integer field: empty is nil.
func (f form) number(name string) (*int, error) {
	v := strings.TrimSpace(f.get(name))
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v, "%"))
	if err != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "%s is a number, not %q", name, v)
	}
	return &n, nil
}

// tasks is a list of task numbers: "#1, 2".
func (f form) tasks(name string) (*[]int64, error) {
	l := f.list(name)
	if l == nil {
		return nil, nil
	}
	out := []int64{}
	for _, s := range *l {
		for _, word := range strings.Fields(s) {
			n, err := strconv.ParseInt(strings.TrimPrefix(word, "#"), 10, 64)
			if err != nil {
				return nil, atrium.Errorf(atrium.EInvalid, "%s lists task numbers such as #3, not %q", name, word)
			}
			out = append(out, n)
		}
	}
	return &out, nil
}

// claimTask takes an open task, then shows it (or the board, when claimed
// from there).
func (h *Handler) claimTask(w http.ResponseWriter, r *http.Request) {
	n, err := taskNumber(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f := formFields(r)
	if _, err := h.Services.Tasks.Claim(r.Context(), n); err != nil {
		h.renderTask(w, r, n, &taskView{Action: "claim", Form: r.PostForm}, err)
		return
	}
	to := taskURL(n)
	if f.get("from") == "board" {
		to = "/tasks"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// The forms of a task page that post to its thread.

func (h *Handler) commentTask(w http.ResponseWriter, r *http.Request) {
	h.postTask(w, r, "comment", func(ctx context.Context, n int64, f form) (tasks.Posted, error) {
		return h.Services.Tasks.Comment(ctx, tasks.CommentRequest{Number: n, Type: atrium.CommentType(f.get("type")), Body: f.get("body")})
	})
}

func (h *Handler) askTask(w http.ResponseWriter, r *http.Request) {
	h.postTask(w, r, "ask", func(ctx context.Context, n int64, f form) (tasks.Posted, error) {
		return h.Services.Tasks.Ask(ctx, n, f.get("target"), f.get("question"))
	})
}

func (h *Handler) answerTask(w http.ResponseWriter, r *http.Request) {
	h.postTask(w, r, "answer", func(ctx context.Context, n int64, f form) (tasks.Posted, error) {
		return h.Services.Tasks.Answer(ctx, n, f.get("target"), f.get("answer"), 0)
	})
}

func (h *Handler) blockedTask(w http.ResponseWriter, r *http.Request) {
	h.postTask(w, r, "blocked", func(ctx context.Context, n int64, f form) (tasks.Posted, error) {
		return h.Services.Tasks.Blocked(ctx, n, f.get("reason"), f.get("waiting_for"))
	})
}

func (h *Handler) completeTask(w http.ResponseWriter, r *http.Request) {
	h.postTask(w, r, "complete", func(ctx context.Context, n int64, f form) (tasks.Posted, error) {
		return h.Services.Tasks.Complete(ctx, n, f.get("artifact_path"), f.get("summary"))
	})
}

func (h *Handler) statusTask(w http.ResponseWriter, r *http.Request) {
	h.postTask(w, r, "status", func(ctx context.Context, n int64, f form) (tasks.Posted, error) {
		progress, err := f.number("progress")
		if err != nil {
			return tasks.Posted{}, err
		}
		return h.Services.Tasks.UpdateStatus(ctx, n, f.get("status"), progress)
	})
}

// postTask posts the form of action to task {n}'s thread, then shows the
// comment it made; a refused form is shown again as it was sent.
func (h *Handler) postTask(w http.ResponseWriter, r *http.Request, action string, post func(ctx context.Context, n int64, f form) (tasks.Posted, error)) {
	n, err := taskNumber(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := post(r.Context(), n, formFields(r))
	if err != nil {
		h.renderTask(w, r, n, &taskView{Action: action, Form: r.PostForm}, err)
		return
	}
	http.Redirect(w, r, taskURL(n)+"#comment-"+strconv.FormatInt(p.Comment.ID, 10), http.StatusSeeOther)
}

// editTask changes the task's fields, made from the revision the form was
// read at. When someone changed the task meanwhile, nothing is written: the
// page shows the stored task beside the person's edit, which stays in the
// form, now based on the stored revision, so that saving again is a choice.
func (h *Handler) editTask(w http.ResponseWriter, r *http.Request) {
	n, err := taskNumber(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f := formFields(r)
	base, _ := strconv.ParseInt(f.get("base_revision"), 10, 64)
	fields := tasks.Fields{Title: f.text("title"), Body: f.text("body"), Phase: f.text("phase"), Labels: f.list("labels"),
		Assignee: f.text("assignee"), Specs: f.list("specs"), Plans: f.list("plans")}
	if st := f.get("status"); st != "" {
		s := atrium.TaskStatus(st)
		fields.Status = &s
	}
	if fields.Progress, err = f.number("progress"); err == nil {
		if fields.BlockedBy, err = f.tasks("blocked_by"); err == nil {
			_, err = h.Services.Tasks.Update(r.Context(), tasks.UpdateRequest{Number: n, BaseRevision: base, Fields: fields})
		}
	}
	if err == nil {
		http.Redirect(w, r, taskURL(n), http.StatusSeeOther)
		return
	}
	v := &taskView{Action: "edit", Form: r.PostForm, Base: base}
	if atrium.ErrorCode(err) == atrium.EConflict {
		if cur, rerr := h.Services.Tasks.Get(r.Context(), n); rerr == nil {
			v.Conflict, v.Base = &cur, cur.Revision
		}
	}
	h.renderTask(w, r, n, v, err)
}

// inboxView is /inbox: what waits for the signed-in person, unread first.
type inboxView struct {
	view
	tasks.Inbox
	LastEvent int64
}

func (h *Handler) inbox(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v := &inboxView{}
	var err error
	if v.LastEvent, err = h.Services.Activity.Latest(ctx); err != nil {
		h.fail(w, r, err)
		return
	}
	if v.Inbox, err = h.Services.Tasks.ReadInbox(ctx, tasks.InboxRequest{IncludeRead: true, Limit: 200}); err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "inbox", v)
}

// ackInbox marks read what the page listed as unread (its ack cursor), not
// what arrived since.
func (h *Handler) ackInbox(w http.ResponseWriter, r *http.Request) {
	ack := r.PostFormValue("ack")
	if ack == "" {
		h.fail(w, r, atrium.Errorf(atrium.EInvalid, "nothing to mark read: the form names no ack cursor"))
		return
	}
	if _, err := h.Services.Tasks.ReadInbox(r.Context(), tasks.InboxRequest{Ack: ack, Limit: 1}); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/inbox", http.StatusSeeOther)
}

// newestSessions are the newest session of each agent among the recent ones
// that keep.
func (h *Handler) newestSessions(ctx context.Context, keep func(agents.Session) bool) ([]agents.Session, error) {
	all, err := h.Services.Agents.Sessions(ctx, 200)
	var out []agents.Session
	seen := map[string]bool{}
	for _, s := range all {
		if keep(s) && !seen[s.Agent] {
			seen[s.Agent] = true
			out = append(out, s)
		}
	}
	return out, err
}
