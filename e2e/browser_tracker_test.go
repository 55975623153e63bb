package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/atrium-hq/atrium/trackers/githubfake"
)

// /admin/tracker as an admin uses it, against a GitHub fake: a bad
// repository is refused and says why; the link made there is the
// workspace's; Sync now has the server's mirror push at once (its tick is
// an hour away); a conflict shows on the page and on the task's. Forms
// only, at iPad-portrait width.
func TestBrowserAdminLinksAndSyncsTheTracker(t *testing.T) {
	fake := githubfake.Start()
	defer fake.Close()
	fake.Token = "tok"
	const repo = "acme/web"
	srv := startServeEnv(t, append(trackerEnv(), "ATRIUM_TRACKER_INTERVAL=1h"), "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	mustTool(t, cs, "task_create", map[string]any{"title": "Mirrored from the browser"})

	b := newBrowser(t)
	b.signIn(srv, "/admin", "#members")
	b.do("open the tracker page", chromedp.Click(chromedp.CSS(`.admin-nav a[href="/admin/tracker"]`)), chromedp.WaitVisible(chromedp.ID("link-tracker")))
	if st := b.submits("link to nope", chromedp.SetValue(chromedp.CSS(`#link-tracker input[name=repo]`), "nope"),
		chromedp.Click(chromedp.CSS(`#link-tracker button[type=submit]`))); st != http.StatusBadRequest {
		t.Fatalf("linking to nope: %d, want 400", st)
	}
	if msg := read(b, "refusal", chromedp.Text(chromedp.CSS(".tracker .error"))); !strings.Contains(msg, "OWNER/REPO") {
		t.Fatalf("linking to nope says %q", msg)
	}
	if st := b.submits("link", chromedp.SetValue(chromedp.CSS(`#link-tracker input[name=repo]`), repo),
		chromedp.SetValue(chromedp.CSS(`#link-tracker input[name=api_url]`), fake.URL),
		chromedp.Click(chromedp.CSS(`#link-tracker button[type=submit]`))); st != http.StatusOK {
		t.Fatalf("linking: %d", st)
	}
	if link := read(b, "the link", chromedp.Text(chromedp.CSS(".tracker-link"))); !strings.Contains(link, repo) || !strings.Contains(link, "never") {
		t.Fatalf("the page after linking says %q", link)
	}
	if out, _, _ := srv.cli(t, nil, "tracker", "status"); !strings.Contains(out, "github "+repo) {
		t.Fatalf("tracker status after linking from the page:\n%s", out)
	}

	// syncsUntil presses Sync now and reloads until sel's text has want.
	syncsUntil := func(what, sel, want string) {
		t.Helper()
		b.submits("sync now: "+what, chromedp.Click(chromedp.CSS(`form[action="/admin/tracker/sync"] button`)))
		got := ""
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(got, want); time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %s says %q, want %q\n%s", what, sel, got, want, srv.stderr)
			}
			b.do("reload", chromedp.Navigate(srv.URL+"/admin/tracker"), chromedp.WaitVisible(chromedp.CSS(sel)))
			got = read(b, what, chromedp.Text(chromedp.CSS(sel)))
		}
	}
	syncsUntil("the first push", ".tracker-link .counts", "1 issue")
	if is := fake.Issues(repo); len(is) != 1 || is[0].Title != "Mirrored from the browser" {
		t.Fatalf("the fake's issues after Sync now: %+v", is)
	}

	fake.Edit(repo, 1, func(i *githubfake.Issue) { i.State = "closed" })
	mustTool(t, cs, "task_update", map[string]any{"issue_number": 1, "status": "in_progress"})
	syncsUntil("a conflict", "#conflicts", "closed")
	b.do("open the task", chromedp.Click(chromedp.CSS(`#conflicts a[href="/tasks/1"]`)), chromedp.WaitVisible(chromedp.ID("tracker-conflicts")))
	if row := read(b, "the task's conflicts", chromedp.Text(chromedp.ID("tracker-conflicts"))); !strings.Contains(row, "state") || !strings.Contains(row, "closed") {
		t.Fatalf("the task's conflicts say %q", row)
	}

	b.do("back to the tracker page", chromedp.Navigate(srv.URL+"/admin/tracker"), chromedp.WaitVisible(chromedp.ID("conflicts")))
	if scripts := read(b, "scripts", chromedp.Evaluate[int](`document.scripts.length`)); scripts != 0 {
		t.Fatalf("the tracker page loads %d scripts; it is forms only", scripts)
	}
	if wide := read(b, "width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); wide {
		t.Fatal("the tracker page scrolls sideways at iPad-portrait width")
	}
}
