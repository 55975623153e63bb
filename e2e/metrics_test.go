package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// /metrics describes what every tenant does, so it is for admins only,
// unless the operator opens it for a scraper with --metrics-open.
func TestMetricsNeedAnAdmin(t *testing.T) {
	srv := startServe(t, "")
	writer, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "wendy", "--workspace", "default", "--role", "writer")
	if code != 0 {
		t.Fatalf("token create: %s", errOut)
	}
	for _, tc := range []struct {
		name, token string
		status      int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"a writer", strings.TrimSpace(writer), http.StatusForbidden},
		{"a bad token", "atr_NOPE", http.StatusUnauthorized},
		{"the admin", srv.AdminToken, http.StatusOK},
	} {
		auth := ""
		if tc.token != "" {
			auth = "Bearer " + tc.token
		}
		status, _, body := get(t, "GET", srv.URL+"/metrics", auth, "")
		if status != tc.status {
			t.Errorf("%s: /metrics %d, want %d: %.200s", tc.name, status, tc.status, body)
		}
		if status != http.StatusOK && strings.Contains(body, "atrium_") {
			t.Errorf("%s: refused, yet the body holds metrics", tc.name)
		}
	}

	open := startServe(t, "", "--metrics-open")
	if status, _, body := get(t, "GET", open.URL+"/metrics", "", ""); status != http.StatusOK || !strings.Contains(body, "atrium_goroutines") {
		t.Errorf("--metrics-open, no token: %d %.200s", status, body)
	}
}

// No caller can add series to /metrics at will: every label takes a value
// from a bounded set, whatever names a client sends.
func TestMetricsLabelsAreBounded(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	const n = 40
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cs.CallTool(ctx, &mcp.CallToolParams{Name: fmt.Sprintf("no_such_tool_%d", i), Arguments: map[string]any{}})
		cancel()
		// Routes and methods that do not exist, too.
		get(t, "GET", fmt.Sprintf("%s/nowhere/%d", srv.URL, i), "Bearer "+srv.AdminToken, "")
		get(t, fmt.Sprintf("BREW%d", i), srv.URL+"/mcp", "Bearer "+srv.AdminToken, "")
		get(t, "POST", srv.URL+"/mcp", "Bearer "+srv.AdminToken, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"made/up/%d","params":{}}`, i))
	}
	callTool(t, cs, "whoami", nil)
	b := string(scrape(t, srv))
	if strings.Contains(b, "no_such_tool") || strings.Contains(b, "nowhere") || strings.Contains(b, "BREW") || strings.Contains(b, "made/up") {
		t.Errorf("/metrics holds names a client made up:\n%s", b)
	}
	if want := fmt.Sprintf(`atrium_mcp_requests_total{method="tools/call",tool="unknown",outcome="error"} %d`, n); !strings.Contains(b, want) {
		t.Errorf("/metrics lacks %s:\n%s", want, b)
	}
	if want := `atrium_mcp_requests_total{method="tools/call",tool="whoami",outcome="ok"} 1`; !strings.Contains(b, want) {
		t.Errorf("/metrics lacks %s", want)
	}
	series := 0
	for line := range strings.SplitSeq(b, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			series++
		}
	}
	// A handful of routes, statuses and methods, whatever n is.
	if series > 300 {
		t.Errorf("%d series after %d made-up names of each kind:\n%s", series, n, b)
	}
	t.Logf("%d series after %d made-up tools, routes, HTTP and MCP methods", series, n)
}
