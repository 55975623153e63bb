package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// selectAcross selects the first occurrence of text in the page's body as
// it reads, across the elements it spans (bold, a link, code), as a person
// would with the mouse.
func selectAcross(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const body = document.querySelector("article.page .markdown");
		const walk = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
		const nodes = []; let all = "";
		for (let n = walk.nextNode(); n; n = walk.nextNode()) { nodes.push([n, all.length]); all += n.data; }
		const at = all.indexOf(%q);
		if (at < 0) throw new Error("text not on the page");
		const end = at + %d;
		const find = (off, last) => { for (let i = nodes.length - 1; i >= 0; i--) { const [n, s] = nodes[i]; if (last ? s < off : s <= off) return [n, off - s]; } };
		const [sn, so] = find(at, false), [en, eo] = find(end, true);
		const r = document.createRange(); r.setStart(sn, so); r.setEnd(en, eo);
		const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
	})()`, text, len(text)))
}

const opsPage = "# Ops\n\n## Backups\n\nBackups run **nightly** with a [simple copy](https://example.com/copy) of the `atrium.db` file.\n\nRestores are tested monthly.\n"

// Issue 23.1: a selection across bold, a link and code is quoted as the
// page shows it and anchored; over MCP the shown quote works as the marked
// one does; a refused comment, reply or edit comes back with its text.
func TestBrowserCommentsOnFormattedText(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	agent := agentSession(t, srv, "claude")
	mustTool(t, cs, "write_page", map[string]any{"path": "Ops.md", "content": opsPage})
	b := newBrowser(t)
	b.signIn(srv, "/pages/Ops.md", "#new-comment")
	b.do("select across bold", selectAcross("Backups run nightly"), chromedp.WaitVisible(chromedp.CSS("#new-comment .quote-preview")),
		chromedp.SendKeys(chromedp.ID("comment-content"), "How long do they take?"), holds("#comment-content", "How long do they take?"), chromedp.Submit(chromedp.ID("comment-content")),
		chromedp.WaitVisible(chromedp.CSS(".anchored .thread .quote")))
	if q := read(b, "quote", chromedp.Evaluate[string](`document.querySelector(".anchored .thread .quote").textContent`)); q != "Backups run nightly" {
		t.Fatalf("the thread quotes %q", q)
	}
	id := strings.TrimPrefix(read(b, "thread", chromedp.AttributeValue(chromedp.CSS(".anchored .thread"), "id")).Value, "thread-")
	got := structured(t, callTool(t, cs, "get_annotation", map[string]any{"annotation_id": id}))["annotation"].(map[string]any)
	if q := got["quote"].(map[string]any)["exact"]; q != "Backups run **nightly**" {
		t.Fatalf("anchored to %q", q)
	}
	for _, exact := range []string{"Backups run nightly", "Backups run **nightly**", "simple copy of the atrium.db file"} {
		if res := callTool(t, agent, "create_annotation", map[string]any{"doc_path": "Ops.md", "quote": map[string]any{"exact": exact}, "content": "On " + exact, "status": "submitted"}); res.IsError {
			t.Fatalf("create_annotation quoting %q: %+v", exact, res.Content)
		}
	}

	// The quoted text goes before the comment is sent: the page comes
	// back, saying why, with the comment and its quote in the form.
	b.do("select, then the text goes", selectAcross("Restores are tested monthly"), chromedp.WaitVisible(chromedp.CSS("#new-comment .quote-preview")),
		chromedp.SendKeys(chromedp.ID("comment-content"), "Who tests them?"))
	mustTool(t, agent, "write_page", map[string]any{"path": "Ops.md", "content": strings.Replace(opsPage, "Restores are tested monthly.", "Restores are tested.", 1), "base_revision": 1})
	b.do("send", chromedp.Submit(chromedp.ID("comment-content")), chromedp.WaitVisible(chromedp.CSS("#new-comment .error")))
	if typed := read(b, "kept", chromedp.Value(chromedp.ID("comment-content"))); typed != "Who tests them?" {
		t.Fatalf("the refused comment's text is %q", typed)
	}
	// Read by script, not by node: a live update may re-render the page
	// between finding the message and reading it.
	if msg := read(b, "why", chromedp.Evaluate[string](`(document.querySelector("#new-comment .error") || {}).textContent || ""`)); !strings.Contains(msg, "quote not found") {
		t.Fatalf("the form says %q", msg)
	}
	if n := read(b, "the page", chromedp.Evaluate[int](`document.querySelectorAll("article.page .markdown h1").length`)); n != 1 {
		t.Fatal("the refused form came back without its page")
	}

	// A reply too long, and an edit of a thread deleted meanwhile (scripts
	// off: a live update would take the thread away first): each comes
	// back with its text.
	long := strings.Repeat("a", 70<<10)
	b.do("a reply too long", chromedp.Navigate(srv.URL+"/pages/Ops.md"), chromedp.WaitVisible(chromedp.ID("reply-"+id)),
		chromedp.SetValue(chromedp.CSS("#reply-"+id+" textarea"), long), chromedp.Submit(chromedp.CSS("#reply-"+id+" textarea")),
		chromedp.WaitVisible(chromedp.CSS("#reply-"+id+" .error")))
	if typed := read(b, "kept reply", chromedp.Value(chromedp.CSS("#reply-"+id+" textarea"))); typed != long {
		t.Fatalf("the refused reply kept %d bytes of %d", len(typed), len(long))
	}
	b.do("edit, but the thread is deleted meanwhile", scripts(false), chromedp.Navigate(srv.URL+"/pages/Ops.md"), chromedp.WaitVisible(chromedp.ID("edit-"+id)),
		chromedp.Click(chromedp.CSS("#edit-"+id+" summary")), chromedp.SetValue(chromedp.CSS("#edit-"+id+" textarea"), "How long, and how big?"))
	mustTool(t, cs, "delete_annotation", map[string]any{"annotation_id": id})
	b.do("save the edit", chromedp.Click(chromedp.CSS("#edit-"+id+" button")), chromedp.WaitVisible(chromedp.CSS("#new-comment .error")))
	if typed := read(b, "kept edit", chromedp.Value(chromedp.ID("comment-content"))); typed != "How long, and how big?" {
		t.Fatalf("the refused edit's text is %q", typed)
	}
}

// Issue 23.2: an agent's reply arriving while a person types a reply (in
// the same thread or another) leaves the focus, the text and the caret
// where they were, on a narrow screen and on a wide one (where threads
// stand in the margin).
func TestBrowserLiveUpdatesKeepTheFocus(t *testing.T) {
	for _, size := range [][2]int{{820, 1180}, {1400, 900}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			srv := startServe(t, "")
			cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
			agent := agentSession(t, srv, "claude")
			mustTool(t, cs, "write_page", map[string]any{"path": "Ops.md", "content": opsPage})
			var ids []string
			for _, exact := range []string{"Backups run", "Restores are tested"} {
				res := mustTool(t, agent, "create_annotation", map[string]any{"doc_path": "Ops.md", "quote": map[string]any{"exact": exact}, "content": "About " + exact, "status": "submitted"})
				ids = append(ids, res["annotation"].(map[string]any)["id"].(string))
			}
			b := newBrowserSized(t, size[0], size[1])
			b.signIn(srv, "/pages/Ops.md", "#reply-"+ids[0])
			area := "#reply-" + ids[0] + " textarea"
			// Focused by script and typed into the focused field: a live
			// update right after the page loads may replace the field
			// before it has the focus, between finding a node and
			// clicking it ("Could not find node with given id").
			b.still()
			b.do("type a reply", byScript(area, `n.focus()`), chromedp.KeyEvent("Half a tho"), holds(area, "Half a tho"),
				chromedp.Evaluate[chromedp.Void](`document.querySelector(`+fmt.Sprintf("%q", area)+`).setSelectionRange(4, 4)`))
			for i, id := range []string{ids[1], ids[0]} {
				text := fmt.Sprintf("The agent's reply %d.", i)
				mustTool(t, agent, "create_annotation", map[string]any{"parent_id": id, "content": text})
				b.until("the reply shows", fmt.Sprintf(`document.querySelector("#thread-%s").textContent.includes(%q)`, id, text))
				b.still()
				state := read(b, "focus", chromedp.Evaluate[string](`(() => { const a = document.activeElement; return a.tagName + "|" + (a.closest("form") || {}).id + "|" + a.value + "|" + a.selectionStart; })()`))
				if want := "TEXTAREA|reply-" + ids[0] + "|Half a tho|4"; state != want {
					t.Fatalf("after the agent's reply %d the focus is %q, want %q", i, state, want)
				}
			}
			b.do("keep typing", chromedp.KeyEvent("X"))
			if v := read(b, "typed", chromedp.Value(chromedp.CSS(area))); v != "HalfX a tho" {
				t.Fatalf("the reply reads %q", v)
			}
		})
	}
}

// Issue 23.4: a save onto a revision an agent replaced meanwhile merges
// when the two changed different lines; on a true overlap the person sees
// what differs, with their text kept.
func TestBrowserSaveMergesAnAgentsWrite(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	mustTool(t, cs, "write_page", map[string]any{"path": "Notes.md", "content": "# Notes\n\none\ntwo\nthree\nfour\n"})
	b := newBrowser(t)
	b.signIn(srv, "/edit/Notes.md", `textarea[name=content]`)
	b.do("the person edits line one", chromedp.SetValue(chromedp.CSS(`textarea[name=content]`), "# Notes\n\none, by the person\ntwo\nthree\nfour\n"))
	mustTool(t, cs, "write_page", map[string]any{"path": "Notes.md", "content": "# Notes\n\none\ntwo\nthree\nfour, by the agent\n", "base_revision": 1})
	b.do("save", chromedp.Click(chromedp.CSS(`button[value=save]`)), chromedp.WaitVisible(chromedp.CSS("article.page")))
	got := structured(t, callTool(t, cs, "read_page", map[string]any{"path": "Notes.md"}))
	if c := got["content"]; c != "# Notes\n\none, by the person\ntwo\nthree\nfour, by the agent\n" {
		t.Fatalf("merged into %q", c)
	}
	// Read by script, not by node: a live update may re-render the page
	// between finding the notice and reading it.
	if n := read(b, "notice", chromedp.Evaluate[string](`(document.querySelector(".merged") || {}).textContent || ""`)); !strings.Contains(n, "merged") {
		t.Fatalf("the page says %q", n)
	}

	b.do("both edit line two", chromedp.Navigate(srv.URL+"/edit/Notes.md"), chromedp.WaitVisible(chromedp.CSS(`textarea[name=content]`)),
		chromedp.SetValue(chromedp.CSS(`textarea[name=content]`), "# Notes\n\none, by the person\ntwo, as the person sees it\nthree\nfour, by the agent\n"))
	mustTool(t, cs, "write_page", map[string]any{"path": "Notes.md", "content": "# Notes\n\none, by the person\ntwo, as the agent sees it\nthree\nfour, by the agent\n", "base_revision": 3})
	b.do("save onto the overlap", chromedp.Click(chromedp.CSS(`button[value=save]`)), chromedp.WaitVisible(chromedp.CSS(".conflict .diff")))
	diff := read(b, "diff", chromedp.Text(chromedp.CSS(".conflict .diff")))
	if !strings.Contains(diff, "- two, as the agent sees it") || !strings.Contains(diff, "+ two, as the person sees it") || strings.Contains(diff, "three") && !strings.Contains(diff, "  three") {
		t.Fatalf("the diff reads %q", diff)
	}
	if mine := read(b, "kept", chromedp.Value(chromedp.CSS(`form.editor textarea[name=content]`))); !strings.Contains(mine, "as the person sees it") {
		t.Fatalf("the person's text became %q", mine)
	}
}

// Issue 23.3: anchored quotes are highlighted in the page text, each
// highlight leading to its thread's card and the card back to it; an
// orphaned thread has no highlight and stands apart.
func TestBrowserHighlightsQuotes(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	agent := agentSession(t, srv, "claude")
	mustTool(t, cs, "write_page", map[string]any{"path": "Ops.md", "content": opsPage})
	var ids []string
	for _, exact := range []string{"Backups run nightly with a simple copy", "Restores are tested monthly"} {
		res := mustTool(t, agent, "create_annotation", map[string]any{"doc_path": "Ops.md", "quote": map[string]any{"exact": exact}, "content": "About " + exact, "status": "submitted"})
		ids = append(ids, res["annotation"].(map[string]any)["id"].(string))
	}
	b := newBrowserSized(t, 1400, 900)
	b.signIn(srv, "/pages/Ops.md", "#hl-"+ids[0])
	marked := func(id string) string {
		return read(b, "highlight", chromedp.Evaluate[string](`[...document.querySelectorAll('.markdown mark.highlight[data-thread="`+id+`"]')].map(m => m.textContent).join("")`))
	}
	if got := marked(ids[0]); got != "Backups run nightly with a simple copy" {
		t.Fatalf("the first highlight reads %q", got)
	}
	if got := marked(ids[1]); got != "Restores are tested monthly" {
		t.Fatalf("the second highlight reads %q", got)
	}
	// Clicked by script: the highlights are re-marked as the page settles,
	// and a click by node can land on one just replaced.
	click := func(what, selector string) {
		b.until(what, `(() => { const e = document.querySelector(`+strconv.Quote(selector)+`); if (!e) return false; e.click(); return true; })()`)
	}
	click("the highlight leads to its thread", "#hl-"+ids[1])
	b.until("the card has the focus", `document.activeElement && document.activeElement.id === "thread-`+ids[1]+`" && location.hash === "#thread-`+ids[1]+`"`)
	click("the card leads back", "#thread-"+ids[0]+" .to-highlight")
	b.until("at the highlight", `location.hash === "#hl-`+ids[0]+`"`)

	mustTool(t, agent, "write_page", map[string]any{"path": "Ops.md", "content": strings.Replace(opsPage, "Restores are tested monthly.", "Nothing about restores.", 1), "base_revision": 1})
	b.until("orphaned apart", `document.querySelector(".orphaned #thread-`+ids[1]+`") !== null`)
	b.still()
	b.until("highlighted again", `document.querySelectorAll('.markdown mark.highlight[data-thread="`+ids[1]+`"]').length === 0 && document.querySelector("#hl-`+ids[0]+`") !== null`)
	if got := marked(ids[0]); got != "Backups run nightly with a simple copy" {
		t.Fatalf("after the live update the first highlight reads %q", got)
	}
	if n := read(b, "orphan link", chromedp.Evaluate[int](`document.querySelectorAll(".orphaned .to-highlight").length`)); n != 0 {
		t.Fatalf("an orphaned thread links to %d highlights", n)
	}
}
