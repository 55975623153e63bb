package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

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
