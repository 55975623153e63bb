package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// agentSession connects an agent (kind agent, a writer) over MCP.
func agentSession(t *testing.T, srv *server, handle string) *mcp.ClientSession {
	t.Helper()
	out, errOut, code := srv.cli(t, nil, "token", "create", "--principal", handle, "--kind", "agent", "--workspace", "default", "--role", "writer")
	if code != 0 {
		t.Fatalf("agent token: %s", errOut)
	}
	return connectHTTP(t, srv.MCP(), strings.TrimSpace(out), "2025-11-25")
}

func mustTool(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	res := callTool(t, cs, tool, args)
	if res.IsError {
		t.Fatalf("%s: %+v", tool, res.StructuredContent)
	}
	return structured(t, res)
}

// signIn opens the login link and then path.
func (b *browser) signIn(srv *server, path, visible string) {
	b.t.Helper()
	b.do("sign in and open "+path, chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+path), chromedp.WaitVisible(chromedp.CSS(visible)))
}

// The board shows tasks by status; claiming an open one moves it to in
// progress under the person's name; the new-task form makes one.
func TestBrowserTasksBoardAndClaim(t *testing.T) {
	srv := startServe(t, "")
	duc := agentSession(t, srv, "duc")
	for _, title := range []string{"Open and free", "Taken by duc", "Finished"} {
		mustTool(t, duc, "task_create", map[string]any{"title": title, "labels": []string{"web"}})
	}
	mustTool(t, duc, "task_claim", map[string]any{"issue_number": 2})
	mustTool(t, duc, "task_update", map[string]any{"issue_number": 3, "status": "done"})

	b := newBrowser(t)
	b.signIn(srv, "/tasks", ".board")
	col := func(status string) string {
		return read(b, "column "+status, chromedp.Text(chromedp.CSS(".column.status-"+status)))
	}
	if open, doing, done := col("open"), col("in_progress"), col("done"); !strings.Contains(open, "Open and free") || !strings.Contains(doing, "Taken by duc") ||
		!strings.Contains(done, "Finished") || strings.Contains(open, "Taken") {
		t.Fatalf("columns: open %q, in progress %q, done %q", open, doing, done)
	}
	if n := read(b, "claim buttons", chromedp.Evaluate[int](`document.querySelectorAll(".claim button").length`)); n != 1 {
		t.Fatalf("%d claim buttons; only the open, unassigned task has one", n)
	}
	b.do("claim", chromedp.Click(chromedp.CSS(`#task-1 .claim button`)), chromedp.WaitVisible(chromedp.CSS(`.column.status-in_progress #task-1`)))
	if doing := col("in_progress"); !strings.Contains(doing, "@admin") {
		t.Fatalf("after the claim, in progress: %q", doing)
	}
	task := mustTool(t, duc, "task_get_context", map[string]any{"issue_number": 1})["issue"].(map[string]any)
	if task["assignee"] != "admin" || task["status"] != "in_progress" {
		t.Fatalf("after the claim: %v", task)
	}

	// The board is live: an agent's new task, claim and completion move its
	// card without a reload, and the filter the person typed stays.
	b.do("type a filter", chromedp.SetValue(chromedp.CSS(`.task-filters input[name=text]`), "half-typed"))
	start := time.Now()
	mustTool(t, duc, "task_create", map[string]any{"title": "Made by duc while watched"})
	b.until("the agent's task appears", `document.querySelector('.column.status-open #task-4') !== null && document.querySelector('#task-4').innerText.includes('Made by duc while watched')`)
	t.Logf("the agent's new task showed on the board in %v", time.Since(start))
	mustTool(t, duc, "task_claim", map[string]any{"issue_number": 4})
	b.until("the claimed card moves", `document.querySelector('.column.status-in_progress #task-4') !== null && document.querySelector('.column.status-open #task-4') === null`)
	mustTool(t, duc, "task_signal_complete", map[string]any{"issue_number": 4, "summary": "Done while watched"})
	b.until("the completed card moves", `document.querySelector('.column.status-done #task-4') !== null`)
	if v := read(b, "typed filter", chromedp.Value(chromedp.CSS(`.task-filters input[name=text]`))); v != "half-typed" {
		t.Fatalf("a live update lost the person's filter: %q", v)
	}
	b.do("clear the filter", chromedp.Evaluate[chromedp.Void](`document.querySelector('.task-filters input[name=text]').value = ''`))

	b.do("filter by assignee", chromedp.SetValue(chromedp.CSS(`.task-filters input[name=assignee]`), "duc"),
		chromedp.Submit(chromedp.CSS(`.task-filters input[name=assignee]`)), chromedp.WaitVisible(chromedp.CSS(`.task-filters a[href="/tasks"]`)))
	if all := read(b, "filtered board", chromedp.Text(chromedp.CSS(".columns"))); strings.Contains(all, "Open and free") || !strings.Contains(all, "Taken by duc") {
		t.Fatalf("filtered by duc: %q", all)
	}

	b.do("new task", chromedp.Navigate(srv.URL+"/tasks"), chromedp.Click(chromedp.CSS(".new-task summary")),
		chromedp.SetValue(chromedp.CSS(`.new-task input[name=title]`), "Made in the browser"),
		chromedp.SetValue(chromedp.CSS(`.new-task input[name=labels]`), "ui, web"),
		chromedp.Submit(chromedp.CSS(`.new-task input[name=title]`)), chromedp.WaitVisible(chromedp.CSS("article.task")))
	if h := read(b, "new task heading", chromedp.Text(chromedp.CSS("article.task h1"))); h != "Made in the browser" {
		t.Fatalf("new task heading %q", h)
	}
	if made := mustTool(t, duc, "task_get_context", map[string]any{"issue_number": 5})["issue"].(map[string]any); made["title"] != "Made in the browser" {
		t.Fatalf("over MCP the new task is %v", made)
	}
}

// An agent's comment, posted over MCP while the task is open, appears in the
// thread without a reload and without touching what the person is typing;
// then the person answers, asks, marks it blocked and completes it.
func TestBrowserTasksThreadLiveAndForms(t *testing.T) {
	srv := startServe(t, "")
	duc := agentSession(t, srv, "duc")
	mustTool(t, duc, "task_create", map[string]any{"title": "Draw the board", "body": "Four **columns**.", "specs": []string{"Specs/Board.md"}})
	mustTool(t, duc, "task_claim", map[string]any{"issue_number": 1})
	callTool(t, duc, "write_page", map[string]any{"path": "Specs/Board.md", "content": "# Board\n"})

	b := newBrowser(t)
	b.signIn(srv, "/tasks/1", "article.task")
	if spec := read(b, "spec link", chromedp.AttributeValue(chromedp.CSS(`article.task a[href^="/pages/"]`), "href")); spec.Value != "/pages/Specs/Board.md" {
		t.Fatalf("spec link %+v", spec)
	}
	b.do("type, unsent", chromedp.Evaluate[chromedp.Void](`window.loadedOnce = true`),
		chromedp.SetValue(chromedp.CSS(`#form-comment textarea[name=body]`), "the person's unsent words"))
	time.Sleep(500 * time.Millisecond) // EventSource connects
	var lat []time.Duration
	for i := range 3 {
		text := fmt.Sprintf("duc's status, round %d", i)
		start := time.Now()
		mustTool(t, duc, "task_update_status", map[string]any{"issue_number": 1, "status": text, "progress": 10 * (i + 1)})
		b.do("see round "+fmt.Sprint(i), chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector(".task-comments").innerText.includes(%q)`, "📍 Status: "+text)))
		lat = append(lat, time.Since(start))
	}
	t.Logf("agent comment to browser: %v", lat)
	if same := read(b, "no reload", chromedp.Evaluate[bool](`window.loadedOnce === true`)); !same {
		t.Fatal("the page reloaded instead of updating in place")
	}
	if typed := read(b, "typed text", chromedp.Value(chromedp.CSS(`#form-comment textarea[name=body]`))); typed != "the person's unsent words" {
		t.Fatalf("the typed comment became %q", typed)
	}
	if badge := read(b, "badge", chromedp.Text(chromedp.CSS(".task-comment:last-child .byline"))); !strings.Contains(badge, "AI") || !strings.Contains(badge, "duc") {
		t.Fatalf("the agent's comment byline %q", badge)
	}
	if status := read(b, "status text", chromedp.Text(chromedp.CSS("article.task .task-fields"))); !strings.Contains(status, "duc's status, round 2") || !strings.Contains(status, "30%") {
		t.Fatalf("the task's fields did not follow: %q", status)
	}

	// duc asks; the answer form names duc already.
	mustTool(t, duc, "task_ask_question", map[string]any{"issue_number": 1, "target": "admin", "question": "Which colours?"})
	b.do("the question", chromedp.Poll[chromedp.Void](`document.querySelector(".task-comments").innerText.includes("❓ @admin Question: Which colours?")`),
		chromedp.Navigate(srv.URL+"/tasks/1"), chromedp.WaitVisible(chromedp.CSS("#form-answer")))
	if to := read(b, "answer target", chromedp.Value(chromedp.CSS(`#form-answer input[name=target]`))); to != "duc" {
		t.Fatalf("the answer goes to %q", to)
	}
	last := func() string {
		return read(b, "last comment", chromedp.Text(chromedp.CSS(".task-comment:last-child .content")))
	}
	b.do("answer", chromedp.SetValue(chromedp.CSS(`#form-answer textarea`), "Green and grey."), chromedp.Submit(chromedp.CSS(`#form-answer textarea`)),
		chromedp.WaitVisible(chromedp.CSS("article.task")))
	if c := last(); c != "💬 @duc Answer: Green and grey." {
		t.Fatalf("answer shown as %q", c)
	}
	if waits := mustTool(t, duc, "task_get_context", map[string]any{"issue_number": 1})["waiting_for"].([]any); len(waits) != 0 {
		t.Fatalf("still waiting on %v", waits)
	}
	b.do("ask", chromedp.SetValue(chromedp.CSS(`#form-ask input[name=target]`), "duc"), chromedp.SetValue(chromedp.CSS(`#form-ask textarea`), "Mobile too?"),
		chromedp.Submit(chromedp.CSS(`#form-ask textarea`)), chromedp.WaitVisible(chromedp.CSS("article.task")))
	if c := last(); c != "❓ @duc Question: Mobile too?" {
		t.Fatalf("question shown as %q", c)
	}
	b.do("blocked", chromedp.SetValue(chromedp.CSS(`#form-blocked textarea`), "No palette yet"), chromedp.SetValue(chromedp.CSS(`#form-blocked input[name=waiting_for]`), "duc"),
		chromedp.Submit(chromedp.CSS(`#form-blocked textarea`)), chromedp.WaitVisible(chromedp.CSS("article.task .status-blocked")))
	if c := last(); c != "🚫 Blocked: No palette yet.\n\nWaiting on @duc." {
		t.Fatalf("blocked shown as %q", c)
	}
	if labels := read(b, "labels", chromedp.Text(chromedp.CSS("article.task .task-fields"))); !strings.Contains(labels, "blocked:agent") {
		t.Fatalf("no blocked:agent label: %q", labels)
	}
	b.do("complete", chromedp.SetValue(chromedp.CSS(`#form-complete textarea`), "Board drawn"), chromedp.SetValue(chromedp.CSS(`#form-complete input[name=artifact_path]`), "web/tasks.go"),
		chromedp.Submit(chromedp.CSS(`#form-complete textarea`)), chromedp.WaitVisible(chromedp.CSS("article.task .status-done")))
	if c := last(); c != "✅ Board drawn. See `web/tasks.go`.\n\n@duc Ready for next phase." {
		t.Fatalf("completion shown as %q", c)
	}
	if typed := read(b, "typed text after posting", chromedp.Value(chromedp.CSS(`#form-comment textarea[name=body]`))); typed != "" {
		t.Logf("the comment box after other forms: %q", typed)
	}

	// An edit on a stale revision saves nothing and shows both.
	b.do("open the editor", chromedp.Click(chromedp.CSS("#edit summary")), chromedp.SetValue(chromedp.CSS(`#form-edit input[name=title]`), "The person's title"))
	mustTool(t, duc, "task_update", map[string]any{"issue_number": 1, "title": "duc's title"})
	b.do("save on a stale revision", chromedp.Submit(chromedp.CSS(`#form-edit input[name=title]`)), chromedp.WaitVisible(chromedp.CSS("#conflict")))
	if mine, theirs := read(b, "mine", chromedp.Value(chromedp.CSS(`#form-edit input[name=title]`))), read(b, "theirs", chromedp.Text(chromedp.CSS("#conflict"))); mine != "The person's title" || !strings.Contains(theirs, "duc's title") {
		t.Fatalf("conflict: mine %q, theirs %q", mine, theirs)
	}
	b.do("save again", chromedp.Submit(chromedp.CSS(`#form-edit input[name=title]`)), chromedp.WaitVisible(chromedp.CSS("article.task")))
	if h := read(b, "title", chromedp.Text(chromedp.CSS("article.task h1"))); h != "The person's title" {
		t.Fatalf("after saving again: %q", h)
	}
}

// A question to the person waits in their inbox, marked as an agent's, and
// "mark all read" marks it read.
func TestBrowserTasksInbox(t *testing.T) {
	srv := startServe(t, "")
	duc := agentSession(t, srv, "duc")
	mustTool(t, duc, "task_create", map[string]any{"title": "Pick colours"})
	mustTool(t, duc, "task_ask_question", map[string]any{"issue_number": 1, "target": "admin", "question": "Green or blue?"})

	b := newBrowser(t)
	b.signIn(srv, "/inbox", ".inbox-items")
	item := read(b, "item", chromedp.Text(chromedp.CSS(".inbox-item.unread")))
	if !strings.Contains(item, "AI duc") || !strings.Contains(item, "❓ @admin Question: Green or blue?") || !strings.Contains(item, "#1 Pick colours") {
		t.Fatalf("inbox item %q", item)
	}
	// Another question arrives while the inbox is open: it shows up live.
	time.Sleep(500 * time.Millisecond)
	mustTool(t, duc, "task_post_comment", map[string]any{"issue_number": 1, "comment": "@admin also: dark mode?"})
	b.do("the mention appears", chromedp.Poll[chromedp.Void](`document.querySelectorAll(".inbox-item.unread").length === 2`))
	b.do("mark all read", chromedp.Click(chromedp.CSS(`form[action="/inbox/ack"] button`)),
		chromedp.WaitVisible(chromedp.CSS(".inbox-item.read")))
	if n := read(b, "unread", chromedp.Text(chromedp.CSS(".unread-count"))); n != "0" {
		t.Fatalf("unread after marking read: %q", n)
	}
	if inbox := mustToolAs(t, srv, "task_inbox"); inbox["unread"].(float64) != 0 {
		t.Fatalf("over MCP the person still has unread items: %v", inbox)
	}
}

// mustToolAs calls tool as the admin.
func mustToolAs(t *testing.T, srv *server, tool string) map[string]any {
	t.Helper()
	return mustTool(t, connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25"), tool, nil)
}
