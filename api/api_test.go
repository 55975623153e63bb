package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/api"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// server is the REST API over a fresh store, with a writer's and a reader's token.
type server struct {
	url, writer, reader, other string
	agent                      string // duc, an agent writer
}

func mustServer(t *testing.T, e store.Engine) *server {
	t.Helper()
	ctx := context.Background()
	svc := servicestest.MustOpen(t, e, nil)
	ids := svc.Identity
	if _, err := ids.CreateWorkspace(ctx, "other", ""); err != nil {
		t.Fatal(err)
	}
	token := func(handle, ws string, role atrium.Role) string {
		kind := atrium.KindHuman
		if handle == "duc" {
			kind = atrium.KindAgent
		}
		secret, _, err := ids.CreateToken(ctx, identity.TokenRequest{Principal: handle, Kind: kind, Workspace: ws, Role: role})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	s := &server{writer: token("wendy", "default", atrium.RoleWriter), reader: token("rita", "default", atrium.RoleReader), other: token("otto", "other", atrium.RoleAdmin),
		agent: token("duc", "default", atrium.RoleWriter)}
	mux := http.NewServeMux()
	(&api.Handler{Auth: &authn.Authenticator{Mode: authn.ModeToken, Identity: ids}, Services: svc}).Register(mux)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

type call struct {
	name        string
	method, url string
	token       string
	headers     map[string]string
	body        string
	status      int
	contains    []string // fragments the body must hold
	notContains []string
}

func (s *server) do(t *testing.T, c call) string {
	t.Helper()
	_, body := s.doStatus(t, c)
	return body
}

func (s *server) doStatus(t *testing.T, c call) (http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(c.method, s.url+c.url, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != c.status {
		t.Errorf("%s: %s %s = %d, want %d: %s", c.name, c.method, c.url, res.StatusCode, c.status, b)
	}
	for _, f := range c.contains {
		if !strings.Contains(string(b), f) {
			t.Errorf("%s: body lacks %q: %s", c.name, f, b)
		}
	}
	for _, f := range c.notContains {
		if strings.Contains(string(b), f) {
			t.Errorf("%s: body has %q: %s", c.name, f, b)
		}
	}
	return res.Header, string(b)
}

func jsonBody(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// One line per case: the same rules and codes as the MCP tools, over HTTP.
func TestPagesAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		s := mustServer(t, e)
		pub := "---\naccess: public\ntitle: Alpha\n---\n# Alpha\n\nSee [[Beta]].\n"
		for _, c := range []call{
			{name: "create", method: "PUT", url: "/api/pages/Projects/Alpha.md", token: s.writer, body: jsonBody(map[string]any{"content": pub}), status: 201, contains: []string{`"created":true`, `"revision":1`}},
			{name: "create private", method: "PUT", url: "/api/pages/Projects/Beta.md", token: s.writer, headers: map[string]string{"Content-Type": "text/markdown"}, body: "# Beta\n\nSecret plans. Back to [[Alpha]].", status: 201},
			{name: "replace without base", method: "PUT", url: "/api/pages/Projects/Alpha.md", token: s.writer, body: jsonBody(map[string]any{"content": "x"}), status: 409, contains: []string{`"code":"conflict"`, `"current_revision":1`}},
			{name: "stale base via If-Match", method: "PUT", url: "/api/pages/Projects/Alpha.md", token: s.writer, headers: map[string]string{"If-Match": `"7"`}, body: jsonBody(map[string]any{"content": "x"}), status: 409, contains: []string{"revision 1", "revision 7"}},
			{name: "reader cannot write", method: "PUT", url: "/api/pages/X.md", token: s.reader, body: jsonBody(map[string]any{"content": "x"}), status: 403, contains: []string{`"code":"permission_denied"`}},
			{name: "anonymous cannot write", method: "PUT", url: "/api/pages/X.md", body: jsonBody(map[string]any{"content": "x"}), status: 401, contains: []string{`"code":"unauthenticated"`}},
			{name: "bad path", method: "PUT", url: "/api/pages/a/..%2F..%2Fetc.md", token: s.writer, body: jsonBody(map[string]any{"content": "x"}), status: 400, contains: []string{`"code":"invalid_argument"`}},
			{name: "unknown field", method: "PUT", url: "/api/pages/Y.md", token: s.writer, body: `{"contents":"typo"}`, status: 400, contains: []string{"contents"}},
			{name: "read", method: "GET", url: "/api/pages/Projects/Alpha.md", token: s.reader, status: 200, contains: []string{`"revision":1`, `"title":"Alpha"`, `"frontmatter":{`}},
			{name: "read markdown", method: "GET", url: "/api/pages/Projects/Alpha.md?format=markdown", status: 200, contains: []string{"See [[Beta]]."}},
			{name: "read section", method: "GET", url: "/api/pages/Projects/Alpha.md?section=Alpha", token: s.reader, status: 200, contains: []string{`"section":"Alpha"`}},
			{name: "missing page", method: "GET", url: "/api/pages/Projects/Nonexistent.md", token: s.reader, status: 404, contains: []string{"Page not found at path: Projects/Nonexistent.md"}},
			{name: "anonymous reads public", method: "GET", url: "/api/pages/Projects/Alpha.md", status: 200},
			{name: "anonymous does not see private", method: "GET", url: "/api/pages/Projects/Beta.md", status: 404},
			{name: "nav anonymous", method: "GET", url: "/api/pages", status: 200, contains: []string{"Projects/Alpha.md", `"access":"public"`}, notContains: []string{"Beta"}},
			{name: "nav with token", method: "GET", url: "/api/pages", token: s.reader, status: 200, contains: []string{"Projects/Alpha.md", "Projects/Beta.md", `"access":"private"`}},
			{name: "nav public only on request", method: "GET", url: "/api/pages?include_private=false", token: s.reader, status: 200, notContains: []string{"Beta.md"}},
			{name: "edit", method: "PATCH", url: "/api/pages/Projects/Alpha.md", token: s.writer, body: jsonBody(map[string]any{"base_revision": 1, "operations": []map[string]any{{"op": "append", "text": "More."}}}), status: 200, contains: []string{`"revision":2`}},
			{name: "edit missing section", method: "PATCH", url: "/api/pages/Projects/Alpha.md", token: s.writer, body: jsonBody(map[string]any{"operations": []map[string]any{{"op": "replace_section", "section": "Nope", "content": "x"}}}), status: 404, contains: []string{"Section not found"}},
			{name: "search with token", method: "GET", url: "/api/search?q=secret+plans", token: s.reader, status: 200, contains: []string{"Projects/Beta.md", `"total":1`}},
			{name: "search anonymous", method: "GET", url: "/api/search?q=secret+plans+alpha", status: 200, contains: []string{`"total":1`, "Alpha.md"}, notContains: []string{"Beta"}},
			{name: "search bad query", method: "GET", url: "/api/search?q=", token: s.reader, status: 400},
			{name: "tree", method: "GET", url: "/api/tree?include_metadata=true", token: s.reader, status: 200, contains: []string{`"type":"folder"`, `"page_id":"pg_`}},
			{name: "links", method: "GET", url: "/api/pages/Projects/Alpha.md/links", token: s.reader, status: 200, contains: []string{`"outgoing":[{`, `"incoming":[{`, `"resolved":true`}},
			{name: "revisions", method: "GET", url: "/api/pages/Projects/Alpha.md/revisions", token: s.reader, status: 200, contains: []string{`"current_revision":2`}},
			{name: "restore", method: "POST", url: "/api/pages/Projects/Alpha.md/restore", token: s.writer, body: `{"revision":1}`, status: 200, contains: []string{`"revision":3`}},
			{name: "move", method: "POST", url: "/api/pages/Projects/Beta.md/move", token: s.writer, body: `{"destination_path":"Archive/Beta.md"}`, status: 200, contains: []string{`"new_path":"Archive/Beta.md"`, `"pages_changed":0`}}, // [[Beta]] resolves by name, which did not change
			{name: "other workspace cannot see", method: "GET", url: "/api/pages/Projects/Alpha.md", token: s.other, status: 404},
			{name: "other workspace token on this one", method: "GET", url: "/api/pages/Projects/Alpha.md", token: s.other, headers: map[string]string{"X-Atrium-Workspace": "default"}, status: 403},
			{name: "workspace by path", method: "GET", url: "/w/other/api/pages", token: s.other, status: 200, notContains: []string{"Alpha"}},
			{name: "delete", method: "DELETE", url: "/api/pages/Archive/Beta.md", token: s.writer, status: 204},
			{name: "delete again", method: "DELETE", url: "/api/pages/Archive/Beta.md", token: s.writer, status: 404},
			{name: "unknown action", method: "POST", url: "/api/pages/Projects/Alpha.md/publish", token: s.writer, body: "{}", status: 404},
		} {
			s.do(t, c)
		}
	})
}

func TestAttachmentsAPI(t *testing.T) {
	s := mustServer(t, store.SQLite)
	s.do(t, call{name: "page", method: "PUT", url: "/api/pages/Docs/Guide.md", token: s.writer, body: jsonBody(map[string]any{"content": "---\naccess: public\n---\n# Guide"}), status: 201})
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "shot.png")
	fw.Write([]byte("\x89PNG\r\n\x1a\nfake"))
	mw.Close()
	s.do(t, call{name: "upload", method: "POST", url: "/api/pages/Docs/Guide.md/attachments", token: s.writer, headers: map[string]string{"Content-Type": mw.FormDataContentType()}, body: buf.String(),
		status: 201, contains: []string{`"relative_path":"./assets/shot.png"`, `"markdown_syntax":"![shot.png](./assets/shot.png)"`}})
	s.do(t, call{name: "raw upload", method: "POST", url: "/api/pages/Docs/Guide.md/attachments?name=evil.html", token: s.writer, headers: map[string]string{"Content-Type": "text/html"}, body: "<script>alert(1)</script>", status: 201})
	s.do(t, call{name: "download", method: "GET", url: "/api/attachments/Docs/assets/shot.png", status: 200, contains: []string{"fake"}})
	req, _ := http.NewRequest("GET", s.url+"/api/attachments/Docs/assets/evil.html", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || res.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("HTML attachment served inline: %v", res.Header)
	}
	s.do(t, call{name: "upload anonymous", method: "POST", url: "/api/pages/Docs/Guide.md/attachments?name=x.txt", body: "x", status: 401})
	s.do(t, call{name: "missing", method: "GET", url: "/api/attachments/Docs/assets/none.png", status: 404})
}
