package e2e

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The browser signs in with the token and then holds a session of its own;
// nothing another site makes the browser send changes anything.
func TestBrowserSessionsAndCSRF(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Private.md", "content": "# Private\n\nfor members\n"}); res.IsError {
		t.Fatalf("write: %+v", res.Content)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, path string, headers map[string]string, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, string(b)
	}
	sessionOf := func(res *http.Response) string {
		for _, c := range res.Cookies() {
			if c.Name == "atrium_session" {
				return c.Value
			}
		}
		return ""
	}

	// Live updates are for members only: events name private pages.
	if res, _ := send("GET", "/events", map[string]string{"Accept": "text/event-stream"}, ""); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous GET /events: %d, want 401", res.StatusCode)
	}

	// A login link followed from another site only offers a button.
	res, body := send("GET", "/login?token="+srv.AdminToken, map[string]string{"Sec-Fetch-Site": "cross-site"}, "")
	if res.StatusCode != http.StatusOK || sessionOf(res) != "" || !strings.Contains(body, `<form method="post" action="/login"`) {
		t.Fatalf("cross-site login link: %d, cookie %q", res.StatusCode, sessionOf(res))
	}
	// And a sign-in posted from another site is refused.
	form := "token=" + url.QueryEscape(srv.AdminToken)
	res, _ = send("POST", "/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, form)
	if res.StatusCode != http.StatusForbidden || sessionOf(res) != "" {
		t.Fatalf("cross-site POST /login: %d, cookie %q", res.StatusCode, sessionOf(res))
	}

	// Opened by the person: signed in, with a session, not the token.
	res, _ = send("GET", "/login?token="+srv.AdminToken, map[string]string{"Sec-Fetch-Site": "none"}, "")
	session := sessionOf(res)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(session, "ats_") || strings.Contains(session, srv.AdminToken) {
		t.Fatalf("login link: %d, cookie %q", res.StatusCode, session)
	}
	cookie := map[string]string{"Cookie": "atrium_session=" + session}
	if res, body := send("GET", "/api/pages?include_private=true", cookie, ""); res.StatusCode != http.StatusOK || !strings.Contains(body, "Private.md") {
		t.Fatalf("a member's listing with the session: %d %s", res.StatusCode, body)
	}
	if _, body := send("GET", "/", cookie, ""); !strings.Contains(body, `<span class="who">admin`) {
		t.Fatalf("home page with the session: %s", body)
	}

	// A write the browser is made to send from another site is refused.
	put := func(path string, extra map[string]string) int {
		h := map[string]string{"Content-Type": "text/markdown"}
		for k, v := range cookie {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		res, _ := send("PUT", "/api/pages/"+path, h, "# Forged\n")
		return res.StatusCode
	}
	if code := put("Forged.md", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
		t.Fatalf("cross-site PUT with the session cookie: %d, want 403", code)
	}
	if code := put("Forged.md", map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden {
		t.Fatalf("PUT from another Origin with the session cookie: %d, want 403", code)
	}
	if res := callTool(t, cs, "read_page", map[string]any{"path": "Forged.md"}); !res.IsError {
		t.Fatal("a forged write went through")
	}
	if code := put("Mine.md", map[string]string{"Sec-Fetch-Site": "same-origin"}); code != http.StatusCreated {
		t.Fatalf("same-origin PUT with the session cookie: %d, want 201", code)
	}

	// Signing out ends the session on the server.
	if res, _ := send("POST", "/logout", map[string]string{"Cookie": cookie["Cookie"], "Origin": "http://evil.example"}, ""); res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site sign-out: %d, want 403", res.StatusCode)
	}
	if res, _ := send("POST", "/logout", map[string]string{"Cookie": cookie["Cookie"], "Sec-Fetch-Site": "same-origin"}, ""); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", res.StatusCode)
	}
	if res, body := send("GET", "/api/pages?include_private=true", cookie, ""); res.StatusCode != http.StatusOK || strings.Contains(body, "Private.md") {
		t.Fatalf("the ended session still reads private pages: %d %s", res.StatusCode, body)
	}
	if code := put("After.md", map[string]string{"Sec-Fetch-Site": "same-origin"}); code < 400 {
		t.Fatalf("the ended session still writes: %d", code)
	}

	// The form signs in too.
	res, _ = send("POST", "/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": srv.URL}, form)
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(sessionOf(res), "ats_") {
		t.Fatalf("sign-in form: %d, cookie %q", res.StatusCode, sessionOf(res))
	}
	if res, body := send("POST", "/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": srv.URL}, "token=atr_WRONG"); res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "invalid or revoked token") {
		t.Fatalf("sign-in with a wrong token: %d %s", res.StatusCode, body)
	}
}

// A browser's open event stream ends as soon as its session does — signed
// out in the browser, or revoked with 'atrium session revoke' from another
// process — not at the next heartbeat (15 s): the session's end is an
// event, which the server hears from the other process too.
func TestSessionEndEndsItsStreamAtOnce(t *testing.T) {
	srv := startServe(t, "")
	signIn := func(agent string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/login?token="+srv.AdminToken, nil)
		req.Header.Set("Sec-Fetch-Site", "none")
		req.Header.Set("User-Agent", agent)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		for _, c := range res.Cookies() {
			if c.Name == "atrium_session" {
				return c.Value
			}
		}
		t.Fatalf("no session from the login link: %d", res.StatusCode)
		return ""
	}
	// follow opens /events with the session and says when the server ends it.
	follow := func(session string) <-chan struct{} {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/events", nil)
		req.Header.Set("Cookie", "atrium_session="+session)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET /events: %v %v", res, err)
		}
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}()
		t.Cleanup(func() { res.Body.Close() })
		return ended
	}
	within := func(what string, ended <-chan struct{}) {
		t.Helper()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the session's event stream goes on", what)
		}
	}

	cli := signIn("revoked-from-the-cli")
	other := follow(signIn("a bystander"))
	ended := follow(cli)
	out, errOut, code := srv.cli(t, nil, "session", "list")
	if code != 0 {
		t.Fatalf("session list: %s", errOut)
	}
	var id string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "revoked-from-the-cli") {
			id = strings.Fields(line)[0]
		}
	}
	if _, errOut, code := srv.cli(t, nil, "session", "revoke", id); code != 0 {
		t.Fatalf("session revoke %s: %s", id, errOut)
	}
	within("revoked from the command line", ended)

	browser := signIn("signs-out")
	ended = follow(browser)
	req, _ := http.NewRequest("POST", srv.URL+"/logout", nil)
	req.Header.Set("Cookie", "atrium_session="+browser)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out: %v %v", res, err)
	}
	res.Body.Close()
	within("signed out", ended)

	select {
	case <-other:
		t.Fatal("another browser's stream ended too")
	default:
	}
}
