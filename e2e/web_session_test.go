package e2e

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
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
