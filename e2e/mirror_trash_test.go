package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rm in the mirror folder, running or not, sends the page to the trash with
// its history, and restoring it writes the file back.
func TestMirrorRemovalGoesToTheTrash(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "atrium.db")
	dir := t.TempDir()
	srv := startServe(t, dbPath, "--auth", "none", "--mirror", dir)
	cs := connectHTTP(t, srv.MCP(), "", "2025-11-25")
	for _, c := range []string{"# Plan\n\none\n", "# Plan\n\ntwo\n"} {
		if res := callTool(t, cs, "write_page", map[string]any{"path": "Plan.md", "content": c, "overwrite": true}); res.IsError {
			t.Fatalf("write: %+v", res.Content)
		}
	}
	for _, name := range []string{"Plan.md", "Other.md"} {
		if name == "Other.md" {
			callTool(t, cs, "write_page", map[string]any{"path": "Other.md", "content": "# Other\n"})
		}
		waitFor(t, name+" in the folder", func() bool {
			b, err := os.ReadFile(filepath.Join(dir, name))
			return err == nil && len(b) > 0
		})
	}

	// Running: rm is a delete to the trash.
	if err := os.Remove(filepath.Join(dir, "Plan.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Plan.md in the trash", func() bool {
		return strings.Contains(trashPaths(t, cs), "Plan.md")
	})
	res := structured(t, callTool(t, cs, "restore_page", map[string]any{"path": "Plan.md"}))
	if res["restored"] != true {
		t.Fatalf("restore_page = %v", res)
	}
	waitFor(t, "Plan.md written back", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "Plan.md"))
		return err == nil && strings.Contains(string(b), "two")
	})
	revs := structured(t, callTool(t, cs, "list_page_revisions", map[string]any{"path": "Plan.md"}))
	if list, _ := revs["revisions"].([]any); len(list) != 2 {
		t.Fatalf("history after restore = %v", revs)
	}
	cs.Close()
	srv.stop(t)

	// Stopped: the same rm is a delete at the next start, not a restore.
	if err := os.Remove(filepath.Join(dir, "Other.md")); err != nil {
		t.Fatal(err)
	}
	srv = startServe(t, dbPath, "--auth", "none", "--mirror", dir)
	cs = connectHTTP(t, srv.MCP(), "", "2025-11-25")
	waitFor(t, "Other.md in the trash after a start", func() bool {
		return strings.Contains(trashPaths(t, cs), "Other.md")
	})
	if _, err := os.Stat(filepath.Join(dir, "Other.md")); !os.IsNotExist(err) {
		t.Fatalf("Other.md was written back at start: %v", err)
	}
	if res := callTool(t, cs, "read_page", map[string]any{"path": "Plan.md"}); res.IsError {
		t.Fatalf("Plan.md, never removed, is gone: %+v", res.Content)
	}
}

// trashPaths lists the paths of the pages in the trash, one per line.
func trashPaths(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	var paths []string
	pages, _ := structured(t, callTool(t, cs, "list_trash", nil))["pages"].([]any)
	for _, p := range pages {
		if m, ok := p.(map[string]any); ok {
			paths = append(paths, m["path"].(string))
		}
	}
	return strings.Join(paths, "\n")
}
