package e2e

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// fitsCheck lists what does not fit the window's width: the document
// scrolling sideways, and each form control shown (every <details> opened
// first) that reaches past either edge.
const fitsCheck = `(() => {
	document.querySelectorAll("details").forEach(d => { d.open = true; });
	const de = document.documentElement, cw = de.clientWidth, out = [];
	if (de.scrollWidth > cw) out.push("the page scrolls sideways: scrollWidth " + de.scrollWidth + " > clientWidth " + cw);
	for (const el of document.querySelectorAll("input:not([type=hidden]), textarea, select, button")) {
		const r = el.getBoundingClientRect();
		if (r.width === 0 && r.height === 0) continue;
		if (r.left < -1 || r.right > cw + 1) {
			const name = el.tagName.toLowerCase() + (el.name ? "[name=" + el.name + "]" : "") + (el.id ? "#" + el.id : "") + (el.textContent.trim() ? " " + JSON.stringify(el.textContent.trim().slice(0, 30)) : "");
			out.push(name + " spans " + Math.round(r.left) + ".." + Math.round(r.right) + " of " + cw);
		}
	}
	return out;
})()`

// Every main page fits an iPad held upright — 768 px (the smaller iPads)
// and 820 px (iPad Air) — with the content that widens pages most: a long
// code line, a wide table, a long URL or word in a page, a comment, a task
// and a path. Nothing scrolls sideways and every form control is on screen.
func TestBrowserFitsAnIPadUpright(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	duc := agentSession(t, srv, "duc")
	longWord := strings.Repeat("unbroken", 30)
	longURL := "https://example.com/" + strings.Repeat("a-very-long-path-segment/", 12) + "end"
	codeLine := "func main() { " + strings.Repeat(`fmt.Println("a line of code that goes on and on"); `, 8) + "}"
	var table strings.Builder
	for row := range 3 {
		table.WriteString("|")
		for col := range 14 {
			if row == 1 {
				table.WriteString("---|")
			} else {
				fmt.Fprintf(&table, " column%02d_%s |", col, strings.Repeat("x", 12))
			}
		}
		table.WriteString("\n")
	}
	body := "---\ntags: [" + longWord + "]\n---\n# Wide\n\nSee " + longURL + " and " + longWord + ".\n\nInline `" + strings.Repeat("code_", 40) + "`.\n\n```go\n" + codeLine + "\n```\n\n" + table.String() + "\nThe quoted sentence stays here.\n"
	longName := "Wide/" + strings.Repeat("Name", 40) + ".md"
	for p, c := range map[string]string{"Wide/Code.md": body, longName: "# Long name\n\n" + longURL + "\n", "Wide/Gone " + strings.Repeat("x", 100) + ".md": "# Gone\n"} {
		mustTool(t, cs, "write_page", map[string]any{"path": p, "content": c})
	}
	mustTool(t, cs, "write_page", map[string]any{"path": "Wide/Code.md", "content": body + "\n" + codeLine + " changed\n", "overwrite": true})
	mustTool(t, cs, "delete_page", map[string]any{"path": "Wide/Gone " + strings.Repeat("x", 100) + ".md"})
	thread := mustTool(t, cs, "create_annotation", map[string]any{"doc_path": "Wide/Code.md", "content": "A comment with " + longWord + " in it", "quote": map[string]any{"exact": "quoted sentence"}, "status": "submitted"})
	id := thread["annotation"].(map[string]any)["id"].(string)
	mustTool(t, duc, "create_annotation", map[string]any{"parent_id": id, "content": "See " + longURL})
	mustTool(t, cs, "create_annotation", map[string]any{"doc_path": "Wide/Code.md", "content": "a draft of mine " + longWord})
	review := mustTool(t, cs, "submit_review", map[string]any{"doc_path": "Wide/Code.md", "summary": "summary " + longWord})
	reviewID := review["review"].(map[string]any)["id"].(string)
	mustTool(t, duc, "task_create", map[string]any{"title": "Task " + longWord, "body": "```\n" + codeLine + "\n```\n\n" + longURL, "labels": []string{strings.Repeat("label", 12)}})
	mustTool(t, duc, "task_post_comment", map[string]any{"issue_number": 1, "comment": "@admin look at " + longURL + " " + longWord, "comment_type": "note"})
	mustTool(t, cs, "create_todo", map[string]any{"title": "Todo " + longWord, "description": longURL})
	mustTool(t, cs, "add_progress_item", map[string]any{"description": "Did " + longWord})

	routes := []string{
		"/", "/pages/Wide/Code.md", "/pages/Wide/Code.md?review=" + reviewID, "/pages/" + longName, "/edit/Wide/Code.md",
		"/history/Wide/Code.md", "/history/Wide/Code.md?from=1&to=2", "/search?q=wide+code&tags=" + longWord,
		"/search?q=" + url.QueryEscape(longWord), "/trash", "/tree?folder=Wide", "/new?folder=Wide", "/threads/" + id + "/delete",
		"/tasks", "/tasks/1", "/inbox", "/desk", "/admin", "/pages/Nowhere.md",
	}
	b := newBrowserSized(t, 768, 1024)
	b.signIn(srv, "/", ".who")
	for _, width := range []int64{768, 820} {
		b.do(fmt.Sprint("width ", width), chromedp.EmulateViewport(width, 1024))
		for _, route := range routes {
			b.do("open "+route, chromedp.Navigate(srv.URL+route), chromedp.WaitReady(chromedp.CSS("main")))
			if bad := read(b, "fits "+route, chromedp.Evaluate[[]string](fitsCheck)); len(bad) > 0 {
				b.artifacts(fmt.Sprint(width, route))
				t.Errorf("at %d px, %s does not fit:\n  %s", width, route, strings.Join(bad, "\n  "))
			}
		}
	}
}
