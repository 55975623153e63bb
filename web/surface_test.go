package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/web"
)

// Every page, fragment, asset and error of the browser surface carries the
// headers that keep what a page's author wrote from running or loading
// anything: the Content-Security-Policy, no sniffing, no framing, no
// referrer to other sites.
func TestSecurityHeadersOnEveryRoute(t *testing.T) {
	s := newSite(t)
	s.write(t, "A.md", "# A\n\ntext")
	ann, _, err := s.rev.Create(s.ctx, review.CreateRequest{DocPath: "A.md", Content: "a thread"})
	if err != nil {
		t.Fatal(err)
	}
	fill := strings.NewReplacer("{path...}", "A.md", "{id}", ann.UID, "{handle}", "dede", "{n}", "1", "{action}", "resolve", "{$}", "")
	targets := []string{"/static/atrium.css", "/static/live.js", "/pages/A.md?edit", "/pages/A.md/history", "/pages/Nope.md", "/nowhere/at/all"}
	for _, pattern := range web.Routes() {
		method, path, _ := strings.Cut(pattern, " ")
		if method == http.MethodGet && path != "/events" {
			targets = append(targets, fill.Replace(path))
		}
	}
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "same-origin",
	}
	check := func(who, method, target string, h http.Header, code int) {
		t.Helper()
		for k, v := range want {
			if got := h.Get(k); got != v {
				t.Errorf("%s %s %s (%d): %s = %q, want %q", who, method, target, code, k, got, v)
			}
		}
	}
	for _, target := range targets {
		if strings.HasPrefix(target, "/nowhere") {
			continue // not a route of the browser surface: the mux's own 404
		}
		for _, anonymous := range []bool{true, false} {
			code, h := s.headers("GET", target, nil, anonymous)
			check(map[bool]string{true: "anonymous", false: "signed in"}[anonymous], "GET", target, h, code)
		}
	}
	// The stream refuses the anonymous with the same headers; a form posted
	// from another site is refused with them too.
	code, h := s.headers("GET", "/events", nil, true)
	check("anonymous", "GET", "/events", h, code)
	code, h = s.headers("POST", "/threads/"+ann.UID+"/resolve", http.Header{"Origin": {"http://evil.example"}, "Sec-Fetch-Site": {"cross-site"}}, false)
	check("signed in", "POST", "/threads/…/resolve", h, code)
}

// A page that fails says why and with which code; a piece of a page asked
// for by a script (the tree's folders) fails as a piece the script can show,
// with the code in a header, never as plain text or a whole page.
func TestErrorsCarryTheirCode(t *testing.T) {
	s := newSite(t)
	for _, c := range []struct {
		target, code string
		status       int
	}{
		{"/pages/Nope.md", "not_found", 404},
		{"/pages/A.md/nonsense", "invalid_argument", 400}, // no page can be there: its path does not end in .md
		{"/tree?folder=Nowhere", "not_found", 404},
		{"/tree?folder=../x", "invalid_argument", 400},
		{"/threads/nope/delete", "not_found", 404},
	} {
		status, body := s.get(c.target)
		if status != c.status || !strings.Contains(body, `data-code="`+c.code+`"`) || !strings.Contains(body, "<code>"+c.code+"</code>") || !strings.Contains(body, "<html") {
			t.Errorf("GET %s: %d, want %d and an error page with code %s:\n%.600s", c.target, status, c.status, c.code, body)
		}
	}
	for _, c := range []struct {
		target, code string
		status       int
	}{
		{"/tree?folder=Nowhere", "not_found", 404},
		{"/tree?after=%21%21", "invalid_argument", 400},
		{"/tree?folder=../x", "invalid_argument", 400},
	} {
		status, h, body := s.full("GET", c.target, http.Header{"X-Atrium-Fragment": {"1"}}, false)
		if status != c.status || h.Get("X-Atrium-Error-Code") != c.code || !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
			t.Errorf("fragment %s: %d, code header %q, type %q; want %d, %s, HTML", c.target, status, h.Get("X-Atrium-Error-Code"), h.Get("Content-Type"), c.status, c.code)
		}
		if !strings.HasPrefix(body, `<li class="fragment-error error" role="alert" data-code="`+c.code+`">`) || strings.Contains(body, "<html") {
			t.Errorf("fragment %s answers %q, want one list item that says why", c.target, body)
		}
	}
}

// full serves one request as do does, and returns the headers too.
func (s *site) full(method, target string, header http.Header, anonymous bool) (int, http.Header, string) {
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	if !anonymous {
		req.Header.Set("Authorization", "Bearer "+s.secret)
	}
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, req)
	return rec.Code, rec.Result().Header, rec.Body.String()
}

func (s *site) headers(method, target string, header http.Header, anonymous bool) (int, http.Header) {
	code, h, _ := s.full(method, target, header, anonymous)
	return code, h
}
