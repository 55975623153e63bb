package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeBin is the folder of the pinned Node clients (make interop-deps).
func nodeBin(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "interop", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "mcporter")); err != nil {
		if os.Getenv("ATRIUM_REQUIRE_INTEROP") == "1" {
			t.Fatalf("the Node clients are required (ATRIUM_REQUIRE_INTEROP=1) but %s has no mcporter: run make interop-deps", dir)
		}
		t.Skipf("no Node clients in %s: run 'make interop-deps' to test against mcporter and the MCP Inspector", dir)
	}
	return dir
}

// runNode runs one of the Node clients with Node 24 first on PATH.
func runNode(t *testing.T, bin, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Dir = dir
	cmd.Env = append(append(cleanEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1"), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return string(out), code
}

// lastJSON decodes the last JSON object in out (clients may log before it).
func lastJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	i := strings.Index(out, "{")
	for i >= 0 {
		var m map[string]any
		if err := json.Unmarshal([]byte(out[i:]), &m); err == nil {
			return m
		}
		j := strings.Index(out[i+1:], "\n{")
		if j < 0 {
			break
		}
		i += j + 2
	}
	t.Fatalf("no JSON object in output:\n%s", out)
	return nil
}

// mcporter, the CLI agents use, calls Atrium over stdio and over HTTP.
func TestMcporter(t *testing.T) {
	bin := nodeBin(t)
	srv := startServe(t, "")
	dir := t.TempDir()
	config := map[string]any{
		"mcpServers": map[string]any{
			"atrium": map[string]any{
				"command": binary,
				"args":    srv.globalArgs("mcp"),
				"env":     map[string]string{"ATRIUM_AGENT": "mcporter"},
			},
			"atriumhttp": map[string]any{
				"baseUrl": srv.MCP(),
				"headers": map[string]string{"Authorization": "Bearer ${ATRIUM_TOKEN}"},
			},
		},
		"imports": []string{},
	}
	b, _ := json.Marshal(config)
	cfg := filepath.Join(dir, "mcporter.json")
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"ATRIUM_TOKEN=" + srv.AdminToken}

	for _, tc := range []struct{ server, handle string }{{"atrium", "mcporter"}, {"atriumhttp", "admin"}} {
		t.Run(tc.server, func(t *testing.T) {
			out, code := runNode(t, bin, dir, env, "mcporter", "call", tc.server+".whoami", "--config", cfg, "--output", "json")
			if code != 0 {
				t.Fatalf("mcporter call exited %d:\n%s", code, out)
			}
			got := lastJSON(t, out)
			p, _ := asMap(got["principal"])
			if p["handle"] != tc.handle || got["workspace"] != "default" {
				t.Fatalf("whoami = %v, want %s in default", got, tc.handle)
			}
			// A bad call is an error the agent can read, and a failed exit.
			out, code = runNode(t, bin, dir, env, "mcporter", "call", tc.server+".whoami", "bogus=1", "--config", cfg, "--output", "json")
			if code == 0 || lastJSON(t, out)["code"] != "invalid_argument" {
				t.Fatalf("bad call: exit %d, output:\n%s", code, out)
			}
		})
	}
}

// The MCP Inspector's CLI lists and calls tools over stdio and over HTTP in
// both protocol eras, and finds no schema portability error.
func TestInspectorCLI(t *testing.T) {
	bin := nodeBin(t)
	srv := startServe(t, "")
	dir := t.TempDir()
	stdio := append([]string{"--cli", "-q", binary}, srv.globalArgs("mcp")...)
	http := []string{"--cli", "-q", srv.MCP(), "--header", "Authorization: Bearer " + srv.AdminToken}

	for _, tc := range []struct {
		name     string
		target   []string
		protocol string
	}{
		{"stdio", stdio, ""},
		{"http legacy", append(http, "--protocol-era", "legacy"), "2025-11-25"},
		{"http modern", append(http, "--protocol-era", "modern"), "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runNode(t, bin, dir, []string{"ATRIUM_AGENT=inspector"}, "mcp-inspector", append(tc.target, "--method", "tools/list", "--strict")...)
			if code != 0 || !strings.Contains(out, `"whoami"`) {
				t.Fatalf("tools/list exited %d:\n%s", code, out)
			}
			out, code = runNode(t, bin, dir, []string{"ATRIUM_AGENT=inspector"}, "mcp-inspector", append(tc.target, "--method", "tools/call", "--tool-name", "whoami")...)
			if code != 0 {
				t.Fatalf("tools/call exited %d:\n%s", code, out)
			}
			sc, _ := asMap(lastJSON(t, out)["structuredContent"])
			if sc["workspace"] != "default" || (tc.protocol != "" && sc["protocol_version"] != tc.protocol) {
				t.Fatalf("whoami = %v", sc)
			}
		})
	}
}

// The official TypeScript client 2.x negotiates 2026-07-28 by itself (auto:
// server/discover first), calls tools, reads a page (private to the caller,
// not publicly cacheable) and hears a change to it on a subscriptions/listen
// stream. interop/ts-client-2026.mjs drives the client and prints what it saw.
func TestTypeScriptClient2026(t *testing.T) {
	bin := nodeBin(t)
	script, err := filepath.Abs(filepath.Join("..", "interop", "ts-client-2026.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bin, "..", "@modelcontextprotocol", "client", "package.json")); err != nil {
		if os.Getenv("ATRIUM_REQUIRE_INTEROP") == "1" {
			t.Fatalf("the TypeScript client 2.x is required (ATRIUM_REQUIRE_INTEROP=1) but not installed: run make interop-deps")
		}
		t.Skip("no @modelcontextprotocol/client in interop/node_modules: run 'make interop-deps'")
	}
	srv := startServe(t, "")
	out, code := runNode(t, bin, t.TempDir(), nil, "node", script, srv.MCP(), srv.AdminToken)
	if code != 0 {
		t.Fatalf("ts-client-2026.mjs exited %d:\n%s", code, out)
	}
	seen := lastJSON(t, out)
	discover, _ := asMap(seen["discover"])
	whoami, _ := asMap(seen["whoami"])
	read, _ := asMap(seen["read"])
	honored, _ := asMap(seen["honored"])
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"negotiated version", seen["negotiated"], "2026-07-28"},
		{"server name", seen["server"], "atrium"},
		{"server/discover name", discover["name"], "atrium"},
		{"server/discover resources.subscribe", discover["subscribe"], true},
		{"whoami protocol", whoami["protocol"], "2026-07-28"},
		{"whoami handle", whoami["handle"], "admin"},
		{"page text", read["text"], "---\ntitle: Listen probe\n---\n\nFirst.\n"},
		{"page cacheScope", read["cacheScope"], "private"},
		{"updated page", seen["updated"], "atrium://pages/Listen%20probe.md"},
		{"subscription end", seen["closed"], "local"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v (client saw %s)", c.what, c.got, c.want, out)
		}
	}
	if subs, _ := honored["resourceSubscriptions"].([]any); len(subs) != 1 {
		t.Errorf("honored filter %v: want the page's subscription", honored)
	}
}
