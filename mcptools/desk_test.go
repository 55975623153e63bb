package mcptools_test

import (
	"context"
	"strings"
	"testing"
	"time"

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

// 001's agents read and subscribe to summ:// URIs: each resolves to its
// atrium:// resource, and a subscriber hears of changes by the URI it used.
func TestSummURIsResolve(t *testing.T) {
	ctx := context.Background()
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	a := servicestest.Agent(t, svc, "summ", "")
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Actor: a, Services: svc})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	updates := make(chan string, 64)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.ForWorkspace(a.Workspace).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "summ", Version: "1"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updates <- r.Params.URI },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	call := func(tool string, args map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
	}
	call("create_todo", map[string]any{"title": "Test Task", "description": "Write the API."})
	call("update_draft", map[string]any{"content": "Dear team,"})
	call("update_plan", map[string]any{"content": "# Plan"})
	call("add_progress_item", map[string]any{"description": "Implemented the API"})
	for uri, want := range map[string]string{
		"summ://todos/list":    "Test Task",
		"summ://todos/todo_1":  "Write the API.",
		"summ://draft":         "Dear team,",
		"summ://plan":          "# Plan",
		"summ://progress":      "Implemented the API",
		"summ://sessions/list": "summ",
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Errorf("read %s: %v", uri, err)
			continue
		}
		if len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, want) {
			t.Errorf("read %s = %+v; want text with %q", uri, res.Contents, want)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "summ://todos/todo_99"}); err == nil {
		t.Error("summ://todos/todo_99 was found")
	}
	for _, uri := range []string{"summ://draft", "summ://todos/list"} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	call("update_draft", map[string]any{"content": "Dear team, again"})
	call("update_todo", map[string]any{"id": "todo_1", "progress": 50})
	heard := map[string]bool{}
	for deadline := time.After(5 * time.Second); !heard["summ://draft"] || !heard["summ://todos/list"]; {
		select {
		case u := <-updates:
			heard[u] = true
		case <-deadline:
			t.Fatalf("heard %v; want summ://draft and summ://todos/list", heard)
		}
	}
}
