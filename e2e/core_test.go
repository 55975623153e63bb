package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

func wantWhoami(t *testing.T, res *mcp.CallToolResult, handle, workspace, role, protocol string) {
	t.Helper()
	if res.IsError {
		t.Fatalf("whoami failed: %+v", res.Content)
	}
	got := structured(t, res)
	p, _ := asMap(got["principal"])
	if p["handle"] != handle || got["workspace"] != workspace || got["role"] != role {
		t.Errorf("whoami = %v; want %s in %s as %s", got, handle, workspace, role)
	}
	if protocol != "" && got["protocol_version"] != protocol {
		t.Errorf("protocol_version = %v, want %s", got["protocol_version"], protocol)
	}
}

// The same whoami answers over every transport, on both engines.
func TestWhoamiOverEveryTransport(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := ""
		if e == store.Postgres {
			db = storetest.PostgresDSN(t)
		}
		srv := startServe(t, db)
		if srv.AdminToken == "" {
			t.Fatalf("first start printed no admin token:\n%s", srv.stderr)
		}

		t.Run("stdio", func(t *testing.T) {
			cs := connectStdio(t, []string{"ATRIUM_AGENT=claude"}, srv.globalArgs()...)
			wantWhoami(t, callTool(t, cs, "whoami", nil), "claude", "default", "writer", "2026-07-28")
		})
		t.Run("http 2026-07-28 stateless", func(t *testing.T) {
			cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
			if cs.ID() != "" {
				t.Errorf("2026-07-28 session has ID %q; it should be stateless", cs.ID())
			}
			wantWhoami(t, callTool(t, cs, "whoami", nil), "admin", "default", "admin", "2026-07-28")
		})
		t.Run("http 2025-11-25 session", func(t *testing.T) {
			cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
			if cs.ID() == "" {
				t.Error("2025-11-25 session has no ID")
			}
			wantWhoami(t, callTool(t, cs, "whoami", nil), "admin", "default", "admin", "2025-11-25")
		})
		t.Run("legacy sse", func(t *testing.T) {
			cs := connectSSE(t, srv.URL+"/mcp/sse", srv.AdminToken)
			wantWhoami(t, callTool(t, cs, "whoami", nil), "admin", "default", "admin", "")
		})
		t.Run("workspace by path", func(t *testing.T) {
			cs := connectHTTP(t, srv.URL+"/w/default/mcp", srv.AdminToken, "")
			wantWhoami(t, callTool(t, cs, "whoami", nil), "admin", "default", "admin", "")
		})
	})
}

func rawPost(t *testing.T, url, token string, headers map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

func errorBody(t *testing.T, res *http.Response) map[string]any {
	t.Helper()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatalf("status %d: body is not JSON: %v", res.StatusCode, err)
	}
	return body
}

func TestHTTPAuthFailures(t *testing.T) {
	srv := startServe(t, "")
	// A second workspace, and a token bound to it.
	if _, errOut, code := srv.cli(t, nil, "workspace", "create", "team"); code != 0 {
		t.Fatalf("workspace create: %s", errOut)
	}
	teamToken, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "bob", "--workspace", "team", "--role", "writer")
	if code != 0 {
		t.Fatalf("token create: %s", errOut)
	}
	teamToken = strings.TrimSpace(teamToken)

	cases := []struct {
		name, path, token string
		headers           map[string]string
		status            int
		code              string
	}{
		{"no token", "/mcp", "", nil, 401, "unauthenticated"},
		{"bad token", "/mcp", "atr_NOTAREALTOKEN", nil, 401, "unauthenticated"},
		{"not a token", "/mcp", "hello", nil, 401, "unauthenticated"},
		{"no token on sse", "/mcp/sse", "", nil, 401, "unauthenticated"},
		{"no token, 2026-07-28", "/mcp", "", map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, 401, "unauthenticated"},
		{"admin asks for a workspace it is not in (path)", "/w/team/mcp", srv.AdminToken, nil, 403, "permission_denied"},
		{"admin asks for a workspace it is not in (header)", "/mcp", srv.AdminToken, map[string]string{"X-Atrium-Workspace": "team"}, 403, "permission_denied"},
		{"team token asks for default", "/w/default/mcp", teamToken, nil, 403, "permission_denied"},
		{"unknown workspace", "/w/nowhere/mcp", srv.AdminToken, nil, 403, "permission_denied"},
		{"invalid workspace name", "/mcp", srv.AdminToken, map[string]string{"X-Atrium-Workspace": "Not Valid"}, 400, "invalid_argument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := rawPost(t, srv.URL+tc.path, tc.token, tc.headers, initialize)
			if res.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d", res.StatusCode, tc.status)
			}
			if body := errorBody(t, res); body["code"] != tc.code || body["error"] == "" {
				t.Fatalf("body = %v, want code %s", body, tc.code)
			}
			if tc.status == 401 && res.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}

	// The team token works where it belongs.
	cs := connectHTTP(t, srv.URL+"/mcp", teamToken, "")
	wantWhoami(t, callTool(t, cs, "whoami", nil), "bob", "team", "writer", "")

	// A revoked token stops working at once, also for a session it opened.
	legacy := connectHTTP(t, srv.MCP(), teamToken, "2025-11-25")
	list, _, _ := srv.cli(t, nil, "token", "list", "--principal", "bob")
	id := strings.Fields(strings.Split(list, "\n")[1])[0]
	if out, errOut, code := srv.cli(t, nil, "token", "revoke", id); code != 0 {
		t.Fatalf("revoke: %s %s", out, errOut)
	}
	if _, err := tryConnectHTTP(srv.MCP(), teamToken, ""); err == nil {
		t.Error("revoked token still connects")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := legacy.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}}); err == nil {
		t.Error("a session opened with a revoked token still answers")
	}
}

func TestUnknownSessionIs404(t *testing.T) {
	srv := startServe(t, "")
	res := rawPost(t, srv.MCP(), srv.AdminToken, map[string]string{"Mcp-Session-Id": "NOSUCHSESSION"}, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: status %d, want 404", res.StatusCode)
	}
	// A closed session is unknown too, and the client learns it must start again.
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	id := cs.ID()
	cs.Close()
	res = rawPost(t, srv.MCP(), srv.AdminToken, map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("closed session: status %d, want 404", res.StatusCode)
	}
}

func TestIdleSessionsExpire(t *testing.T) {
	srv := startServe(t, "", "--session-timeout", "500ms")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	callTool(t, cs, "whoami", nil)
	time.Sleep(1500 * time.Millisecond)
	res := rawPost(t, srv.MCP(), srv.AdminToken, map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"}, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("request on an expired session: status %d, want 404", res.StatusCode)
	}
	waitFor(t, "the expired session to be gone", func() bool { return metric(t, srv, "atrium_mcp_sessions") == 0 })
}

// A session answers only to the caller that opened it.
func TestSessionsBelongToTheirOpener(t *testing.T) {
	srv := startServe(t, "")
	other, _, code := srv.cli(t, nil, "token", "create", "--principal", "eve", "--role", "writer")
	if code != 0 {
		t.Fatal("token create failed")
	}
	other = strings.TrimSpace(other)

	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	res := rawPost(t, srv.MCP(), other, map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("streamable session used by another principal: status %d, want 403", res.StatusCode)
	}

	// SSE: learn a session's endpoint from its stream, then post to it as eve.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/mcp/sse", nil)
	req.Header.Set("Authorization", "Bearer "+srv.AdminToken)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	endpoint := ""
	sc := bufio.NewScanner(stream.Body)
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			endpoint = e
			break
		}
	}
	if !strings.Contains(endpoint, "sessionid=") {
		t.Fatalf("no endpoint event, got %q", endpoint)
	}
	res = rawPost(t, srv.URL+endpoint, other, nil, initialize)
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("SSE session posted to by another principal: status %d, want 403", res.StatusCode)
	}
	res = rawPost(t, srv.URL+endpoint, srv.AdminToken, nil, initialize)
	if res.StatusCode != http.StatusAccepted {
		t.Errorf("SSE session posted to by its opener: status %d, want 202", res.StatusCode)
	}
}

func TestBadArgumentsAreInvalidArgument(t *testing.T) {
	srv := startServe(t, "")
	for _, version := range []string{"", "2025-11-25"} {
		cs := connectHTTP(t, srv.MCP(), srv.AdminToken, version)
		res := callTool(t, cs, "whoami", map[string]any{"bogus": 1})
		if !res.IsError {
			t.Fatalf("whoami with an unknown argument succeeded: %+v", res)
		}
		got := structured(t, res)
		if got["code"] != "invalid_argument" || !strings.Contains(fmt.Sprint(got["error"]), "bogus") {
			t.Errorf("error = %v, want invalid_argument naming the argument", got)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !strings.Contains(text, `"code":"invalid_argument"`) {
			t.Errorf("text content = %s, want the same {error, code}", text)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
		cancel()
		if err == nil {
			t.Error("unknown tool: no protocol error")
		}
	}
}

// metric reads the value of one series (a name, with its labels if it has
// any) from /metrics, as the admin, or fails.
func metric(t *testing.T, srv *server, name string) float64 {
	t.Helper()
	b := scrape(t, srv)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no metric %s in:\n%s", name, b)
	return 0
}

// scrape reads /metrics with the admin's token (none under --auth none).
func scrape(t *testing.T, srv *server) []byte {
	t.Helper()
	res, err := bearer(srv.AdminToken, "").Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %s", res.StatusCode, b)
	}
	return b
}

// Clients that come and go leave no session and no goroutine behind.
func TestNoLeaksAfterClientsDisconnect(t *testing.T) {
	srv := startServe(t, "")
	warm := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	callTool(t, warm, "whoami", nil)
	warm.Close()
	waitFor(t, "sessions to close", func() bool { return metric(t, srv, "atrium_mcp_sessions") == 0 })
	base := metric(t, srv, "atrium_goroutines")

	for range 10 {
		for _, version := range []string{"", "2025-11-25"} {
			cs, err := tryConnectHTTP(srv.MCP(), srv.AdminToken, version)
			if err != nil {
				t.Fatal(err)
			}
			callTool(t, cs, "whoami", nil)
			cs.Close()
		}
		cs, err := newClient().Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: srv.URL + "/mcp/sse", HTTPClient: bearer(srv.AdminToken, "")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		callTool(t, cs, "whoami", nil)
		cs.Close()
	}
	waitFor(t, "sessions to close", func() bool { return metric(t, srv, "atrium_mcp_sessions") == 0 })
	waitFor(t, fmt.Sprintf("goroutines back to about %v", base), func() bool { return metric(t, srv, "atrium_goroutines") <= base+3 })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestHealthzAndMetrics(t *testing.T) {
	srv := startServe(t, "")
	res, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var h map[string]string
	if err := json.NewDecoder(res.Body).Decode(&h); err != nil || res.StatusCode != 200 || h["status"] != "ok" || h["engine"] != "sqlite" {
		t.Fatalf("healthz = %d %v %v", res.StatusCode, h, err)
	}
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	callTool(t, cs, "whoami", nil)
	b := scrape(t, srv)
	for _, want := range []string{
		`atrium_mcp_requests_total{method="tools/call",tool="whoami",outcome="ok"} 1`,
		`# TYPE atrium_http_request_seconds histogram`,
		`atrium_http_requests_total{route="/mcp",status="200"}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestRefusesForeignHostAndOrigin(t *testing.T) {
	srv := startServe(t, "", "--allowed-hosts", "atrium.test")
	for _, tc := range []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"foreign Host", map[string]string{"Host": "evil.example"}, 403},
		{"foreign Origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"own Origin", map[string]string{"Origin": srv.URL}, 200},
		{"allowed Host", map[string]string{"Host": "atrium.test"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.MCP(), strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+srv.AdminToken)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			if h, ok := tc.headers["Host"]; ok {
				req.Host = h
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.status)
			}
		})
	}
}

func TestAuthNone(t *testing.T) {
	srv := startServe(t, "", "--auth", "none")
	if srv.AdminToken != "" {
		t.Error("--auth none printed a token")
	}
	cs := connectHTTP(t, srv.MCP(), "", "")
	wantWhoami(t, callTool(t, cs, "whoami", nil), "admin", "default", "admin", "")

	_, errOut, code := runAtrium(t, nil, "--data-dir", t.TempDir(), "serve", "--auth", "none", "--addr", "0.0.0.0:0")
	if code == 0 || !strings.Contains(errOut, "loopback") {
		t.Fatalf("--auth none on 0.0.0.0: exit %d, %s; want a refusal naming loopback", code, errOut)
	}
}

// A body over the limit (35 MiB) is a too_large tool error for a call (see
// TestMCPLimitsAnswerInJSONRPC), and 413 for what has no id to answer.
func TestRequestBodyLimit(t *testing.T) {
	srv := startServe(t, "")
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"pad":"` + strings.Repeat("x", 36<<20) + `"}}}`
	for _, h := range []map[string]string{{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}, nil} {
		m := readRPC(t, rawPost(t, srv.MCP(), srv.AdminToken, h, big))
		if r, _ := m["result"].(map[string]any); r["isError"] != true || m["id"] != float64(1) {
			t.Errorf("36 MiB call (headers %v): %v, want a too_large tool error", h, m)
		}
	}
	noID := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"pad":"` + strings.Repeat("x", 36<<20) + `"}}`
	if res := rawPost(t, srv.MCP(), srv.AdminToken, nil, noID); res.StatusCode != http.StatusRequestEntityTooLarge || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Errorf("36 MiB notification: status %d, %s; want 413 in JSON", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

func TestReadOnlyListsOnlyReadOnlyTools(t *testing.T) {
	srv := startServe(t, "", "--read-only", "--toolsets", "all,conformance")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := 0
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("--read-only lists %s", tool.Name)
		}
	}
	if n == 0 {
		t.Fatal("no tools listed")
	}
	// Unlisted is not enough: a client that calls a write tool by name is
	// refused, and nothing is written.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_page", Arguments: map[string]any{"path": "Written.md", "content": "read-only was not"}})
	if err == nil && !res.IsError {
		t.Fatalf("--read-only ran write_page: %+v", res.StructuredContent)
	}
	read, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_page", Arguments: map[string]any{"path": "Written.md"}})
	if err != nil || !read.IsError {
		t.Fatalf("after a refused write_page, read_page found it: %v %+v", err, read)
	}
	if m, _ := asMap(read.StructuredContent); m["code"] != "not_found" {
		t.Errorf("read_page of the refused write: %v, want not_found", read.StructuredContent)
	}
}
