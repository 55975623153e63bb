package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The real Claude Code CLI (npm @anthropic-ai/claude-code, pinned in
// interop/) loads the MCP configuration Atrium writes for a session and,
// with the session's environment, connects to Atrium through atrium mcp —
// offline: claude mcp list only starts the server and asks it. Once the
// session ends, its token is revoked and the same configuration no longer
// connects.
func TestRealClaudeConnectsWithASessionsConfig(t *testing.T) {
	bin := nodeBin(t)
	if _, err := os.Stat(filepath.Join(bin, "claude")); err != nil {
		t.Fatalf("interop/ has no claude: run make interop-deps (%v)", err)
	}
	srv := startServe(t, "")
	dir := t.TempDir()
	// The agent writes down the identity its session was given, then waits.
	script := `printf '%s\n%s\n' "$ATRIUM_URL" "$ATRIUM_TOKEN" > "$OUT/identity"; sleep 600`
	if out, errOut, code := srv.cli(t, nil, "agent", "add", "cc", "--command", "/bin/sh", "--arg", "-c", "--arg", script, "--env", "OUT="+dir); code != 0 {
		t.Fatalf("agent add: %d\n%s%s", code, out, errOut)
	}
	cs := connectHTTP(t, srv.MCP(), srv.createToken(t, "ada", "", "writer"), "")
	ses := structured(t, callTool(t, cs, "agent_start", map[string]any{"agent": "cc"}))
	id := ses["session_id"].(string)
	var identity []string
	for deadline := time.Now().Add(20 * time.Second); len(identity) < 2; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, "identity"))
		identity = strings.Fields(string(b))
		if time.Now().After(deadline) {
			t.Fatal("the session did not write its identity")
		}
	}
	var config struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	b, err := os.ReadFile(filepath.Join(srv.DataDir, "sessions", id, "mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &config); err != nil || config.MCPServers["atrium"] == nil {
		t.Fatalf("the session's mcp.json: %s (%v)", b, err)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"ATRIUM_URL=" + identity[0], "ATRIUM_TOKEN=" + identity[1]}
	if out, code := runNode(t, bin, home, env, "claude", "mcp", "add-json", "--scope", "user", "atrium", string(config.MCPServers["atrium"])); code != 0 {
		t.Fatalf("claude mcp add-json: %d\n%s", code, out)
	}
	if out, code := runNode(t, bin, home, env, "claude", "mcp", "list"); code != 0 || !strings.Contains(out, "atrium") || !strings.Contains(out, "Connected") {
		t.Fatalf("claude mcp list with the session's identity: %d\n%s", code, out)
	}
	callTool(t, cs, "agent_stop", map[string]any{"session_id": id})
	if out, _ := runNode(t, bin, home, env, "claude", "mcp", "list"); strings.Contains(out, "✔ Connected") {
		t.Errorf("claude still connects with an ended session's token:\n%s", out)
	}
}
