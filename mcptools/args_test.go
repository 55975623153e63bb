package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
)

// Arguments are checked against the tool's input schema before the tool
// runs: a mistake is invalid_argument naming what to change, and changes
// nothing.
func TestArgumentsAreCheckedBeforeTheCall(t *testing.T) {
	ctx := context.Background()
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	a := servicestest.Agent(t, svc, "args", "")
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Actor: a, Services: svc})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cs := connectInMemory(t, srv.ForWorkspace(a.Workspace))
	for _, tc := range []struct {
		name, tool string
		args       string
		wantInMsg  string
	}{
		{"wrong type", "write_page", `{"path": 5, "content": "# Five"}`, "path"},
		{"missing required", "write_page", `{"content": "# Nowhere"}`, "path"},
		{"unknown parameter", "write_page", `{"path": "Five.md", "content": "# Five", "mode": "force"}`, "mode"},
		{"not an object", "write_page", `["Five.md", "# Five"]`, "JSON object"},
		{"wrong item type", "edit_page", `{"path": "Five.md", "operations": [{"op": 1}]}`, "op"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := res.StructuredContent.(map[string]any)
			if !res.IsError || got["code"] != "invalid_argument" || !strings.Contains(got["error"].(string), tc.wantInMsg) {
				t.Fatalf("got %+v, want invalid_argument mentioning %q", res.StructuredContent, tc.wantInMsg)
			}
		})
	}
	list, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_pages", Arguments: map[string]any{"include_private": true}})
	if err != nil || list.IsError {
		t.Fatal(err, list)
	}
	if pages := list.StructuredContent.(map[string]any)["pages"].([]any); len(pages) != 0 {
		t.Errorf("a refused call wrote pages: %v", pages)
	}
	// Defaults and optional parameters still reach the tool.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_page", Arguments: map[string]any{"path": "Five.md", "content": "# Five"}})
	if err != nil || res.IsError {
		t.Fatalf("a valid call failed: %v %+v", err, res)
	}
}

// 003's agents write camelCase parameters (parentPath, includeContent…): the
// tools take them as aliases of their snake_case names, unlisted in the
// schemas; and an unknown field's error names the nearest known one.
func TestSeedParameterAliases(t *testing.T) {
	ctx := context.Background()
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	a := servicestest.Agent(t, svc, "aliases", "")
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Actor: a, Services: svc})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cs := connectInMemory(t, srv.ForWorkspace(a.Workspace))
	call := func(tool, args string) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := res.StructuredContent.(map[string]any)
		if res.IsError {
			t.Fatalf("%s %s: %v", tool, args, got)
		}
		return got
	}
	call("create_page", `{"title": "Alpha", "parentPath": "Projects", "content": "Alpha body"}`)
	list := call("list_pages", `{"path": "Projects", "includeContent": true, "include_private": true}`)
	pages, _ := list["pages"].([]any)
	if len(pages) != 1 || !strings.Contains(fmtJSON(pages[0]), "Alpha body") {
		t.Fatalf("list_pages with includeContent = %s; want Projects/Alpha.md with its content", fmtJSON(list))
	}
	call("move_page", `{"sourcePath": "Projects/Alpha.md", "destinationPath": "Archive/Alpha.md"}`)
	call("read_page", `{"path": "Archive/Alpha.md"}`)
	call("add_attachment", `{"pagePath": "Archive/Alpha.md", "fileName": "note.txt", "content_base64": "aGVsbG8="}`)

	for _, tc := range []struct{ tool, args, want string }{
		{"create_page", `{"title": "B", "parentpath": "Projects"}`, "unknown field parentpath; did you mean parent_path?"},
		{"list_pages", `{"include_contents": true}`, "did you mean include_content?"},
		{"move_page", `{"source": "Archive/Alpha.md", "destination_path": "X.md"}`, "unknown field source; did you mean source_path?"},
		{"create_page", `{"title": "B", "parentPath": "A", "parent_path": "B"}`, "parentPath"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := res.StructuredContent.(map[string]any)
		if !res.IsError || got["code"] != "invalid_argument" || !strings.Contains(got["error"].(string), tc.want) {
			t.Errorf("%s %s = %v; want invalid_argument saying %q", tc.tool, tc.args, got, tc.want)
		}
	}
	// The aliases cost no tokens: no schema lists them.
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if b, _ := json.Marshal(tool.InputSchema); strings.Contains(string(b), "Path\"") || strings.Contains(string(b), "includeContent") {
			t.Errorf("%s lists an alias: %s", tool.Name, b)
		}
	}
}

func fmtJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
