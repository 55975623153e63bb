package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Tenant isolation, for every tool that exists: a caller in workspace beta
// can neither reach alpha's server nor see anything of alpha through any tool,
// and a session opened in alpha refuses beta's caller.
func TestEveryToolStaysInItsWorkspace(t *testing.T) {
	srv := startServe(t, "")
	for _, ws := range []string{"alpha", "beta"} {
		if _, errOut, code := srv.cli(t, nil, "workspace", "create", ws); code != 0 {
			t.Fatal(errOut)
		}
	}
	token := func(handle, ws string) string {
		out, errOut, code := srv.cli(t, nil, "token", "create", "--principal", handle, "--workspace", ws, "--role", "admin")
		if code != 0 {
			t.Fatal(errOut)
		}
		return strings.TrimSpace(out)
	}
	alice, bob := token("alice-marker", "alpha"), token("bob", "beta")

	// Give alpha some history, so that a leak would have something to show.
	alphaSession := connectHTTP(t, srv.URL+"/w/alpha/mcp", alice, "2025-11-25")
	callTool(t, alphaSession, "whoami", nil)

	betaSession := connectHTTP(t, srv.URL+"/mcp", bob, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var names []string
	for tool, err := range betaSession.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if len(names) == 0 {
		t.Fatal("no tools listed")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			res := callTool(t, betaSession, name, nil)
			b, _ := json.Marshal(res)
			if s := string(b); strings.Contains(s, "alpha") || strings.Contains(s, "alice-marker") {
				t.Fatalf("%s shows workspace alpha to a caller of beta: %s", name, s)
			}
			// beta's caller cannot open alpha's server, by path or header…
			for _, h := range []map[string]string{nil, {"X-Atrium-Workspace": "alpha"}} {
				path := "/w/alpha/mcp"
				if h != nil {
					path = "/mcp"
				}
				res := rawPost(t, srv.URL+path, bob, mergeHeaders(h, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}),
					`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`)
				if res.StatusCode != http.StatusForbidden {
					t.Errorf("%s on alpha by beta's caller (%s): status %d, want 403", name, path, res.StatusCode)
				}
			}
			// …nor use a session alpha's caller opened, from either endpoint.
			for _, path := range []string{"/w/alpha/mcp", "/mcp"} {
				res := rawPost(t, srv.URL+path, bob, map[string]string{"Mcp-Session-Id": alphaSession.ID(), "Mcp-Protocol-Version": "2025-11-25"},
					`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+name+`","arguments":{}}}`)
				if res.StatusCode != http.StatusForbidden {
					t.Errorf("%s in alpha's session by beta's caller (%s): status %d, want 403", name, path, res.StatusCode)
				}
			}
		})
	}
}

func mergeHeaders(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
