package mcptools_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
)

// update_draft and update_plan answer with what they saved, as 001's
// console did: an agent reads back its own write without a second call.
func TestUpdateDeskPageAnswersWithTheContent(t *testing.T) {
	ctx := context.Background()
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	a := servicestest.Agent(t, svc, "desk-writer", "")
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Actor: a, Services: svc})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cs := connectInMemory(t, srv.ForWorkspace(a.Workspace))
	for _, tool := range []string{"update_draft", "update_plan"} {
		want := "# " + tool + "\n\nDear team,\n"
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"content": want}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		got := res.StructuredContent.(map[string]any)
		if got["content"] != want || got["path"] == "" || got["revision"] == float64(0) {
			t.Errorf("%s answered %v; want its content %q, path and revision", tool, got, want)
		}
	}
}
