package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tenant isolation, for every tool that exists: a caller in workspace beta
// can neither reach alpha's server nor see anything of alpha through any tool,
// and a session opened in alpha refuses beta's caller.
func TestEveryToolStaysInItsWorkspace(t *testing.T) {
	srv := startServe(t, "")
	for _, ws := range []string{"alpha", "beta"} {
		if _, errOut, code := srv.cli(t, nil, "workspace", "create", ws); code != 0 {
			t.Fatal(errOut)
		}
	}
	token := func(handle, ws string) string {
		out, errOut, code := srv.cli(t, nil, "token", "create", "--principal", handle, "--workspace", ws, "--role", "admin")
		if code != 0 {
			t.Fatal(errOut)
		}
		return strings.TrimSpace(out)
	}
	alice, bob := token("alice-marker", "alpha"), token("bob", "beta")

	// Give alpha data, so that a leak would have something to show.
	alphaSession := connectHTTP(t, srv.URL+"/w/alpha/mcp", alice, "2025-11-25")
	callTool(t, alphaSession, "whoami", nil)
	secret := "---\naccess: public\n---\n# Secret\n\nalice-marker plans, see [[Other]].\n"
	if res := callTool(t, alphaSession, "write_page", map[string]any{"path": "Secret.md", "content": secret}); res.IsError {
		t.Fatalf("seed alpha: %+v", res.Content)
	}
	if res := callTool(t, alphaSession, "add_attachment", map[string]any{"page_path": "Secret.md", "file_name": "s.txt", "content_base64": "YWxpY2UtbWFya2Vy"}); res.IsError {
		t.Fatalf("seed alpha attachment: %+v", res.Content)
	}
	thread := callTool(t, alphaSession, "create_annotation", map[string]any{"doc_path": "Secret.md", "section": "Secret", "content": "alice-marker thread"})
	annID, _ := structured(t, thread)["annotation"].(map[string]any)["id"].(string)
	rev := callTool(t, alphaSession, "submit_review", map[string]any{"doc_path": "Secret.md"})
	revID, _ := structured(t, rev)["review"].(map[string]any)["id"].(string)
	if annID == "" || revID == "" {
		t.Fatalf("seed alpha's review: %v %v", thread.Content, rev.Content)
	}
	aim := aimAt("Secret.md", annID, revID)
	todo := structured(t, callTool(t, alphaSession, "create_todo", map[string]any{"title": "alice-marker todo", "files": []map[string]any{{"name": "t.txt", "content": "alice-marker"}}}))
	callTool(t, alphaSession, "update_plan", map[string]any{"content": "alice-marker plan"})
	callTool(t, alphaSession, "update_draft", map[string]any{"content": "alice-marker draft"})
	callTool(t, alphaSession, "add_progress_item", map[string]any{"description": "alice-marker progress"})

	betaSession := connectHTTP(t, srv.URL+"/mcp", bob, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var names []string
	for tool, err := range betaSession.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if len(names) == 0 {
		t.Fatal("no tools listed")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			res := callTool(t, betaSession, name, aim[name])
			// Any refusal passes the sweep, but not a panic or a failure
			// inside: those answer "internal" (and fail the server's log).
			if m, ok := asMap(res.StructuredContent); ok && res.IsError && m["code"] == "internal" {
				t.Errorf("%s(%v) failed inside the server: %v", name, aim[name], m)
			}
			b, _ := json.Marshal(res)
			if s := string(b); strings.Contains(s, "alpha") || strings.Contains(s, "alice-marker") {
				t.Fatalf("%s shows workspace alpha to a caller of beta: %s", name, s)
			}
			// beta's caller cannot open alpha's server, by path or header…
			for _, h := range []map[string]string{nil, {"X-Atrium-Workspace": "alpha"}} {
				path := "/w/alpha/mcp"
				if h != nil {
					path = "/mcp"
				}
				res := rawPost(t, srv.URL+path, bob, mergeHeaders(h, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}),
					`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`)
				if res.StatusCode != http.StatusForbidden {
					t.Errorf("%s on alpha by beta's caller (%s): status %d, want 403", name, path, res.StatusCode)
				}
			}
			// …nor use a session alpha's caller opened, from either endpoint.
			for _, path := range []string{"/w/alpha/mcp", "/mcp"} {
				res := rawPost(t, srv.URL+path, bob, map[string]string{"Mcp-Session-Id": alphaSession.ID(), "Mcp-Protocol-Version": "2025-11-25"},
					`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`)
				if res.StatusCode != http.StatusForbidden {
					t.Errorf("%s in alpha's session by beta's caller (%s): status %d, want 403", name, path, res.StatusCode)
				}
			}
		})
	}
	// Every resource, read by beta's caller in beta, shows nothing of alpha;
	// alpha's server refuses to read it for them.
	for _, uri := range listedResources(t, alphaSession, map[string]string{"{id}": "todo_1", "{fileId}": todoFileID(todo), "{+path}": "Secret.md", "{+doc_path}": "Secret.md"}) {
		t.Run(uri, func(t *testing.T) {
			if got := readAs(betaSession, uri); strings.Contains(got, "alpha") || strings.Contains(got, "alice-marker") {
				t.Fatalf("%s shows workspace alpha to a caller of beta: %s", uri, got)
			}
			res := rawPost(t, srv.URL+"/w/alpha/mcp", bob, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": uri},
				mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": map[string]any{"uri": uri}}))
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("read %s on alpha by beta's caller: status %d, want 403", uri, res.StatusCode)
			}
		})
	}
	// Nothing beta did reached alpha.
	after := readPage(t, alphaSession, "Secret.md")
	if after["content"] != secret || after["revision"] != float64(1) {
		t.Fatalf("alpha's page changed: %v", after)
	}
	th := structured(t, callTool(t, alphaSession, "get_annotation", map[string]any{"annotation_id": annID}))
	a, _ := th["annotation"].(map[string]any)
	if a["content"] != "alice-marker thread" || a["status"] != "submitted" || len(th["replies"].([]any)) != 0 {
		t.Fatalf("alpha's thread changed: %v", th)
	}
	rv := structured(t, callTool(t, alphaSession, "get_review", map[string]any{"review_id": revID}))
	if rv["review"].(map[string]any)["status"] != "submitted" {
		t.Fatalf("alpha's review changed: %v", rv)
	}
}

func mergeHeaders(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// readPage reads a page through a session and returns read_page's answer.
func readPage(t *testing.T, cs *mcp.ClientSession, path string) map[string]any {
	t.Helper()
	res := callTool(t, cs, "read_page", map[string]any{"path": path})
	if res.IsError {
		t.Fatalf("read %s: %+v", path, res.Content)
	}
	return structured(t, res)
}

// aimAt is, for each tool, arguments that aim it at a page, its thread and
// its review, by path, ID or content. Tools missing here are called with no
// arguments.
func aimAt(page, annID, revID string) map[string]map[string]any {
	return map[string]map[string]any{
		"list_annotations":      {"doc_path": page},
		"get_annotation":        {"annotation_id": annID},
		"create_annotation":     {"parent_id": annID, "content": "beta replies"},
		"edit_annotation":       {"annotation_id": annID, "content": "beta edits"},
		"resolve_annotation":    {"annotation_id": annID},
		"reopen_annotation":     {"annotation_id": annID},
		"delete_annotation":     {"annotation_id": annID},
		"submit_review":         {"doc_path": page},
		"list_reviews":          {"doc_path": page},
		"get_review":            {"review_id": revID},
		"complete_review":       {"review_id": revID},
		"read_page":             {"path": page},
		"get_page_links":        {"path": page},
		"list_page_revisions":   {"path": page},
		"restore_page_revision": {"path": page, "revision": 1},
		"edit_page":             {"path": page, "operations": []map[string]any{{"op": "append", "text": "beta was here"}}},
		"move_page":             {"source_path": page, "destination_path": "Stolen.md"},
		"delete_page":           {"path": page},
		"add_attachment":        {"page_path": page, "file_name": "x.txt", "content_base64": "eA=="},
		"search_pages":          {"query": "alice-marker plans secret"},
		"list_pages":            {"include_private": true, "depth": 10},
		"get_tree":              {"include_metadata": true},
		"create_page":           {"title": "Secret Copy"},
		"write_page":            {"path": "Notes.md", "content": "beta's own page"},
		"task_get_context":      {"issue_number": 1},
		"task_post_comment":     {"issue_number": 1, "comment": "beta comments", "comment_type": "status"},
		"task_signal_complete":  {"issue_number": 1, "summary": "beta completes"},
		"task_ask_question":     {"issue_number": 1, "target": "alice", "question": "beta asks"},
		"task_post_answer":      {"issue_number": 1, "target": "alice", "answer": "beta answers"},
		"task_signal_blocked":   {"issue_number": 1, "reason": "beta blocks", "waiting_for": "alice"},
		"task_update_status":    {"issue_number": 1, "status": "beta status"},
		"task_get_comments":     {"issue_number": 1},
		"task_create":           {"title": "beta's own task"},
		"task_list":             {"text": "alice-marker", "fields": []string{"number", "title", "url"}},
		"task_update":           {"issue_number": 1, "title": "beta renames"},
		"task_claim":            {"issue_number": 1},
		"task_ready":            {"fields": []string{"number", "title"}},
		"task_inbox":            {"include_read": true},
		"get_desk":              {"handle": "alice"},
		"create_todo":           {"title": "beta's todo"},
		"update_todo":           {"id": "todo_2", "progress": 1, "statusDesc": "beta"},
		"archive_todo":          {"id": "todo_2"},
		"add_todo_file":         {"id": "todo_2", "file": map[string]any{"name": "b.txt", "content": "beta"}},
		"remove_todo_file":      {"id": "todo_2", "fileId": "file_unknown"},
		"update_draft":          {"content": "beta's draft"},
		"update_plan":           {"content": "beta's plan"},
		"add_progress_item":     {"description": "beta worked"},
		"archive_progress":      {},
	}
}
