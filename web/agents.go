package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/authn"
)

// agentsView is /agents: the workspace's agents and their sessions.
type agentsView struct {
	view
	Agents    []agents.Agent
	Sessions  []agents.Session
	LastEvent int64
	Form      url.Values // the start form as sent, kept when it was refused
	// Connected says, by handle, over what an agent's MCP connection is
	// up now (001: a dropped connection shows).
	Connected map[string]string
	// Admin shows the form that adds and changes agents (/admin/agents).
	Admin     bool
	Presets   []string
	WakeModes []string
}

func (h *Handler) agentsPage(w http.ResponseWriter, r *http.Request) {
	h.renderAgents(w, r, nil, nil)
}

// adminAgents is /agents with the form that adds and changes agents.
func (h *Handler) adminAgents(w http.ResponseWriter, r *http.Request) {
	if a := atrium.ActorFromContext(r.Context()); a == nil || a.Role != atrium.RoleAdmin {
		h.fail(w, r, atrium.Errorf(atrium.EPermission, "only admins configure agents: a preset runs programs on the server's host"))
		return
	}
	h.renderAgents(w, r, nil, nil)
}

// setAgent adds or changes an agent from the admin form.
func (h *Handler) setAgent(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, atrium.Errorf(atrium.EInvalid, "the form could not be read: %v", err))
		return
	}
	f := r.PostForm
	req := agents.AgentRequest{Handle: f.Get("handle"), Preset: f.Get("preset"), Command: strings.TrimSpace(f.Get("command")), Repo: strings.TrimSpace(f.Get("repo")), Wake: f.Get("wake")}
	if req.Command != "" {
		req.Preset = ""
	}
	for line := range strings.Lines(f.Get("args")) {
		if a := strings.TrimRight(line, "\r\n"); a != "" {
			req.Args = append(req.Args, a)
		}
	}
	if _, err := h.Services.Agents.SetAgent(r.Context(), req); err != nil {
		h.renderAgents(w, r, f, err)
		return
	}
	http.Redirect(w, r, "/admin/agents", http.StatusSeeOther)
}

// removeAgent removes an agent's launch settings.
func (h *Handler) removeAgent(w http.ResponseWriter, r *http.Request) {
	if err := h.Services.Agents.RemoveAgent(r.Context(), r.PathValue("handle")); err != nil {
		h.renderAgents(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/admin/agents", http.StatusSeeOther)
}

func (h *Handler) renderAgents(w http.ResponseWriter, r *http.Request, form url.Values, failed error) {
	ctx := r.Context()
	a := atrium.ActorFromContext(ctx)
	v := &agentsView{Form: form, Connected: map[string]string{}, Presets: agents.PresetNames(), WakeModes: agents.WakeModes,
		Admin: a != nil && a.Role == atrium.RoleAdmin && strings.HasPrefix(r.URL.Path, "/admin/")}
	var err error
	if v.LastEvent, err = h.Services.Activity.Latest(ctx); err != nil {
		h.fail(w, r, err)
		return
	}
	if v.Agents, err = h.Services.Agents.Agents(ctx); err != nil {
		h.fail(w, r, err)
		return
	}
	if v.Sessions, err = h.Services.Agents.Sessions(ctx, 50); err != nil {
		h.fail(w, r, err)
		return
	}
	present, err := h.Services.Tasks.Sessions(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	for _, p := range present.Sessions {
		v.Connected[p.Principal] = p.Transport
	}
	if failed != nil {
		h.renderError(w, r, failed, "agents", v)
		return
	}
	h.render(w, r, http.StatusOK, "agents", v)
}

// startAgent starts a session from the form and shows its terminal.
func (h *Handler) startAgent(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, atrium.Errorf(atrium.EInvalid, "the form could not be read: %v", err))
		return
	}
	req := agents.StartRequest{Agent: r.PostForm.Get("agent")}
	if n := strings.TrimPrefix(strings.TrimSpace(r.PostForm.Get("task")), "#"); n != "" {
		var err error
		if req.Task, err = strconv.ParseInt(n, 10, 64); err != nil || req.Task <= 0 {
			h.renderAgents(w, r, r.PostForm, atrium.Errorf(atrium.EInvalid, "the task is a number, like 12, not %q", n))
			return
		}
	}
	s, err := h.Services.Agents.Start(r.Context(), req)
	if err != nil {
		h.renderAgents(w, r, r.PostForm, err)
		return
	}
	http.Redirect(w, r, "/sessions/"+url.PathEscape(s.ID), http.StatusSeeOther)
}

// sessionView is /sessions/{id}: one session and its live terminal.
type sessionView struct {
	view
	agents.Session
	Live bool // this replica runs it: the terminal can be opened
	// Diff is what an ended session's branch changed against its base.
	Diff    string
	DiffCut bool
	Merged  string // the merge commit, after a merge
}

func (h *Handler) sessionPage(w http.ResponseWriter, r *http.Request) {
	h.renderSession(w, r, nil)
}

func (h *Handler) renderSession(w http.ResponseWriter, r *http.Request, failed error) {
	s, err := h.Services.Agents.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v := &sessionView{Session: s, Live: s.PID != 0, Merged: r.URL.Query().Get("merged")}
	if s.Branch != "" && !s.EndedAt.IsZero() {
		if v.Diff, v.DiffCut, err = h.Services.Agents.Diff(r.Context(), s.ID); err != nil && atrium.ErrorCode(err) != atrium.EPermission {
			v.Diff = "" // the branch or the repository may be gone: the page says the rest
		}
	}
	if failed != nil {
		h.renderError(w, r, failed, "session", v)
		return
	}
	h.render(w, r, http.StatusOK, "session", v)
}

func (h *Handler) stopSession(w http.ResponseWriter, r *http.Request) {
	if _, err := h.Services.Agents.Stop(r.Context(), r.PathValue("id")); err != nil {
		h.renderSession(w, r, err)
		return
	}
	http.Redirect(w, r, "/sessions/"+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
}

// mergeSession merges an ended session's branch into its base branch.
func (h *Handler) mergeSession(w http.ResponseWriter, r *http.Request) {
	head, err := h.Services.Agents.Merge(r.Context(), r.PathValue("id"))
	if err != nil {
		h.renderSession(w, r, err)
		return
	}
	http.Redirect(w, r, "/sessions/"+url.PathEscape(r.PathValue("id"))+"?merged="+url.QueryEscape(head), http.StatusSeeOther)
}

// removeWorktree removes an ended session's worktree.
func (h *Handler) removeWorktree(w http.ResponseWriter, r *http.Request) {
	if err := h.Services.Agents.RemoveWorktree(r.Context(), r.PathValue("id"), r.PostFormValue("force") == "1"); err != nil {
		h.renderSession(w, r, err)
		return
	}
	http.Redirect(w, r, "/sessions/"+url.PathEscape(r.PathValue("id")), http.StatusSeeOther)
}

// sessionTranscript sends a session's transcript as a file.
func (h *Handler) sessionTranscript(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if a := atrium.ActorFromContext(r.Context()); a == nil || !a.Role.Allows(atrium.RoleWriter) {
		h.fail(w, r, atrium.Errorf(atrium.EPermission, "a session's transcript is for the workspace's writers"))
		return
	}
	p, err := h.Services.Agents.Transcript(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+id+`.log"`)
	w.Header().Set("Cache-Control", "no-store")
	http.ServeFile(w, r, p)
}

// termMessage is what the browser's terminal sends.
type termMessage struct {
	Type string `json:"type"` // input, resize or take
	Data string `json:"data,omitempty"`
	Rows uint16 `json:"rows,omitempty"`
	Cols uint16 `json:"cols,omitempty"`
}

// termWriteTimeout bounds one write to a viewer: a stalled one is let go.
const termWriteTimeout = 10 * time.Second

// sessionTerminal is a session's terminal over a WebSocket: the replay and
// the output as binary messages, control and the end as JSON text; the
// browser sends input, resizes and taking control as JSON text. The
// WebSocket library refuses another origin than the page's.
func (h *Handler) sessionTerminal(w http.ResponseWriter, r *http.Request) {
	v, replay, writer, err := h.Services.Agents.Attach(r.Context(), r.PathValue("id"))
	if err != nil {
		// Before the upgrade: a plain answer a terminal client can print.
		code := h.errorCode(r, err)
		w.Header().Set("X-Atrium-Error-Code", code)
		http.Error(w, atrium.ErrorMessage(err), authn.Status(code))
		return
	}
	defer v.Detach()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept answered the request
	}
	defer c.CloseNow()
	c.SetReadLimit(64 << 10)
	h.streams.Add(1)
	defer h.streams.Done()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-h.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	send := func(typ websocket.MessageType, b []byte) error {
		wctx, done := context.WithTimeout(ctx, termWriteTimeout)
		defer done()
		return c.Write(wctx, typ, b)
	}
	hello, _ := json.Marshal(map[string]any{"type": "hello", "you": v.ID, "writer": writerOf(writer)})
	if send(websocket.MessageText, hello) != nil || send(websocket.MessageBinary, replay) != nil {
		return
	}
	go func() {
		defer cancel()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m termMessage
			if json.Unmarshal(b, &m) != nil {
				continue
			}
			var ferr error
			switch m.Type {
			case "input":
				ferr = v.Input([]byte(m.Data))
			case "resize":
				ferr = v.Resize(m.Rows, m.Cols)
			case "take":
				ferr = v.TakeControl()
			}
			if ferr != nil {
				msg, _ := json.Marshal(map[string]string{"type": "error", "error": atrium.ErrorMessage(ferr), "code": atrium.ErrorCode(ferr)})
				if send(websocket.MessageText, msg) != nil {
					return
				}
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			c.Close(websocket.StatusGoingAway, "closed")
			return
		case f, ok := <-v.C:
			if !ok {
				// Behind: drop it; the browser reconnects to a replay.
				c.Close(websocket.StatusTryAgainLater, "this viewer fell behind: reconnect")
				return
			}
			var err error
			switch {
			case f.Ended:
				msg, _ := json.Marshal(map[string]string{"type": "ended", "state": f.State})
				if send(websocket.MessageText, msg) == nil {
					c.Close(websocket.StatusNormalClosure, "the session ended")
				}
				return
			case f.Control:
				msg, _ := json.Marshal(map[string]any{"type": "control", "writer": f.Writer, "writer_id": f.WriterID})
				err = send(websocket.MessageText, msg)
			default:
				err = send(websocket.MessageBinary, f.Output)
			}
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					h.Services.Log.Debug("terminal viewer gone", "err", err)
				}
				return
			}
		}
	}
}

// writerOf is the JSON of who has control, from Attach's "handle id".
func writerOf(s string) map[string]string {
	handle, id, _ := strings.Cut(s, " ")
	return map[string]string{"handle": handle, "id": id}
}
