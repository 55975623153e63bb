package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// 001's data flow across processes: an agent in its own `atrium mcp`
// process works its desk; a subscriber connected to `atrium serve` hears of
// each change to the todos, the plan and the progress log, and reads them.
func TestConsoleResourcesHearAnotherProcess(t *testing.T) {
	srv := startServe(t, "")
	sub, updates := subscriber(t, srv)
	ctx := context.Background()
	for _, uri := range []string{"atrium://todos", "atrium://plan", "atrium://progress"} {
		if err := sub.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	agent := connectStdio(t, []string{"ATRIUM_AGENT=summ"}, srv.globalArgs()...)
	expect := func(uri, how string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case got := <-updates:
				if got == uri {
					return
				}
			case <-deadline:
				t.Fatalf("%s: no notification of %s", how, uri)
			}
		}
	}
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res := callTool(t, agent, tool, args)
		if res.IsError {
			t.Fatalf("%s: %+v", tool, res.StructuredContent)
		}
		return structured(t, res)
	}
	todo, _ := asMap(call("create_todo", map[string]any{"title": "Test Task", "description": "Write the API."})["todo"])
	if todo["id"] != "todo_1" {
		t.Fatalf("create_todo = %v", todo)
	}
	expect("atrium://todos", "create_todo")
	call("update_todo", map[string]any{"id": "todo_1", "progress": 75, "statusDesc": "Implemented API endpoints"})
	expect("atrium://todos", "update_todo")
	call("update_plan", map[string]any{"content": "# Plan\n\n1. API\n"})
	expect("atrium://plan", "update_plan")
	call("add_progress_item", map[string]any{"description": "Implemented API endpoints"})
	expect("atrium://progress", "add_progress_item")

	// The person's side reads the agent's desk as the agent left it.
	desk := structured(t, callTool(t, sub, "get_desk", map[string]any{"handle": "summ"}))
	got := mustJSON(desk)
	for _, want := range []string{`"statusDesc":"Implemented API endpoints"`, `"progress":75`, `"content":"# Plan\n\n1. API\n"`, `"description":"Implemented API endpoints"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("summ's desk lacks %s: %s", want, got)
		}
	}
	// Who is connected: the agent over stdio, the person's session over HTTP.
	sessions, err := sub.ReadResource(ctx, &mcp.ReadResourceParams{URI: "atrium://sessions"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"principal":"summ","kind":"agent","transport":"stdio"`, `"principal":"admin","kind":"human","transport":"http","client":"subscriber 1"`} {
		if !strings.Contains(sessions.Contents[0].Text, want) {
			t.Fatalf("atrium://sessions lacks %s: %s", want, sessions.Contents[0].Text)
		}
	}
	// The agent reads its own plan as a resource, as 001's agents do.
	plan, err := agent.ReadResource(ctx, &mcp.ReadResourceParams{URI: "atrium://plan"})
	if err != nil || plan.Contents[0].Text != "# Plan\n\n1. API\n" {
		t.Fatalf("read atrium://plan: %+v %v", plan, err)
	}
}

// A desk with no draft yet reads as an empty document: a valid resource
// (contents carry text), not an error and not an empty contents entry.
func TestConsoleEmptyDraftIsAnEmptyDocument(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	for _, uri := range []string{"atrium://draft", "atrium://plan"} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "\n" {
			t.Fatalf("read %s: %+v %v", uri, res, err)
		}
	}
}
