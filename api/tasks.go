package api

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
)

// The tasks routes answer in the shapes of the MCP task tools (task_list's
// rows, task_get_context's context, task_inbox's inbox), so a script and an
// agent read the same thing.
func (h *Handler) registerTasks(route func(string, http.HandlerFunc)) {
	route("GET /api/tasks", h.listTasks)
	route("POST /api/tasks", h.createTask)
	route("GET /api/tasks/ready", h.readyTasks)
	route("GET /api/tasks/{n}", h.getTask)
	route("PATCH /api/tasks/{n}", h.patchTask)
	route("POST /api/tasks/{n}/claim", h.claimTask)
	route("GET /api/tasks/{n}/comments", h.listTaskComments)
	route("POST /api/tasks/{n}/comments", h.postTaskComment)
	route("GET /api/inbox", h.readInbox)
	route("POST /api/inbox/ack", h.ackInbox)
}

// taskNumber is {n}: 12, or #12 as people write it.
func taskNumber(r *http.Request) (int64, error) { return tasks.ParseNumber(r.PathValue("n")) }

// listParam is a parameter given repeated (status=open&status=done), comma
// separated (status=open,done), or both.
func listParam(r *http.Request, name string) []string {
	var out []string
	for _, v := range r.URL.Query()[name] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// taskRows is a page of task rows: task_list's and task_ready's answer.
type taskRows struct {
	Tasks      []tasks.Row `json:"tasks"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// listTasks: filters status (repeatable or comma separated), assignee (a
// handle, me or none), label and text combine; fields picks the columns.
func (h *Handler) listTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := tasks.ListRequest{Assignee: q.Get("assignee"), Label: q.Get("label"), Text: q.Get("text"), Cursor: q.Get("cursor")}
	for _, s := range listParam(r, "status") {
		req.Statuses = append(req.Statuses, atrium.TaskStatus(s))
	}
	h.taskRows(w, r, req, h.Services.Tasks.List)
}

// readyTasks lists what someone could start now (task_ready).
func (h *Handler) readyTasks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	h.taskRows(w, r, tasks.ListRequest{Kind: atrium.KindTask, Label: q.Get("label"), Cursor: q.Get("cursor")}, h.Services.Tasks.Ready)
}

func (h *Handler) taskRows(w http.ResponseWriter, r *http.Request, req tasks.ListRequest, list func(context.Context, tasks.ListRequest) (tasks.ListResult, error)) {
	fields := listParam(r, "fields")
	limit, err := intParam(r, "limit")
	if err == nil {
		err = tasks.CheckFields(fields)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	req.Limit = int(limit)
	res, err := list(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, taskRows{Tasks: h.Services.Tasks.Rows(res.Tasks, fields), NextCursor: res.NextCursor})
}

// taskBody is what POST /api/tasks sets and PATCH /api/tasks/{n} changes:
// task_create's and task_update's fields. An absent field stays as it is.
type taskBody struct {
	BaseRevision int64 `json:"base_revision"`
	tasks.FieldsInput
}

// taskOut is one task, as task_create, task_update and task_claim answer.
type taskOut struct {
	Task tasks.TaskOut `json:"task"`
}

func (h *Handler) oneTask(w http.ResponseWriter, r *http.Request, status int, t atrium.Task, err error) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(t.Revision))
	h.writeJSON(w, status, taskOut{Task: h.Services.Tasks.Output(t)})
}

func (h *Handler) createTask(w http.ResponseWriter, r *http.Request) {
	var b taskBody
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	if b.BaseRevision != 0 {
		h.fail(w, r, atrium.Errorf(atrium.EInvalid, "a new task has no base_revision"))
		return
	}
	t, err := h.Services.Tasks.Create(r.Context(), tasks.CreateRequest{Fields: b.Fields()})
	h.oneTask(w, r, http.StatusCreated, t, err)
}

// getTask is task_get_context: the task (as "issue"), its linked specs and
// plans with their content, its comments and whom it waits on.
func (h *Handler) getTask(w http.ResponseWriter, r *http.Request) {
	n, err := taskNumber(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	c, err := h.Services.Tasks.GetContext(r.Context(), n)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("ETag", etag(c.Task.Revision))
	h.writeJSON(w, http.StatusOK, h.Services.Tasks.ContextOutput(c))
}

// patchTask changes the fields given, made from base_revision (or If-Match);
// a stale one is 409 with the current revision in details.
func (h *Handler) patchTask(w http.ResponseWriter, r *http.Request) {
	n, err := taskNumber(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var b taskBody
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	base, err := baseRevision(r, b.BaseRevision)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	t, err := h.Services.Tasks.Update(r.Context(), tasks.UpdateRequest{Number: n, BaseRevision: base, Fields: b.Fields()})
	h.oneTask(w, r, http.StatusOK, t, err)
}

// claimTask assigns the caller and starts the task, or is 409 naming who
// holds it. It takes no body.
func (h *Handler) claimTask(w http.ResponseWriter, r *http.Request) {
	n, err := taskNumber(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	t, err := h.Services.Tasks.Claim(r.Context(), n)
	h.oneTask(w, r, http.StatusOK, t, err)
}

// listTaskComments: oldest first; since (RFC 3339), from_agent (a handle)
// and after (a comment id) narrow it.
func (h *Handler) listTaskComments(w http.ResponseWriter, r *http.Request) {
	n, err := taskNumber(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := r.URL.Query()
	req := tasks.CommentsRequest{Number: n, FromAgent: q.Get("from_agent")}
	if v := q.Get("since"); v != "" {
		if req.Since, err = time.Parse(time.RFC3339Nano, v); err != nil {
			h.fail(w, r, atrium.Errorf(atrium.EInvalid, "since is an RFC 3339 time like 2025-01-01T10:00:00Z, not %q", v))
			return
		}
	}
	limit, err := intParam(r, "limit")
	if err == nil {
		req.After, err = intParam(r, "after")
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	req.Limit = int(limit)
	page, err := h.Services.Tasks.Comments(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, page.Output())
}

// commentBody is the body of POST /api/tasks/{n}/comments. type is one of
// note (the default), status, completion, question, answer, blocked,
// clarification; then either
//
//   - body: the comment as written, its type's marker put before it
//     (task_post_comment); it changes nothing else; or
//   - the fields of the type's own tool, which also does what that tool does:
//     status: status, progress (task_update_status);
//     question: target, question (task_ask_question);
//     answer: target, answer, answers (task_post_answer; answers names the
//     question comment, else the last one asked of the caller);
//     blocked: reason, waiting_for (task_signal_blocked);
//     completion: summary, artifact_path (task_signal_complete).
//
// For example {"type":"question","target":"duc","question":"Which port?"}.
// Giving both body and a tool's fields, or another type's fields, is refused.
type commentBody struct {
	Type         string  `json:"type"`
	Body         *string `json:"body"`
	Status       *string `json:"status"`
	Progress     *int    `json:"progress"`
	Target       *string `json:"target"`
	Question     *string `json:"question"`
	Answer       *string `json:"answer"`
	Answers      int64   `json:"answers"`
	Reason       *string `json:"reason"`
	WaitingFor   *string `json:"waiting_for"`
	Summary      *string `json:"summary"`
	ArtifactPath *string `json:"artifact_path"`
}

// PostedOut is a comment posted, with the task as it now is and what the
// comment did.
type PostedOut struct {
	Comment    tasks.CommentOut `json:"comment"`
	URL        string           `json:"url"`
	Task       tasks.TaskOut    `json:"task"`
	WaitingFor string           `json:"waiting_for,omitempty"`
	NextAgent  string           `json:"next_agent,omitempty"`
	LabelAdded string           `json:"label_added,omitempty"`
}

// toolFields are the fields each type's tool takes, beside type.
var toolFields = map[atrium.CommentType][]string{
	atrium.CommentStatus:     {"status", "progress"},
	atrium.CommentQuestion:   {"target", "question"},
	atrium.CommentAnswer:     {"target", "answer", "answers"},
	atrium.CommentBlocked:    {"reason", "waiting_for"},
	atrium.CommentCompletion: {"summary", "artifact_path"},
}

// given names the tool fields b sets, in a stable order.
func (b commentBody) given() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"status", b.Status != nil}, {"progress", b.Progress != nil}, {"target", b.Target != nil}, {"question", b.Question != nil},
		{"answer", b.Answer != nil}, {"answers", b.Answers != 0}, {"reason", b.Reason != nil}, {"waiting_for", b.WaitingFor != nil},
		{"summary", b.Summary != nil}, {"artifact_path", b.ArtifactPath != nil}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (h *Handler) postTaskComment(w http.ResponseWriter, r *http.Request) {
	n, err := taskNumber(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var b commentBody
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	p, err := h.comment(r, n, b)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusCreated, PostedOut{Comment: tasks.Comments([]atrium.TaskComment{p.Comment})[0], URL: h.Services.Tasks.CommentURL(n, p.Comment.ID),
		Task: h.Services.Tasks.Output(p.Task), WaitingFor: p.WaitingFor, NextAgent: p.NextAgent, LabelAdded: p.LabelAdded})
}

// comment posts b as commentBody says.
func (h *Handler) comment(r *http.Request, n int64, b commentBody) (tasks.Posted, error) {
	typ := atrium.CommentType(b.Type)
	if typ == "" {
		typ = atrium.CommentNote
	}
	given, own := b.given(), toolFields[typ]
	for _, f := range given {
		if !slices.Contains(own, f) {
			if len(own) == 0 {
				return tasks.Posted{}, atrium.Errorf(atrium.EInvalid, "a %s comment takes body only, not %s", typ, f)
			}
			return tasks.Posted{}, atrium.Errorf(atrium.EInvalid, "a %s comment takes body, or %s; not %s", typ, strings.Join(own, " and "), f)
		}
	}
	ctx := r.Context()
	switch {
	case b.Body != nil && len(given) > 0:
		return tasks.Posted{}, atrium.Errorf(atrium.EInvalid, "send body (the comment as written) or %s (what the type's tool does), not both", strings.Join(own, " and "))
	case b.Body != nil || len(own) == 0:
		return h.Services.Tasks.Comment(ctx, tasks.CommentRequest{Number: n, Type: typ, Body: str(b.Body)})
	}
	switch typ {
	case atrium.CommentStatus:
		return h.Services.Tasks.UpdateStatus(ctx, n, str(b.Status), b.Progress)
	case atrium.CommentQuestion:
		return h.Services.Tasks.Ask(ctx, n, str(b.Target), str(b.Question))
	case atrium.CommentAnswer:
		return h.Services.Tasks.Answer(ctx, n, str(b.Target), str(b.Answer), b.Answers)
	case atrium.CommentBlocked:
		return h.Services.Tasks.Blocked(ctx, n, str(b.Reason), str(b.WaitingFor))
	default:
		return h.Services.Tasks.Complete(ctx, n, str(b.ArtifactPath), str(b.Summary))
	}
}

// readInbox is the caller's inbox, unread first; include_read adds read
// items after them. Reading marks nothing: POST /api/inbox/ack does.
func (h *Handler) readInbox(w http.ResponseWriter, r *http.Request) {
	includeRead, err := boolParam(r, "include_read", false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limit, err := intParam(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.Services.Tasks.ReadInbox(r.Context(), tasks.InboxRequest{IncludeRead: includeRead, Limit: int(limit)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

// ackInbox marks read the items an answer's ack_cursor covered, and answers
// with the inbox as it then is. A reader may: it is their own read state.
func (h *Handler) ackInbox(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Ack         string `json:"ack"`
		IncludeRead bool   `json:"include_read"`
		Limit       int    `json:"limit"`
	}
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	if b.Ack == "" {
		h.fail(w, r, atrium.Errorf(atrium.EInvalid, "ack is required: the ack_cursor of GET /api/inbox"))
		return
	}
	res, err := h.Services.Tasks.ReadInbox(r.Context(), tasks.InboxRequest{Ack: b.Ack, IncludeRead: b.IncludeRead, Limit: b.Limit})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}
