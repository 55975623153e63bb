package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// 002's example agent flow, end to end: three agents, each its own
// `atrium mcp` (ATRIUM_AGENT=baron, dede, duc) on one store, called by
// mcporter the way agents' CLIs call them — context, status, a question,
// duc's inbox, the answer, blocked and cleared, complete with next_agent.
// A person in the browser (served by the same store) sees the same task.
func TestTasksExampleFlowWithMcporter(t *testing.T) {
	bin := nodeBin(t)
	srv := startServe(t, "")
	dir := t.TempDir()
	servers := map[string]any{}
	for _, agent := range []string{"baron", "dede", "duc"} {
		servers[agent] = map[string]any{"command": binary, "args": srv.globalArgs("mcp"), "env": map[string]string{"ATRIUM_AGENT": agent}}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers, "imports": []string{}})
	cfg := filepath.Join(dir, "mcporter.json")
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(agent, tool string, args map[string]any) map[string]any {
		t.Helper()
		if args == nil {
			args = map[string]any{}
		}
		a, _ := json.Marshal(args)
		out, code := runNode(t, bin, dir, nil, "mcporter", "call", agent+"."+tool, "--args", string(a), "--config", cfg, "--output", "json")
		if code != 0 {
			t.Fatalf("%s %s(%s) exited %d:\n%s", agent, tool, a, code, out)
		}
		return lastJSON(t, out)
	}

	// duc and dede have connected once (so they can be asked and assigned).
	call("duc", "task_inbox", nil)
	call("dede", "task_inbox", nil)
	call("baron", "write_page", map[string]any{"path": "Plans/123/specs/backend.md", "content": "# Backend spec\n\nJWT authentication.\n"})
	created := call("baron", "task_create", map[string]any{"title": "Add user authentication", "labels": []string{"status:specs-ready"},
		"phase": "PHASE_3_PLANS", "specs": []string{"Plans/123/specs/backend.md"}, "plans": []string{"Plans/123/backend.md"}, "assignee": "dede"})
	task, _ := asMap(created["task"])
	n := task["number"]
	if n != float64(1) || task["url"] != srv.URL+"/tasks/1" {
		t.Fatalf("task_create = %v", created)
	}

	ctxOut := call("dede", "task_get_context", map[string]any{"issue_number": n})
	issue, _ := asMap(ctxOut["issue"])
	specs, _ := ctxOut["specs"].([]any)
	if issue["title"] != "Add user authentication" || issue["phase"] != "PHASE_3_PLANS" || len(specs) != 1 ||
		!strings.Contains(mustJSON(specs[0]), "JWT authentication") {
		t.Fatalf("task_get_context = %v", ctxOut)
	}
	if st := call("dede", "task_update_status", map[string]any{"issue_number": n, "status": "Analyzing backend spec..."}); st["comment_id"] == nil {
		t.Fatalf("task_update_status = %v", st)
	}
	q := call("dede", "task_ask_question", map[string]any{"issue_number": n, "target": "duc", "question": "Should auth service use REST or GraphQL?"})
	if q["waiting_for"] != "duc" {
		t.Fatalf("task_ask_question = %v", q)
	}
	inbox := call("duc", "task_inbox", nil)
	items, _ := inbox["items"].([]any)
	if len(items) != 1 || !strings.Contains(mustJSON(items[0]), "❓ @duc Question: Should auth service use REST or GraphQL?") {
		t.Fatalf("duc's inbox = %v", inbox)
	}
	call("duc", "task_post_answer", map[string]any{"issue_number": n, "target": "dede", "answer": "GraphQL. Aligns with our BFF pattern."})
	// Acknowledged once, the question does not come back as new.
	if again := call("duc", "task_inbox", map[string]any{"ack": inbox["ack_cursor"]}); again["unread"] != float64(0) {
		t.Fatalf("duc's inbox after ack = %v", again)
	}
	answers := call("dede", "task_get_comments", map[string]any{"issue_number": n, "from_agent": "duc"})
	if cs, _ := answers["comments"].([]any); len(cs) != 1 || !strings.Contains(mustJSON(cs[0]), "💬 @dede Answer: GraphQL. Aligns with our BFF pattern.") {
		t.Fatalf("task_get_comments from duc = %v", answers)
	}

	bl := call("dede", "task_signal_blocked", map[string]any{"issue_number": n, "reason": "Missing database schema for users table", "waiting_for": "duc"})
	if bl["label_added"] != "blocked:agent" {
		t.Fatalf("task_signal_blocked = %v", bl)
	}
	if i, _ := asMap(call("dede", "task_get_context", map[string]any{"issue_number": n})["issue"]); i["status"] != "blocked" {
		t.Fatalf("after blocked: %v", i)
	}
	call("duc", "task_post_answer", map[string]any{"issue_number": n, "target": "dede", "answer": "Schema is in db/users.sql."})
	after := call("dede", "task_get_context", map[string]any{"issue_number": n})
	if i, _ := asMap(after["issue"]); i["status"] != "in_progress" || strings.Contains(mustJSON(i["labels"]), "blocked:agent") {
		t.Fatalf("after duc answered the block: %v", after)
	}

	done := call("dede", "task_signal_complete", map[string]any{"issue_number": n, "artifact_path": "Plans/123/backend.md",
		"summary": "Backend plan complete. See `Plans/123/backend.md`."})
	if done["next_agent"] != "baron" {
		t.Fatalf("task_signal_complete = %v", done)
	}
	all := call("baron", "task_get_comments", map[string]any{"issue_number": n})
	cs, _ := all["comments"].([]any)
	last, _ := asMap(cs[len(cs)-1])
	if last["body"] != "✅ Backend plan complete. See `Plans/123/backend.md`.\n\n@baron Ready for next phase." || last["author"] != "dede" {
		t.Fatalf("the completion comment = %v", last)
	}
	if bin, _ := call("baron", "task_inbox", nil)["items"].([]any); len(bin) != 1 || !strings.Contains(mustJSON(bin[0]), `"kind":"handoff"`) {
		t.Fatalf("baron's inbox = %v", bin)
	}
}
