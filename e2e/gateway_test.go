package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/store"
)

// marked lists the live processes whose environment carries mark: whatever
// a test started, and whatever those started, wherever reparented.
func marked(mark string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(mark+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
	}
	return out
}

func assertNoneLeft(t *testing.T, mark string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for left := marked(mark); len(left) > 0; left = marked(mark) {
		if time.Now().After(deadline) {
			t.Errorf("processes outlived Atrium:\n%s", strings.Join(left, "\n"))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Atrium with a gateway of real servers — a second atrium mcp, the npm
// reference servers everything (stdio and Streamable HTTP) and filesystem —
// driven by mcporter through the real binary: prefixed names, the second
// Atrium's and filesystem's destructive tools held back and refused, allowed
// where the file says so, status and health, the calls in the audit log, and
// no process left once mcporter is done.
func TestGatewayThroughMcporter(t *testing.T) {
	bin := nodeBin(t)
	dir := t.TempDir()
	mark := fmt.Sprintf("ATRIUM_GW_E2E=%d", time.Now().UnixNano())
	files := filepath.Join(dir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "hello.txt"), []byte("hello from disk"), 0o644); err != nil {
		t.Fatal(err)
	}

	// server-everything over Streamable HTTP, started by the test.
	port := freePort(t)
	everything := exec.Command(filepath.Join(bin, "mcp-server-everything"), "streamableHttp")
	everything.Env = append(cleanEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "PORT="+strconv.Itoa(port), mark)
	everything.Stderr = &syncBuffer{}
	if err := everything.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		everything.Process.Kill()
		everything.Wait()
	})
	// Node takes its time on a loaded machine: the gateway must find the
	// upstream listening, or the status below sees it in backoff.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything never listened on %d: %v", port, err)
		}
	}

	gw := map[string]any{"mcpServers": map[string]any{
		"inner": map[string]any{"command": binary, "args": []string{"--data-dir", filepath.Join(dir, "inner"), "mcp"}, "env": map[string]string{"ATRIUM_AGENT": "inner"}},
		"every": map[string]any{"command": "mcp-server-everything", "args": []string{"stdio"},
			"health": []map[string]any{{"tool": "echo", "arguments": map[string]any{"message": "all is well"}}}},
		"everyhttp": map[string]any{"url": fmt.Sprintf("http://127.0.0.1:%d/mcp", port), "timeouts": map[string]any{"start": "60s"}},
		"fs":        map[string]any{"command": "mcp-server-filesystem", "args": []string{"${GW_FILES}"}},
		"fsrw":      map[string]any{"command": "mcp-server-filesystem", "args": []string{"${GW_FILES}"}, "metadata": map[string]any{"allowDestructiveTools": true}},
	}}
	gwPath := filepath.Join(dir, "gateway.json")
	b, _ := json.MarshalIndent(gw, "", "  ")
	if err := os.WriteFile(gwPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	outer := filepath.Join(dir, "outer")
	k, v, _ := strings.Cut(mark, "=")
	mc := map[string]any{"mcpServers": map[string]any{"atrium": map[string]any{
		"command": binary, "args": []string{"--data-dir", outer, "mcp", "--gateway", gwPath},
		"env": map[string]string{"ATRIUM_AGENT": "outer", "GW_FILES": files, k: v, "ATRIUM_TOKEN": "atr_must_not_reach_upstreams"},
	}}, "imports": []string{}}
	b, _ = json.Marshal(mc)
	cfg := filepath.Join(dir, "mcporter.json")
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args map[string]any) (map[string]any, string, int) {
		t.Helper()
		if args == nil {
			args = map[string]any{}
		}
		a, _ := json.Marshal(args)
		out, code := runNode(t, bin, dir, nil, "mcporter", "call", "atrium."+tool, "--args", string(a), "--config", cfg, "--output", "json")
		if !strings.Contains(out, "{") {
			return nil, out, code
		}
		return lastJSON(t, out), out, code
	}

	status, out, code := call("get_status", nil)
	if code != 0 {
		t.Fatalf("get_status exited %d:\n%s", code, out)
	}
	ups := map[string]map[string]any{}
	list, _ := status["upstreams"].([]any)
	for _, u := range list {
		m, _ := asMap(u)
		ups[m["name"].(string)] = m
	}
	for _, name := range []string{"inner", "every", "everyhttp", "fs", "fsrw"} {
		if ups[name]["state"] != "ready" {
			t.Errorf("%s: %v", name, ups[name])
		}
	}
	if ups["everyhttp"]["transport"] != "http" {
		t.Errorf("everyhttp over %v", ups["everyhttp"]["transport"])
	}
	tools := func(name, key string) string { return mustJSON(ups[name][key]) }
	for _, c := range []struct{ server, tool string }{{"inner", "inner_whoami"}, {"inner", "inner_write_page"}, {"every", "every_echo"}, {"fs", "fs_read_text_file"}, {"fsrw", "fsrw_write_file"}, {"fsrw", "fsrw_move_file"}} {
		if !strings.Contains(tools(c.server, "tools"), `"`+c.tool+`"`) {
			t.Errorf("%s not exposed: %s", c.tool, tools(c.server, "tools"))
		}
	}
	for _, c := range []struct{ server, tool string }{{"inner", "inner_delete_page"}, {"inner", "inner_purge_page"}, {"fs", "fs_write_file"}, {"fs", "fs_move_file"}, {"fs", "fs_edit_file"}} {
		if strings.Contains(tools(c.server, "tools"), `"`+c.tool+`"`) || !strings.Contains(tools(c.server, "held_back"), `"`+c.tool+`"`) {
			t.Errorf("%s not held back: %s / %s", c.tool, tools(c.server, "tools"), tools(c.server, "held_back"))
		}
	}

	if res, out, _ := call("inner_whoami", nil); !strings.Contains(mustJSON(res), `"inner"`) {
		t.Errorf("the second Atrium's whoami: %s", out)
	}
	if res, out, _ := call("every_echo", map[string]any{"message": "through the gateway"}); !strings.Contains(mustJSON(res), "through the gateway") {
		t.Errorf("every_echo: %s", out)
	}
	if res, out, _ := call("everyhttp_echo", map[string]any{"message": "over http"}); !strings.Contains(mustJSON(res), "over http") {
		t.Errorf("everyhttp_echo: %s", out)
	}
	if res, out, _ := call("fs_read_text_file", map[string]any{"path": filepath.Join(files, "hello.txt")}); !strings.Contains(mustJSON(res), "hello from disk") {
		t.Errorf("fs_read_text_file: %s", out)
	}
	_, out, _ = call("fs_write_file", map[string]any{"path": filepath.Join(files, "no.txt"), "content": "x"})
	if !strings.Contains(out, "held back") {
		t.Errorf("fs_write_file was not refused with why: %s", out)
	}
	if _, err := os.Stat(filepath.Join(files, "no.txt")); err == nil {
		t.Error("a held-back tool wrote a file")
	}
	if _, out, code := call("fsrw_write_file", map[string]any{"path": filepath.Join(files, "yes.txt"), "content": "allowed"}); code != 0 {
		t.Errorf("fsrw_write_file: %s", out)
	}
	if got, _ := os.ReadFile(filepath.Join(files, "yes.txt")); string(got) != "allowed" {
		t.Errorf("the allowed write wrote %q", got)
	}
	if res, out, _ := call("every_get-env", nil); res != nil && strings.Contains(mustJSON(res), "atr_must_not_reach_upstreams") {
		t.Errorf("Atrium's token reached an upstream: %s", out)
	}
	health, out, _ := call("system_health_check", nil)
	if h := mustJSON(health); health["overall"] != "healthy" || !strings.Contains(h, `"name":"tools/call echo"`) || !strings.Contains(h, `"result":"Echo: all is well"`) {
		t.Errorf("health: %s", out)
	}

	// No process of the test outlives the atrium mcp processes mcporter ran.
	everything.Process.Kill()
	everything.Wait()
	assertNoneLeft(t, mark)

	// The calls are in the outer Atrium's audit log, by the caller.
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(outer, "atrium.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var calls []string
	_ = db.View(ctx, func(tx *store.Tx) error {
		evs, err := tx.EventsAfter(ctx, 0, 0, 1000)
		for _, e := range evs {
			if e.Kind == "gateway.call" {
				calls = append(calls, string(e.Payload))
			}
		}
		return err
	})
	joined := strings.Join(calls, "\n")
	for _, want := range []string{`"tool":"every_echo","server":"every","upstream_tool":"echo","outcome":"ok"`, `"tool":"fs_write_file","server":"fs","upstream_tool":"write_file","outcome":"refused"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("audit log lacks %s:\n%s", want, joined)
		}
	}
}
