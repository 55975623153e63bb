package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// atrium backup FILE copies the SQLite store while serve runs and writes go
// on, and the copy restores as the README says: stop, copy it as the data
// folder's atrium.db, start (issue 23.24). On PostgreSQL it points to pg_dump.
func TestBackupWhileServingAndRestore(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	write := func(cs *mcp.ClientSession, path, content string) error {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_page", Arguments: map[string]any{"path": path, "content": content, "overwrite": true}})
		if err == nil && res.IsError {
			err = fmt.Errorf("%+v", res.StructuredContent)
		}
		return err
	}
	for i := range 20 {
		if err := write(cs, fmt.Sprintf("Before/P%d.md", i), fmt.Sprintf("# Page %d\n\nbefore the backup\n", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Writes go on during the backup: it must not stop them, nor they it.
	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		written atomic.Int64
		werr    atomic.Value
	)
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			if err := write(cs, fmt.Sprintf("During/P%d.md", i), "# During\n"); err != nil {
				werr.Store(err)
				return
			}
			written.Add(1)
		}
	})
	file := filepath.Join(t.TempDir(), "atrium-backup.db")
	time.Sleep(200 * time.Millisecond)
	out, errOut, code := srv.cli(t, nil, "backup", file)
	stop.Store(true)
	wg.Wait()
	if code != 0 {
		t.Fatalf("atrium backup: %d\n%s%s", code, out, errOut)
	}
	if err, _ := werr.Load().(error); err != nil || written.Load() == 0 {
		t.Fatalf("writes during the backup: %d, %v", written.Load(), err)
	}
	if _, errOut, code := srv.cli(t, nil, "backup", file); code == 0 || !strings.Contains(errOut, "already exists") {
		t.Errorf("a backup over an existing file: %d %s", code, errOut)
	}
	if err := write(cs, "After.md", "# After the backup\n"); err != nil {
		t.Fatal(err)
	}

	// Restore, as documented: into a data folder of its own here, so the
	// original server's state stays apart.
	restored := t.TempDir()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, "atrium.db"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runAtrium(t, nil, "--data-dir", restored, "call", "list_pages", "path=Before", "include_private=true", "limit=100")
	if code != 0 {
		t.Fatalf("list pages of the restored store: %s", errOut)
	}
	for i := range 20 {
		if !strings.Contains(out, fmt.Sprintf("Before/P%d.md", i)) {
			t.Errorf("the restored store lacks Before/P%d.md", i)
		}
	}
	if out, _, _ := runAtrium(t, nil, "--data-dir", restored, "call", "read_page", "path=After.md"); !strings.Contains(out, "not_found") {
		t.Errorf("the restored store has a page written after the backup: %s", out)
	}
	// And serve starts on it.
	re := &server{DataDir: restored}
	t.Cleanup(func() { re.stop(t) })
	re.launch(t)
	if res := callTool(t, connectHTTP(t, re.MCP(), srv.AdminToken, ""), "read_page", map[string]any{"path": "Before/P3.md"}); res.IsError {
		t.Errorf("read a page from the restored server: %+v", res.StructuredContent)
	}
}

func TestBackupOfPostgresPointsToPgDump(t *testing.T) {
	_, errOut, code := runAtrium(t, nil, "--db", "postgres://nobody@127.0.0.1:1/none?sslmode=disable", "backup", filepath.Join(t.TempDir(), "x.db"))
	if code == 0 || !strings.Contains(errOut, "pg_dump --format=custom") || !strings.Contains(errOut, "pg_restore") {
		t.Errorf("backup of PostgreSQL: %d\n%s", code, errOut)
	}
}
