package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// get sends one request with the given Authorization header ("" for none)
// and returns its status, headers and body.
func get(t *testing.T, method, url, authorization, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// An Authorization header that is not "Bearer <token>" is an error, never an
// anonymous request: a client that sends its token the wrong way must hear so
// rather than see an empty workspace. Every route says the same.
func TestWrongAuthSchemeIsRefused(t *testing.T) {
	srv := startServe(t, "")
	tok := srv.AdminToken
	routes := []struct{ method, path, body string }{
		{"POST", "/mcp", initialize},
		{"POST", "/w/default/mcp", initialize},
		{"GET", "/mcp/sse", ""},
		{"GET", "/api/pages", ""},
		{"GET", "/w/default/api/pages", ""},
		{"GET", "/api/search?q=x", ""},
		{"GET", "/api/tree", ""},
		{"GET", "/api/access", ""},
		{"GET", "/", ""},
		{"GET", "/metrics", ""},
		{"GET", "/healthz", ""},
		{"GET", "/no/such/route", ""},
	}
	headers := []string{
		tok,                         // the token without its scheme
		"Token " + tok,              // another scheme
		"Basic YWRtaW46c2VjcmV0",    // admin:secret
		"Bearer",                    // no token
		"Bearer   ",                 // no token either
		"Bearer " + tok + " " + tok, // two tokens
	}
	for _, rt := range routes {
		for _, h := range headers {
			status, hdr, body := get(t, rt.method, srv.URL+rt.path, h, rt.body)
			if status != http.StatusUnauthorized || !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s %s with Authorization %.20q: status %d, WWW-Authenticate %q, want 401 and Bearer", rt.method, rt.path, h, status, hdr.Get("WWW-Authenticate"))
				continue
			}
			var e struct{ Error, Code string }
			if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code != "unauthenticated" || !strings.Contains(e.Error, "Bearer <token>") {
				t.Errorf("%s %s with Authorization %.20q: body %s, want code unauthenticated and how to send the token", rt.method, rt.path, h, body)
			}
			if strings.Contains(body, tok) {
				t.Errorf("%s %s: the answer repeats the token", rt.method, rt.path)
			}
		}
	}
	// The right scheme, in any case, still works; no header at all is still
	// anonymous where anonymous reading is allowed.
	for _, h := range []string{"Bearer " + tok, "bearer " + tok} {
		if status, _, body := get(t, "GET", srv.URL+"/api/pages", h, ""); status != http.StatusOK {
			t.Errorf("Authorization %.10q: %d %s", h, status, body)
		}
	}
	if status, _, body := get(t, "GET", srv.URL+"/api/pages", "", ""); status != http.StatusOK {
		t.Errorf("anonymous: %d %s", status, body)
	}
	if status, _, _ := get(t, "GET", srv.URL+"/healthz", "", ""); status != http.StatusOK {
		t.Errorf("healthz without a header: %d", status)
	}
}

// An anonymous reader sees public pages and nothing of the private ones: not
// how many there are, not whether a folder holds some, not whether a page has
// private pages below it.
func TestAnonymousLearnsNoCountOfPrivatePages(t *testing.T) {
	srv := startServe(t, "")
	pub := "---\naccess: public\n---\n"
	for path, content := range map[string]string{
		"Open.md":             pub + "# Open\nquarterly plan",
		"Hidden/One.md":       "# One\nquarterly plan",
		"Hidden/Two.md":       "# Two\nquarterly plan",
		"Docs/_index.md":      pub + "# Docs",
		"Docs/Guide.md":       pub + "# Guide",
		"Docs/Guide/Notes.md": "# Notes",
		"Docs/Secret.md":      "# Secret",
		"Docs/Team/Plan.md":   "# Plan",
	} {
		body, _ := json.Marshal(map[string]any{"content": content})
		if res, err := newRequest("PUT", srv.URL+"/api/pages/"+path, srv.AdminToken, string(body)); err != nil || res.StatusCode/100 != 2 {
			t.Fatalf("put %s: %v %v", path, res.StatusCode, err)
		}
	}
	type entry struct {
		Path        string `json:"path"`
		HasChildren bool   `json:"has_children"`
	}
	list := func(query string) (int, map[string]any, []entry) {
		t.Helper()
		status, _, body := get(t, "GET", srv.URL+"/api/pages?"+query, "", "")
		var raw map[string]any
		var typed struct{ Pages []entry }
		json.Unmarshal([]byte(body), &raw)
		json.Unmarshal([]byte(body), &typed)
		return status, raw, typed.Pages
	}
	for _, q := range []string{"", "depth=1", "path=Docs", "path=Docs&depth=1", "include_private=true"} {
		status, raw, pages := list(q)
		if status != http.StatusOK {
			t.Fatalf("list %q: %d %v", q, status, raw)
		}
		for k := range raw {
			if k != "pages" && k != "next_cursor" && k != "note" {
				t.Errorf("list %q: anonymous answer has %q = %v", q, k, raw[k])
			}
		}
		for _, e := range pages {
			if strings.HasPrefix(e.Path, "Hidden") || strings.Contains(e.Path, "Secret") || strings.Contains(e.Path, "Notes") || strings.Contains(e.Path, "Team") {
				t.Errorf("list %q: anonymous sees %s", q, e.Path)
			}
		}
	}
	_, _, pages := list("path=Docs&depth=1")
	if diff := cmp.Diff([]entry{{Path: "Docs/_index.md"}, {Path: "Docs/Guide.md"}}, pages); diff != "" {
		t.Errorf("Docs, anonymous (-want +got): a page with only private pages below has none:\n%s", diff)
	}
	_, _, pages = list("depth=1")
	if diff := cmp.Diff([]entry{{Path: "Docs/_index.md", HasChildren: true}, {Path: "Open.md"}}, pages); diff != "" {
		t.Errorf("root, anonymous (-want +got):\n%s", diff)
	}
	// A folder of private pages reads exactly as a folder that does not exist.
	hidden, _, hiddenBody := get(t, "GET", srv.URL+"/api/pages?path=Hidden", "", "")
	nope, _, nopeBody := get(t, "GET", srv.URL+"/api/pages?path=Nope", "", "")
	if hidden != nope || strings.ReplaceAll(hiddenBody, "Hidden", "X") != strings.ReplaceAll(nopeBody, "Nope", "X") {
		t.Errorf("private folder: %d %s; missing folder: %d %s", hidden, hiddenBody, nope, nopeBody)
	}
	// Search counts only what the caller may see.
	_, _, body := get(t, "GET", srv.URL+"/api/search?"+url.Values{"q": {"quarterly plan"}}.Encode(), "", "")
	var sr struct {
		Total   int
		Results []map[string]any
	}
	if err := json.Unmarshal([]byte(body), &sr); err != nil || sr.Total != 1 || len(sr.Results) != 1 {
		t.Errorf("anonymous search: %s, want total 1", body)
	}
	_, _, body = get(t, "GET", srv.URL+"/api/tree", "", "")
	for _, s := range []string{"Hidden", "Secret", "Notes", "Team"} {
		if strings.Contains(body, s) {
			t.Errorf("anonymous tree shows %s: %s", s, body)
		}
	}
	// A member still hears how many private pages it left out.
	status, _, body := get(t, "GET", srv.URL+"/api/pages?include_private=false", "Bearer "+srv.AdminToken, "")
	if status != http.StatusOK || !strings.Contains(body, `"hidden_private":5`) {
		t.Errorf("member listing without private pages: %d %s, want hidden_private 5", status, body)
	}
}
