package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/tasks"
	"github.com/atrium-hq/atrium/web"
)

// taskSite is the browser surface over a fresh store, with a person (dede)
// and an agent (duc) who both write.
type taskSite struct {
	t         *testing.T
	mux       *http.ServeMux
	dede, duc string
	tasks     *tasks.Service
	ids       *identity.Service
	docs      *pages.Service
}

func newTaskSite(t *testing.T) *taskSite {
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	ids := svc.Identity
	token := func(handle string, kind atrium.PrincipalKind) string {
		secret, _, err := ids.CreateToken(context.Background(), identity.TokenRequest{Principal: handle, Kind: kind, Workspace: atrium.DefaultWorkspace, Role: atrium.RoleWriter})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	s := &taskSite{t: t, mux: http.NewServeMux(), dede: token("dede", atrium.KindHuman), duc: token("duc", atrium.KindAgent), tasks: svc.Tasks, ids: ids, docs: svc.Pages}
	(&web.Handler{Auth: &authn.Authenticator{Mode: authn.ModeToken, Identity: ids, Logger: slog.Default()}, Services: svc}).Register(s.mux)
	return s
}

// send makes a request as token's holder; form, if any, is posted.
func (s *taskSite) send(token, method, path string, form url.Values) (int, string, string) {
	s.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, path, body)
	req.Header.Set("Authorization", "Bearer "+token)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, req)
	out, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, rec.Header().Get("Location"), string(out)
}

func (s *taskSite) want(what string, code int, html string, status int, fragments ...string) {
	s.t.Helper()
	if code != status {
		s.t.Errorf("%s: status %d, want %d", what, code, status)
	}
	for _, f := range fragments {
		if !strings.Contains(html, f) {
			s.t.Errorf("%s: the page lacks %q:\n%s", what, f, html)
		}
	}
}

// column is the HTML of one column of the board.
func column(html, status string) string {
	m := regexp.MustCompile(`(?s)<section class="column status-` + status + `".*?</section>`).FindString(html)
	return m
}

// The board, a task's forms and the inbox, without a browser: every form
// does what its tool does, a refused one keeps what was typed, and a stale
// edit shows both versions and saves nothing.
func TestTaskPages(t *testing.T) {
	s := newTaskSite(t)
	code, loc, html := s.send(s.dede, "POST", "/tasks", url.Values{"title": {"Board <b>now</b>"}, "labels": {"web, ui"}, "body": {"Make **it**.<script>x</script>"}})
	if code != http.StatusSeeOther || loc != "/tasks/1" {
		t.Fatalf("create: %d %q %s", code, loc, html)
	}
	code, _, html = s.send(s.dede, "POST", "/tasks", url.Values{"title": {""}, "body": {"kept words"}})
	s.want("a refused new task", code, html, 400, "title is required", "kept words")

	code, _, html = s.send(s.dede, "GET", "/tasks", nil)
	s.want("board", code, html, 200, "Board &lt;b&gt;now&lt;/b&gt;", `action="/tasks/1/claim"`, `data-live-path="#*"`)
	if !strings.Contains(column(html, "open"), "#1") || strings.Contains(column(html, "in_progress"), "#1") {
		t.Fatalf("#1 is not in the open column:\n%s", html)
	}
	code, loc, _ = s.send(s.duc, "POST", "/tasks/1/claim", url.Values{"from": {"board"}})
	if code != http.StatusSeeOther || loc != "/tasks" {
		t.Fatalf("claim: %d %q", code, loc)
	}
	_, _, html = s.send(s.dede, "GET", "/tasks?assignee=duc", nil)
	if !strings.Contains(column(html, "in_progress"), "@duc") || strings.Contains(html, `action="/tasks/1/claim"`) {
		t.Fatalf("after the claim:\n%s", html)
	}
	_, _, html = s.send(s.dede, "GET", "/tasks?label=none-such", nil)
	if strings.Contains(html, "Board &lt;b&gt;") {
		t.Fatal("a label filter shows a task without the label")
	}

	code, _, html = s.send(s.dede, "GET", "/tasks/1", nil)
	s.want("task", code, html, 200, "<strong>it</strong>", "@duc", "web", `data-live-path="#1"`, `name="base_revision" value="2"`,
		// @mention completion: the handle fields offer the workspace's members.
		`list="members"`, `<datalist id="members">`, `<option value="duc">`)
	if strings.Contains(html, "<script>x") {
		t.Fatal("the task's body passed raw HTML")
	}

	// The agent asks the person; the person sees it in the inbox, answers it
	// from the task (the asker filled in), and marks the inbox read.
	if _, err := s.tasks.Ask(s.ctx(s.duc), 1, "dede", "Which columns?"); err != nil {
		t.Fatal(err)
	}
	_, _, html = s.send(s.dede, "GET", "/inbox", nil)
	s.want("inbox", 200, html, 200, "❓ @dede Question: Which columns?", `class="author-ai"`, "asked you on", `name="ack" value="i`, `class="unread-count">1<`)
	_, _, html = s.send(s.dede, "GET", "/tasks/1", nil)
	s.want("question shown", 200, html, 200, "❓ @dede Question: Which columns?", `name="target" required placeholder="who asked" value="duc"`, "@dede <span class=\"muted\">(question)")
	code, loc, _ = s.send(s.dede, "POST", "/tasks/1/answer", url.Values{"target": {"duc"}, "answer": {"Four."}})
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "/tasks/1#comment-") {
		t.Fatalf("answer: %d %q", code, loc)
	}
	_, _, html = s.send(s.dede, "GET", "/inbox", nil)
	ack := regexp.MustCompile(`name="ack" value="(i\d+)"`).FindStringSubmatch(html)
	if ack == nil {
		t.Fatalf("no ack cursor:\n%s", html)
	}
	code, loc, _ = s.send(s.dede, "POST", "/inbox/ack", url.Values{"ack": {ack[1]}})
	if code != http.StatusSeeOther || loc != "/inbox" {
		t.Fatalf("ack: %d %q", code, loc)
	}
	_, _, html = s.send(s.dede, "GET", "/inbox", nil)
	s.want("inbox read", 200, html, 200, `class="unread-count">0<`, "inbox-item kind-question read")

	// A refused comment keeps its text; the other forms post 002's formats.
	code, _, html = s.send(s.dede, "POST", "/tasks/1/comment", url.Values{"type": {"note"}, "body": {"ping @nobody, long words"}})
	s.want("unknown mention", code, html, 400, "@nobody", "ping @nobody, long words</textarea>")
	for _, c := range []struct {
		action string
		form   url.Values
		shown  string
	}{
		{"comment", url.Values{"type": {"clarification"}, "body": {"Columns by status"}}, "🔍 Columns by status"},
		{"status", url.Values{"status": {"Drawing columns"}, "progress": {"30"}}, "📍 Status: Drawing columns"},
		{"ask", url.Values{"target": {"duc"}, "question": {"Colours?"}}, "❓ @duc Question: Colours?"},
		{"blocked", url.Values{"reason": {"No palette"}, "waiting_for": {"duc"}}, "🚫 Blocked: No palette.\n\nWaiting on @duc."},
		{"complete", url.Values{"summary": {"Board drawn"}, "artifact_path": {"web/tasks.go"}}, "✅ Board drawn. See `web/tasks.go`.\n\n@dede Ready for next phase."},
	} {
		code, loc, html := s.send(s.dede, "POST", "/tasks/1/"+c.action, c.form)
		if code != http.StatusSeeOther {
			t.Fatalf("%s: %d %s", c.action, code, html)
		}
		_, _, html = s.send(s.dede, "GET", strings.Split(loc, "#")[0], nil)
		if !strings.Contains(html, template(c.shown)) {
			t.Errorf("%s: the thread lacks %q", c.action, c.shown)
		}
	}
	code, _, html = s.send(s.dede, "POST", "/tasks/1/praise", url.Values{})
	s.want("unknown action", code, html, 404)

	// Two edits from the same revision: the second shows both and keeps its text.
	task, _ := s.tasks.Get(s.ctx(s.dede), 1)
	base := url.Values{"base_revision": {itoa(task.Revision)}, "title": {"Board, renamed by duc"}, "status": {"done"}, "labels": {"web"}, "assignee": {"duc"}, "progress": {"100"}}
	if code, _, html := s.send(s.duc, "POST", "/tasks/1/edit", base); code != http.StatusSeeOther {
		t.Fatalf("first edit: %d %s", code, html)
	}
	mine := url.Values{"base_revision": {itoa(task.Revision)}, "title": {"Board, renamed by dede"}, "body": {"dede's long description"}, "status": {"done"}, "assignee": {"duc"}, "blocked_by": {"#1"}}
	code, _, html = s.send(s.dede, "POST", "/tasks/1/edit", mine)
	s.want("stale edit", code, html, 409, `class="conflict"`, "Board, renamed by duc", `value="Board, renamed by dede"`, "dede&#39;s long description</textarea>",
		`name="base_revision" value="`+itoa(task.Revision+1)+`"`)
	if now, _ := s.tasks.Get(s.ctx(s.dede), 1); now.Title != "Board, renamed by duc" {
		t.Fatalf("a stale edit was saved: %q", now.Title)
	}
	mine.Set("base_revision", itoa(task.Revision+1))
	code, _, html = s.send(s.dede, "POST", "/tasks/1/edit", mine)
	s.want("an edit blocked by itself", code, html, 400, "cannot be blocked by itself")
	mine.Del("blocked_by")
	if code, _, html := s.send(s.dede, "POST", "/tasks/1/edit", mine); code != http.StatusSeeOther {
		t.Fatalf("saving again: %d %s", code, html)
	}
	if now, _ := s.tasks.Get(s.ctx(s.dede), 1); now.Title != "Board, renamed by dede" || now.Body != "dede's long description" {
		t.Fatalf("after saving again: %+v", now)
	}
	code, _, _ = s.send(s.dede, "GET", "/tasks/77", nil)
	if code != 404 {
		t.Errorf("a missing task: %d", code)
	}
}

// template is text as html/template writes it.
func template(s string) string {
	return strings.NewReplacer("&", "&amp;", "'", "&#39;", "<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(s)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ctx is the context of a call made with token.
func (s *taskSite) ctx(token string) context.Context {
	s.t.Helper()
	a, err := s.ids.Authenticate(context.Background(), token, "")
	if err != nil {
		s.t.Fatal(err)
	}
	return atrium.NewContextWithActor(context.Background(), a)
}

// Wikilinks in a task's body and on a desk (its plan and draft) go where the
// page view sends them: to the page when it exists, marked unresolved when
// not. The desk links its todos' files and listens for live updates.
func TestTaskAndDeskLinks(t *testing.T) {
	s := newTaskSite(t)
	dede := s.ctx(s.dede)
	if _, err := s.docs.WritePage(dede, pages.WriteRequest{Path: "Specs/Login Spec.md", Content: "# Login spec\n"}); err != nil {
		t.Fatal(err)
	}
	body := "See [[Login Spec]], [[Specs/Login Spec#Flows|the flows]] and [[Nothing Yet]]."
	if _, err := s.tasks.Create(dede, tasks.CreateRequest{Fields: tasks.Fields{Title: ptr("Linked"), Body: &body}}); err != nil {
		t.Fatal(err)
	}
	code, _, html := s.send(s.dede, "GET", "/tasks/1", nil)
	s.want("task links", code, html, 200, `<a class="wikilink" href="/pages/Specs/Login%20Spec.md">Login Spec</a>`,
		`<a class="wikilink" href="/pages/Specs/Login%20Spec.md#flows">the flows</a>`, `<a class="wikilink unresolved" title="no page is called this yet">Nothing Yet</a>`)

	duc := s.ctx(s.duc)
	if _, err := s.tasks.UpdateDeskPage(duc, "Plan", "---\ntags: [plan]\n---\n# Plan\n\n1. Read [[Login Spec]]\n2. Then [[Later]]\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.tasks.UpdateDeskPage(duc, "Draft", "Notes on [[Specs/Login Spec]]."); err != nil {
		t.Fatal(err)
	}
	todo, err := s.tasks.CreateTodo(duc, "With a file", "", []tasks.TodoFile{{Name: "notes.txt", Data: []byte("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := s.tasks.TodoFiles(duc, todo.Number)
	code, _, html = s.send(s.dede, "GET", "/desk/duc", nil)
	s.want("desk links", code, html, 200, `<li>Read <a class="wikilink" href="/pages/Specs/Login%20Spec.md">Login Spec</a>`,
		`<a class="wikilink unresolved" title="no page is called this yet">Later</a>`, `Notes on <a class="wikilink" href="/pages/Specs/Login%20Spec.md">Specs/Login Spec</a>`,
		`<a href="/api/todos/todo_2/files/`+files[0].ID+`" class="todo-file" download="notes.txt">notes.txt</a>`,
		`data-live-path="Desks/duc/"`, `data-live="todos"`, `data-live="progress"`, `data-live="plan"`, `<script src="/static/live.js" defer></script>`)
	if strings.Contains(html, "tags: [plan]") {
		t.Fatalf("the plan's frontmatter shows on the desk:\n%s", html)
	}
	// A thread too long for the page says what it leaves out.
	for i := range 203 {
		if _, err := s.tasks.Comment(dede, tasks.CommentRequest{Number: 1, Body: fmt.Sprint("comment ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	code, _, html = s.send(s.dede, "GET", "/tasks/1", nil)
	s.want("long thread", code, html, 200, `3 older comments are not shown here, only the newest 200`, "comment 202")
	if strings.Contains(html, ">comment 2<") {
		t.Fatalf("an older comment shows:\n%s", html)
	}
}

func ptr[T any](v T) *T { return &v }
