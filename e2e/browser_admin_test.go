package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// submits performs steps that send a form, waits for the page that answers
// and returns its status.
func (b *browser) submits(what string, steps ...chromedp.Action[chromedp.Void]) int64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	res, err := chromedp.RunResponse(ctx, steps...)
	if err != nil {
		b.artifacts(what)
		b.t.Fatalf("%s: %v", what, err)
	}
	return res.Status
}

// The admin page, as the admin and a reader use it: a token made there
// (its secret shown once) works over REST and MCP until it is revoked there;
// a role changed there is the member's role at once; a browser signed out
// there is signed out. A reader is refused the page, an anonymous visitor is
// sent to sign in. All of it at iPad-portrait width, the token made and
// revoked from the keyboard.
func TestBrowserAdminManagesTokensRolesAndSessions(t *testing.T) {
	srv := startServe(t, "")
	rita := strings.TrimSpace(mustCLI(t, srv, "token", "create", "--principal", "rita", "--workspace", "default", "--role", "reader"))

	admin := newBrowser(t)
	admin.do("sign in and open the admin page", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")),
		chromedp.Click(chromedp.CSS(`header a[href="/admin"]`)), chromedp.WaitVisible(chromedp.ID("new-token")))

	// Create a token from the keyboard: type, choose, Enter.
	if st := admin.submits("create a token", chromedp.Focus(chromedp.CSS(`#new-token input[name=principal]`)), chromedp.KeyEvent("carol"),
		chromedp.SetValue(chromedp.CSS(`#new-token select[name=kind]`), "agent"), chromedp.SetValue(chromedp.CSS(`#new-token select[name=role]`), "writer"),
		chromedp.Focus(chromedp.CSS(`#new-token input[name=name]`)), chromedp.KeyEvent("ci\r")); st != http.StatusCreated {
		t.Fatalf("creating a token: %d", st)
	}
	secret := read(admin, "the secret", chromedp.Value(chromedp.ID("new-secret")))
	tokenID := read(admin, "the token's id", chromedp.AttributeValue(chromedp.CSS(".token-created"), "data-token")).Value
	if !strings.HasPrefix(secret, "atr_") || tokenID == "" {
		t.Fatalf("new token %q, secret %q", tokenID, secret)
	}
	if got := access(t, srv, secret); got["status"] != http.StatusOK || got["role"] != "writer" || got["principal"].(map[string]any)["handle"] != "carol" {
		t.Fatalf("the new token over REST: %v", got)
	}
	carol := connectHTTP(t, srv.MCP(), secret, "2025-11-25")
	if res := callTool(t, carol, "write_page", map[string]any{"path": "By carol.md", "content": "# Carol\n"}); res.IsError {
		t.Fatalf("the new token over MCP: %+v", res.Content)
	}

	// Shown once: the page after it does not have it; it shows when the
	// token was last used (recorded in the background, so look again).
	row := "#token-" + tokenID
	lastUsed := ""
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		admin.do("reopen the admin page", chromedp.Navigate(srv.URL+"/admin"), chromedp.WaitVisible(chromedp.CSS(row)))
		if lastUsed = read(admin, "last used", chromedp.Text(chromedp.CSS(row+" .last-used"))); lastUsed != "never" || time.Now().After(deadline) {
			break
		}
	}
	if !strings.HasPrefix(lastUsed, time.Now().UTC().Format("2006-01-02")) {
		t.Fatalf("last used after use: %q", lastUsed)
	}
	if again := read(admin, "the page", chromedp.Evaluate[bool](fmt.Sprintf(`document.documentElement.outerHTML.includes(%q)`, secret))); again {
		t.Fatal("the secret is shown a second time")
	}
	if scripts := read(admin, "scripts", chromedp.Evaluate[int](`document.scripts.length`)); scripts != 0 {
		t.Fatalf("the admin page loads %d scripts; it is forms only, for browsers without JavaScript", scripts)
	}
	if wide := read(admin, "width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); wide {
		t.Fatal("the admin page scrolls sideways at iPad-portrait width")
	}

	// Revoke it from the keyboard: it stops working at once.
	if st := admin.submits("revoke the token", chromedp.Focus(chromedp.CSS(row+" button")), chromedp.KeyEvent("\r")); st != http.StatusOK {
		t.Fatalf("revoking: %d", st)
	}
	if state := read(admin, "revoked row", chromedp.Text(chromedp.CSS(row))); !strings.Contains(state, "revoked") {
		t.Fatalf("the row after revoking: %q", state)
	}
	if got := access(t, srv, secret); got["status"] != http.StatusUnauthorized {
		t.Fatalf("the revoked token over REST: %v", got)
	}
	if _, err := tryConnectHTTP(srv.MCP(), secret, "2025-11-25"); err == nil {
		t.Fatal("the revoked token still connects over MCP")
	}

	// A reader is refused the page, and is not offered it.
	reader := newBrowser(t)
	reader.do("the reader signs in", chromedp.Navigate(srv.URL+"/login?token="+rita), chromedp.WaitVisible(chromedp.CSS(".who")))
	if link := read(reader, "admin link", chromedp.Evaluate[bool](`document.querySelector('header a[href="/admin"]') !== null`)); link {
		t.Fatal("a reader is offered the admin page")
	}
	if res := read(reader, "the admin page", chromedp.NavigateResponse(srv.URL+"/admin")); res.Status != http.StatusForbidden {
		t.Fatalf("a reader's /admin: %d, want 403", res.Status)
	}
	if msg := read(reader, "refusal", chromedp.Text(chromedp.CSS(".error"))); !strings.Contains(msg, "Only the admins of workspace default") {
		t.Fatalf("a reader is told %q", msg)
	}

	// A role changed on the page is the member's role at once.
	admin.submits("make rita a writer", chromedp.SetValue(chromedp.CSS("#member-rita select"), "writer"), chromedp.Click(chromedp.CSS("#member-rita button[type=submit]")))
	if got := access(t, srv, rita); got["role"] != "writer" {
		t.Fatalf("rita after the change: %v", got)
	}
	reader.do("rita's header", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(".who")))
	if who := read(reader, "role", chromedp.Text(chromedp.CSS(".who .role"))); !strings.Contains(who, "writer") {
		t.Fatalf("rita's header says %q", who)
	}
	// The last admin cannot step down, and the page says why.
	if st := admin.submits("step down", chromedp.SetValue(chromedp.CSS("#member-admin select"), "reader"), chromedp.Click(chromedp.CSS("#member-admin button[type=submit]"))); st != http.StatusConflict {
		t.Fatalf("the last admin stepping down: %d, want 409", st)
	}
	if msg := read(admin, "refusal", chromedp.Text(chromedp.CSS(".admin .error"))); !strings.Contains(msg, "you are the last admin") {
		t.Fatalf("stepping down says %q", msg)
	}
	if got := access(t, srv, srv.AdminToken); got["role"] != "admin" {
		t.Fatalf("admin after the refusal: %v", got)
	}

	// Signing out rita's browser from the page signs it out.
	admin.submits("sign out rita's browser", chromedp.Click(chromedp.CSS(`#sessions button[aria-label$=" of rita"]`)))
	if left := read(admin, "sessions", chromedp.Text(chromedp.ID("sessions"))); strings.Contains(left, "rita") {
		t.Fatalf("rita's browser is still listed: %q", left)
	}
	reader.do("rita's browser, signed out", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`header a[href="/login"]`)))
	reader.do("anonymous, sent to sign in", chromedp.Navigate(srv.URL+"/admin"), chromedp.WaitVisible(chromedp.ID("token")))
	if loc := read(reader, "location", chromedp.Location()); !strings.HasSuffix(loc, "/login") {
		t.Fatalf("an anonymous /admin went to %s", loc)
	}
}
