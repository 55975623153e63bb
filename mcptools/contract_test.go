package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
)

// Every tool's answers — successes and failures — match the output schema
// it lists, as clients that validate them (the TypeScript SDK) require. The
// SDK does not check results itself (see NewTool), so this test does.
func TestResultsMatchListedSchemas(t *testing.T) {
	ctx := context.Background()
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	a := servicestest.Agent(t, svc, "contract", "")
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Enable: []string{"all", "agents"}, Actor: a, Services: svc, LocalFiles: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cs := connectInMemory(t, srv.ForWorkspace(a.Workspace))
	schemas := map[string]*jsonschema.Resolved{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: resolve output schema: %v", tool.Name, err)
		}
		schemas[tool.Name] = r
	}
	page := "---\ntitle: Alpha\ntags: [x]\naccess: public\n---\n# Alpha\n\n## Part\n\nSee [[Beta]] and [b](Beta.md).\n"
	// got keeps IDs from earlier answers for later calls: "$ann" is the
	// first annotation created, "$rev" the review submitted, "$todo" the
	// first todo created.
	got := map[string]string{}
	calls := []struct {
		tool string
		args map[string]any
		fail string // the code the call must fail with; empty: it must succeed
	}{
		{"whoami", nil, ""},
		{"write_page", map[string]any{"path": "Alpha.md", "content": page}, ""},
		{"write_page", map[string]any{"path": "Beta.md", "content": "# Beta\n\n[[Alpha]]"}, ""},
		{"write_page", map[string]any{"path": "Alpha.md", "content": "conflict"}, "conflict"},
		{"read_page", map[string]any{"path": "Alpha.md"}, ""},
		{"read_page", map[string]any{"path": "Alpha.md", "section": "Part"}, ""},
		{"read_page", map[string]any{"path": "Missing.md"}, "not_found"},
		{"edit_page", map[string]any{"path": "Alpha.md", "operations": []map[string]any{{"op": "append", "text": "more"}, {"op": "set_frontmatter", "frontmatter": map[string]any{"status": "draft"}}}}, ""},
		{"edit_page", map[string]any{"path": "Alpha.md", "operations": []map[string]any{{"op": "replace_section", "section": "Nope", "content": "x"}}}, "not_found"},
		{"create_page", map[string]any{"title": "Gamma", "parent_path": "Folder", "icon": "🚀"}, ""},
		{"list_pages", map[string]any{"depth": 3, "include_private": true, "include_content": true}, ""},
		{"list_pages", nil, ""},
		{"get_tree", map[string]any{"include_metadata": true}, ""},
		{"get_tree", nil, ""},
		{"search_pages", map[string]any{"query": "alpha beta"}, ""},
		{"search_pages", map[string]any{"query": "alpha beta", "explain": true}, ""},
		{"search_pages", map[string]any{"query": "nothing-matches-this"}, ""},
		{"get_page_links", map[string]any{"path": "Alpha.md"}, ""},
		{"add_attachment", map[string]any{"page_path": "Alpha.md", "file_name": "a.png", "content_base64": "iVBORw0KGgo="}, ""},
		{"list_page_revisions", map[string]any{"path": "Alpha.md"}, ""},
		{"restore_page_revision", map[string]any{"path": "Alpha.md", "revision": 1}, ""},
		{"move_page", map[string]any{"source_path": "Beta.md", "destination_path": "Archive/Beta.md"}, ""},
		{"move_page", map[string]any{"source_path": "Folder", "destination_path": "Archive"}, ""},
		{"create_annotation", map[string]any{"doc_path": "Alpha.md", "section": "Part", "content": "Why?", "quote": map[string]any{"exact": "See"}}, ""},
		{"create_annotation", map[string]any{"doc_path": "Alpha.md", "section": "Nope", "content": "x"}, "not_found"},
		{"list_annotations", map[string]any{"doc_path": "Alpha.md"}, ""},
		{"submit_review", map[string]any{"doc_path": "Alpha.md", "summary": "ok"}, ""},
		{"submit_review", map[string]any{"doc_path": "Alpha.md"}, "invalid_argument"},
		{"create_annotation", map[string]any{"parent_id": "$ann", "content": "Because."}, ""},
		{"get_annotation", map[string]any{"annotation_id": "$ann"}, ""},
		{"get_annotation", map[string]any{"annotation_id": "ann_missing"}, "not_found"},
		{"edit_annotation", map[string]any{"annotation_id": "$ann", "content": "Why, really?"}, ""},
		{"resolve_annotation", map[string]any{"annotation_id": "$ann"}, ""},
		{"reopen_annotation", map[string]any{"annotation_id": "$ann"}, ""},
		{"list_reviews", map[string]any{"doc_path": "Alpha.md"}, ""},
		{"get_review", map[string]any{"review_id": "$rev"}, ""},
		{"complete_review", map[string]any{"review_id": "$rev", "summary": "done"}, ""},
		{"delete_annotation", map[string]any{"annotation_id": "$ann"}, ""},
		{"delete_annotation", map[string]any{"annotation_id": "$ann"}, "not_found"},
		{"delete_page", map[string]any{"path": "Archive/Beta.md"}, ""},
		{"delete_page", map[string]any{"path": "Archive/Beta.md"}, "not_found"},
		{"list_trash", nil, ""},
		{"restore_page", map[string]any{"path": "Archive/Beta.md", "new_path": "Beta.md"}, ""},
		{"restore_page", map[string]any{"path": "Archive/Beta.md"}, "not_found"},
		{"delete_page", map[string]any{"path": "Beta.md"}, ""},
		{"list_trash", map[string]any{"path": "Beta.md", "limit": 1}, ""},
		{"purge_page", map[string]any{"page_id": "pg_missing"}, "permission_denied"},
		{"task_create", map[string]any{"title": "Plan it", "labels": []string{"x"}, "specs": []string{"Alpha.md"}, "plans": []string{"Plans/1.md"}}, ""},
		{"task_create", map[string]any{"title": "Then this", "blocked_by": []int{1}}, ""},
		{"task_create", map[string]any{"body": "no title"}, "invalid_argument"},
		{"task_get_context", map[string]any{"issue_number": 1}, ""},
		{"task_get_context", map[string]any{"issue_number": 99}, "not_found"},
		{"task_claim", map[string]any{"issue_number": 1}, ""},
		{"task_claim", map[string]any{"issue_number": 2}, "conflict"},
		{"task_update_status", map[string]any{"issue_number": 1, "status": "Reading.", "progress": 10}, ""},
		{"task_post_comment", map[string]any{"issue_number": 1, "comment": "📍 Status: still reading", "comment_type": "status"}, ""},
		{"task_post_comment", map[string]any{"issue_number": 1, "comment": "hi @nobody"}, "invalid_argument"},
		{"task_ask_question", map[string]any{"issue_number": 1, "target": "contract", "question": "Why?"}, ""},
		{"task_post_answer", map[string]any{"issue_number": 1, "target": "contract", "answer": "Because."}, ""},
		{"task_signal_blocked", map[string]any{"issue_number": 1, "reason": "Waiting for a spec", "waiting_for": "contract"}, ""},
		{"task_get_comments", map[string]any{"issue_number": 1, "since": "2020-01-01T00:00:00Z", "from_agent": "contract"}, ""},
		{"task_get_comments", map[string]any{"issue_number": 1, "since": "yesterday"}, "invalid_argument"},
		{"task_update", map[string]any{"issue_number": 1, "base_revision": 1, "title": "stale"}, "conflict"},
		{"task_update", map[string]any{"issue_number": 1, "status": "in_progress", "phase": "PLANS"}, ""},
		{"task_list", map[string]any{"status": []string{"in_progress"}, "fields": []string{"number", "url", "phase"}}, ""},
		{"task_list", map[string]any{"fields": []string{"nope"}}, "invalid_argument"},
		{"task_ready", nil, ""},
		{"task_inbox", map[string]any{"include_read": true}, ""},
		{"task_signal_complete", map[string]any{"issue_number": 1, "artifact_path": "Plans/1.md", "summary": "Planned."}, ""},
		{"task_ready", map[string]any{"fields": []string{"number", "title"}}, ""},
		{"create_todo", map[string]any{"title": "Test Task", "description": "x", "files": []map[string]any{{"name": "a.txt", "content": "hello"}}}, ""},
		{"create_todo", map[string]any{"title": ""}, "invalid_argument"},
		{"update_todo", map[string]any{"id": "$todo", "progress": 75, "statusDesc": "Implemented API endpoints"}, ""},
		{"update_todo", map[string]any{"id": "todo_x"}, "invalid_argument"},
		{"add_todo_file", map[string]any{"id": "$todo", "file": map[string]any{"name": "b.bin", "content_base64": "AAE="}}, ""},
		{"add_todo_file", map[string]any{"id": "$todo", "file": map[string]any{"name": "b.bin", "content_base64": "%%"}}, "invalid_argument"},
		{"remove_todo_file", map[string]any{"id": "$todo", "fileId": "file_missing"}, "not_found"},
		{"update_draft", map[string]any{"content": "Dear team,"}, ""},
		{"update_plan", map[string]any{"content": "# Plan\n\n1. API\n"}, ""},
		{"add_progress_item", map[string]any{"description": "Wrote the API", "timestamp": "2026-02-03T10:00:00Z"}, ""},
		{"add_progress_item", map[string]any{"description": "x", "timestamp": "today"}, "invalid_argument"},
		{"get_desk", nil, ""},
		{"get_desk", map[string]any{"handle": "ghost"}, "not_found"},
		{"archive_progress", nil, ""},
		{"archive_todo", map[string]any{"id": "$todo"}, ""},
		{"agent_sessions", nil, ""},
		{"agent_start", map[string]any{"agent": "ghost"}, "unavailable"}, // this server runs no sessions
		{"agent_stop", map[string]any{"session_id": "ses_missing"}, "not_found"},
	}
	called := map[string]bool{}
	for _, c := range calls {
		args := map[string]any{}
		for k, v := range c.args {
			if s, ok := v.(string); ok && strings.HasPrefix(s, "$") {
				v = got[s]
			}
			args[k] = v
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		called[c.tool] = true
		b, _ := json.Marshal(res.StructuredContent)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: structured content: %v", c.tool, err)
		}
		if code, _ := v.(map[string]any)["code"].(string); res.IsError != (c.fail != "") || code != c.fail {
			t.Errorf("%s %v: answered %s, want failure code %q", c.tool, args, b, c.fail)
		}
		if err := schemas[c.tool].Validate(v); err != nil {
			t.Errorf("%s %v: result does not match its output schema: %v\n%s", c.tool, args, err, b)
		}
		if m, ok := v.(map[string]any); ok && !res.IsError {
			if ann, ok := m["annotation"].(map[string]any); ok && got["$ann"] == "" {
				got["$ann"], _ = ann["id"].(string)
			}
			if rv, ok := m["review"].(map[string]any); ok && got["$rev"] == "" {
				got["$rev"], _ = rv["id"].(string)
			}
			if todo, ok := m["todo"].(map[string]any); ok && c.tool == "create_todo" && got["$todo"] == "" {
				got["$todo"], _ = todo["id"].(string)
			}
		}
	}
	if got["$ann"] == "" || got["$rev"] == "" || got["$todo"] == "" {
		t.Errorf("the review or todo cases never succeeded: %v", got)
	}
	for name := range schemas {
		if !called[name] {
			t.Errorf("tool %s has no contract case", name)
		}
	}
}
