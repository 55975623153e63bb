package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A revoked token, or a lowered role, ends the MCP streams of the sessions
// it opened at once, as it ends the browser's: no resource notification
// reaches them after (issue 23.23). Both generations: a 2025-era session's
// GET stream and a 2026-07-28 subscriptions/listen stream.
func TestRevokedAccessEndsMCPStreams(t *testing.T) {
	srv := startServe(t, "")
	rex := srv.createAgentToken(t, "rex")
	rob := srv.createAgentToken(t, "rob")
	const uri = "atrium://pages/Notes/Live.md"
	admin := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	n := 0
	write := func() {
		t.Helper()
		n++
		res := callTool(t, admin, "write_page", map[string]any{"path": "Notes/Live.md", "content": fmt.Sprintf("# Live\n\nVersion %d.\n", n), "overwrite": true})
		if res.IsError {
			t.Fatalf("write_page: %+v", res.StructuredContent)
		}
	}
	write()
	type sub struct {
		name    string
		cs      *mcp.ClientSession
		updates <-chan string
	}
	var subs []sub
	for _, s := range []struct{ name, token, version string }{
		{"rex's 2025 session", rex, "2025-11-25"},
		{"rex's 2026 listen", rex, ""},
		{"rob's 2025 session", rob, "2025-11-25"},
		{"rob's 2026 listen", rob, ""},
		{"the admin's session", srv.AdminToken, "2025-11-25"},
	} {
		cs, updates := subscriberSpeaking(t, srv, s.token, s.name, s.version)
		if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("%s subscribes: %v", s.name, err)
		}
		subs = append(subs, sub{s.name, cs, updates})
	}
	write()
	for _, s := range subs {
		expect(t, s.updates, uri, s.name+" before the revoke")
	}

	revokeToken(t, srv, "rex")
	if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "rob", "--kind", "agent", "--workspace", "default", "--role", "reader"); code != 0 {
		t.Fatalf("lower rob's role: %s", errOut)
	}
	time.Sleep(time.Second) // the server reads the log: this is its notice
	for _, s := range subs {
		collect(s.updates, 0)
	}
	for range 5 {
		write()
	}
	for _, s := range subs {
		got := collect(s.updates, 2*time.Second)
		switch {
		case s.name == "the admin's session" && len(got) == 0:
			t.Errorf("%s heard nothing after the revoke: the revoke ended streams it should not", s.name)
		case s.name != "the admin's session" && len(got) > 0:
			t.Errorf("%s still hears after its access ended: %d notifications", s.name, len(got))
		}
	}
}
