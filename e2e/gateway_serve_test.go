package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// atrium serve --gateway: an HTTP client lists and calls an upstream's tools,
// a reload that drops one server reaches the client as list_changed and
// ends that server's processes (a forked grandchild included), and stopping
// Atrium leaves nothing behind.
func TestGatewayServeReloadAndShutdown(t *testing.T) {
	dir := t.TempDir()
	up := testUpstream(t)
	mark := fmt.Sprintf("ATRIUM_GW_SERVE=%d", time.Now().UnixNano())
	k, v, _ := strings.Cut(mark, "=")
	gwPath := filepath.Join(dir, "gateway.json")
	write := func(servers map[string]any) {
		b, _ := json.Marshal(map[string]any{"mcpServers": servers})
		if err := os.WriteFile(gwPath, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plain := map[string]any{"command": up, "env": map[string]string{k: v}}
	fork := map[string]any{"command": "sh", "args": []string{"-c", "sleep 999 & exec " + up}, "env": map[string]string{k: v}}
	write(map[string]any{"up": plain, "fork": fork})

	srv := startServe(t, "", "--gateway", gwPath)
	changed := make(chan struct{}, 8)
	client := mcp.NewClient(&mcp.Implementation{Name: "atrium-e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.MCP(), HTTPClient: bearer(srv.AdminToken, "")}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := func() map[string]bool {
		out := map[string]bool{}
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			out[tool.Name] = true
		}
		return out
	}
	if n := names(); !n["up_echo"] || !n["fork_echo"] || !n["get_status"] || n["up_wipe"] {
		t.Fatalf("tools: %v", n)
	}
	if s := structuredText(t, callTool(t, cs, "up_echo", map[string]any{"text": "over http"})); s != "over http" {
		t.Errorf("up_echo: %q", s)
	}
	sleeping := func() bool {
		for _, p := range marked(mark) {
			if _, cmd, _ := strings.Cut(p, " "); strings.HasPrefix(cmd, "sleep 999") {
				return true
			}
		}
		return false
	}
	// The shell forks the grandchild before it execs the server, but the
	// child may not have become "sleep" yet: wait for it.
	for deadline := time.Now().Add(15 * time.Second); !sleeping(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the grandchild is not running: %v", marked(mark))
		}
	}
	for len(changed) > 0 {
		<-changed
	}

	write(map[string]any{"up": plain})
	res := callTool(t, cs, "reload_external_mcps", nil)
	if d := mustJSON(structured(t, res)["diff"]); !strings.Contains(d, `"removed":["fork"]`) {
		t.Fatalf("reload: %s", d)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed after the reload")
	}
	if n := names(); n["fork_echo"] || !n["up_echo"] {
		t.Errorf("after the reload: %v", n)
	}
	for deadline := time.Now().Add(15 * time.Second); sleeping(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the removed server's grandchild outlived the reload: %v", marked(mark))
		}
	}

	cs.Close()
	srv.stop(t)
	assertNoneLeft(t, mark)
}

func structuredText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// atrium mcp --gateway killed with SIGKILL, which leaves it no chance to
// clean up, or stopped with SIGTERM: its servers, the grandchild one forked,
// and one that left its group and session (setsid), die with it.
func TestGatewayKilledAtriumLeavesNothing(t *testing.T) {
	for _, sig := range []os.Signal{os.Kill, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { gatewayAtriumEnds(t, sig) })
	}
}

func gatewayAtriumEnds(t *testing.T, sig os.Signal) {
	up := testUpstream(t)
	dir := t.TempDir()
	mark := fmt.Sprintf("ATRIUM_GW_KILL9=%d", time.Now().UnixNano())
	k, v, _ := strings.Cut(mark, "=")
	gwPath := filepath.Join(dir, "gateway.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"plain":  map[string]any{"command": up, "env": map[string]string{k: v}},
		"fork":   map[string]any{"command": "sh", "args": []string{"-c", "sleep 996 & exec " + up}, "env": map[string]string{k: v}},
		"setsid": map[string]any{"command": "sh", "args": []string{"-c", "setsid sleep 995 & exec " + up}, "env": map[string]string{k: v}},
	}})
	if err := os.WriteFile(gwPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "--data-dir", filepath.Join(dir, "data"), "mcp", "--gateway", gwPath)
	cmd.Env = cleanEnv()
	stdin, err := cmd.StdinPipe() // held open: Atrium serves until it is killed
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var sleeping, servers int
		for _, p := range marked(mark) {
			_, c, _ := strings.Cut(p, " ")
			switch {
			case strings.HasPrefix(c, "sleep 996"), strings.HasPrefix(c, "sleep 995"):
				sleeping++
			case strings.HasPrefix(c, up):
				servers++
			}
		}
		if sleeping == 2 && servers == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the servers did not start: %v", marked(mark))
		}
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	assertNoneLeft(t, mark)
}
