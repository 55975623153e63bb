package desktools

import (
	"context"
	"embed"
	"encoding/base64"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/tasks"
)

// Name is the toolset's name as --toolsets and clients' configurations name
// it: "console", from the seed it came from (001's SUMM Console); in Go, in
// the services, the routes and the browser it is the desk.
const Name = "console"

// Desk resource URIs (001's summ:// resources under atrium://).
const (
	TodosURI      = "atrium://todos"
	TodoURIPrefix = tasks.TodoURIPrefix
	DraftURI      = "atrium://draft"
	PlanURI       = "atrium://plan"
	ProgressURI   = "atrium://progress"
	deskMIMEType  = "application/json"
	markdownMIME  = "text/markdown"
	deskSummary   = "Your desk: todos, a draft, a plan and a progress log."
)

//go:embed defs/*.json
var defs embed.FS

// tasksRef reaches the tasks service, which keeps the desks, when a tool is
// called.
type tasksRef struct{ s *mcpserver.Server }

func (r *tasksRef) get() *tasks.Service {
	if r.s.Services() == nil {
		panic("desktools: desk tool called on a server built without services")
	}
	return r.s.Services().Tasks
}

// New is the desk toolset: each agent's todos, draft, plan and progress, and
// who is connected now (001's tools and resources). It keeps who subscribes
// to what, so that a desk's changes reach its owner only, and the presence of
// every session.
func New(s *mcpserver.Server) *mcpserver.Toolset {
	r := &tasksRef{s}
	d := &desk{r: r}
	return &mcpserver.Toolset{
		Name:        Name,
		Description: deskSummary,
		Default:     true,
		Tools: []*mcpserver.Tool{
			getDeskTool(r), createTodoTool(r), updateTodoTool(r), addTodoFileTool(r), removeTodoFileTool(r), archiveTodoTool(r),
			updateDeskPageTool(r, "update_draft", "Update draft", "Draft"), updateDeskPageTool(r, "update_plan", "Update plan", "Plan"),
			addProgressItemTool(r), archiveProgressTool(r),
		},
		Resources: []mcpserver.Resource{
			deskResource(r, TodosURI, "todos", "Todos", "Your open todos.", deskMIMEType, func(d tasks.Desk) (string, error) { return mcpserver.JSONText(r.get().DeskOutput(d).Todos) }),
			deskResource(r, DraftURI, "draft", "Draft", "Your draft (Markdown).", markdownMIME, func(d tasks.Desk) (string, error) { return deskPageText(d.Draft), nil }),
			deskResource(r, PlanURI, "plan", "Plan", "Your work plan (Markdown).", markdownMIME, func(d tasks.Desk) (string, error) { return deskPageText(d.Plan), nil }),
			deskResource(r, ProgressURI, "progress", "Progress", "Today's progress items.", deskMIMEType, func(d tasks.Desk) (string, error) { return mcpserver.JSONText(r.get().DeskOutput(d).Progress) }),
			sessionsResource(r),
		},
		Templates: []mcpserver.ResourceTemplate{todoResource(r), todoFileResource(r)},
		Defs:      defs,
		Updates:   func(ev atrium.Event) []mcpserver.ResourceUpdate { return summUpdates(updates(ev)) },
		Receiving: func(ws int64) mcp.Middleware {
			presence, subscriber := d.presence(ws), d.noteSubscriber(ws)
			return func(next mcp.MethodHandler) mcp.MethodHandler { return presence(subscriber(summReads(next))) }
		},
		Sending: d.deskOnly,
		Run:     d.expirePresence,
		Close:   d.leaveLocal,
	}
}

// desk is the toolset's state: the sessions' presence, and who subscribes.
type desk struct {
	r    *tasksRef
	seen presenceSeen
	subs deskSubscribers
}

func deskPageText(p *atrium.Page) string {
	if p == nil {
		return ""
	}
	return p.Content
}

// DeskInput names a desk.
type DeskInput struct {
	Handle string `json:"handle,omitempty" jsonschema:"whose desk; default yours"`
}

func getDeskTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "get_desk", Title: "Get desk",
		Description: "Your todos, plan, draft and today's progress in one answer.",
		Annotations: mcpserver.Reads("Get desk"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in DeskInput) (tasks.DeskOut, error) {
		d, err := r.get().GetDesk(ctx, in.Handle)
		if err != nil {
			return tasks.DeskOut{}, err
		}
		return r.get().DeskOutput(d), nil
	})
}

// FileInput is a file to attach: text in content, or bytes in content_base64.
type FileInput struct {
	Name          string `json:"name"`
	Content       string `json:"content,omitempty"`
	ContentBase64 string `json:"content_base64,omitempty"`
	MIMEType      string `json:"mime_type,omitempty"`
}

func (f FileInput) file() (tasks.TodoFile, error) {
	data := []byte(f.Content)
	if f.ContentBase64 != "" {
		if f.Content != "" {
			return tasks.TodoFile{}, atrium.Errorf(atrium.EInvalid, "give content or content_base64, not both")
		}
		b, err := base64.StdEncoding.DecodeString(f.ContentBase64)
		if err != nil {
			return tasks.TodoFile{}, atrium.Errorf(atrium.EInvalid, "content_base64 is not valid base64")
		}
		data = b
	}
	return tasks.TodoFile{Name: f.Name, MIMEType: f.MIMEType, Data: data}, nil
}

// TodoOutput is one todo.
type TodoOutput struct {
	Todo tasks.TodoOut `json:"todo"`
}

func (r *tasksRef) todo(ctx context.Context, t atrium.Task, err error) (TodoOutput, error) {
	if err != nil {
		return TodoOutput{}, err
	}
	files, err := r.get().TodoFiles(ctx, t.Number)
	if err != nil {
		return TodoOutput{}, err
	}
	return TodoOutput{Todo: r.get().TodoOutput(t, files)}, nil
}

// CreateTodoInput creates a todo.
type CreateTodoInput struct {
	Title       string      `json:"title"`
	Description string      `json:"description,omitempty"`
	Files       []FileInput `json:"files,omitempty"`
}

func createTodoTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "create_todo", Title: "Create todo",
		Description: "Adds a todo to your desk (it is also a task on the board).",
		Annotations: mcpserver.Writes("Create todo", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in CreateTodoInput) (TodoOutput, error) {
		var files []tasks.TodoFile
		for _, f := range in.Files {
			tf, err := f.file()
			if err != nil {
				return TodoOutput{}, err
			}
			files = append(files, tf)
		}
		t, err := r.get().CreateTodo(ctx, in.Title, in.Description, files)
		return r.todo(ctx, t, err)
	})
}

// UpdateTodoInput changes a todo.
type UpdateTodoInput struct {
	ID         string  `json:"id" jsonschema:"todo_N"`
	Progress   *int    `json:"progress,omitempty" jsonschema:"0-100"`
	Status     *string `json:"status,omitempty" jsonschema:"open, in_progress, blocked, done"`
	StatusDesc *string `json:"statusDesc,omitempty"`
}

func updateTodoTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "update_todo", Title: "Update todo",
		Description: "Updates a todo's progress, status and status description.",
		Annotations: mcpserver.Writes("Update todo", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in UpdateTodoInput) (TodoOutput, error) {
		t, err := r.get().UpdateTodo(ctx, in.ID, in.Progress, in.Status, in.StatusDesc)
		return r.todo(ctx, t, err)
	})
}

// TodoIDInput names a todo.
type TodoIDInput struct {
	ID string `json:"id" jsonschema:"todo_N"`
}

func archiveTodoTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "archive_todo", Title: "Archive todo",
		Description: "Moves a todo to the archive.",
		Annotations: mcpserver.Writes("Archive todo", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in TodoIDInput) (TodoOutput, error) {
		t, err := r.get().ArchiveTodo(ctx, in.ID)
		return r.todo(ctx, t, err)
	})
}

// AddTodoFileInput attaches a file.
type AddTodoFileInput struct {
	ID   string    `json:"id"`
	File FileInput `json:"file"`
}

// FileOutput is an attached file.
type FileOutput struct {
	File tasks.FileOut `json:"file"`
}

func addTodoFileTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "add_todo_file", Title: "Add todo file",
		Description: "Attaches a file to a todo.",
		Annotations: mcpserver.Writes("Add todo file", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in AddTodoFileInput) (FileOutput, error) {
		f, err := in.File.file()
		if err != nil {
			return FileOutput{}, err
		}
		out, err := r.get().AddTodoFile(ctx, in.ID, f)
		if err != nil {
			return FileOutput{}, err
		}
		n, _ := tasks.ParseTodoID(in.ID)
		return FileOutput{File: r.get().FileOutput(n, out)}, nil
	})
}

// RemoveTodoFileInput detaches a file.
type RemoveTodoFileInput struct {
	ID     string `json:"id"`
	FileID string `json:"fileId"`
}

// RemovedOut says what was removed.
type RemovedOut struct {
	Removed string `json:"removed"`
}

func removeTodoFileTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "remove_todo_file", Title: "Remove todo file",
		Description: "Removes a file from a todo.",
		Annotations: mcpserver.Writes("Remove todo file", true, true),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in RemoveTodoFileInput) (RemovedOut, error) {
		return RemovedOut{Removed: in.FileID}, r.get().RemoveTodoFile(ctx, in.ID, in.FileID)
	})
}

// ContentInput is a desk page's new content.
type ContentInput struct {
	Content string `json:"content" jsonschema:"Markdown"`
}

func updateDeskPageTool(r *tasksRef, name, title, which string) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: name, Title: title,
		Description: "Saves your " + strings.ToLower(which) + " (a page with history).",
		Annotations: mcpserver.Writes(title, true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in ContentInput) (tasks.DeskPageOut, error) {
		p, err := r.get().UpdateDeskPage(ctx, which, in.Content)
		return tasks.DeskPageOut{Path: p.Path, Content: p.Content, Revision: p.Revision}, err
	})
}

// ProgressInput logs finished work.
type ProgressInput struct {
	Description string `json:"description"`
	Timestamp   string `json:"timestamp,omitempty" jsonschema:"RFC 3339; default now"`
}

// ProgressOut is a logged item.
type ProgressOut struct {
	Item tasks.ProgressItem `json:"item"`
}

func addProgressItemTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "add_progress_item", Title: "Add progress item",
		Description: "Logs a piece of finished work on today's progress.",
		Annotations: mcpserver.Writes("Add progress item", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in ProgressInput) (ProgressOut, error) {
		var at time.Time
		if in.Timestamp != "" {
			t, err := time.Parse(time.RFC3339Nano, in.Timestamp)
			if err != nil {
				return ProgressOut{}, atrium.Errorf(atrium.EInvalid, "timestamp is an RFC 3339 time like 2026-02-03T10:00:00Z, not %q", in.Timestamp)
			}
			at = t
		}
		it, err := r.get().AddProgress(ctx, in.Description, at)
		return ProgressOut{Item: it}, err
	})
}

// ArchivedOut counts archived items.
type ArchivedOut struct {
	Archived int64 `json:"archived"`
}

func archiveProgressTool(r *tasksRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "archive_progress", Title: "Archive progress",
		Description: "Archives today's progress items, closing the day.",
		Annotations: mcpserver.Writes("Archive progress", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (ArchivedOut, error) {
		n, err := r.get().ArchiveProgress(ctx)
		return ArchivedOut{Archived: n}, err
	})
}

// deskResource is one part of the caller's desk as a resource.
func deskResource(r *tasksRef, uri, name, title, desc, mime string, part func(tasks.Desk) (string, error)) mcpserver.Resource {
	return mcpserver.Resource{
		Def: &mcp.Resource{URI: uri, Name: name, Title: title, Description: desc + " Subscribe to be told when it changes.", MIMEType: mime},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			d, err := r.get().GetDesk(ctx, "")
			if err != nil {
				return nil, err
			}
			text, err := part(d)
			if err != nil {
				return nil, err
			}
			if text == "" {
				// No draft (or plan) yet reads as an empty document. Contents
				// must carry text or blob, and the SDK drops an empty text:
				// an empty Markdown document is one line break.
				text = "\n"
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: text}}}, nil
		},
	}
}

// todoResource is one todo, with its files: atrium://todos/todo_7.
func todoResource(r *tasksRef) mcpserver.ResourceTemplate {
	return mcpserver.ResourceTemplate{
		Def: &mcp.ResourceTemplate{Name: "todo", Title: "Todo", Description: "One todo with its files (atrium://todos/todo_7).",
			MIMEType: deskMIMEType, URITemplate: TodoURIPrefix + "{id}"},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id, _ := strings.CutPrefix(req.Params.URI, TodoURIPrefix)
			n, err := tasks.ParseTodoID(id)
			if err != nil {
				return nil, atrium.Errorf(atrium.ENotFound, "no todo at %s", req.Params.URI)
			}
			t, err := r.get().Get(ctx, n)
			if err == nil && t.Kind != atrium.KindTodo {
				err = atrium.Errorf(atrium.ENotFound, "%s is task #%d, not a todo", id, n)
			}
			if err != nil {
				return nil, err
			}
			out, err := r.todo(ctx, t, nil)
			if err != nil {
				return nil, err
			}
			text, err := mcpserver.JSONText(out.Todo)
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: deskMIMEType, Text: text}}}, nil
		},
	}
}

// todoFileResource is a todo's file, its content: text for text, bytes (a
// blob) for the rest — atrium://todos/todo_7/files/file_x, the uri each file
// of a todo carries.
func todoFileResource(r *tasksRef) mcpserver.ResourceTemplate {
	return mcpserver.ResourceTemplate{
		Def: &mcp.ResourceTemplate{Name: "todo_file", Title: "Todo file", Description: "A todo's file, its content (atrium://todos/todo_7/files/file_x: the uri in each file of a todo).",
			URITemplate: TodoURIPrefix + "{id}/files/{fileId}"},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			rest, _ := strings.CutPrefix(req.Params.URI, TodoURIPrefix)
			id, fileID, ok := strings.Cut(rest, "/files/")
			if !ok || id == "" || fileID == "" || strings.Contains(fileID, "/") {
				return nil, atrium.Errorf(atrium.ENotFound, "no todo file at %s", req.Params.URI)
			}
			f, data, err := r.get().TodoFile(ctx, id, fileID)
			if err != nil {
				return nil, err
			}
			c := &mcp.ResourceContents{URI: req.Params.URI, MIMEType: f.MIMEType}
			if strings.HasPrefix(f.MIMEType, "text/") && utf8.Valid(data) && len(data) > 0 {
				c.Text = string(data)
			} else {
				c.Blob = data
				if c.Blob == nil {
					c.Blob = []byte{}
				}
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
		},
	}
}
