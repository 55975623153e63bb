package web

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/tasks"
)

// A principal's desk (001's console) in the browser: todos with progress
// bars, the plan and the draft (pages, so they open with history and
// threads), and the progress log. The owner adds todos and progress here;
// anyone of the workspace may look.

type deskView struct {
	view
	tasks.DeskOut
	Mine      bool
	PlanHTML  template.HTML
	DraftHTML template.HTML
	PlanPath  string
	DraftPath string
	Statuses  []string
	// Sessions are the desk owner's newest agent sessions, one per task;
	// Connected says over what its MCP connection is up ("" when down).
	Sessions  []agents.Session
	Connected string
	// LastEvent is where live updates start: a todo, the progress log, the
	// plan or the draft changed by an agent shows without a reload.
	LastEvent int64
}

// myDesk sends a signed-in person to their own desk.
func (h *Handler) myDesk(w http.ResponseWriter, r *http.Request) {
	a := atrium.ActorFromContext(r.Context())
	if a == nil || a.Role == "" {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/desk/"+url.PathEscape(a.Principal.Handle), http.StatusSeeOther)
}

func (h *Handler) desk(w http.ResponseWriter, r *http.Request) {
	h.showDesk(w, r, http.StatusOK, "")
}

func (h *Handler) showDesk(w http.ResponseWriter, r *http.Request, status int, problem string) {
	ctx := r.Context()
	// Read first, so that a change made while the page renders is one the
	// live updates bring.
	last, err := h.Services.Activity.Latest(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d, err := h.Services.Tasks.GetDesk(ctx, r.PathValue("handle"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	a := atrium.ActorFromContext(ctx)
	v := &deskView{DeskOut: h.Services.Tasks.DeskOutput(d), Mine: a != nil && a.Principal.Handle == d.Handle, LastEvent: last,
		PlanPath: tasks.DeskPage(d.Handle, "Plan"), DraftPath: tasks.DeskPage(d.Handle, "Draft"),
		Statuses: []string{"open", "in_progress", "blocked", "done"}}
	v.Error = problem
	tasksSeen := map[int64]bool{}
	all, err := h.Services.Agents.Sessions(ctx, 200)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, s := range all {
		if s.Agent == d.Handle && !tasksSeen[s.Task] && len(v.Sessions) < 5 {
			tasksSeen[s.Task] = true
			v.Sessions = append(v.Sessions, s)
		}
	}
	present, err := h.Services.Tasks.Sessions(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, p := range present.Sessions {
		if p.Principal == d.Handle {
			v.Connected = p.Transport
		}
	}
	for _, p := range []struct {
		page *tasks.DeskPageOut
		out  *template.HTML
	}{{v.Plan, &v.PlanHTML}, {v.Draft, &v.DraftHTML}} {
		if p.page == nil {
			continue
		}
		_, body, _ := markdown.Split(p.page.Content)
		if *p.out, err = h.renderLinked(r, p.page.Path, body); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	h.render(w, r, status, "desk", v)
}

// deskDone answers a desk form: back to the desk, or the desk saying why not.
func (h *Handler) deskDone(w http.ResponseWriter, r *http.Request, err error, anchor string) {
	a := atrium.ActorFromContext(r.Context())
	if err == nil {
		http.Redirect(w, r, "/desk/"+url.PathEscape(a.Principal.Handle)+"#"+anchor, http.StatusSeeOther)
		return
	}
	if code := atrium.ErrorCode(err); code == atrium.EInternal || code == atrium.EUnauthenticated || code == atrium.EPermission {
		h.fail(w, r, err)
		return
	}
	r.SetPathValue("handle", a.Principal.Handle)
	h.showDesk(w, r, http.StatusBadRequest, atrium.ErrorMessage(err))
}

func (h *Handler) deskAddTodo(w http.ResponseWriter, r *http.Request) {
	_, err := h.Services.Tasks.CreateTodo(r.Context(), r.PostFormValue("title"), r.PostFormValue("description"), nil)
	h.deskDone(w, r, err, "todos")
}

func (h *Handler) deskUpdateTodo(w http.ResponseWriter, r *http.Request) {
	var progress *int
	if p := strings.TrimSpace(r.PostFormValue("progress")); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			h.deskDone(w, r, atrium.Errorf(atrium.EInvalid, "progress is a number from 0 to 100, not %q", p), "todos")
			return
		}
		progress = &n
	}
	status, desc := r.PostFormValue("status"), r.PostFormValue("status_desc")
	var err error
	if r.PostFormValue("archive") != "" {
		_, err = h.Services.Tasks.ArchiveTodo(r.Context(), r.PathValue("id"))
	} else {
		_, err = h.Services.Tasks.UpdateTodo(r.Context(), r.PathValue("id"), progress, &status, &desc)
	}
	h.deskDone(w, r, err, "todos")
}

func (h *Handler) deskAddProgress(w http.ResponseWriter, r *http.Request) {
	_, err := h.Services.Tasks.AddProgress(r.Context(), r.PostFormValue("description"), time.Time{})
	h.deskDone(w, r, err, "progress")
}

func (h *Handler) deskArchiveProgress(w http.ResponseWriter, r *http.Request) {
	_, err := h.Services.Tasks.ArchiveProgress(r.Context())
	h.deskDone(w, r, err, "progress")
}
