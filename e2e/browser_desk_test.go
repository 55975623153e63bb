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
	// The desk is live: the agent's changes show without a reload.
	b.until("the progress bar moves", `document.querySelector('#todo_1 progress') !== null && document.querySelector('#todo_1 progress').value === 60`)
	b.until("the plan, the status and the log show", `['halfway there', 'Finish the browser todo', 'Started the browser todo'].every(w => document.querySelector('main').innerText.includes(w))`)
	// And again, while the person has typed into the desk's forms: what they
	// typed stays.
	b.do("type a note", chromedp.SetValue(chromedp.CSS(`form[action="/desk/progress"] input[name=description]`), "half-typed"))
	start := time.Now()
	mustTool(t, cs, "update_todo", map[string]any{"id": "todo_1", "progress": 80})
	mustTool(t, cs, "add_progress_item", map[string]any{"description": "Agent logged more"})
	b.until("a new todo state shows live", `document.querySelector('#todo_1 progress').value === 80 && document.querySelector('#progress').innerText.includes('Agent logged more')`)
	t.Logf("the agent's todo and progress changes showed on the desk in %v", time.Since(start))
	// Read in one evaluation: a live update may replace the node between a
	// query and a read of its attribute.
	if v := read(b, "typed note", chromedp.Evaluate[string](`document.querySelector('form[action="/desk/progress"] input[name=description]').value`)); v != "half-typed" {
		t.Fatalf("the person's typing was lost to a live update: %q", v)
	}
	b.do("clear the note", chromedp.Evaluate[chromedp.Void](`document.querySelector('form[action="/desk/progress"] input[name=description]').value = ''`))
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
