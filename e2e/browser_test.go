package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium for one test, started as the machine's
// closed network needs it: no background traffic, no sandbox (tests run as
// root), a fresh profile. Without Chromium the test skips, unless
// ATRIUM_REQUIRE_BROWSER=1 (CI), where it fails.
type browser struct {
	t     testing.TB
	ctx   context.Context
	saved bool // artifacts were kept for a failure already
}

// newBrowser is a browser the size of an iPad held upright (820×1180, the
// iPad Air), or of ATRIUM_BROWSER_SIZE (such as 768x1024, the smaller
// iPads: every browser test runs there too); newBrowserSized is one of
// another size.
func newBrowser(t testing.TB) *browser {
	t.Helper()
	w, h := 820, 1180
	if size := os.Getenv("ATRIUM_BROWSER_SIZE"); size != "" {
		if _, err := fmt.Sscanf(size, "%dx%d", &w, &h); err != nil {
			t.Fatalf("ATRIUM_BROWSER_SIZE=%q: want WIDTHxHEIGHT, such as 768x1024", size)
		}
	}
	return newBrowserSized(t, w, h)
}

func newBrowserSized(t testing.TB, width, height int) *browser {
	t.Helper()
	path := os.Getenv("ATRIUM_CHROMIUM")
	if path == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		if os.Getenv("ATRIUM_REQUIRE_BROWSER") == "1" {
			t.Fatal("Chromium is required (ATRIUM_REQUIRE_BROWSER=1) but not found: apt-get install chromium")
		}
		t.Skip("no Chromium on this machine: apt-get install chromium to run the browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.NoFirstRun,
		chromedp.WindowSize(width, height))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	// A test that failed on a value it read (not on a browser step, which
	// keeps its own) keeps what the browser showed then too. Cleanups run
	// last first: this one while the browser still lives.
	t.Cleanup(func() {
		if t.Failed() && !b.saved {
			b.artifacts("at failure")
		}
	})
	// The first action starts the browser, and it lives as long as b.ctx:
	// no timeout on this one.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return b
}

// do performs steps with a generous bound; on failure it saves a screenshot
// and the page's HTML and stops the test.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.still()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.artifacts(what)
		b.t.Fatalf("%s: %v", what, err)
	}
}

// still waits until the page's live updates have been quiet for a moment
// (live.js marks them on the root element): a refresh replaces the nodes a
// test is about to type into or click, and one change can bring several
// events (a reply, then its review's update). Quiet already, it costs one
// evaluation.
func (b *browser) still() {
	b.t.Helper()
	const quiet = 300 // ms
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	for {
		since, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(() => { const d = document.documentElement; if (d.hasAttribute("data-live-busy")) return 0; const at = +d.getAttribute("data-live-at") || 0; return at ? Math.max(0, Date.now() - at) : 1e9; })()`))
		if err != nil || since >= quiet {
			return // a page between two loads says nothing: the steps that follow wait for what they need
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(quiet-since) * time.Millisecond):
		}
	}
}

// clickNow clicks the node sel names when the step runs, for nodes a live
// refresh may replace between finding and clicking them.
func clickNow(sel string) chromedp.Action[chromedp.Void] {
	return byScript(sel, `n.click()`)
}

// setNow sets a field's value as typing would, finding it when the step
// runs (see clickNow).
func setNow(sel, value string) chromedp.Action[chromedp.Void] {
	v, _ := json.Marshal(value)
	return byScript(sel, `n.value = `+string(v)+`; n.dispatchEvent(new Event("input", {bubbles: true}))`)
}

// textNow reads the text of the node sel names once it is there, in one
// evaluation (see clickNow): a page that refreshes live as its own save
// arrives cannot swap the node between finding and reading it.
func textNow(sel string) chromedp.Action[string] {
	q, _ := json.Marshal(sel)
	return chromedp.Poll[string](`(() => { const n = document.querySelector(` + string(q) + `); return n ? n.textContent : false; })()`)
}

// byScript runs do on the node sel names once the node is there, all in one
// evaluation, so no refresh can come between finding the node and acting.
func byScript(sel, do string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(sel)
	return chromedp.Poll[chromedp.Void](`(() => { const n = document.querySelector(` + string(q) + `); if (!n) return false; ` + do + `; return true; })()`)
}

// holds waits until the field sel names holds text: keys sent are handled by
// the page in its own time, and a form submitted before the last of them
// lands sends what was typed so far (a review's summary arrived cut to "One
// ques" under load).
func holds(sel, text string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(sel)
	v, _ := json.Marshal(text)
	return chromedp.Poll[chromedp.Void](`(() => { const n = document.querySelector(` + string(q) + `); return !!n && n.value === ` + string(v) + `; })()`)
}

// read reads one value from the page, as do performs steps.
func read[T any](b *browser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.artifacts(what)
		b.t.Fatalf("%s: %v", what, err)
	}
	return v
}

// artifacts keeps what the browser shows, for a failed test.
func (b *browser) artifacts(what string) {
	b.saved = true
	dir := os.Getenv("ATRIUM_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "atrium-browser-artifacts")
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(b.t.Name() + "-" + what)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	png, _ := chromedp.Run(ctx, chromedp.FullScreenshot(80))
	html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	_ = os.WriteFile(filepath.Join(dir, name+".jpg"), png, 0o644)
	_ = os.WriteFile(filepath.Join(dir, name+".html"), []byte(html), 0o644)
	b.t.Logf("artifacts of %q in %s", what, dir)
}

// A person opens the login link, is signed in, and signs out.
func TestBrowserSignsInWithTheLinkAndOut(t *testing.T) {
	srv := startServe(t, "")
	b := newBrowser(t)
	b.do("open the login link", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")))
	if who := read(b, "who", chromedp.Text(chromedp.CSS(".who"))); !strings.Contains(who, "admin") {
		t.Fatalf("signed in as %q", who)
	}
	if cookies := read(b, "cookies", chromedp.Evaluate[string](`document.cookie`)); cookies != "" {
		t.Fatalf("a script can read the session cookie: %q", cookies)
	}
	if url := read(b, "location", chromedp.Location()); strings.Contains(url, "token") {
		t.Fatalf("address bar after sign-in: %s", url)
	}
	b.do("sign out", chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)), chromedp.WaitVisible(chromedp.CSS(`header a[href="/login"]`)))
	out, _, code := srv.cli(t, nil, "session", "list")
	if code != 0 || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("sessions after signing out:\n%s", out)
	}
}

// The form signs in with a pasted token; a wrong one says why.
func TestBrowserSignsInWithTheForm(t *testing.T) {
	srv := startServe(t, "")
	b := newBrowser(t)
	b.do("a wrong token", chromedp.Navigate(srv.URL+"/login"), chromedp.SendKeys(chromedp.ID("token"), "atr_WRONG"),
		chromedp.Submit(chromedp.ID("token")), chromedp.WaitVisible(chromedp.CSS(".error")))
	if msg := read(b, "error", chromedp.Text(chromedp.CSS(".error"))); !strings.Contains(msg, "invalid or revoked token") {
		t.Fatalf("wrong token says %q", msg)
	}
	b.do("the right token", chromedp.SetValue(chromedp.ID("token"), srv.AdminToken), chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.CSS(".who")))
	if who := read(b, "who", chromedp.Text(chromedp.CSS(".who"))); !strings.Contains(who, "admin") {
		t.Fatalf("signed in as %q", who)
	}
}

// xssPayloads are what a page's author might try; none may run in a reader's
// browser. Each sets window.pwned.
var xssPayloads = []string{
	`<script>window.pwned=1</script>`,
	`<img src=x onerror="window.pwned=1">`,
	`<svg onload="window.pwned=1"></svg>`,
	`[click me](javascript:window.pwned=1)`,
	`<a href="javascript:window.pwned=1">x</a>`,
	`<iframe srcdoc="<script>parent.pwned=1</script>"></iframe>`,
	"[[<img src=x onerror=window.pwned=1>]]",
	`<style>@import 'javascript:window.pwned=1'</style>`,
}

// A signed-in person reads a page: rendered Markdown, wikilinks that lead
// somewhere (and ones that do not yet, marked), backlinks; nothing the
// author wrote runs; an anonymous visitor sees no private page.
func TestBrowserReadsAPage(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	alpha := "---\ntags: [plan, infra]\n---\n# Alpha\n\nSee [[Beta]] and [[Missing]].\n\n" + strings.Join(xssPayloads, "\n\n") + "\n"
	for p, c := range map[string]string{"Projects/Alpha.md": alpha, "Projects/Beta.md": "# Beta\n\nBack to [[Alpha]].\n", "Projects/Odd & 'name'.md": "---\ntitle: <b>odd</b><img src=x onerror=window.pwned=1>\ntags: [\"<script>window.pwned=1</script>\"]\n---\n# Odd\n"} {
		if res := callTool(t, cs, "write_page", map[string]any{"path": p, "content": c}); res.IsError {
			t.Fatalf("write %s: %+v", p, res.Content)
		}
	}
	b := newBrowser(t)
	b.do("anonymous reads a private page", chromedp.Navigate(srv.URL+"/pages/Projects/Alpha.md"), chromedp.WaitVisible(chromedp.CSS(".error")))
	if html := read(b, "the page", chromedp.OuterHTML(chromedp.CSS("main"))); strings.Contains(html, "See") {
		t.Fatalf("an anonymous visitor sees the private page:\n%s", html)
	}
	b.do("sign in and read", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/pages/Projects/Alpha.md"), chromedp.WaitVisible(chromedp.CSS("article.page")))
	if title := read(b, "heading", chromedp.Text(chromedp.CSS(".markdown h1"))); title != "Alpha" {
		t.Fatalf("heading = %q", title)
	}
	if href := read(b, "resolved link", chromedp.AttributeValue(chromedp.CSS(".markdown a.wikilink:not(.unresolved)"), "href")); href.Value != "/pages/Projects/Beta.md" {
		t.Fatalf("[[Beta]] leads to %+v", href)
	}
	if missing := read(b, "unresolved link", chromedp.Text(chromedp.CSS(".markdown a.wikilink.unresolved"))); missing != "Missing" {
		t.Fatalf("the unresolved link reads %q", missing)
	}
	if back := read(b, "backlinks", chromedp.Text(chromedp.CSS(".backlinks"))); !strings.Contains(back, "Beta") {
		t.Fatalf("backlinks = %q", back)
	}
	if chips := read(b, "chips", chromedp.Text(chromedp.CSS(".chips"))); !strings.Contains(chips, "#plan") || !strings.Contains(chips, "private") {
		t.Fatalf("chips = %q", chips)
	}
	if side := read(b, "sidebar", chromedp.Text(chromedp.CSS(".sidebar"))); !strings.Contains(side, "Beta") || !strings.Contains(side, "<b>odd</b>") {
		t.Fatalf("sidebar = %q", side)
	}
	// The old page has a current link in its sidebar too: wait for the new
	// page's heading, across the navigation, rather than for a selector
	// that both pages match.
	b.do("follow the link", chromedp.Click(chromedp.CSS(".markdown a.wikilink:not(.unresolved)")))
	b.until("Beta's heading", `document.querySelector('.markdown h1') !== null && document.querySelector('.markdown h1').innerText.trim() === 'Beta' && document.querySelector('.sidebar a[aria-current="page"]') !== null`)
	if pwned := read(b, "payload flag", chromedp.Evaluate[bool](`window.pwned === 1 || document.querySelector('iframe') !== null`)); pwned {
		t.Fatal("a payload in a page ran or left an iframe")
	}
	// An image the page shows by a relative address, as imported sites do
	// (../assets/…), loads: the file beside the pages is served.
	const dot = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	if res := callTool(t, cs, "add_attachment", map[string]any{"page_path": "Projects/Beta.md", "content_base64": dot, "file_name": "dot.png"}); res.IsError {
		t.Fatalf("attach: %+v", res.Content)
	}
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Projects/Pictures/Dot.md", "content": "# Dot\n\n![a dot](../assets/dot.png)\n"}); res.IsError {
		t.Fatalf("write: %+v", res.Content)
	}
	b.do("a page with an image", chromedp.Navigate(srv.URL+"/pages/Projects/Pictures/Dot.md"), chromedp.WaitVisible(chromedp.CSS(".markdown img")))
	b.until("the image loads", `(document.querySelector(".markdown img") || {}).complete && document.querySelector(".markdown img").naturalWidth === 1`)
	b.do("back to Alpha", chromedp.Navigate(srv.URL+"/pages/Projects/Alpha.md"), chromedp.WaitVisible(chromedp.CSS("article.page")))
	if pwned := read(b, "payload flag on Alpha", chromedp.Evaluate[bool](`window.pwned === 1 || document.querySelector('.markdown script, .markdown iframe, .markdown [onerror], .markdown [onload]') !== null`)); pwned {
		t.Fatal("a payload in Alpha ran or kept its element")
	}
}

// Search ranks, marks the words that matched, narrows by folder, and shows
// an anonymous visitor public pages only.
func TestBrowserSearches(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	for p, c := range map[string]string{
		"Guides/Sync.md":     "---\naccess: public\n---\n# Sync your notes across devices\n\nSyncing keeps <b>every</b> device current.\n",
		"Guides/Backup.md":   "---\naccess: public\n---\n# Backups\n\nCopies of the vault.\n",
		"Private/Plan.md":    "# Sync plan\n\nThe private sync roadmap.\n",
		"Archive/OldSync.md": "---\naccess: public\ntags: [history, sync]\n---\n# Old sync\n\nHow sync worked before.\n",
		"Guides/Merge.md":    "---\naccess: public\ntags: [sync, howto]\n---\n# Merge\n\nWhen sync meets two edits.\n",
	} {
		if res := callTool(t, cs, "write_page", map[string]any{"path": p, "content": c}); res.IsError {
			t.Fatalf("write %s: %+v", p, res.Content)
		}
	}
	b := newBrowser(t)
	b.do("search anonymously", chromedp.Navigate(srv.URL+"/search?q=how+do+I+sync+my+notes"), chromedp.WaitVisible(chromedp.CSS(".results li")))
	results := read(b, "results", chromedp.Text(chromedp.CSS(".results")))
	if !strings.Contains(results, "Sync your notes across devices") || strings.Contains(results, "roadmap") || strings.Contains(results, "Sync plan") {
		t.Fatalf("anonymous results:\n%s", results)
	}
	if marked := read(b, "marks", chromedp.Text(chromedp.CSS(".results mark"))); !strings.EqualFold(marked, "syncing") && !strings.EqualFold(marked, "sync") {
		t.Fatalf("first marked word = %q", marked)
	}
	if raw := read(b, "snippet html", chromedp.InnerHTML(chromedp.CSS(".results"))); strings.Contains(raw, "<b>every</b>") {
		t.Fatalf("a snippet passed HTML through:\n%s", raw)
	}
	b.do("narrow to a folder", chromedp.Navigate(srv.URL+"/search?q=sync&path=Archive"), chromedp.WaitVisible(chromedp.CSS(".results li")))
	if results := read(b, "folder results", chromedp.Text(chromedp.CSS(".results"))); !strings.Contains(results, "Old sync") || strings.Contains(results, "across devices") {
		t.Fatalf("results in Archive:\n%s", results)
	}
	// The tag filter, from the form: only pages with every tag given.
	b.do("filter by tags", chromedp.Navigate(srv.URL+"/search"), chromedp.WaitVisible(chromedp.CSS(".searchform")),
		chromedp.SetValue(chromedp.CSS(`.searchform input[name=q]`), "sync"), chromedp.SetValue(chromedp.CSS(`.searchform input[name=tags]`), "sync, history"),
		chromedp.Submit(chromedp.CSS(`.searchform input[name=q]`)), chromedp.WaitVisible(chromedp.CSS(".results li")))
	if results := read(b, "tag results", chromedp.Text(chromedp.CSS(".results"))); !strings.Contains(results, "Old sync") || strings.Contains(results, "Merge") || strings.Contains(results, "across devices") {
		t.Fatalf("results tagged sync and history:\n%s", results)
	}
	if kept := read(b, "tags kept", chromedp.Value(chromedp.CSS(`.searchform input[name=tags]`))); kept != "sync, history" {
		t.Fatalf("the tags field reads %q after searching", kept)
	}
	b.do("one tag", chromedp.Navigate(srv.URL+"/search?q=sync&tags=howto"), chromedp.WaitVisible(chromedp.CSS(".results li")))
	if results := read(b, "howto results", chromedp.Text(chromedp.CSS(".results"))); !strings.Contains(results, "Merge") || strings.Contains(results, "Old sync") {
		t.Fatalf("results tagged howto:\n%s", results)
	}
	b.do("sign in and search", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.SetValue(chromedp.CSS(`header input[name=q]`), "sync roadmap"), chromedp.Submit(chromedp.CSS(`header input[name=q]`)),
		chromedp.WaitVisible(chromedp.CSS(".results li")))
	if results := read(b, "member results", chromedp.Text(chromedp.CSS(".results li"))); !strings.Contains(results, "Sync plan") {
		t.Fatalf("a member's first result:\n%s", results)
	}
}

// A person edits a page while an agent writes it: the save is a conflict
// that shows both versions and keeps the person's text; saving again keeps
// theirs, and the agent's stays in the history.
func TestBrowserEditsAndKeepsTextOnConflict(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Notes/Draft.md", "content": "# Draft\n\nfirst\n"}); res.IsError {
		t.Fatalf("write: %+v", res.Content)
	}
	b := newBrowser(t)
	b.do("sign in and edit", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/edit/Notes/Draft.md"), chromedp.WaitVisible(chromedp.CSS(`textarea[name=content]`)),
		chromedp.SetValue(chromedp.CSS(`textarea[name=content]`), "# Draft\n\nthe person's words\n"),
		chromedp.Click(chromedp.CSS(`button[value=preview]`)), chromedp.WaitVisible(chromedp.CSS(".preview")))
	if prev := read(b, "preview", chromedp.Text(chromedp.CSS(".preview .markdown"))); !strings.Contains(prev, "the person's words") {
		t.Fatalf("preview = %q", prev)
	}
	// An agent writes meanwhile.
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Notes/Draft.md", "content": "# Draft\n\nthe agent's words\n", "base_revision": 1}); res.IsError {
		t.Fatalf("agent write: %+v", res.Content)
	}
	b.do("save onto a stale revision", chromedp.Click(chromedp.CSS(`button[value=save]`)), chromedp.WaitVisible(chromedp.CSS(".conflict")))
	mine := read(b, "my text", chromedp.Value(chromedp.CSS(`textarea[name=content]`)))
	theirs := read(b, "their text", chromedp.Value(chromedp.CSS(`.conflict textarea`)))
	if !strings.Contains(mine, "the person's words") || !strings.Contains(theirs, "the agent's words") {
		t.Fatalf("conflict shows mine %q and theirs %q", mine, theirs)
	}
	b.do("save again", chromedp.Click(chromedp.CSS(`button[value=save]`)), chromedp.WaitVisible(chromedp.CSS("article.page")))
	read1 := structured(t, callTool(t, cs, "read_page", map[string]any{"path": "Notes/Draft.md"}))
	if !strings.Contains(read1["content"].(string), "the person's words") {
		t.Fatalf("after saving again: %v", read1["content"])
	}
	old := structured(t, callTool(t, cs, "read_page", map[string]any{"path": "Notes/Draft.md", "revision": 2}))
	if !strings.Contains(old["content"].(string), "the agent's words") {
		t.Fatalf("the agent's revision is gone: %v", old["content"])
	}

	b.do("a new page", chromedp.Navigate(srv.URL+"/edit/Notes/New.md"), chromedp.WaitVisible(chromedp.CSS(`textarea[name=content]`)),
		chromedp.SetValue(chromedp.CSS(`textarea[name=content]`), "# New\n\nmade in the browser\n"),
		chromedp.Click(chromedp.CSS(`button[value=save]`)), chromedp.WaitVisible(chromedp.CSS("article.page")))
	if title := read(b, "new page", textNow(".markdown h1")); title != "New" {
		t.Fatalf("new page heading = %q", title)
	}
}

// An agent's write appears in a page open in a browser, without a reload;
// in an open editor it only says so, and the person's text stays.
func TestBrowserShowsAgentsWritesLive(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Live.md", "content": "# Live\n\nbefore\n"}); res.IsError {
		t.Fatalf("write: %+v", res.Content)
	}
	b := newBrowser(t)
	b.do("open the page", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/pages/Live.md"), chromedp.WaitVisible(chromedp.CSS("article.page")),
		chromedp.Evaluate[chromedp.Void](`window.loadedOnce = true`))
	// Give EventSource its connection before the write.
	time.Sleep(500 * time.Millisecond)
	var lat []time.Duration
	for i := range 3 {
		text := fmt.Sprintf("written by the agent, round %d", i)
		start := time.Now()
		if res := callTool(t, cs, "edit_page", map[string]any{"path": "Live.md", "operations": []map[string]any{{"op": "append", "text": text}}}); res.IsError {
			t.Fatalf("agent edit: %+v", res.Content)
		}
		b.do("see round "+fmt.Sprint(i), chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector('article.page').innerText.includes(%q)`, text)))
		lat = append(lat, time.Since(start))
	}
	if same := read(b, "no reload", chromedp.Evaluate[bool](`window.loadedOnce === true`)); !same {
		t.Fatal("the page reloaded instead of updating in place")
	}
	t.Logf("agent write to browser: %v", lat)

	b.do("open the editor and type", chromedp.Navigate(srv.URL+"/edit/Live.md"), chromedp.WaitVisible(chromedp.CSS(`textarea[name=content]`)),
		chromedp.SetValue(chromedp.CSS(`textarea[name=content]`), "the person's unsaved words"))
	time.Sleep(500 * time.Millisecond)
	callTool(t, cs, "edit_page", map[string]any{"path": "Live.md", "operations": []map[string]any{{"op": "append", "text": "one more"}}})
	b.do("the notice", chromedp.WaitVisible(chromedp.ID("live-notice")))
	if typed := read(b, "typed text", chromedp.Value(chromedp.CSS(`textarea[name=content]`))); typed != "the person's unsaved words" {
		t.Fatalf("the editor's text became %q", typed)
	}
}

// selectText selects the first occurrence of text in the page's body, as a
// person would with the mouse.
func selectText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const body = document.querySelector("article.page .markdown");
		const walk = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
		for (let n = walk.nextNode(); n; n = walk.nextNode()) {
			const i = n.data.indexOf(%q);
			if (i < 0) continue;
			const r = document.createRange();
			r.setStart(n, i); r.setEnd(n, i + %d);
			const s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
			return;
		}
		throw new Error("text not on the page");
	})()`, text, len(text)))
}

// The review loop of 000: a person selects text and comments; an agent
// replies over MCP; the person resolves, reopens, submits the review, and
// deletes a thread after a confirmation that names its replies.
func TestBrowserReviewsAPage(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Design.md", "content": "# Design\n\n## Storage\n\nWe use SQLite for the embedded store and PostgreSQL to scale.\n"}); res.IsError {
		t.Fatalf("write: %+v", res.Content)
	}
	b := newBrowser(t)
	b.do("select and comment", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/pages/Design.md"), chromedp.WaitVisible(chromedp.CSS("#new-comment")),
		selectText("PostgreSQL to scale"), chromedp.WaitVisible(chromedp.CSS("#new-comment .quote-preview")),
		chromedp.SendKeys(chromedp.ID("comment-content"), "Why not both?"), holds("#comment-content", "Why not both?"),
		chromedp.Submit(chromedp.ID("comment-content")), chromedp.WaitVisible(chromedp.CSS(".thread .quote")))
	if q := read(b, "quote", chromedp.Text(chromedp.CSS(".thread .quote"))); q != "PostgreSQL to scale" {
		t.Fatalf("the thread quotes %q", q)
	}
	id := strings.TrimPrefix(read(b, "thread id", chromedp.AttributeValue(chromedp.CSS(".thread"), "id")).Value, "thread-")
	if status := read(b, "draft", chromedp.AttributeValue(chromedp.CSS(".thread"), "class")).Value; !strings.Contains(status, "status-draft") {
		t.Fatalf("a new comment is %q, want a draft", status)
	}
	b.do("submit the review", chromedp.SendKeys(chromedp.ID("review-summary"), "Looks fine"), holds("#review-summary", "Looks fine"),
		chromedp.Submit(chromedp.ID("review-summary")), chromedp.WaitVisible(chromedp.CSS(".thread.status-submitted")))

	// An agent answers over MCP; the open page shows it live, as an AI's.
	out, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "claude", "--kind", "agent", "--workspace", "default", "--role", "writer")
	if code != 0 {
		t.Fatalf("agent token: %s", errOut)
	}
	agent := connectHTTP(t, srv.MCP(), strings.TrimSpace(out), "2025-11-25")
	if res := callTool(t, agent, "create_annotation", map[string]any{"parent_id": id, "content": "Both: SQLite by default."}); res.IsError {
		t.Fatalf("agent reply: %+v", res.Content)
	}
	b.do("the agent's reply appears", chromedp.WaitVisible(chromedp.CSS(".thread .reply .author-ai")))
	b.do("reply, resolve, reopen",
		chromedp.SetValue(chromedp.CSS(".thread .reply-form textarea"), "Thanks."), chromedp.Submit(chromedp.CSS(".thread .reply-form textarea")),
		chromedp.WaitVisible(chromedp.Search(`//*[contains(concat(" ", normalize-space(@class), " "), " reply ")][contains(., "Thanks.")]`)),
		chromedp.Click(chromedp.CSS(`.thread form[action$="/resolve"] button`)), chromedp.WaitVisible(chromedp.CSS(".thread.status-resolved")),
		chromedp.Click(chromedp.CSS(`.thread form[action$="/reopen"] button`)), chromedp.WaitVisible(chromedp.CSS(".thread.status-submitted")))

	b.do("ask to delete", chromedp.Click(chromedp.CSS(".thread a.delete")), chromedp.WaitVisible(chromedp.CSS(".confirm-question")))
	if q := read(b, "confirmation", chromedp.Text(chromedp.CSS(".confirm-question"))); q != "Delete this thread? 2 replies will also be deleted." {
		t.Fatalf("confirmation says %q", q)
	}
	b.do("cancel", chromedp.Click(chromedp.ID("confirm-cancel")), chromedp.WaitVisible(chromedp.CSS("#thread-"+id)))
	b.do("delete for real", chromedp.Click(chromedp.CSS(".thread a.delete")), chromedp.WaitVisible(chromedp.ID("confirm-ok")),
		chromedp.Click(chromedp.ID("confirm-ok")), chromedp.WaitVisible(chromedp.CSS("#threads")))
	if n := read(b, "threads left", chromedp.Evaluate[int](`document.querySelectorAll(".thread").length`)); n != 0 {
		t.Fatalf("%d threads after deleting the only one", n)
	}
	if res := callTool(t, cs, "get_annotation", map[string]any{"annotation_id": id}); !res.IsError {
		t.Fatal("the deleted thread is still there over MCP")
	}
}

// History: who changed the page when, a diff between two revisions, and a
// restore that makes an old revision current again.
func TestBrowserShowsHistoryAndRestores(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	for _, c := range []string{"# H\n\none\ntwo\n", "# H\n\none\nthree\n"} {
		if res := callTool(t, cs, "write_page", map[string]any{"path": "H.md", "content": c, "overwrite": true}); res.IsError {
			t.Fatalf("write: %+v", res.Content)
		}
	}
	b := newBrowser(t)
	b.do("open the history", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Navigate(srv.URL+"/history/H.md"), chromedp.WaitVisible(chromedp.CSS(".diff")))
	if del, ins := read(b, "removed", chromedp.Text(chromedp.CSS(".diff del"))), read(b, "added", chromedp.Text(chromedp.CSS(".diff ins"))); del != "- two" || ins != "+ three" {
		t.Fatalf("diff shows %q and %q", del, ins)
	}
	b.do("restore revision 1", chromedp.Click(chromedp.CSS(`button[form="restore-1"]`)), chromedp.WaitVisible(chromedp.CSS("article.page")))
	res := structured(t, callTool(t, cs, "read_page", map[string]any{"path": "H.md"}))
	if !strings.Contains(res["content"].(string), "two") || res["revision"].(float64) != 3 {
		t.Fatalf("after restoring revision 1: %v", res)
	}
}

// The home page says who did what (person or agent), which reviews are open,
// and which threads wait for the person's answer.
func TestBrowserHomeShowsActivityAndWhatWaits(t *testing.T) {
	srv := startServe(t, "")
	out, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "claude", "--kind", "agent", "--workspace", "default", "--role", "writer")
	if code != 0 {
		t.Fatalf("agent token: %s", errOut)
	}
	agent := connectHTTP(t, srv.MCP(), strings.TrimSpace(out), "2025-11-25")
	person := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	if res := callTool(t, agent, "write_page", map[string]any{"path": "Spec.md", "content": "# Spec\n\nThe agent's plan.\n"}); res.IsError {
		t.Fatalf("agent write: %+v", res.Content)
	}
	thread := structured(t, callTool(t, person, "create_annotation", map[string]any{"doc_path": "Spec.md", "content": "Is this final?"}))
	id := thread["annotation"].(map[string]any)["id"].(string)
	callTool(t, person, "submit_review", map[string]any{"doc_path": "Spec.md", "summary": "One question"})
	if res := callTool(t, agent, "create_annotation", map[string]any{"parent_id": id, "content": "Not yet: what do you think?"}); res.IsError {
		t.Fatalf("agent reply: %+v", res.Content)
	}
	b := newBrowser(t)
	b.do("home", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".activity")))
	if act := strings.ToLower(read(b, "activity", chromedp.Text(chromedp.CSS(".activity")))); !strings.Contains(act, "ai claude created spec.md") || !strings.Contains(act, "person admin commented on spec.md") {
		t.Fatalf("activity:\n%s", act)
	}
	home := read(b, "side", chromedp.Text(chromedp.CSS(".home aside")))
	if !strings.Contains(home, "Spec.md: Is this final?") || !strings.Contains(home, "Spec.md by admin: One question") {
		t.Fatalf("waiting and reviews:\n%s", home)
	}
}

// Move a page (its links follow, and the page says how many), delete it to
// the trash, and restore it from there.
func TestBrowserMovesDeletesAndRestores(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	for p, c := range map[string]string{"Old.md": "# Old\n", "Links.md": "# Links\n\nsee [[Old]]\n"} {
		if res := callTool(t, cs, "write_page", map[string]any{"path": p, "content": c}); res.IsError {
			t.Fatalf("write: %+v", res.Content)
		}
	}
	b := newBrowser(t)
	b.do("move", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		// Each step finds its node as it runs (clickNow): the page refreshes
		// live as the writes above and its own changes arrive.
		chromedp.Navigate(srv.URL+"/pages/Old.md"), clickNow(".page-actions summary"),
		setNow(`input[name=destination_path]`, "Archive/New name.md"),
		byScript(`input[name=destination_path]`, `n.form.requestSubmit()`), chromedp.WaitVisible(chromedp.CSS("article .notice")))
	if n := read(b, "notice", chromedp.Text(chromedp.CSS("article .notice"))); n != "Moved here: 1 link rewritten in 1 page." {
		t.Fatalf("move notice = %q", n)
	}
	links := structured(t, callTool(t, cs, "read_page", map[string]any{"path": "Links.md"}))
	if !strings.Contains(links["content"].(string), "New name]]") {
		t.Fatalf("the link was not rewritten: %q", links["content"])
	}
	b.do("delete", clickNow(".page-actions summary"), clickNow(`form[action^="/delete/"] button`),
		chromedp.WaitVisible(chromedp.CSS("table.revisions")))
	if row := read(b, "trash", chromedp.Text(chromedp.CSS("table.revisions tbody"))); !strings.Contains(row, "Archive/New name.md") {
		t.Fatalf("trash shows %q", row)
	}
	b.do("restore", clickNow(`form[action$="/restore"] button`), chromedp.WaitVisible(chromedp.CSS("article.page")))
	if res := callTool(t, cs, "read_page", map[string]any{"path": "Archive/New name.md"}); res.IsError {
		t.Fatalf("not restored: %+v", res.Content)
	}
}

// markupPayloads break out of an attribute, a textarea or a title, where
// xssPayloads stand in a page's body; one line each, so that they fit a
// label or a title too.
var markupPayloads = []string{
	`"><script>window.pwned=1</script>`,
	`'><img src=x onerror=window.pwned=1>`,
	`</textarea><svg onload=window.pwned=1>`,
	`</title><script>window.pwned=1</script>`,
	`javascript:window.pwned=1`,
	`<a href=javascript:window.pwned=1>x</a>`,
	`{{.}}${window.pwned=1}` + "`x`",
}

// payloadPaths are page paths a writer may choose (pages/paths.go refuses
// < > : " | ? * and control characters, nothing else): quotes, ampersands,
// entities, names that read as javascript: URLs, percent signs, unicode.
var payloadPaths = []string{
	`Odd/It's & "fine".md`, // refused: the quote
	`Odd/It's & fine.md`,
	`Odd/x' onmouseover='window.pwned=1' y.md`,
	`Odd/javascript&#58;window.pwned=1.md`,
	`Odd/javascript%3Awindow.pwned=1.md`,
	`Odd/&lt;script&gt;window.pwned=1&lt;&#x2F;script&gt;.md`,
	`Odd/');window.pwned=1;('.md`,
	"Odd/Ünïcødé 日本語 🚀 \u202eevil.md", // with a right-to-left override
	`Odd/%2e%2e%2fsecret.md`,
	`Odd/#frag ?.md`, // refused: the question mark
	`Odd/#frag.md`,
}

// noPayloadRan is true when nothing a payload would do happened: no flag,
// no element with a handler or a javascript: link, no frame.
const noPayloadRan = `window.pwned === undefined && document.querySelectorAll('[onerror],[onload],[onmouseover],[onclick],[onfocus],iframe,frame,object,embed,a[href^="javascript:" i],form[action^="javascript:" i]').length === 0 && ![...document.scripts].some(s => !s.src)`

// Script-injection attempts in every place a person or an agent writes —
// review comments (a thread, its quote, a reply, a review's summary), task
// titles, bodies, labels and comments, and page paths — never run in a
// reader's browser, on any page that shows them, nor when a live update
// brings them.
func TestBrowserNeverRunsInjectedScript(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	agent := agentSession(t, srv, "claude")
	all := append(append([]string{}, xssPayloads...), markupPayloads...)
	var paths []string
	for _, p := range payloadPaths {
		res := callTool(t, cs, "write_page", map[string]any{"path": p, "content": "# " + p + "\n\nsearchable payload page\n"})
		switch refused := strings.ContainsAny(p, `"?`); {
		case refused && !res.IsError:
			t.Fatalf("the path %q was accepted; the corpus expects it refused", p)
		case !refused && res.IsError:
			t.Fatalf("write %q: %+v", p, res.Content)
		case !refused:
			paths = append(paths, p)
		}
	}
	body := "# Payloads\n\nThe quoted text " + strings.Join(markupPayloads, " ") + " ends here.\n\n" + strings.Join(xssPayloads, "\n\n") + "\n"
	mustTool(t, cs, "write_page", map[string]any{"path": "Odd/Payloads.md", "content": body})
	var threadID string
	for i, p := range all {
		args := map[string]any{"doc_path": "Odd/Payloads.md", "content": "comment " + p}
		if i == 0 {
			args["quote"] = map[string]any{"exact": "ends here", "prefix": markupPayloads[0], "suffix": markupPayloads[1]}
		}
		res := mustTool(t, agent, "create_annotation", args)
		if i == 0 {
			threadID = res["annotation"].(map[string]any)["id"].(string)
		}
		mustTool(t, cs, "create_annotation", map[string]any{"parent_id": threadID, "content": "reply " + p, "status": "submitted"})
	}
	review := mustTool(t, agent, "submit_review", map[string]any{"doc_path": "Odd/Payloads.md", "summary": strings.Join(markupPayloads, " ")})
	reviewID := review["review"].(map[string]any)["id"].(string)
	for i, p := range all {
		labels := []string{}
		if len(p) <= 64 && !strings.Contains(p, ",") && !strings.Contains(p, "\n") {
			labels = append(labels, p)
		}
		mustTool(t, agent, "task_create", map[string]any{"title": "Task " + p, "body": "Body " + p + "\n\n" + strings.Join(xssPayloads, "\n\n"), "labels": labels, "specs": paths[:min(len(paths), i+1)]})
		// A task comment's @word is a mention: the CSS payload's @import
		// would name nobody.
		mustTool(t, agent, "task_post_comment", map[string]any{"issue_number": i + 1, "comment": "@admin look: " + noMention(p), "comment_type": "note"})
	}
	mustTool(t, cs, "delete_page", map[string]any{"path": paths[len(paths)-1]})
	mustTool(t, cs, "write_page", map[string]any{"path": paths[1], "content": "# changed " + markupPayloads[0] + "\n", "overwrite": true})

	routes := []string{"/", "/pages/Odd/Payloads.md", "/pages/Odd/Payloads.md?review=" + reviewID, "/history/Odd/Payloads.md",
		"/search?q=searchable+payload", "/search?q=payload&tags=" + url.QueryEscape(markupPayloads[0]), "/search?q=" + url.QueryEscape(markupPayloads[1]),
		"/trash", "/tree?folder=Odd", "/tasks", "/inbox", "/threads/" + threadID + "/delete", "/new?path=" + url.QueryEscape(markupPayloads[2]),
		"/tasks?label=" + url.QueryEscape(markupPayloads[1]) + "&text=" + url.QueryEscape(markupPayloads[0])}
	for i := range all {
		routes = append(routes, fmt.Sprintf("/tasks/%d", i+1))
	}
	for _, p := range paths[:len(paths)-1] {
		routes = append(routes, pageHref(p), "/history"+strings.TrimPrefix(pageHref(p), "/pages"), "/edit"+strings.TrimPrefix(pageHref(p), "/pages"))
	}
	b := newBrowser(t)
	b.signIn(srv, "/", ".who")
	for _, route := range routes {
		b.do("open "+route, chromedp.Navigate(srv.URL+route), chromedp.WaitReady(chromedp.CSS("main")))
		// Each page is really shown, not refused (but /new's payload, which
		// no path allows).
		if failed := read(b, "shown "+route, chromedp.Evaluate[bool](`document.querySelector("p.error") !== null`)); failed && !strings.HasPrefix(route, "/new") {
			t.Errorf("%s answers an error: %s", route, read(b, "error", chromedp.Evaluate[string](`document.querySelector("p.error").textContent`)))
		}
		if ok := read(b, "payload flags on "+route, chromedp.Evaluate[bool](noPayloadRan)); !ok {
			b.artifacts("payload " + route)
			t.Errorf("a payload ran or left its element on %s", route)
		}
	}
	// Live: the open page and task take in new payloads without a reload.
	b.do("open the page", chromedp.Navigate(srv.URL+"/pages/Odd/Payloads.md"), chromedp.WaitVisible(chromedp.CSS("#thread-"+threadID)))
	time.Sleep(300 * time.Millisecond)
	mustTool(t, agent, "create_annotation", map[string]any{"parent_id": threadID, "content": "live " + strings.Join(all, " ")})
	b.until("the live reply", `document.querySelector("#thread-`+threadID+`").textContent.includes("live <script>")`)
	if ok := read(b, "payload flags after a live update", chromedp.Evaluate[bool](noPayloadRan)); !ok {
		t.Error("a payload brought by a live update ran")
	}
	b.do("open a task", chromedp.Navigate(srv.URL+"/tasks/1"), chromedp.WaitVisible(chromedp.CSS(".task-comments")))
	time.Sleep(300 * time.Millisecond)
	mustTool(t, agent, "task_post_comment", map[string]any{"issue_number": 1, "comment": "live " + noMention(strings.Join(all, " ")), "comment_type": "note"})
	b.until("the live comment", `document.querySelector(".task-comments").textContent.includes("live <script>")`)
	if ok := read(b, "payload flags after a live task update", chromedp.Evaluate[bool](noPayloadRan)); !ok {
		t.Error("a payload brought by a live task update ran")
	}
}

// pageHref is the browser address of page p.
func pageHref(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/pages/" + strings.Join(segs, "/")
}

func noMention(s string) string { return strings.ReplaceAll(s, "@import", "@ import") }
