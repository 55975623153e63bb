package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

var (
	upstreamOnce sync.Once
	upstreamPath string
	upstreamErr  error
)

// testUpstream builds the gateway's test MCP server once, beside the
// binary under test.
func testUpstream(t testing.TB) string {
	t.Helper()
	upstreamOnce.Do(func() {
		upstreamPath = filepath.Join(filepath.Dir(binary), "testupstream")
		if out, err := exec.Command("go", "build", "-o", upstreamPath, "../gateway/internal/testupstream").CombinedOutput(); err != nil {
			upstreamErr = fmt.Errorf("build testupstream: %v\n%s", err, out)
		}
	})
	if upstreamErr != nil {
		t.Fatal(upstreamErr)
	}
	return upstreamPath
}

// /gateway through the real binary (atrium serve --gateway), in a browser
// at iPad-portrait width: the servers with their state and the tools held
// back with why; a server that crashes shown going to backoff as it
// happens, without a reload, with what the person opened left open; "check
// health now" from the keyboard, its report shown; and no process left.
func TestBrowserGatewayPage(t *testing.T) {
	up := testUpstream(t)
	dir := t.TempDir()
	mark := fmt.Sprintf("ATRIUM_GW_BROWSER=%d", time.Now().UnixNano())
	k, v, _ := strings.Cut(mark, "=")
	down := filepath.Join(dir, "down") // once it exists, flaky fails at start
	gw := map[string]any{"mcpServers": map[string]any{
		"good": map[string]any{"command": up, "env": map[string]string{k: v}},
		// Answers one call and dies on the next; restarted, it finds the
		// file and dies at once, again and again.
		"flaky": map[string]any{"command": "sh", "args": []string{"-c", `if [ -e "$GW_DOWN" ]; then echo "flaky: down as asked" >&2; exit 3; fi; exec "$GW_UP"`},
			"env": map[string]string{k: v, "GW_DOWN": down, "GW_UP": up, "TESTUP_CRASH_AFTER": "1"}},
	}}
	gwPath := filepath.Join(dir, "gateway.json")
	b, _ := json.Marshal(gw)
	if err := os.WriteFile(gwPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "", "--gateway", gwPath)
	defer assertNoneLeft(t, mark)
	defer srv.stop(t)

	br := newBrowser(t)
	br.do("sign in and follow the navigation to the gateway", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Click(chromedp.CSS(`header a[href="/gateway"]`)), chromedp.WaitVisible(chromedp.ID("upstream-good")))
	// The servers may still be starting: the page follows them.
	br.do("both ready", chromedp.Poll[chromedp.Void](`document.querySelector("#upstream-good").dataset.state === "ready" && document.querySelector("#upstream-flaky").dataset.state === "ready"`))
	good := read(br, "good", chromedp.Text(chromedp.ID("upstream-good")))
	for _, want := range []string{"good_echo", "Held back", "good_wipe", "destructiveHint is true", "good_plain", "spec takes as destructive", "good_delete_note", "delete, remove or destroy", "stdio"} {
		if !strings.Contains(good, want) {
			t.Errorf("good's section lacks %q:\n%s", want, good)
		}
	}
	if wide := read(br, "width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); wide {
		br.artifacts("width")
		t.Fatal("the gateway page scrolls sideways at iPad-portrait width")
	}

	// flaky crashes, and keeps crashing: the page shows it in backoff,
	// with its error and stderr, without a reload.
	br.do("mark the page", chromedp.Evaluate[chromedp.Void](`window.loadedOnce = true`))
	time.Sleep(500 * time.Millisecond) // EventSource's connection, before the crash
	if err := os.WriteFile(down, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	if res := callTool(t, cs, "flaky_echo", map[string]any{"text": "one"}); res.IsError {
		t.Fatalf("flaky's first call: %+v", res.Content)
	}
	crashed := time.Now()
	if res := callTool(t, cs, "flaky_echo", map[string]any{"text": "two"}); !res.IsError {
		t.Fatal("the call that kills flaky succeeded")
	}
	br.do("see flaky in backoff", chromedp.Poll[chromedp.Void](`document.querySelector("#upstream-flaky").dataset.state === "backoff"`))
	t.Logf("crash to backoff in the browser: %v", time.Since(crashed))
	if same := read(br, "no reload", chromedp.Evaluate[bool](`window.loadedOnce === true`)); !same {
		t.Fatal("the page reloaded instead of updating in place")
	}
	br.do("its error and stderr", chromedp.Poll[chromedp.Void](`document.querySelector("#upstream-flaky").textContent.includes("exit status 3")`),
		chromedp.Poll[chromedp.Void](`(document.querySelector("#stderr-flaky pre") || {}).textContent?.includes("flaky: down as asked")`))
	if txt := read(br, "flaky", chromedp.Text(chromedp.ID("upstream-flaky"))); !strings.Contains(txt, "next attempt") {
		t.Errorf("flaky in backoff does not say when it tries again:\n%s", txt)
	}

	// What the person opened stays open when the section is replaced.
	br.do("open flaky's stderr", chromedp.Click(chromedp.CSS("#stderr-flaky summary")),
		chromedp.Evaluate[chromedp.Void](`window.flakyNode = document.querySelector("#upstream-flaky")`))
	br.do("a later failure replaces the section", chromedp.Poll[chromedp.Void](`document.querySelector("#upstream-flaky") !== window.flakyNode`))
	if open := read(br, "still open", chromedp.Evaluate[bool](`document.querySelector("#stderr-flaky").open`)); !open {
		t.Error("the stderr the person opened closed when the page updated")
	}

	// Check health now, from the keyboard.
	br.do("to the top", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0)`), chromedp.Focus(chromedp.CSS("a.brand")))
	br.tabTo("#check-health")
	if st := br.submits("check health now", chromedp.KeyEvent(kb.Enter)); st != 200 {
		t.Fatalf("check health now: %d", st)
	}
	br.do("the report", chromedp.WaitVisible(chromedp.ID("health")))
	overall := read(br, "overall", chromedp.AttributeValue(chromedp.CSS("#health h2 [data-health]"), "data-health"))
	goodHealth := read(br, "good's health", chromedp.AttributeValue(chromedp.ID("health-good"), "data-health"))
	flakyHealth := read(br, "flaky's health", chromedp.AttributeValue(chromedp.ID("health-flaky"), "data-health"))
	if overall.Value != "degraded" || goodHealth.Value != "healthy" || flakyHealth.Value != "unhealthy" {
		br.artifacts("health")
		t.Errorf("health: overall %q, good %q, flaky %q; want degraded, healthy, unhealthy", overall.Value, goodHealth.Value, flakyHealth.Value)
	}
	if ev := read(br, "evidence", chromedp.Text(chromedp.ID("health-good"))); !strings.Contains(ev, "ping: answered") || !strings.Contains(ev, "tools/list: answered") {
		t.Errorf("good's evidence: %q", ev)
	}
	if wide := read(br, "width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); wide {
		br.artifacts("width with report")
		t.Fatal("the health report scrolls sideways at iPad-portrait width")
	}
}
