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
