package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// read_page's text block is the page as written, under one header line, so a
// model reads Markdown rather than a JSON string full of escapes; programs
// keep the whole shape in structuredContent.
func TestReadPageTextIsTheMarkdown(t *testing.T) {
	dir := t.TempDir()
	cs := connectStdio(t, []string{"ATRIUM_AGENT=reader"}, "--data-dir", dir)
	content := "---\ntitle: Alpha\n---\n# Alpha\n\nSay \"hello\" \\ wave.\n\n## Design\n\n### Storage\n\nSQLite first.\n"
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Projects/Alpha.md", "content": content}); res.IsError {
		t.Fatal(res.Content)
	}
	res := callTool(t, cs, "read_page", map[string]any{"path": "Projects/Alpha.md"})
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("read_page: %+v", res)
	}
	want := "Projects/Alpha.md · revision 1 · private\n\n" + content
	if got := res.Content[0].(*mcp.TextContent).Text; got != want {
		t.Errorf("text block:\n%q\nwant:\n%q", got, want)
	}
	sc := structured(t, res)
	if sc["content"] != content || sc["revision"] != float64(1) || sc["path"] != "Projects/Alpha.md" {
		t.Errorf("structured content lost its shape: %v", sc)
	}

	res = callTool(t, cs, "read_page", map[string]any{"path": "Projects/Alpha.md", "section": "Design > Storage"})
	text := res.Content[0].(*mcp.TextContent).Text
	sc = structured(t, res)
	wantHead := fmt.Sprintf("Projects/Alpha.md § %v (from line %v) · revision 1 · private", sc["section"], sc["line"])
	if head, body, _ := strings.Cut(text, "\n\n"); head != wantHead || body != sc["content"] {
		t.Errorf("section text block: %q", text)
	}

	// Other tools keep the JSON copy of their structured result.
	res = callTool(t, cs, "list_pages", map[string]any{"include_private": true})
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(text, "{") {
		t.Errorf("list_pages text block is not JSON: %q", text)
	}
}

// A client that drops the environment it was told to pass silently uses
// another store: whoami says which one, and which data folder.
func TestWhoamiSaysWhichStore(t *testing.T) {
	dir := t.TempDir()
	cs := connectStdio(t, []string{"ATRIUM_AGENT=who"}, "--data-dir", dir)
	local, _ := asMap(structured(t, callTool(t, cs, "whoami", nil))["local"])
	if local["data_dir"] != dir || local["store"] != "sqlite "+filepath.Join(dir, "atrium.db") {
		t.Errorf("whoami local = %v, want the data folder %s and its database", local, dir)
	}

	srv := startServe(t, "")
	remote := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	if got := structured(t, callTool(t, remote, "whoami", nil)); got["local"] != nil {
		t.Errorf("whoami over HTTP tells a remote caller the server's files: %v", got["local"])
	}
}

// A page larger than the kernel's 128 KB limit on one argument is writable
// from a shell: from a file (content=@FILE), from stdin (content=@-), or as
// the whole --json object from a file or stdin; arrays take a,b lists.
func TestCallWritesAMegabytePageFromAShell(t *testing.T) {
	dir := t.TempDir()
	page := strings.Repeat("# A long page\n\nWith \"quotes\", a back\\slash and lines.\n", 20000)
	if len(page) < 1<<20 {
		t.Fatalf("page of %d bytes", len(page))
	}
	file := filepath.Join(dir, "long.md")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"path": "Big/Stdin.md", "content": page})
	argsFile := filepath.Join(dir, "args.json")
	if err := os.WriteFile(argsFile, body, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"ATRIUM_AGENT=shell"}
	for _, tc := range []struct {
		path  string
		stdin string
		args  []string
	}{
		{"Big/File.md", "", []string{"write_page", "path=Big/File.md", "content=@" + file}},
		{"Big/Pipe.md", page, []string{"write_page", "path=Big/Pipe.md", "content=@-"}},
		{"Big/Stdin.md", string(body), []string{"write_page", "--json", "-"}},
		{"Big/Args.md", "", []string{"write_page", "--json", "@" + argsFile, "path=Big/Args.md"}},
	} {
		out, errOut, code := runAtriumStdin(t, env, tc.stdin, append([]string{"--data-dir", dir, "call"}, tc.args...)...)
		if code != 0 {
			t.Fatalf("atrium call %v: %d %s %.300s", tc.args[1:], code, errOut, out)
		}
		out, errOut, code = runAtrium(t, env, "--data-dir", dir, "call", "read_page", "path="+tc.path)
		var got struct{ Content string }
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Content != page {
			t.Errorf("%s: read back %d bytes (code %d %s), want the %d written", tc.path, len(got.Content), code, errOut, len(page))
		}
	}
	out, errOut, code := runAtrium(t, env, "--data-dir", dir, "call", "search_pages", "query=long", "tags=a,b")
	if code != 0 || !strings.Contains(out, `"results": []`) {
		t.Errorf("tags=a,b: %d %s %s", code, errOut, out)
	}
}

// A second process mirroring a folder that a running atrium already mirrors
// stops at once with an error that says so, rather than echoing the first
// one's writes back as edits.
func TestSecondMirrorOfAFolderRefused(t *testing.T) {
	dir := t.TempDir()
	srv := startServe(t, "", "--auth", "none", "--mirror", dir)
	_, errOut, code := runAtrium(t, nil, "--data-dir", t.TempDir(), "serve", "--addr", "127.0.0.1:0", "--auth", "none", "--mirror", dir)
	if code == 0 || !strings.Contains(errOut, "already mirrored by another atrium process (pid ") {
		t.Errorf("second mirror: exit %d\n%s", code, errOut)
	}
	srv.stop(t)
	srv.restart(t, "--auth", "none", "--mirror", dir) // the lock went with the first process
}

// With OAuth off (--oauth=false), a client that tries OAuth discovery after
// a 401 gets JSON it can show — why the token was refused and how to get one
// — at every endpoint it tries, and the 401 itself says "invalid or revoked
// token" in its body and its WWW-Authenticate. (With OAuth on, the default,
// those endpoints are the authorization server's: see oauth_test.go.)
func TestUnauthorizedClientsSeeWhy(t *testing.T) {
	srv := startServe(t, "", "--oauth=false")
	res, body := httpDo(t, "POST", srv.MCP(), "atr_not_a_real_token")
	if res.StatusCode != 401 || !strings.Contains(string(body), "invalid or revoked token") ||
		!strings.Contains(res.Header.Get("WWW-Authenticate"), `error="invalid_token", error_description="invalid or revoked token"`) {
		t.Errorf("401: %d %s %q", res.StatusCode, body, res.Header.Get("WWW-Authenticate"))
	}
	for _, p := range []string{
		"GET /.well-known/oauth-protected-resource/mcp", "GET /.well-known/oauth-protected-resource",
		"GET /.well-known/oauth-authorization-server", "GET /.well-known/openid-configuration",
		"POST /register", "GET /authorize", "POST /token",
	} {
		method, path, _ := strings.Cut(p, " ")
		res, body := httpDo(t, method, srv.URL+path, "")
		var got map[string]string
		err := json.Unmarshal(body, &got)
		if err != nil || res.Header.Get("Content-Type") != "application/json" || got["error"] != "invalid_token" ||
			!strings.Contains(got["error_description"], "invalid or revoked token") || !strings.Contains(got["error_description"], "atrium token create") {
			t.Errorf("%s: %d %v %v", p, res.StatusCode, got, err)
		}
	}

	// mcporter promotes a 401 to an OAuth flow: what it prints must be ours.
	bin := nodeBin(t) // skips without the Node clients, fails when they are required
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcporter.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"atriumhttp": map[string]any{
		"baseUrl": srv.MCP(), "headers": map[string]string{"Authorization": "Bearer atr_revoked_or_never_was"}}}, "imports": []string{}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := runNode(t, bin, dir, []string{"HOME=" + dir, "BROWSER=true"}, "mcporter", "call", "atriumhttp.whoami", "--config", cfg, "--output", "json")
	if code == 0 || !strings.Contains(out, "invalid or revoked token") || strings.Contains(out, "404 page not found") {
		t.Errorf("mcporter with a bad token: exit %d\n%s", code, out)
	}
}

// httpDo sends one request with a JSON body {} and returns the response with
// its body read.
func httpDo(t *testing.T, method, url, token string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// resources/list names the workspace's pages, for clients that do not read
// templates; reading a page that is not there is the spec's resource-not-
// found error of the session's version, with a hint when the URI was not
// percent-encoded.
func TestPageResourcesListedAndNotFound(t *testing.T) {
	srv := startServe(t, "")
	ctx := context.Background()
	for _, version := range []string{"", "2025-11-25"} {
		cs := connectHTTP(t, srv.MCP(), srv.AdminToken, version)
		if version == "" {
			// Over stdio: the SDK's HTTP client and server disagree on the
			// Mcp-Name header of a URI with a space in 2026-07-28 sessions.
			cs = connectStdio(t, []string{"ATRIUM_AGENT=res"}, srv.globalArgs()...)
		}
		if res := callTool(t, cs, "write_page", map[string]any{"path": "Plugins/Canvas board.md", "content": "# Canvas", "overwrite": true}); res.IsError {
			t.Fatal(res.Content)
		}
		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		if !slices.Contains(uris, "atrium://pages/Plugins/Canvas%20board.md") {
			t.Fatalf("resources/list: %v", uris)
		}
		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "atrium://pages/Plugins/Canvas%20board.md"})
		if err != nil || read.Contents[0].Text != "# Canvas" {
			t.Fatalf("read a listed resource: %v %v", read, err)
		}

		wantCode := int64(-32602) // 2026-07-28: SEP-2164
		if version == "2025-11-25" {
			wantCode = -32002
		}
		for uri, hint := range map[string]bool{"atrium://pages/Nowhere.md": false, "atrium://pages/Plugins/No such board.md": true} {
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != wantCode || !strings.HasPrefix(rpc.Message, "Resource not found") ||
				!strings.Contains(string(rpc.Data), uri) || strings.Contains(rpc.Message, "%20") != hint {
				t.Errorf("version %q, read %s: %v (want code %d, hint %v)", version, uri, err, wantCode, hint)
			}
		}
	}
}

// Import says which pages it made private, where the user first meets the
// rule, instead of leaving them to wonder why list_pages shows nothing.
func TestImportSaysWhichPagesArePrivate(t *testing.T) {
	vault, data := t.TempDir(), t.TempDir()
	for name, content := range map[string]string{
		"Open.md":         "---\naccess: public\n---\n# Open",
		"Notes/Secret.md": "# Secret",
		"Plain.md":        "# Plain",
	} {
		p := filepath.Join(vault, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runAtrium(t, []string{"ATRIUM_AGENT=importer"}, "--data-dir", data, "import", vault)
	if code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errOut)
	}
	all := out + errOut
	if !strings.Contains(all, "private:      2 pages") || !strings.Contains(all, "include_private=true") ||
		!strings.Contains(all, "    Notes/Secret.md\n    Plain.md\n") || strings.Contains(all, "    Open.md") {
		t.Errorf("import summary does not name the private pages:\n%s", all)
	}
	// Again: nothing changes, so nothing new is made private.
	out, errOut, _ = runAtrium(t, []string{"ATRIUM_AGENT=importer"}, "--data-dir", data, "import", vault)
	if strings.Contains(out+errOut, "private:") {
		t.Errorf("a second import reports private pages it did not make:\n%s", out+errOut)
	}
}
