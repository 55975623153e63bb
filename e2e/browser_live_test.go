package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// watchErrors makes the page remember every script error it meets, for
// scriptErrors to report.
const watchErrors = `window.scriptErrors = []; window.addEventListener("error", e => window.scriptErrors.push(String(e.message))); window.addEventListener("unhandledrejection", e => window.scriptErrors.push(String(e.reason)))`

func (b *browser) scriptErrors() []string {
	b.t.Helper()
	return read(b, "script errors", chromedp.Evaluate[[]string](`window.scriptErrors || []`))
}

// A person reads a page and types while an agent works on it over MCP: the
// agent's resolve, and its drafts submitted as a review, appear without a
// reload; what the person typed (a reply, an edit of their comment, the
// move field, which has no type attribute) and where their caret was stay;
// after those refreshes, the agent moving the page and then deleting it
// each show a notice that leads on.
func TestBrowserShowsAgentsReviewWorkLive(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	agent := agentSession(t, srv, "claude")
	mustTool(t, cs, "write_page", map[string]any{"path": "Plan.md", "content": "# Plan\n\nShip the storage layer first.\n\nThen the browser.\n"})

	// The person is a writer: an admin would see the agent's drafts.
	person := personToken(t, srv, "pia")
	thread := mustTool(t, connectHTTP(t, srv.MCP(), person, "2025-11-25"), "create_annotation", map[string]any{"doc_path": "Plan.md", "content": "Is this the order?", "quote": map[string]any{"exact": "storage layer"}, "status": "submitted"})
	id := thread["annotation"].(map[string]any)["id"].(string)

	b := newBrowser(t)
	b.do("sign in and open the page", chromedp.Navigate(srv.URL+"/login?token="+person), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/pages/Plan.md"), chromedp.WaitVisible(chromedp.CSS("#thread-"+id)))
	b.do("watch for script errors", chromedp.Evaluate[chromedp.Void](watchErrors+`; window.loadedOnce = true`))
	// The person starts three things and leaves them unsent, typing last in
	// the reply, caret mid-text.
	b.do("type", chromedp.Click(chromedp.CSS(".page-actions summary")),
		chromedp.SetValue(chromedp.CSS(`input[name=destination_path]`), "Archive/Plan.md"),
		chromedp.Click(chromedp.CSS("#edit-"+id+" summary")),
		chromedp.SetValue(chromedp.CSS("#edit-"+id+" textarea"), "Is this the right order?"),
		chromedp.Click(chromedp.CSS("#reply-"+id+" textarea")), chromedp.KeyEvent("half a reply"),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#reply-`+id+` textarea").setSelectionRange(4, 4)`))
	time.Sleep(300 * time.Millisecond) // EventSource connects

	mustTool(t, agent, "resolve_annotation", map[string]any{"annotation_id": id})
	b.until("the agent's resolve shows", `document.querySelector("#thread-`+id+`.status-resolved") !== null`)
	kept := func(when string) {
		t.Helper()
		state := read(b, "typed "+when, chromedp.Evaluate[map[string]any](`(() => {
			const r = document.querySelector("#reply-`+id+` textarea");
			return {reply: r.value, focused: document.activeElement === r, caret: r.selectionStart,
				edit: document.querySelector("#edit-`+id+` textarea").value, editOpen: document.querySelector("#edit-`+id+`").open,
				move: document.querySelector("input[name=destination_path]").value}
		})()`))
		want := map[string]any{"reply": "half a reply", "focused": true, "caret": float64(4), "edit": "Is this the right order?", "editOpen": true, "move": "Archive/Plan.md"}
		for k, v := range want {
			if state[k] != v {
				t.Errorf("%s: %s is %v, want %v", when, k, state[k], v)
			}
		}
	}
	kept("after the resolve")

	// The agent's usual flow: a draft (which nobody else sees), then
	// submit_review.
	mustTool(t, agent, "create_annotation", map[string]any{"doc_path": "Plan.md", "content": "The browser needs the storage first anyway.", "quote": map[string]any{"exact": "Then the browser"}})
	// A change everyone sees, made after the draft: once it shows, the
	// draft would have shown too.
	mustTool(t, agent, "edit_page", map[string]any{"path": "Plan.md", "operations": []map[string]any{{"op": "append", "text": "Marker after the draft."}}})
	b.until("the edit made after the draft shows", `document.querySelector("main").innerText.includes("Marker after the draft.")`)
	if n := read(b, "threads before the submit", chromedp.Evaluate[int](`document.querySelectorAll(".thread").length`)); n != 1 {
		t.Fatalf("%d threads show before the agent submits its draft, want 1", n)
	}
	mustTool(t, agent, "submit_review", map[string]any{"doc_path": "Plan.md", "summary": "Agreed, with one note"})
	b.until("the agent's submitted thread shows", `[...document.querySelectorAll(".thread.status-submitted > .comment .author-ai")].length === 1`)
	b.until("the agent's review is listed", `(document.querySelector(".reviews .review-submitted") || {}).textContent?.includes("Agreed, with one note")`)
	kept("after the review")

	mustTool(t, agent, "move_page", map[string]any{"source_path": "Plan.md", "destination_path": "Archive/Plan.md"})
	b.until("the move notice", `(document.getElementById("live-notice") || {}).textContent?.includes("moved meanwhile, to Archive/Plan.md")`)
	if errs := b.scriptErrors(); len(errs) > 0 {
		t.Fatalf("script errors on the page: %v", errs)
	}
	b.do("follow the notice", chromedp.Click(chromedp.CSS("#live-notice a")), chromedp.WaitVisible(chromedp.CSS(`article.page[data-live-path="Archive/Plan.md"]`)),
		chromedp.Evaluate[chromedp.Void](watchErrors))
	time.Sleep(300 * time.Millisecond)
	// A refresh first (the agent replies), then the delete.
	mustTool(t, agent, "create_annotation", map[string]any{"parent_id": id, "content": "Moved it to the archive."})
	b.until("the reply shows", `document.querySelector("#thread-`+id+` .reply .author-ai") !== null`)
	mustTool(t, agent, "delete_page", map[string]any{"path": "Archive/Plan.md"})
	b.until("the delete notice", `(document.getElementById("live-notice") || {}).textContent?.includes("deleted meanwhile (it is in the trash)")`)
	if errs := b.scriptErrors(); len(errs) > 0 {
		t.Fatalf("script errors on the page: %v", errs)
	}
	if !read(b, "no reload", chromedp.Evaluate[bool](`window.scriptErrors !== undefined`)) {
		t.Fatal("the page reloaded")
	}
	// Signed out elsewhere (the person's token revoked): the page says
	// that live updates stopped.
	for _, line := range strings.Split(mustCLI(t, srv, "token", "list"), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.Contains(line, "pia") {
			mustCLI(t, srv, "token", "revoke", f[0])
		}
	}
	b.until("the signed-out notice", `(document.getElementById("live-notice") || {}).textContent?.includes("Live updates stopped")`)
}

// How long an agent's write takes to show in a browser that has the page
// open: about 20 samples of the kinds of write a person watches for (an
// edit of the page, a new thread, a reply, a resolve), from the MCP call
// to the change on screen. Reported; the README's "within a second" is
// asserted with room for a loaded machine: every sample within 5 s.
const liveBound = 5 * time.Second

func TestBrowserLiveLatency(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	agent := agentSession(t, srv, "claude")
	mustTool(t, cs, "write_page", map[string]any{"path": "Live.md", "content": "# Live\n\nbefore\n"})
	b := newBrowser(t)
	b.signIn(srv, "/pages/Live.md", "article.page")
	time.Sleep(500 * time.Millisecond)
	var lat []time.Duration
	var root string
	for i := range 20 {
		marker := fmt.Sprintf("sample %d", i)
		var args map[string]any
		tool := ""
		cond := fmt.Sprintf(`document.querySelector("main").innerText.includes(%q)`, marker)
		switch i % 4 {
		case 0:
			tool, args = "edit_page", map[string]any{"path": "Live.md", "operations": []map[string]any{{"op": "append", "text": marker}}}
		case 1:
			tool, args = "create_annotation", map[string]any{"doc_path": "Live.md", "content": marker, "status": "submitted"}
		case 2:
			tool, args = "create_annotation", map[string]any{"parent_id": root, "content": marker}
		case 3:
			tool, args = "resolve_annotation", map[string]any{"annotation_id": root}
			cond = fmt.Sprintf(`document.querySelector("#thread-%s.status-resolved") !== null`, root)
		}
		start := time.Now()
		res := mustTool(t, agent, tool, args)
		if i%4 == 1 {
			root = res["annotation"].(map[string]any)["id"].(string)
		}
		b.do("see "+marker, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(5*time.Millisecond)))
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	if worst := lat[len(lat)-1]; worst > liveBound {
		t.Errorf("an agent's write took %v to show in the open page, want within %v (the README promises a second)", worst.Round(time.Millisecond), liveBound)
	}
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1)+0.5)].Round(time.Millisecond) }
	t.Logf("agent write to open browser over %d samples: p50 %v, p95 %v, max %v", len(lat), p(0.5), p(0.95), lat[len(lat)-1].Round(time.Millisecond))
	report(t, "live-latency", "samples", len(lat), "p50", p(0.5), "p95", p(0.95), "max", lat[len(lat)-1].Round(time.Millisecond))
}

// personToken makes a token of a person (not an agent) who writes in the
// default workspace.
func personToken(t *testing.T, srv *server, handle string) string {
	t.Helper()
	return strings.TrimSpace(mustCLI(t, srv, "token", "create", "--principal", handle, "--kind", "human", "--workspace", "default", "--role", "writer"))
}
