package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// scripts turns the page's JavaScript on or off, for what must work
// without it.
func scripts(on bool) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
		return err
	})
}

// A person edits their own comment and their own reply from the page, with
// scripts off (the form needs none), and sees the page's reviews with their
// status; an agent's reply offers them no edit.
func TestBrowserEditsOwnCommentsAndListsReviews(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	agent := agentSession(t, srv, "claude")
	mustTool(t, cs, "write_page", map[string]any{"path": "Design.md", "content": "# Design\n\nWe use SQLite for the embedded store.\n"})
	person := personToken(t, srv, "pia")
	b := newBrowser(t)
	b.do("comment and submit", chromedp.Navigate(srv.URL+"/login?token="+person), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/pages/Design.md"), chromedp.WaitVisible(chromedp.CSS("#new-comment")),
		chromedp.SendKeys(chromedp.ID("comment-content"), "Why SQLit?"), holds("#comment-content", "Why SQLit?"), chromedp.Submit(chromedp.ID("comment-content")),
		chromedp.WaitVisible(chromedp.CSS(".thread")))
	b.do("submit the review", chromedp.SendKeys(chromedp.ID("review-summary"), "One question"), holds("#review-summary", "One question"),
		chromedp.Submit(chromedp.ID("review-summary")),
		chromedp.WaitVisible(chromedp.CSS(".thread.status-submitted")))
	id := strings.TrimPrefix(read(b, "thread id", chromedp.AttributeValue(chromedp.CSS(".thread"), "id")).Value, "thread-")
	if res := callTool(t, agent, "create_annotation", map[string]any{"parent_id": id, "content": "Because it is embedded."}); res.IsError {
		t.Fatalf("agent reply: %+v", res.Content)
	}
	b.do("the agent's reply", chromedp.WaitVisible(chromedp.CSS(".thread .reply .author-ai")))
	if n := read(b, "edit forms", chromedp.Evaluate[int](`document.querySelectorAll(".thread .reply .edit-comment").length`)); n != 0 {
		t.Fatalf("the agent's reply offers the person %d edit forms", n)
	}
	if r := read(b, "reviews", chromedp.Text(chromedp.CSS(".reviews .review"))); !strings.Contains(r, "submitted") || !strings.Contains(r, "pia") || !strings.Contains(r, "One question") || !strings.Contains(r, "1 thread") {
		t.Fatalf("the reviews list says %q", r)
	}

	b.do("scripts off", scripts(false), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#edit-"+id+" summary")))
	if ran := read(b, "no script", chromedp.Evaluate[bool](`document.querySelector("#threads").hasAttribute("data-placed")`)); ran {
		t.Fatal("scripts still run")
	}
	b.do("edit the comment", chromedp.Click(chromedp.CSS("#edit-"+id+" summary")),
		chromedp.SetValue(chromedp.CSS("#edit-"+id+" textarea"), "Why SQLite?"),
		chromedp.Click(chromedp.CSS("#edit-"+id+" button")))
	b.until("the comment edited", `(document.querySelector("#comment-`+id+` > .content") || {}).textContent === "Why SQLite?"`)
	b.do("reply and edit the reply", scripts(true), chromedp.SetValue(chromedp.CSS("#reply-"+id+" textarea"), "Thanks, clear."),
		chromedp.Submit(chromedp.CSS("#reply-"+id+" textarea")), chromedp.WaitVisible(chromedp.CSS(".thread .reply .author-human .badge")))
	mine := read(b, "my reply", chromedp.Evaluate[string](`[...document.querySelectorAll(".thread .reply .comment")].find(c => c.querySelector(".author-human")).id`))
	// By script, each step finding its node when it runs: the reply's own
	// event (or its review's) can refresh the threads between steps, and a
	// refresh keeps what was opened and typed but not the nodes.
	b.do("edit the reply", clickNow("#"+mine+" .edit-comment summary"),
		setNow("#"+mine+" .edit-comment textarea", "Thanks, that is clear."),
		clickNow("#"+mine+" .edit-comment button"))
	b.until("the reply edited", `(document.querySelector("#`+mine+` > .content") || {}).textContent === "Thanks, that is clear."`)
	got := structured(t, callTool(t, cs, "get_annotation", map[string]any{"annotation_id": id}))
	if c := got["annotation"].(map[string]any)["content"]; c != "Why SQLite?" {
		t.Fatalf("over MCP the comment says %q", c)
	}
}

// A thread whose quote an agent edits away moves to the Orphaned section,
// still showing the quote it had.
func TestBrowserShowsOrphanedThreads(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	agent := agentSession(t, srv, "claude")
	mustTool(t, cs, "write_page", map[string]any{"path": "Notes.md", "content": "# Notes\n\nKeep the cache warm at night.\n\nOther text.\n"})
	b := newBrowser(t)
	b.signIn(srv, "/pages/Notes.md", "#new-comment")
	b.do("comment on a quote", selectText("cache warm at night"), chromedp.WaitVisible(chromedp.CSS("#new-comment .quote-preview")),
		chromedp.SendKeys(chromedp.ID("comment-content"), "Which cache?"), holds("#comment-content", "Which cache?"), chromedp.Submit(chromedp.ID("comment-content")),
		chromedp.WaitVisible(chromedp.CSS(".anchored .thread .quote")))
	id := strings.TrimPrefix(read(b, "thread", chromedp.AttributeValue(chromedp.CSS(".anchored .thread"), "id")).Value, "thread-")
	mustTool(t, agent, "write_page", map[string]any{"path": "Notes.md", "content": "# Notes\n\nNothing about that any more.\n\nOther text.\n", "base_revision": 1})
	b.until("the thread is orphaned", `document.querySelector(".orphaned #thread-`+id+`") !== null`)
	// Read by script: a live refresh may replace a node between finding
	// and reading it.
	if h := read(b, "section", chromedp.Evaluate[string](`document.querySelector("#orphaned-heading").textContent`)); !strings.HasPrefix(h, "Orphaned") {
		t.Fatalf("the section is headed %q", h)
	}
	if q := read(b, "quote", chromedp.Evaluate[string](`document.querySelector(".orphaned #thread-`+id+` .quote").textContent`)); q != "cache warm at night" {
		t.Fatalf("the orphaned thread quotes %q", q)
	}
	if n := read(b, "anchored", chromedp.Evaluate[int](`document.querySelectorAll(".anchored .thread").length`)); n != 0 {
		t.Fatalf("%d threads still anchored", n)
	}
	b.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(".orphaned #thread-"+id+" .quote")))
}

// "New page" in the header asks for a path and opens the editor there; the
// page saved from it exists. A taken path says so.
func TestBrowserMakesANewPage(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	mustTool(t, cs, "write_page", map[string]any{"path": "Notes/Taken.md", "content": "# Taken\n"})
	b := newBrowser(t)
	b.signIn(srv, "/pages/Notes/Taken.md", "article.page")
	b.do("the page's folder", chromedp.Click(chromedp.CSS(".sidebar a.new-in-folder")), chromedp.WaitVisible(chromedp.ID("new-path")))
	if v := read(b, "suggested", chromedp.Value(chromedp.ID("new-path"))); v != "Notes/" {
		t.Fatalf("New page here suggests %q", v)
	}
	b.do("a taken path", chromedp.SetValue(chromedp.ID("new-path"), "Notes/Taken"), chromedp.Submit(chromedp.ID("new-path")), chromedp.WaitVisible(chromedp.CSS("p.error")))
	if msg := read(b, "taken", chromedp.Text(chromedp.CSS("p.error"))); !strings.Contains(msg, "already at Notes/Taken.md") {
		t.Fatalf("a taken path says %q", msg)
	}
	b.do("from the header", chromedp.Click(chromedp.CSS("header a.new-page-link")), chromedp.WaitVisible(chromedp.ID("new-path")),
		chromedp.SendKeys(chromedp.ID("new-path"), "Ideas/First idea"), holds("#new-path", "Ideas/First idea"), chromedp.Submit(chromedp.ID("new-path")),
		chromedp.WaitVisible(chromedp.CSS(`form.editor textarea[name=content]`)))
	if h := read(b, "editor", chromedp.Text(chromedp.CSS("main h1"))); !strings.Contains(h, "New page") || !strings.Contains(h, "Ideas/First idea.md") {
		t.Fatalf("the editor is headed %q", h)
	}
	b.do("write and save", chromedp.SetValue(chromedp.CSS(`textarea[name=content]`), "# First idea\n"), chromedp.Click(chromedp.CSS(`button[value=save]`)),
		chromedp.WaitVisible(chromedp.CSS(`article.page[data-live-path="Ideas/First idea.md"]`)))
	if res := callTool(t, cs, "read_page", map[string]any{"path": "Ideas/First idea.md"}); res.IsError {
		t.Fatalf("the new page is not there: %+v", res.Content)
	}
}

// A folder of the tree that cannot be opened (its pages went meanwhile)
// says why, with the error's code, where its pages would have been.
func TestBrowserTreeSaysWhyAFolderWillNotOpen(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	for _, p := range []string{"Design.md", "Notes/Idea.md"} {
		mustTool(t, cs, "write_page", map[string]any{"path": p, "content": "# " + p + "\n"})
	}
	b := newBrowser(t)
	b.signIn(srv, "/pages/Design.md", `.tree a[data-folder="Notes"]`)
	mustTool(t, cs, "delete_page", map[string]any{"path": "Notes/Idea.md"})
	b.do("open the folder", chromedp.Click(chromedp.CSS(`.tree a[data-folder="Notes"]`)), chromedp.WaitVisible(chromedp.CSS(".tree .fragment-error")))
	msg := read(b, "error", chromedp.Evaluate[string](`document.querySelector(".tree li.fragment-error").textContent`))
	if code := read(b, "code", chromedp.Evaluate[string](`document.querySelector(".tree li.fragment-error").dataset.code`)); code != "not_found" || !strings.Contains(msg, "not_found") {
		t.Fatalf("the folder says %q (code %q)", msg, code)
	}
}
