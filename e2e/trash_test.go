package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
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

	// Deleted again and purged by the CLI: gone for good.
	callTool(t, cs, "delete_page", map[string]any{"path": "Plan.md"})
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
