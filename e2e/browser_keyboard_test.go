package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// focusState says what has the focus, and whether it shows: an outline or
// a shadow drawn around it.
const focusState = `(() => {
	const el = document.activeElement;
	if (!el || el === document.body) return "body|shown";
	const s = getComputedStyle(el), r = el.getBoundingClientRect();
	const shown = (s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0 || s.boxShadow !== "none") && r.width > 0 && r.height > 0 && r.right > 0;
	return (el.id ? "#" + el.id : el.tagName.toLowerCase() + (el.className ? "." + el.className.split(" ")[0] : "")) + "|" + (shown ? "shown" : "hidden");
})()`

// tabTo presses Tab until the focus is on an element matching sel, checking
// at each stop that the focus can be seen, and fails if it never gets there.
func (b *browser) tabTo(sel string) {
	b.t.Helper()
	for range 150 {
		b.do("tab", chromedp.KeyEvent(kb.Tab))
		state := read(b, "focus", chromedp.Evaluate[string](focusState))
		name, shown, _ := strings.Cut(state, "|")
		if shown != "shown" {
			b.artifacts("focus " + name)
			b.t.Fatalf("the focus on %s cannot be seen", name)
		}
		if read(b, "focus target", chromedp.Evaluate[bool](fmt.Sprintf(`document.activeElement.matches(%q)`, sel))) {
			return
		}
	}
	b.artifacts("tab to " + sel)
	b.t.Fatalf("Tab never reached %s", sel)
}

// A person without a mouse reads a page and reviews it: the first Tab
// offers a skip link that leads past the header, every stop shows where the
// focus is, a folder of the tree opens with Enter, and a comment and a reply
// are written and sent from the keyboard alone.
func TestBrowserKeyboardOnly(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	for p, c := range map[string]string{"Design.md": "# Design\n\nWe use SQLite for the embedded store.\n", "Notes/Idea.md": "# Idea\n"} {
		if res := callTool(t, cs, "write_page", map[string]any{"path": p, "content": c}); res.IsError {
			t.Fatalf("write %s: %+v", p, res.Content)
		}
	}
	b := newBrowser(t)
	b.do("open the page", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/pages/Design.md"), chromedp.WaitVisible(chromedp.CSS("#new-comment")))

	b.tabTo("a.skip")
	if first := read(b, "first stop", chromedp.Evaluate[bool](`document.querySelector("a.skip").getBoundingClientRect().left >= 0`)); !first {
		t.Fatal("the skip link is focused but off screen")
	}
	b.do("skip", chromedp.KeyEvent(kb.Enter))
	if at := read(b, "after skipping", chromedp.Evaluate[string](`document.activeElement.id`)); at != "main" {
		t.Fatalf("the skip link left the focus on %q", at)
	}

	b.tabTo(`.tree a[data-folder="Notes"]`)
	b.do("open a folder", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`.tree a[href="/pages/Notes/Idea.md"]`)))
	if open := read(b, "expanded", chromedp.AttributeValue(chromedp.CSS(`.tree a[data-folder="Notes"]`), "aria-expanded")); open.Value != "true" {
		t.Fatalf("the opened folder says aria-expanded=%q", open.Value)
	}

	b.tabTo("#comment-content")
	b.do("type a comment", chromedp.KeyEvent("Typed without a mouse"))
	b.tabTo("#new-comment button")
	b.do("send it", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(".thread .comment")))
	// Read by script: the margin moves threads as it places them.
	if c := read(b, "the comment", chromedp.Evaluate[string](`document.querySelector(".thread .comment .content").textContent.trim()`)); c != "Typed without a mouse" {
		t.Fatalf("the thread says %q", c)
	}

	b.tabTo(".thread .reply-form textarea")
	b.do("type a reply", chromedp.KeyEvent("And a reply"))
	b.tabTo(".thread .reply-form button")
	b.do("send the reply", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(".thread .reply")))
	if r := read(b, "the reply", chromedp.Evaluate[string](`document.querySelector(".thread .reply .content").textContent.trim()`)); r != "And a reply" {
		t.Fatalf("the reply says %q", r)
	}
	b.tabTo("#review-summary")
	b.tabTo(".submit-review button")
	b.do("submit the review", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(".thread.status-submitted")))
	b.tabTo(`.thread form[action$="/resolve"] button`)
	b.do("resolve", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(".thread.status-resolved")))
}

// On a wide screen a thread stands beside the text it quotes, in the order
// of the page; on an iPad held upright the threads stack below the page.
func TestBrowserThreadsInTheMargin(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	var body strings.Builder
	body.WriteString("# Long\n\n")
	for i := range 40 {
		fmt.Fprintf(&body, "Paragraph %d of filler text that takes a line or two of the page.\n\n", i)
	}
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Long.md", "content": body.String()}); res.IsError {
		t.Fatalf("write: %+v", res.Content)
	}
	// Created late-first: the HTML lists the thread on paragraph 30 first.
	for _, q := range []string{"Paragraph 30 of", "Paragraph 2 of"} {
		if res := callTool(t, cs, "create_annotation", map[string]any{"doc_path": "Long.md", "content": "on " + q, "quote": map[string]any{"exact": q}, "status": "submitted"}); res.IsError {
			t.Fatalf("annotate: %+v", res.Content)
		}
	}
	offsets := `(() => {
		const out = [];
		for (const t of document.querySelectorAll(".anchored .thread")) {
			const q = t.querySelector(".quote").textContent;
			const p = [...document.querySelectorAll(".markdown p")].find(p => p.textContent.startsWith(q));
			out.push(Math.round(t.getBoundingClientRect().top - p.getBoundingClientRect().top));
		}
		return out;
	})()`
	b := newBrowser(t)
	b.do("wide", chromedp.EmulateViewport(1400, 1000), chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/pages/Long.md"), chromedp.WaitVisible(chromedp.CSS(`#threads[data-placed="wide"]`)))
	// Read by script: placing moves the threads, and a node read by id may be gone.
	first := read(b, "order", chromedp.Evaluate[string](`document.querySelector(".anchored .thread .content").textContent.trim()`))
	if first != "on Paragraph 2 of" {
		t.Fatalf("the first thread in the margin is %q, want the one on paragraph 2", first)
	}
	// Placing follows the layout as it settles (a resize, fonts): give it
	// a moment on a loaded machine before judging.
	var off []int
	for deadline := time.Now().Add(10 * time.Second); ; {
		off = read(b, "offsets", chromedp.Evaluate[[]int](offsets))
		near := true
		for _, d := range off {
			near = near && d >= -40 && d <= 40
		}
		if near || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, d := range off {
		if d < -40 || d > 40 {
			t.Errorf("thread %d stands %dpx from its quote (offsets %v)", i, d, off)
		}
	}
	b.do("narrow", chromedp.EmulateViewport(820, 1180), chromedp.WaitVisible(chromedp.CSS(`#threads[data-placed="narrow"]`)))
	if below := read(b, "stacked", chromedp.Evaluate[bool](`document.querySelector("#threads").getBoundingClientRect().top > document.querySelector("article.page").getBoundingClientRect().top`)); !below {
		t.Fatal("on a narrow screen the threads do not stack below the page")
	}
}

// The rest of a person's work without a mouse: edit a page and save it,
// search and open a result, choose two revisions in the history and compare
// them, and ask to delete a thread, cancel, and confirm — every stop
// showing where the focus is.
func TestBrowserKeyboardEditsSearchesComparesAndDeletes(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	for _, c := range []string{"# Design\n\nfirst\n", "# Design\n\nsecond\n"} {
		mustTool(t, cs, "write_page", map[string]any{"path": "Design.md", "content": c, "overwrite": true})
	}
	mustTool(t, cs, "write_page", map[string]any{"path": "Other.md", "content": "# Other\n\nAbout keyboards and zebras.\n"})
	thread := mustTool(t, cs, "create_annotation", map[string]any{"doc_path": "Design.md", "content": "A thread", "status": "submitted"})
	id := thread["annotation"].(map[string]any)["id"].(string)
	for _, r := range []string{"one", "two"} {
		mustTool(t, cs, "create_annotation", map[string]any{"parent_id": id, "content": "reply " + r})
	}
	b := newBrowser(t)
	b.signIn(srv, "/pages/Design.md", "#thread-"+id)

	// Edit and save: the editor takes the focus; select all, type, save.
	b.tabTo(`article.page a[href^="/edit/"]`)
	b.do("open the editor", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`textarea[name=content]`)))
	if at := read(b, "editor focus", chromedp.Evaluate[string](`document.activeElement.name`)); at != "content" {
		t.Fatalf("the editor opens with the focus on %q, not the text", at)
	}
	b.do("rewrite", chromedp.KeyEvent("a", chromedp.KeyModifiers(chromedp.ModifierCtrl)), chromedp.KeyEvent("# Design\n\nthird, typed\n"))
	b.tabTo(`button[value=save]`)
	b.do("save", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("article.page")))
	if got := structured(t, callTool(t, cs, "read_page", map[string]any{"path": "Design.md"}))["content"]; got != "# Design\n\nthird, typed\n" {
		t.Fatalf("saved by keyboard: %q", got)
	}

	// Search from the header, open the first result.
	b.tabTo(`header input[name=q]`)
	b.do("search", chromedp.KeyEvent("zebras"), chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(".results li")))
	b.tabTo(`.results li a`)
	b.do("open the result", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`article.page[data-live-path="Other.md"]`)))

	// History: compare revision 1 with 3 (the default is 2 with 3).
	b.do("back", chromedp.Navigate(srv.URL+"/pages/Design.md"), chromedp.WaitVisible(chromedp.CSS("article.page")))
	b.tabTo(`article.page a[href^="/history/"]`)
	b.do("open the history", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(".revisions")))
	b.tabTo(`input[name=from]`)
	b.do("choose revision 1", chromedp.KeyEvent(kb.ArrowDown))
	if from := read(b, "from", chromedp.Evaluate[string](`document.querySelector("input[name=from]:checked").value`)); from != "1" {
		t.Fatalf("the arrow chose revision %s to compare from", from)
	}
	b.tabTo(`.history button[type=submit]:not([form])`)
	b.do("compare", chromedp.KeyEvent(kb.Enter))
	b.until("the diff of 1 and 3", `(document.querySelector("h2") || {}).textContent === "Revision 1 → 3"`)
	if del, ins := read(b, "removed", chromedp.Text(chromedp.CSS(".diff del"))), read(b, "added", chromedp.Text(chromedp.CSS(".diff ins"))); del != "- first" || ins != "+ third, typed" {
		t.Fatalf("the diff of 1 and 3 shows %q and %q", del, ins)
	}

	// Delete a thread: the confirmation names its replies; Cancel keeps it.
	b.do("back to the page", chromedp.Navigate(srv.URL+"/pages/Design.md"), chromedp.WaitVisible(chromedp.CSS("#thread-"+id)))
	b.tabTo(`#thread-` + id + ` a.delete`)
	b.do("ask to delete", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(".confirm-question")))
	if q := read(b, "question", chromedp.Text(chromedp.CSS(".confirm-question"))); q != "Delete this thread? 2 replies will also be deleted." {
		t.Fatalf("the confirmation says %q", q)
	}
	b.tabTo(`#confirm-cancel`)
	b.do("cancel", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("#thread-"+id)))
	b.tabTo(`#thread-` + id + ` a.delete`)
	b.do("ask again", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(".confirm-question")))
	b.tabTo(`#confirm-ok`)
	b.do("confirm", chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS("#threads")))
	if n := read(b, "threads", chromedp.Evaluate[int](`document.querySelectorAll(".thread").length`)); n != 0 {
		t.Fatalf("%d threads after confirming the delete", n)
	}
}
