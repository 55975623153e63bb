package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Foundry E9's pattern 2, the whole review lifecycle, by an agent with mcporter
// and no browser, against the real binary.
func TestReviewLifecycleWithMcporter(t *testing.T) {
	bin := nodeBin(t)
	srv := startServe(t, "")
	dir := t.TempDir()
	config := map[string]any{
		"mcpServers": map[string]any{
			"atrium": map[string]any{"command": binary, "args": srv.globalArgs("mcp"), "env": map[string]string{"ATRIUM_AGENT": "clay"}},
		},
		"imports": []string{},
	}
	b, _ := json.Marshal(config)
	cfg := filepath.Join(dir, "mcporter.json")
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args ...string) map[string]any {
		t.Helper()
		out, code := runNode(t, bin, dir, nil, "mcporter", append([]string{"call", "atrium." + tool, "--config", cfg, "--output", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("mcporter call %s %v exited %d:\n%s", tool, args, code, out)
		}
		return lastJSON(t, out)
	}
	id := func(m map[string]any, key string) string {
		t.Helper()
		obj, _ := m[key].(map[string]any)
		s, _ := obj["id"].(string)
		if s == "" {
			t.Fatalf("no %s.id in %v", key, m)
		}
		return s
	}
	call("write_page", "path=Docs/Design.md", "content=# Design\n\n## Storage\n\nSQLite first, PostgreSQL to scale.\n")

	// Create a review with comments.
	thread := id(call("create_annotation", "doc_path=Docs/Design.md", "section=Storage", "content=Why SQLite first?", `quote={"exact":"SQLite first"}`), "annotation")
	submitted := call("submit_review", "doc_path=Docs/Design.md", "summary=First pass")
	review := id(submitted, "review")
	// Verify it was created.
	reviews := call("list_reviews", "doc_path=Docs/Design.md")
	if list, _ := reviews["reviews"].([]any); len(list) != 1 {
		t.Fatalf("list_reviews = %v", reviews)
	}
	// Check the specific review.
	got := call("get_review", "review_id="+review)
	if anns, _ := got["annotations"].([]any); len(anns) != 1 {
		t.Fatalf("get_review = %v", got)
	}
	// Reply to the comment: the reply joins the review.
	reply := call("create_annotation", "parent_id="+thread, "content=Embedded first; PostgreSQL when it must scale.")
	if r, _ := reply["annotation"].(map[string]any); r["review_id"] != review || r["author_type"] != "ai" {
		t.Fatalf("reply = %v", reply)
	}
	// Resolve the thread, reopen it.
	if r := call("resolve_annotation", "annotation_id="+thread); r["status"] != "resolved" {
		t.Fatalf("resolve = %v", r)
	}
	if r := call("reopen_annotation", "annotation_id="+thread); r["status"] != "submitted" {
		t.Fatalf("reopen = %v", r)
	}
	// Inspect, then clean up the test data.
	th := call("get_annotation", "annotation_id="+thread)
	if replies, _ := th["replies"].([]any); len(replies) != 1 {
		t.Fatalf("get_annotation = %v", th)
	}
	del := call("delete_annotation", "annotation_id="+thread)
	if del["replies_deleted"] != float64(1) || del["review_deleted"] != true {
		t.Fatalf("delete_annotation = %v", del)
	}
	if left := call("list_annotations", "doc_path=Docs/Design.md"); len(left["annotations"].([]any)) != 0 {
		t.Fatalf("left after cleanup: %v", left)
	}
	// The prompts are there for the agent's client.
	out, code := runNode(t, bin, dir, nil, "mcporter", "list", "atrium", "--config", cfg, "--json")
	if code != 0 {
		t.Fatalf("mcporter list: %s", out)
	}
}

// A subscriber to a page's threads hears of every thread change.
func TestAnnotationSubscriptions(t *testing.T) {
	srv := startServe(t, "")
	sub, updates := subscriber(t, srv)
	ctx := context.Background()
	writer := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	callTool(t, writer, "write_page", map[string]any{"path": "Plan.md", "content": "# Plan\n\nShip it."})
	const uri = "atrium://annotations/Plan.md"
	if err := sub.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	res := callTool(t, writer, "create_annotation", map[string]any{"doc_path": "Plan.md", "content": "When?", "status": "submitted"})
	if res.IsError {
		t.Fatal(res.Content)
	}
	select {
	case got := <-updates:
		if got != uri {
			t.Fatalf("notified of %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification for a new thread")
	}
	read, err := sub.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || read.Contents[0].MIMEType != "application/json" {
		t.Fatalf("read %v %v", read, err)
	}
	var body struct {
		Annotations []map[string]any `json:"annotations"`
	}
	if err := json.Unmarshal([]byte(read.Contents[0].Text), &body); err != nil || len(body.Annotations) != 1 || body.Annotations[0]["content"] != "When?" {
		t.Fatalf("resource = %s", read.Contents[0].Text)
	}
}
