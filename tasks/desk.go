package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// A desk is one principal's console (001): todos — tasks of kind todo
// assigned to them, so they show on the board too —, a draft and a plan —
// pages at a fixed path, so people review a plan with threads and history
// comes free —, and a progress log of dated items, archived a day at a time.

// Desk event kinds; the subject is the desk's owner, @handle.
const (
	EventProgress = "desk.progress"
	EventArchived = "desk.archived"
)

// DeskPage is the path of a desk's draft or plan page.
func DeskPage(handle, which string) string {
	return fmt.Sprintf("Desks/%s/%s.md", handle, which)
}

// maxFile bounds one todo file.
const maxFile = 10 << 20

// TodoID is how 001's tools name a todo: todo_<number>.
func TodoID(n int64) string { return "todo_" + strconv.FormatInt(n, 10) }

// TodoURIPrefix begins the resource URI of a todo (001's summ://todos/{id}).
const TodoURIPrefix = "atrium://todos/"

// TodoURI is todo n as a resource.
func TodoURI(n int64) string { return TodoURIPrefix + TodoID(n) }

// TodoFileURI is file id of todo n as a resource: its content.
func TodoFileURI(n int64, id string) string { return TodoURI(n) + "/files/" + id }

// TodoFilePath is where file id of todo n is downloaded over HTTP.
func TodoFilePath(n int64, id string) string { return "/api/todos/" + TodoID(n) + "/files/" + id }

// ParseTodoID reads a todo's id: todo_7, #7 or 7.
func ParseTodoID(id string) (int64, error) {
	s := strings.TrimSpace(id)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "todo_"), "#")
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, atrium.Errorf(atrium.EInvalid, "todo id is like todo_7 (from create_todo or get_desk), not %q", id)
	}
	return n, nil
}

// todoStatus maps 001's words onto task statuses.
func todoStatus(s string) (atrium.TaskStatus, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "open", "todo", "pending", "not_started":
		return atrium.TaskOpen, nil
	case "in_progress", "in-progress", "doing", "active", "started":
		return atrium.TaskInProgress, nil
	case "blocked":
		return atrium.TaskBlocked, nil
	case "done", "completed", "complete", "finished":
		return atrium.TaskDone, nil
	case "archived":
		return atrium.TaskArchived, nil
	}
	return "", atrium.Errorf(atrium.EInvalid, "status is open, in_progress, blocked or done, not %q", s)
}

// TodoFile is a file to attach to a todo.
type TodoFile struct {
	Name     string
	MIMEType string
	Data     []byte
}

// CreateTodo puts a todo on the caller's desk, with files if given.
func (s *Service) CreateTodo(ctx context.Context, title, description string, files []TodoFile) (atrium.Task, error) {
	a, err := writer(ctx)
	if err != nil {
		return atrium.Task{}, err
	}
	t, err := s.Create(ctx, CreateRequest{Kind: atrium.KindTodo, Fields: Fields{Title: &title, Body: &description, Assignee: &a.Principal.Handle}})
	if err != nil {
		return t, err
	}
	for _, f := range files {
		if _, err := s.AddTodoFile(ctx, TodoID(t.Number), f); err != nil {
			return t, err
		}
	}
	return t, nil
}

// UpdateTodo changes a todo's progress, status and status text (001's statusDesc).
func (s *Service) UpdateTodo(ctx context.Context, id string, progress *int, status, statusDesc *string) (atrium.Task, error) {
	if _, err := writer(ctx); err != nil { // who may, before what they sent
		return atrium.Task{}, err
	}
	n, err := ParseTodoID(id)
	if err != nil {
		return atrium.Task{}, err
	}
	f := Fields{Progress: progress, StatusText: statusDesc}
	if status != nil {
		st, err := todoStatus(*status)
		if err != nil {
			return atrium.Task{}, err
		}
		f.Status = &st
	}
	return s.Update(ctx, UpdateRequest{Number: n, Fields: f, todoID: id})
}

// notTodo refuses a console tool aimed at a plain task.
func notTodo(id string, t atrium.Task) error {
	return atrium.Errorf(atrium.EInvalid, "%s is task #%d, not a todo: the todo tools change only todos (task_update changes tasks)", strings.TrimSpace(id), t.Number).
		WithDetails(map[string]any{"kind": string(t.Kind)})
}

// lockTodo reads todo id for a change by a: it must be a todo, and a must
// be allowed to change it.
func lockTodo(ctx context.Context, tx *store.Tx, a *atrium.Actor, id string, n int64) (atrium.Task, error) {
	t, err := tx.LockTask(ctx, a.Workspace.ID, n)
	if err != nil {
		return t, err
	}
	if t.Kind != atrium.KindTodo {
		return t, notTodo(id, t)
	}
	return t, mayChange(a, t)
}

// ArchiveTodo moves a todo to the archive.
func (s *Service) ArchiveTodo(ctx context.Context, id string) (atrium.Task, error) {
	if _, err := writer(ctx); err != nil {
		return atrium.Task{}, err
	}
	n, err := ParseTodoID(id)
	if err != nil {
		return atrium.Task{}, err
	}
	st := atrium.TaskArchived
	return s.Update(ctx, UpdateRequest{Number: n, Fields: Fields{Status: &st}, todoID: id})
}

// AddTodoFile attaches a file to a todo.
func (s *Service) AddTodoFile(ctx context.Context, id string, f TodoFile) (File, error) {
	a, err := writer(ctx)
	if err != nil {
		return File{}, err
	}
	n, err := ParseTodoID(id)
	if err != nil {
		return File{}, err
	}
	name := strings.TrimSpace(f.Name)
	switch {
	case name == "" || len(name) > 255 || strings.ContainsAny(name, "/\\\x00\r\n"):
		return File{}, atrium.Errorf(atrium.EInvalid, "file name is required: a plain name without slashes, at most 255 bytes")
	case len(f.Data) > maxFile:
		return File{}, atrium.Errorf(atrium.ETooLarge, "file is %d bytes; at most %d", len(f.Data), maxFile)
	}
	mime := f.MIMEType
	if mime == "" {
		mime = http.DetectContentType(f.Data)
	}
	sum := sha256.Sum256(f.Data)
	file := store.TaskFile{Name: name, MIMEType: mime, Size: int64(len(f.Data)), SHA256: hex.EncodeToString(sum[:])}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		t, err := lockTodo(ctx, tx, a, id, n)
		if err != nil {
			return err
		}
		if err := tx.AddTaskFile(ctx, a.Workspace.ID, t.ID, a.Principal.ID, &file, f.Data); err != nil {
			return err
		}
		return emit(ctx, tx, a, EventUpdated, t, Event{})
	})
	return File(file), err
}

// RemoveTodoFile detaches a file from a todo.
func (s *Service) RemoveTodoFile(ctx context.Context, id, fileID string) error {
	a, err := writer(ctx)
	if err != nil {
		return err
	}
	n, err := ParseTodoID(id)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		t, err := lockTodo(ctx, tx, a, id, n)
		if err != nil {
			return err
		}
		if err := tx.RemoveTaskFile(ctx, t.ID, strings.TrimSpace(fileID)); err != nil {
			return err
		}
		return emit(ctx, tx, a, EventUpdated, t, Event{})
	})
}

// TodoFile returns file fileID of todo id with its content. Whoever may
// read the todo may read its files.
func (s *Service) TodoFile(ctx context.Context, id, fileID string) (File, []byte, error) {
	a, err := reader(ctx)
	if err != nil {
		return File{}, nil, err
	}
	n, err := ParseTodoID(id)
	if err != nil {
		return File{}, nil, err
	}
	fileID = strings.TrimSpace(fileID)
	var (
		file store.TaskFile
		data []byte
	)
	err = s.db.View(ctx, func(tx *store.Tx) error {
		t, err := tx.TaskByNumber(ctx, a.Workspace.ID, n)
		if err != nil {
			return err
		}
		if t.Kind != atrium.KindTodo {
			return notTodo(id, t)
		}
		files, err := tx.TaskFiles(ctx, t.ID)
		if err != nil {
			return err
		}
		for _, f := range files {
			if f.ID == fileID {
				file = f
				data, err = tx.TaskFileData(ctx, t.ID, f.ID)
				return err
			}
		}
		return atrium.Errorf(atrium.ENotFound, "File not found on %s: %s (get_desk or the todo lists its files)", TodoID(n), fileID)
	})
	return File(file), data, err
}

// TodoFiles lists a todo's files.
func (s *Service) TodoFiles(ctx context.Context, n int64) ([]File, error) {
	a, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.TaskFile
	err = s.db.View(ctx, func(tx *store.Tx) error {
		t, err := tx.TaskByNumber(ctx, a.Workspace.ID, n)
		if err != nil {
			return err
		}
		out, err = tx.TaskFiles(ctx, t.ID)
		return err
	})
	return fileList(out), err
}

// UpdateDeskPage saves the caller's draft or plan. The page keeps every
// revision, so a save never loses what was there (read its history).
func (s *Service) UpdateDeskPage(ctx context.Context, which, content string) (atrium.Page, error) {
	a, err := writer(ctx)
	if err != nil {
		return atrium.Page{}, err
	}
	if s.Pages == nil {
		return atrium.Page{}, atrium.Errorf(atrium.EUnavailable, "this server has no pages service for desks")
	}
	res, err := s.Pages.WritePage(ctx, pages.WriteRequest{Path: DeskPage(a.Principal.Handle, which), Content: content, Overwrite: true})
	return res.Page, err
}

// AddProgress logs an item of finished work on the caller's desk; at is
// when it was done (now when zero).
func (s *Service) AddProgress(ctx context.Context, description string, at time.Time) (ProgressItem, error) {
	a, err := writer(ctx)
	if err != nil {
		return ProgressItem{}, err
	}
	description = strings.TrimSpace(description)
	switch {
	case description == "":
		return ProgressItem{}, atrium.Errorf(atrium.EInvalid, "description is required: what was done")
	case len(description) > 4000:
		return ProgressItem{}, atrium.Errorf(atrium.EInvalid, "description is %d bytes; at most 4000", len(description))
	}
	it := store.ProgressItem{Description: description, DoneAt: at}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.AddProgress(ctx, a.Workspace.ID, a.Principal.ID, &it); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventProgress, "@"+a.Principal.Handle, map[string]any{"id": it.ID, "desk": a.Principal.Handle})
	})
	return ProgressItem(it), err
}

// ArchiveProgress closes the caller's day: its progress items are archived.
func (s *Service) ArchiveProgress(ctx context.Context) (int64, error) {
	a, err := writer(ctx)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.db.Update(ctx, func(tx *store.Tx) (err error) {
		if n, err = tx.ArchiveProgress(ctx, a.Workspace.ID, a.Principal.ID); err != nil || n == 0 {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventArchived, "@"+a.Principal.Handle, map[string]any{"archived": n, "desk": a.Principal.Handle})
	})
	return n, err
}

// Desk is one principal's console in one answer.
type Desk struct {
	Handle   string
	Todos    []atrium.Task
	Files    map[int64][]File // by task number
	Plan     *atrium.Page
	Draft    *atrium.Page
	Progress []ProgressItem
	// MoreTodos and MoreProgress say that the desk holds more than one
	// answer carries (maxDeskTodos, maxDeskProgress).
	MoreTodos, MoreProgress bool
}

// maxDeskTodos and maxDeskProgress bound a desk's answer.
const (
	maxDeskTodos    = 100
	maxDeskProgress = 500
)

// GetDesk returns the desk of handle ("" for the caller's): open todos with
// their files, plan, draft and the progress not yet archived.
func (s *Service) GetDesk(ctx context.Context, handle string) (Desk, error) {
	a, err := reader(ctx)
	if err != nil {
		return Desk{}, err
	}
	out := Desk{Files: map[int64][]File{}}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		owner := a.Principal
		if h := strings.TrimPrefix(strings.TrimSpace(handle), "@"); h != "" && h != owner.Handle {
			p, err := member(ctx, tx, a, h)
			if err != nil {
				return atrium.Errorf(atrium.ENotFound, "no desk for @%s in workspace %s", h, a.Workspace.Name)
			}
			owner = p
		}
		out.Handle = owner.Handle
		todos, err := tx.Tasks(ctx, store.TaskFilter{Workspace: a.Workspace.ID, Kind: atrium.KindTodo, Assignee: owner.ID,
			Statuses: []atrium.TaskStatus{atrium.TaskOpen, atrium.TaskInProgress, atrium.TaskBlocked, atrium.TaskDone}, Limit: maxDeskTodos + 1})
		if err != nil {
			return err
		}
		if len(todos) > maxDeskTodos {
			todos, out.MoreTodos = todos[:maxDeskTodos], true
		}
		out.Todos = todos
		ids := make([]int64, len(todos))
		for i, t := range todos {
			ids[i] = t.ID
		}
		files, err := tx.FilesOfTasks(ctx, ids)
		if err != nil {
			return err
		}
		for _, t := range todos {
			if fs := files[t.ID]; len(fs) > 0 {
				out.Files[t.Number] = fileList(fs)
			}
		}
		for _, d := range []struct {
			which string
			out   **atrium.Page
		}{{"Plan", &out.Plan}, {"Draft", &out.Draft}} {
			p, err := tx.PageByPath(ctx, a.Workspace.ID, DeskPage(owner.Handle, d.which))
			switch {
			case atrium.ErrorCode(err) == atrium.ENotFound:
			case err != nil:
				return err
			default:
				*d.out = &p
			}
		}
		progress, err := tx.Progress(ctx, a.Workspace.ID, owner.ID, maxDeskProgress+1)
		if err != nil {
			return err
		}
		out.Progress = progressList(progress)
		if len(out.Progress) > maxDeskProgress {
			out.Progress, out.MoreProgress = out.Progress[:maxDeskProgress], true
		}
		return nil
	})
	return out, err
}
