package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, s)
	}
	return m
}

func TestCallCommand(t *testing.T) {
	srv := startServe(t, "")
	whoHandle := func(t *testing.T, out string) string {
		p, _ := asMap(decode(t, out)["principal"])
		h, _ := p["handle"].(string)
		return h
	}

	t.Run("in-process", func(t *testing.T) {
		out, errOut, code := srv.cli(t, []string{"ATRIUM_AGENT=scripter"}, "call", "whoami")
		if code != 0 || whoHandle(t, out) != "scripter" {
			t.Fatalf("exit %d, out %s, err %s", code, out, errOut)
		}
	})
	t.Run("url", func(t *testing.T) {
		out, errOut, code := srv.cli(t, []string{"ATRIUM_TOKEN=" + srv.AdminToken}, "call", "whoami", "--url", srv.MCP())
		if code != 0 || whoHandle(t, out) != "admin" {
			t.Fatalf("exit %d, out %s, err %s", code, out, errOut)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		cmd := binary + " --data-dir " + srv.DataDir + " mcp"
		out, errOut, code := runAtrium(t, []string{"ATRIUM_AGENT=piped"}, "call", "whoami", "--stdio", cmd)
		if code != 0 || whoHandle(t, out) != "piped" {
			t.Fatalf("exit %d, out %s, err %s", code, out, errOut)
		}
	})
	t.Run("tool error exits 1 with {error, code}", func(t *testing.T) {
		out, _, code := srv.cli(t, nil, "call", "whoami", "bogus=1")
		if code != 1 {
			t.Fatalf("exit %d, want 1", code)
		}
		if got := decode(t, out); got["code"] != "invalid_argument" || got["error"] == "" {
			t.Fatalf("output = %v", got)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		_, errOut, code := srv.cli(t, nil, "call", "no_such_tool")
		if code == 0 || !strings.Contains(errOut, "no_such_tool") {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
	})
	t.Run("malformed pair", func(t *testing.T) {
		_, errOut, code := srv.cli(t, nil, "call", "whoami", "novalue")
		if code == 0 || !strings.Contains(errOut, "key=value") {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
	})
}

// `atrium mcp --url` is a local stdio server that forwards to a remote serve:
// the caller is whoever the token says, not the local user.
func TestMCPForwardsToRemote(t *testing.T) {
	srv := startServe(t, "")
	cs := connectStdio(t, []string{"ATRIUM_URL=" + srv.MCP(), "ATRIUM_TOKEN=" + srv.AdminToken, "ATRIUM_AGENT=ignored"}, "--data-dir", t.TempDir())
	wantWhoami(t, callTool(t, cs, "whoami", nil), "admin", "default", "admin", "")
	res := callTool(t, cs, "whoami", map[string]any{"bogus": true})
	if !res.IsError || structured(t, res)["code"] != "invalid_argument" {
		t.Fatalf("remote error did not come through: %+v", res)
	}

	// Without a valid token the proxy says why and exits non-zero.
	_, errOut, code := runAtrium(t, []string{"ATRIUM_URL=" + srv.MCP(), "ATRIUM_TOKEN=atr_WRONG"}, "--data-dir", t.TempDir(), "mcp")
	if code == 0 || !strings.Contains(errOut, "Unauthorized") {
		t.Fatalf("bad token: exit %d, stderr %s", code, errOut)
	}
}

// atrium mcp answers the handshake while its store opens; when the store
// cannot serve the caller, it says why and exits non-zero even though the
// client keeps stdin open, as MCP clients do.
func TestMCPExitsWhenTheStoreCannotServe(t *testing.T) {
	cmd := exec.Command(binary, "--data-dir", t.TempDir(), "mcp")
	cmd.Env = append(cleanEnv(), "ATRIUM_AGENT=ann", "ATRIUM_WORKSPACE=nowhere")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(errOut.String(), `workspace "nowhere" not found`) {
			t.Fatalf("exit %v, stderr %s", err, errOut.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("atrium mcp kept running with a store it cannot serve; stderr %s", errOut.String())
	}
}

// Requests piped into atrium mcp are all answered, and run, though stdin
// ends right after them: atrium mcp < calls.jsonl works.
func TestMCPAnswersPipedRequests(t *testing.T) {
	dir := t.TempDir()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_page","arguments":{"path":"Piped.md","content":"# Piped"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`,
	}, "\n") + "\n"
	cmd := exec.Command(binary, "--data-dir", dir, "mcp")
	cmd.Env = append(cleanEnv(), "ATRIUM_AGENT=piper")
	cmd.Stdin = strings.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	answered := map[float64]bool{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		m := decode(t, line)
		if id, ok := m["id"].(float64); ok && m["result"] != nil {
			answered[id] = true
		}
	}
	if !answered[1] || !answered[2] || !answered[3] {
		t.Fatalf("answered %v of requests 1-3:\n%s", answered, out)
	}
	got, _, code := runAtrium(t, []string{"ATRIUM_AGENT=piper"}, "--data-dir", dir, "call", "read_page", "path=Piped.md")
	if code != 0 || !strings.Contains(got, "# Piped") {
		t.Fatalf("the piped write is not there: exit %d, %s", code, got)
	}
}

func TestAdminCommands(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, code := runAtrium(t, nil, append([]string{"--data-dir", dir}, args...)...)
		if code != 0 {
			t.Fatalf("atrium %v: exit %d\n%s", args, code, errOut)
		}
		return out, errOut
	}
	if out, _ := run("migrate"); !strings.HasPrefix(out, "sqlite schema at version ") {
		t.Errorf("migrate: %q", out)
	}
	if out, _ := run("version"); !strings.HasPrefix(out, "atrium ") {
		t.Errorf("version: %q", out)
	}
	run("workspace", "create", "research")
	if out, _ := run("workspace", "list"); !strings.Contains(out, "research") || !strings.Contains(out, "default") {
		t.Errorf("workspace list: %q", out)
	}
	secret, _ := run("token", "create", "--principal", "ana", "--workspace", "research", "--role", "reader", "--name", "laptop")
	if !strings.HasPrefix(secret, "atr_") {
		t.Fatalf("token create printed %q", secret)
	}
	out, _ := run("token", "list")
	if !strings.Contains(out, "ana") || !strings.Contains(out, "research") || strings.Contains(out, strings.TrimSpace(secret)) {
		t.Errorf("token list (must never show a secret):\n%s", out)
	}
	if _, errOut, code := runAtrium(t, nil, "--data-dir", dir, "workspace", "create", "Bad Name"); code == 0 || !strings.Contains(errOut, "invalid workspace name") {
		t.Errorf("bad workspace name: exit %d, %s", code, errOut)
	}
	if _, errOut, code := runAtrium(t, nil, "--data-dir", dir, "token", "revoke", "999"); code == 0 || !strings.Contains(errOut, "not found") {
		t.Errorf("revoke unknown token: exit %d, %s", code, errOut)
	}
	tools, _ := run("tools")
	if !strings.Contains(tools, "whoami") || !strings.Contains(tools, "READ-ONLY") {
		t.Errorf("tools:\n%s", tools)
	}
	toolsJSON, _ := run("tools", "--json", "--toolsets", "all,conformance")
	var defs []map[string]any
	if err := json.Unmarshal([]byte(toolsJSON), &defs); err != nil || len(defs) < 2 {
		t.Errorf("tools --json: %v, %d tools", err, len(defs))
	}
	if _, errOut, code := runAtrium(t, nil, "--data-dir", dir, "tools", "--toolsets", "nope"); code == 0 || !strings.Contains(errOut, "unknown toolset") {
		t.Errorf("unknown toolset: exit %d, %s", code, errOut)
	}
}
