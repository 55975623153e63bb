package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A prompt's page argument (doc_path) completes to the caller's pages, as
// the page template's path does; another workspace's caller gets none.
func TestPromptArgumentsCompletePagePaths(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	for _, p := range []string{"Projects/Alpha.md", "Projects/Beta.md", "Notes.md"} {
		callTool(t, cs, "write_page", map[string]any{"path": p, "content": "# " + p})
	}
	complete := func(cs *mcp.ClientSession, ref *mcp.CompleteReference, arg, value string) []string {
		t.Helper()
		res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatalf("complete %v %s=%q: %v", ref, arg, value, err)
		}
		return res.Completion.Values
	}
	prompt := &mcp.CompleteReference{Type: "ref/prompt", Name: "review_cycle"}
	if got := complete(cs, prompt, "doc_path", "Proj"); !slices.Contains(got, "Projects/Alpha.md") || !slices.Contains(got, "Projects/Beta.md") || slices.Contains(got, "Notes.md") {
		t.Errorf("review_cycle doc_path=Proj: %v", got)
	}
	if got := complete(cs, prompt, "marker", "Proj"); len(got) != 0 {
		t.Errorf("an argument that names no page: %v", got)
	}
	if got := complete(cs, &mcp.CompleteReference{Type: "ref/resource", URI: "atrium://pages/{+path}"}, "path", "No"); !slices.Contains(got, "Notes.md") {
		t.Errorf("the page template's path: %v", got)
	}
	if _, errOut, code := srv.cli(t, nil, "workspace", "create", "other"); code != 0 {
		t.Fatal(errOut)
	}
	out, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "olga", "--workspace", "other", "--role", "admin")
	if code != 0 {
		t.Fatal(errOut)
	}
	other := connectHTTP(t, srv.MCP(), tokenRE.FindString(out), "")
	if got := complete(other, prompt, "doc_path", "Proj"); len(got) != 0 {
		t.Errorf("another workspace's caller completes to %v", got)
	}
}

// The server and its own tools carry Atrium's icon; a gateway's servers'
// tools are listed as they are.
func TestIconsOnServerAndTools(t *testing.T) {
	srv := startServe(t, "")
	for _, version := range []string{"", "2025-11-25"} {
		cs := connectHTTP(t, srv.MCP(), srv.AdminToken, version)
		if v := version; v == "2025-11-25" {
			if info := cs.InitializeResult().ServerInfo; len(info.Icons) == 0 || info.Icons[0].MIMEType != "image/svg+xml" {
				t.Errorf("serverInfo icons: %+v", info.Icons)
			}
		}
		n := 0
		for tool, err := range cs.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if len(tool.Icons) == 0 || !strings.HasPrefix(tool.Icons[0].Source, "data:image/svg+xml;base64,") {
				t.Errorf("%s (%s): no icon", tool.Name, version)
			}
		}
		if n < 20 {
			t.Errorf("%d tools", n)
		}
	}
}
