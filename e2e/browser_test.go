package e2e

import (
	"context"
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
	t   *testing.T
	ctx context.Context
}

func newBrowser(t *testing.T) *browser {
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
		chromedp.WindowSize(820, 1180)) // iPad portrait
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
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
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.artifacts(what)
		b.t.Fatalf("%s: %v", what, err)
	}
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
