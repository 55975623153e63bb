package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// 001's data flow between a person and an agent: a todo made on the desk
// page is read over MCP; the agent's progress on it, its plan and its log
// show on the desk page.
func TestBrowserDeskAndAgentShareTodos(t *testing.T) {
	srv := startServe(t, "")
	b := newBrowser(t)
	b.do("open my desk", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Click(chromedp.CSS(`header a[href="/desk"]`)), chromedp.WaitVisible(chromedp.CSS(`form.new-todo`)))
	b.do("add a todo", chromedp.SetValue(chromedp.CSS(`form.new-todo input[name=title]`), "Browser todo"),
		chromedp.Submit(chromedp.CSS(`form.new-todo`)), chromedp.WaitVisible(chromedp.ID("todo_1")))

	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	ctx := context.Background()
	todos, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "atrium://todos"})
	if err != nil || !strings.Contains(todos.Contents[0].Text, `"title":"Browser todo"`) {
		t.Fatalf("atrium://todos over MCP: %+v %v", todos, err)
	}
	for tool, args := range map[string]map[string]any{
		"update_todo":       {"id": "todo_1", "progress": 60, "status": "in_progress", "statusDesc": "halfway there"},
		"update_plan":       {"content": "# Plan\n\n1. Finish the browser todo\n"},
		"add_progress_item": {"description": "Started the browser todo"},
	} {
		if res := callTool(t, cs, tool, args); res.IsError {
			t.Fatalf("%s: %+v", tool, res.StructuredContent)
		}
	}
	b.do("reload the desk", chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("todo_1")))
	if v := read(b, "progress bar", chromedp.Evaluate[float64](`document.querySelector('#todo_1 progress').value`)); v != 60 {
		t.Fatalf("progress bar at %v, want 60", v)
	}
	page := read(b, "desk", chromedp.Text(chromedp.CSS("main")))
	for _, want := range []string{"halfway there", "Finish the browser todo", "Started the browser todo"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the desk page lacks %q:\n%s", want, page)
		}
	}
	// The home page tells of it, linking to the task and the desk.
	b.do("home", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`ul.activity a[href="/desk/admin"]`)),
		chromedp.WaitVisible(chromedp.CSS(`ul.activity a[href="/tasks/1"]`)))
	b.do("back to the desk", chromedp.Navigate(srv.URL+"/desk/admin"), chromedp.WaitVisible(chromedp.ID("todo_1")))
	// The person closes the day; the log empties, the todo stays.
	// The new page, not the old one still on screen: the log has emptied.
	b.do("close the day", chromedp.Click(chromedp.CSS(`form[action="/desk/progress/archive"] button`)))
	b.until("the log empties", `document.querySelector('#progress') !== null && !document.querySelector('#progress').innerText.includes('Started the browser todo')`)
	b.do("the todo stays", chromedp.WaitVisible(chromedp.ID("todo_1")))
	// A bad progress value is said, not applied.
	b.do("bad progress", chromedp.SetValue(chromedp.CSS(`#todo_1 input[name=progress]`), "250"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#todo_1 input[name=progress]').removeAttribute('max')`),
		chromedp.Submit(chromedp.CSS(`#todo_1 form`)), chromedp.WaitVisible(chromedp.CSS(`p.error`)))
	if msg := read(b, "error", chromedp.Text(chromedp.CSS("p.error"))); !strings.Contains(msg, "0 to 100") {
		t.Fatalf("error shown: %q", msg)
	}
}

// until waits for cond (JavaScript) to hold on the page the browser shows,
// across a navigation that a click started (an evaluation that meets the
// old page leaving fails, and is tried again).
func (b *browser) until(what, cond string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.artifacts(what)
	b.t.Fatalf("%s: %s never held", what, cond)
}
