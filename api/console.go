package api

import (
	"io"
	"net/http"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
)

// The desk (001's console) over REST: the same service calls as the console
// tools, for the UI and scripts. A todo is named as the tools name it (todo_7).
func (h *Handler) registerConsole(route func(string, http.HandlerFunc)) {
	route("GET /api/desk", h.getDesk)
	route("GET /api/desk/{handle}", h.getDesk)
	route("PUT /api/desk/draft", h.putDeskPage("Draft"))
	route("PUT /api/desk/plan", h.putDeskPage("Plan"))
	route("POST /api/desk/progress", h.addProgress)
	route("POST /api/desk/progress/archive", h.archiveProgress)
	route("GET /api/todos", h.listTodos)
	route("POST /api/todos", h.createTodo)
	route("PATCH /api/todos/{id}", h.patchTodo)
	route("POST /api/todos/{id}/files", h.addTodoFile)
	route("GET /api/todos/{id}/files/{file}", h.getTodoFile)
	route("DELETE /api/todos/{id}/files/{file}", h.removeTodoFile)
}

func (h *Handler) getDesk(w http.ResponseWriter, r *http.Request) {
	d, err := h.Services.Tasks.GetDesk(r.Context(), r.PathValue("handle"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, h.Services.Tasks.DeskOutput(d))
}

// contentBody is the body of PUT /api/desk/draft and /api/desk/plan.
type contentBody struct {
	Content string `json:"content"`
}

func (h *Handler) putDeskPage(which string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b contentBody
		if err := decode(w, r, &b); err != nil {
			h.fail(w, r, err)
			return
		}
		p, err := h.Services.Tasks.UpdateDeskPage(r.Context(), which, b.Content)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeJSON(w, http.StatusOK, tasks.DeskPageOut{Path: p.Path, Content: p.Content, Revision: p.Revision})
	}
}

// progressBody is add_progress_item's input.
type progressBody struct {
	Description string     `json:"description"`
	Timestamp   *time.Time `json:"timestamp"`
}

func (h *Handler) addProgress(w http.ResponseWriter, r *http.Request) {
	var b progressBody
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	var at time.Time
	if b.Timestamp != nil {
		at = *b.Timestamp
	}
	it, err := h.Services.Tasks.AddProgress(r.Context(), b.Description, at)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusCreated, map[string]any{"item": it})
}

func (h *Handler) archiveProgress(w http.ResponseWriter, r *http.Request) {
	n, err := h.Services.Tasks.ArchiveProgress(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]int64{"archived": n})
}

// listTodos lists the caller's desk's todos (or ?handle='s).
func (h *Handler) listTodos(w http.ResponseWriter, r *http.Request) {
	d, err := h.Services.Tasks.GetDesk(r.Context(), r.URL.Query().Get("handle"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]any{"todos": h.Services.Tasks.DeskOutput(d).Todos})
}

// todoBody is create_todo's input.
type todoBody struct {
	Title       string `json:"title"`
	Description string `json:"description"`
}

func (h *Handler) createTodo(w http.ResponseWriter, r *http.Request) {
	var b todoBody
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	t, err := h.Services.Tasks.CreateTodo(r.Context(), b.Title, b.Description, nil)
	h.todo(w, r, t, err, http.StatusCreated)
}

// todoPatch is update_todo's input.
type todoPatch struct {
	Progress   *int    `json:"progress"`
	Status     *string `json:"status"`
	StatusDesc *string `json:"statusDesc"`
}

func (h *Handler) patchTodo(w http.ResponseWriter, r *http.Request) {
	var b todoPatch
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	t, err := h.Services.Tasks.UpdateTodo(r.Context(), r.PathValue("id"), b.Progress, b.Status, b.StatusDesc)
	h.todo(w, r, t, err, http.StatusOK)
}

func (h *Handler) todo(w http.ResponseWriter, r *http.Request, t atrium.Task, err error, status int) {
	if err != nil {
		h.fail(w, r, err)
		return
	}
	files, err := h.Services.Tasks.TodoFiles(r.Context(), t.Number)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, status, map[string]any{"todo": h.Services.Tasks.TodoOutput(t, files)})
}

// addTodoFile stores the request body as a file named by ?name=.
func (h *Handler) addTodoFile(w http.ResponseWriter, r *http.Request) {
	data, err := readBody(w, r, 10<<20)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f, err := h.Services.Tasks.AddTodoFile(r.Context(), r.PathValue("id"), tasks.TodoFile{Name: r.URL.Query().Get("name"), MIMEType: r.Header.Get("Content-Type"), Data: data})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	n, _ := tasks.ParseTodoID(r.PathValue("id"))
	h.writeJSON(w, http.StatusCreated, map[string]any{"file": h.Services.Tasks.FileOutput(n, f)})
}

// getTodoFile serves a todo file's bytes, as attachments are served.
func (h *Handler) getTodoFile(w http.ResponseWriter, r *http.Request) {
	f, data, err := h.Services.Tasks.TodoFile(r.Context(), r.PathValue("id"), r.PathValue("file"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	serveFile(w, f.Name, f.MIMEType, f.SHA256, data)
}

func (h *Handler) removeTodoFile(w http.ResponseWriter, r *http.Request) {
	if err := h.Services.Tasks.RemoveTodoFile(r.Context(), r.PathValue("id"), r.PathValue("file")); err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, map[string]string{"removed": r.PathValue("file")})
}

// readBody reads a raw request body of at most limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, maybeTooLarge(err)
	}
	return b, nil
}
