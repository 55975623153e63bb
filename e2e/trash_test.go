package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Deleting a page from any surface puts it in the trash, from where MCP, REST
// and the CLI bring it back with its history; only purging ends it.
func TestTrashThroughEverySurface(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	for _, c := range []string{"# Plan\n\none\n", "# Plan\n\ntwo\n"} {
		if res := callTool(t, cs, "write_page", map[string]any{"path": "Plan.md", "content": c, "overwrite": true}); res.IsError {
			t.Fatalf("write: %+v", res.Content)
		}
	}
	del := structured(t, callTool(t, cs, "delete_page", map[string]any{"path": "Plan.md"}))
	id, _ := del["page_id"].(string)
	if del["trashed"] != true || id == "" {
		t.Fatalf("delete_page = %v", del)
	}

	// The CLI sees it in the trash, over the same store.
	out, errOut, code := srv.cli(t, nil, "trash", "list")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, `"path": "Plan.md"`) {
		t.Fatalf("atrium trash list = %d %s %s", code, out, errOut)
	}

	// REST restores it, with its two revisions.
	res, err := newRequest("POST", srv.URL+"/api/trash/"+id+"/restore", srv.AdminToken, "")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/trash/%s/restore = %v, %v", id, res, err)
	}
	revs := structured(t, callTool(t, cs, "list_page_revisions", map[string]any{"path": "Plan.md"}))
	if list, _ := revs["revisions"].([]any); len(list) != 2 {
		t.Fatalf("history after restore = %v", revs)
	}

	// Deleted again and restored by the CLI, by path and to another one.
	callTool(t, cs, "delete_page", map[string]any{"path": "Plan.md"})
	if out, errOut, code := srv.cli(t, nil, "trash", "restore", "Plan.md", "--to", "Plan again.md"); code != 0 || !strings.Contains(out, `"restored": true`) {
		t.Fatalf("atrium trash restore = %d %s %s", code, out, errOut)
	}
	again := structured(t, callTool(t, cs, "list_page_revisions", map[string]any{"path": "Plan again.md"}))
	if list, _ := again["revisions"].([]any); len(list) < 2 {
		t.Fatalf("history after the CLI's restore = %v", again)
	}

	// Deleted again and purged by the CLI: gone for good.
	callTool(t, cs, "delete_page", map[string]any{"path": "Plan again.md"})
	if out, errOut, code := srv.cli(t, nil, "trash", "purge", id); code != 0 || !strings.Contains(out, `"purged": true`) {
		t.Fatalf("atrium trash purge = %d %s %s", code, out, errOut)
	}
	if res := callTool(t, cs, "restore_page", map[string]any{"page_id": id}); !res.IsError {
		t.Fatalf("restore after purge succeeded: %+v", res.Content)
	}
	var trash struct {
		Pages []any `json:"pages"`
	}
	b, _ := json.Marshal(structured(t, callTool(t, cs, "list_trash", nil)))
	if err := json.Unmarshal(b, &trash); err != nil || len(trash.Pages) != 0 {
		t.Fatalf("trash after purge = %s", b)
	}
}

// --trash-retention: 0 keeps deleted pages until purged (the trash names no
// purge time); a server started with a retention they have passed purges
// them as it starts.
func TestTrashRetentionFlag(t *testing.T) {
	srv := startServe(t, "", "--trash-retention", "0")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Old.md", "content": "# Old\n"}); res.IsError {
		t.Fatalf("write: %+v", res.Content)
	}
	id, _ := structured(t, callTool(t, cs, "delete_page", map[string]any{"path": "Old.md"}))["page_id"].(string)
	trash := func(cs *mcp.ClientSession) []any {
		t.Helper()
		pages, _ := structured(t, callTool(t, cs, "list_trash", nil))["pages"].([]any)
		return pages
	}
	if got := trash(cs); len(got) != 1 || got[0].(map[string]any)["purge_at"] != nil {
		t.Fatalf("trash with --trash-retention 0 = %v, want Old.md with no purge time", got)
	}
	cs.Close()
	srv.stop(t)
	if strings.Contains(srv.stderr.String(), "purged pages") {
		t.Fatalf("a server with --trash-retention 0 purged:\n%s", srv.stderr)
	}
	if out, errOut, code := srv.cli(t, nil, "trash", "list"); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("after a server with --trash-retention 0: atrium trash list = %d %s %s", code, out, errOut)
	}

	// A retention the page has passed: purged as the server starts.
	srv.restart(t, "--trash-retention", "1ms")
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(srv.stderr.String(), `msg="purged pages past the trash's retention" pages=1`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a server with --trash-retention 1ms did not purge the page:\n%s", srv.stderr)
		}
	}
	if got := trash(connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")); len(got) != 0 {
		t.Fatalf("trash after the retention = %v", got)
	}
}
