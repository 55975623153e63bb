package tasktools

import (
	"context"
	"embed"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/tasks"
)

// Name is the toolset's name, as --toolsets and clients name it.
const Name = "tasks"

//go:embed defs/*.json
var defs embed.FS

// tasksRef reaches the tasks service when a tool is called.
type tasksRef struct{ s *mcpserver.Server }

func (r *tasksRef) get() *tasks.Service {
	if r.s.Services() == nil {
		panic("tasktools: task tool called on a server built without services")
	}
	return r.s.Services().Tasks
}

// New is the tasks toolset: work items agents hand to each other (002's
// tools). Descriptions are short on purpose: every default tool's schema is
// read into every agent's context (see TestDefaultToolsetsStayCheap).
func New(s *mcpserver.Server) *mcpserver.Toolset {
	r := &tasksRef{s}
	return &mcpserver.Toolset{
		Name:        Name,
		Description: "Tasks agents hand to each other: context, typed comments, questions, blocks, hand-offs, claims, an inbox.",
		Default:     true,
		Tools: []*mcpserver.Tool{
			// In the order of a task's life, which the skill's examples follow.
			taskCreateTool(r), taskGetContextTool(r), taskClaimTool(r), taskUpdateStatusTool(r), taskPostCommentTool(r),
			taskAskQuestionTool(r), taskPostAnswerTool(r), taskSignalBlockedTool(r), taskGetCommentsTool(r),
			taskUpdateTool(r), taskListTool(r), taskReadyTool(r), taskInboxTool(r), taskSignalCompleteTool(r),
		},
		Defs: defs,
	}
}

// IssueInput names a task by number, as 002's tools do.
type IssueInput struct {
	IssueNumber int64 `json:"issue_number" jsonschema:"the task number"`
}

func taskGetContextTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_get_context", Title: "Get task context",
		Description: "Gets a task (as issue) with its linked specs and plans (content included), its comments and whom it waits on.",
		Annotations: mcpserver.Reads("Get task context"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in IssueInput) (tasks.ContextOut, error) {
		c, err := r.get().GetContext(ctx, in.IssueNumber)
		if err != nil {
			return tasks.ContextOut{}, err
		}
		return r.get().ContextOutput(c), nil
	})
}

// CommentIDOut is a posted comment.
type CommentIDOut struct {
	CommentID int64  `json:"comment_id"`
	URL       string `json:"url"`
}

func commentOut(t *tasks.Service, p tasks.Posted) CommentIDOut {
	return CommentIDOut{CommentID: p.Comment.ID, URL: t.CommentURL(p.Comment.TaskNumber, p.Comment.ID)}
}

// PostCommentInput posts a comment.
type PostCommentInput struct {
	IssueNumber int64  `json:"issue_number"`
	Comment     string `json:"comment" jsonschema:"Markdown; @handle mentions notify"`
	CommentType string `json:"comment_type,omitempty" jsonschema:"status, completion, question, answer, blocked, clarification or note (default); its emoji is prepended"`
}

func taskPostCommentTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_post_comment", Title: "Post task comment",
		Description: "Posts a comment on a task under your identity.",
		Annotations: mcpserver.Writes("Post task comment", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in PostCommentInput) (CommentIDOut, error) {
		p, err := r.get().Comment(ctx, tasks.CommentRequest{Number: in.IssueNumber, Type: atrium.CommentType(in.CommentType), Body: in.Comment})
		return commentOut(r.get(), p), err
	})
}

// CompleteInput signals completion.
type CompleteInput struct {
	IssueNumber  int64  `json:"issue_number"`
	ArtifactPath string `json:"artifact_path,omitempty" jsonschema:"what you produced"`
	Summary      string `json:"summary"`
}

// CompleteOut is a completion.
type CompleteOut struct {
	CommentID int64  `json:"comment_id"`
	NextAgent string `json:"next_agent"`
	Status    string `json:"status" jsonschema:"done, or open in the next phase"`
	Phase     string `json:"phase"`
}

func taskSignalCompleteTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_signal_complete", Title: "Signal task complete",
		Description: "Marks your work on a task complete and hands it to the next agent (workspace hand-off rules; default the creator).",
		Annotations: mcpserver.Writes("Signal task complete", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in CompleteInput) (CompleteOut, error) {
		p, err := r.get().Complete(ctx, in.IssueNumber, in.ArtifactPath, in.Summary)
		return CompleteOut{CommentID: p.Comment.ID, NextAgent: p.NextAgent, Status: string(p.Task.Status), Phase: p.Task.Phase}, err
	})
}

// AskInput asks a question.
type AskInput struct {
	IssueNumber int64  `json:"issue_number"`
	Target      string `json:"target" jsonschema:"handle to ask, e.g. duc"`
	Question    string `json:"question"`
}

// AskOut is a question asked.
type AskOut struct {
	CommentID  int64  `json:"comment_id"`
	WaitingFor string `json:"waiting_for"`
}

func taskAskQuestionTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_ask_question", Title: "Ask question",
		Description: "Asks another agent or person a question on a task; it lands in their inbox and the task waits on them until they answer.",
		Annotations: mcpserver.Writes("Ask question", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in AskInput) (AskOut, error) {
		p, err := r.get().Ask(ctx, in.IssueNumber, in.Target, in.Question)
		return AskOut{CommentID: p.Comment.ID, WaitingFor: p.WaitingFor}, err
	})
}

// AnswerInput answers a question.
type AnswerInput struct {
	IssueNumber int64  `json:"issue_number"`
	Target      string `json:"target" jsonschema:"handle of who asked"`
	Answer      string `json:"answer"`
}

func taskPostAnswerTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_post_answer", Title: "Post answer",
		Description: "Answers a question on a task; the asker is notified and the task no longer waits on you.",
		Annotations: mcpserver.Writes("Post answer", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in AnswerInput) (CommentIDOut, error) {
		p, err := r.get().Answer(ctx, in.IssueNumber, in.Target, in.Answer, 0)
		return commentOut(r.get(), p), err
	})
}

// BlockedInput signals a block.
type BlockedInput struct {
	IssueNumber int64  `json:"issue_number"`
	Reason      string `json:"reason"`
	WaitingFor  string `json:"waiting_for,omitempty" jsonschema:"handle of who can unblock it"`
}

// BlockedOut is a block signalled.
type BlockedOut struct {
	CommentID  int64  `json:"comment_id"`
	LabelAdded string `json:"label_added"`
}

func taskSignalBlockedTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_signal_blocked", Title: "Signal blocked",
		Description: "Marks a task blocked (label blocked:agent) until waiting_for answers or the status moves on.",
		Annotations: mcpserver.Writes("Signal blocked", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in BlockedInput) (BlockedOut, error) {
		p, err := r.get().Blocked(ctx, in.IssueNumber, in.Reason, in.WaitingFor)
		return BlockedOut{CommentID: p.Comment.ID, LabelAdded: p.LabelAdded}, err
	})
}

// StatusInput posts a status update.
type StatusInput struct {
	IssueNumber int64  `json:"issue_number"`
	Status      string `json:"status" jsonschema:"what you are doing now"`
	Progress    *int   `json:"progress,omitempty" jsonschema:"0-100"`
}

func taskUpdateStatusTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_update_status", Title: "Update status",
		Description: "Posts a status update on a task and keeps it as the task's status text.",
		Annotations: mcpserver.Writes("Update status", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in StatusInput) (CommentIDOut, error) {
		p, err := r.get().UpdateStatus(ctx, in.IssueNumber, in.Status, in.Progress)
		return commentOut(r.get(), p), err
	})
}

// CommentsInput lists comments.
type CommentsInput struct {
	IssueNumber int64  `json:"issue_number"`
	Since       string `json:"since,omitempty" jsonschema:"RFC 3339 time; those at or after it"`
	FromAgent   string `json:"from_agent,omitempty" jsonschema:"only this author's"`
	After       int64  `json:"after,omitempty" jsonschema:"next_after of a cut answer"`
}

// CommentsOut lists comments.
type CommentsOut = tasks.CommentsOut

func taskGetCommentsTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_get_comments", Title: "Get task comments",
		Description: "Lists a task's comments, oldest first; e.g. to check for an answer.",
		Annotations: mcpserver.Reads("Get task comments"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in CommentsInput) (CommentsOut, error) {
		req := tasks.CommentsRequest{Number: in.IssueNumber, FromAgent: in.FromAgent, After: in.After}
		if in.Since != "" {
			t, err := time.Parse(time.RFC3339Nano, in.Since)
			if err != nil {
				return CommentsOut{}, atrium.Errorf(atrium.EInvalid, "since is an RFC 3339 time like 2025-01-01T10:00:00Z, not %q", in.Since)
			}
			req.Since = t
		}
		page, err := r.get().Comments(ctx, req)
		return page.Output(), err
	})
}

// TaskFieldsInput is what task_create and task_update set; REST takes the same.
type TaskFieldsInput = tasks.FieldsInput

// TaskOutput is one task.
type TaskOutput struct {
	Task tasks.TaskOut `json:"task"`
}

func (r *tasksRef) one(t atrium.Task, err error) (TaskOutput, error) {
	if err != nil {
		return TaskOutput{}, err
	}
	return TaskOutput{Task: r.get().Output(t)}, nil
}

func taskCreateTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_create", Title: "Create task",
		Description: "Creates a task; the workspace numbers it (#N). title is required.",
		Annotations: mcpserver.Writes("Create task", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in TaskFieldsInput) (TaskOutput, error) {
		return r.one(r.get().Create(ctx, tasks.CreateRequest{Fields: in.Fields()}))
	})
}

// UpdateTaskInput changes a task.
type UpdateTaskInput struct {
	IssueNumber  int64 `json:"issue_number"`
	BaseRevision int64 `json:"base_revision,omitempty" jsonschema:"revision you read; a stale one is a conflict"`
	TaskFieldsInput
}

func taskUpdateTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_update", Title: "Update task",
		Description: "Changes the given fields of a task; others stay.",
		Annotations: mcpserver.Writes("Update task", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in UpdateTaskInput) (TaskOutput, error) {
		return r.one(r.get().Update(ctx, tasks.UpdateRequest{Number: in.IssueNumber, BaseRevision: in.BaseRevision, Fields: in.Fields()}))
	})
}

func taskClaimTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_claim", Title: "Claim task",
		Description: "Atomically assigns you an open task and starts it; a conflict names who holds it.",
		Annotations: mcpserver.Writes("Claim task", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in IssueInput) (TaskOutput, error) {
		return r.one(r.get().Claim(ctx, in.IssueNumber))
	})
}

// ListTasksInput filters tasks.
type ListTasksInput struct {
	Status   []string `json:"status,omitempty" jsonschema:"default all but archived"`
	Assignee string   `json:"assignee,omitempty" jsonschema:"handle, me or none"`
	Label    string   `json:"label,omitempty"`
	Text     string   `json:"text,omitempty" jsonschema:"in title or body"`
	Fields   []string `json:"fields,omitempty" jsonschema:"columns; default number,title,status,assignee,labels,progress"`
	Cursor   string   `json:"cursor,omitempty"`
	Limit    int      `json:"limit,omitempty" jsonschema:"default 50, max 200"`
}

// ListTasksOut is a page of task rows.
type ListTasksOut struct {
	Tasks      []tasks.Row `json:"tasks"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

func (r *tasksRef) rows(res tasks.ListResult, err error, fields []string) (ListTasksOut, error) {
	if err != nil {
		return ListTasksOut{}, err
	}
	return ListTasksOut{Tasks: r.get().Rows(res.Tasks, fields), NextCursor: res.NextCursor}, nil
}

func taskListTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_list", Title: "List tasks",
		Description: "Lists tasks newest first as compact rows; filters combine. Paginated.",
		Annotations: mcpserver.Reads("List tasks"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in ListTasksInput) (ListTasksOut, error) {
		if err := tasks.CheckFields(in.Fields); err != nil {
			return ListTasksOut{}, err
		}
		req := tasks.ListRequest{Assignee: in.Assignee, Label: in.Label, Text: in.Text, Cursor: in.Cursor, Limit: in.Limit}
		for _, s := range in.Status {
			req.Statuses = append(req.Statuses, atrium.TaskStatus(s))
		}
		res, err := r.get().List(ctx, req)
		return r.rows(res, err, in.Fields)
	})
}

// ReadyInput pages ready tasks.
type ReadyInput struct {
	Label  string   `json:"label,omitempty"`
	Fields []string `json:"fields,omitempty"`
	Cursor string   `json:"cursor,omitempty"`
	Limit  int      `json:"limit,omitempty"`
}

func taskReadyTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_ready", Title: "Ready tasks",
		Description: "Lists tasks you could start now: open, unassigned, nothing open blocking them; oldest first.",
		Annotations: mcpserver.Reads("Ready tasks"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in ReadyInput) (ListTasksOut, error) {
		if err := tasks.CheckFields(in.Fields); err != nil {
			return ListTasksOut{}, err
		}
		res, err := r.get().Ready(ctx, tasks.ListRequest{Kind: atrium.KindTask, Label: in.Label, Cursor: in.Cursor, Limit: in.Limit})
		return r.rows(res, err, in.Fields)
	})
}

// InboxInput reads the inbox.
type InboxInput struct {
	Ack         string `json:"ack,omitempty" jsonschema:"ack_cursor of your last read: marks those items read"`
	IncludeRead bool   `json:"include_read,omitempty"`
	Limit       int    `json:"limit,omitempty"`
}

func taskInboxTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "task_inbox", Title: "Inbox",
		Description: "Your questions, answers, mentions, assignments and hand-offs, unread first. Pass ack_cursor back as ack once handled.",
		// Acknowledging marks the caller's own items read — their read state,
		// which nobody else sees — so a reader may, and it counts as reading.
		Annotations: mcpserver.Reads("Inbox"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in InboxInput) (tasks.InboxOut, error) {
		res, err := r.get().ReadInbox(ctx, tasks.InboxRequest{Ack: in.Ack, IncludeRead: in.IncludeRead, Limit: in.Limit})
		return res.Output(), err
	})
}
