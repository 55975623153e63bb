package e2e

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// readRPC reads the one JSON-RPC message of an answer, sent as JSON or as
// one SSE event; it fails unless the answer is one of those.
func readRPC(t *testing.T, res *http.Response) map[string]any {
	t.Helper()
	ct := res.Header.Get("Content-Type")
	var data []byte
	switch {
	case strings.HasPrefix(ct, "application/json"):
		data, _ = io.ReadAll(res.Body)
	case strings.HasPrefix(ct, "text/event-stream"):
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(d)
				break
			}
		}
	default:
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("status %d, Content-Type %q: %q; want a JSON-RPC message", res.StatusCode, ct, b)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil || m["jsonrpc"] != "2.0" {
		t.Fatalf("status %d: %q is not a JSON-RPC message", res.StatusCode, data)
	}
	return m
}

// sessionHeaders opens a 2025-11-25 session over raw HTTP.
func sessionHeaders(t *testing.T, srv *server) map[string]string {
	t.Helper()
	res := rawPost(t, srv.MCP(), srv.AdminToken, nil, initialize)
	id := res.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("initialize: %d, no session", res.StatusCode)
	}
	h := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-11-25"}
	rawPost(t, srv.MCP(), srv.AdminToken, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

// MCP over HTTP answers in JSON-RPC, also when a body is too large or a
// method unknown; its body limit carries the attachment REST takes.
func TestMCPLimitsAnswerInJSONRPC(t *testing.T) {
	srv := startServe(t, "")
	stateless := map[string]string{"Mcp-Protocol-Version": "2026-07-28"}
	for name, h := range map[string]map[string]string{"session": sessionHeaders(t, srv), "stateless": stateless} {
		t.Run(name, func(t *testing.T) {
			// An unknown method.
			res := rawPost(t, srv.MCP(), srv.AdminToken, h, `{"jsonrpc":"2.0","id":7,"method":"no/such/method","params":{}}`)
			m := readRPC(t, res)
			if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(-32601) || m["id"] != float64(7) {
				t.Errorf("unknown method: %v; want error -32601 under id 7", m)
			}
			// A call over the limit: a too_large tool error under its id.
			huge := strings.Repeat("x", 40<<20)
			res = rawPost(t, srv.MCP(), srv.AdminToken, h, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"write_page","arguments":{"path":"Huge.md","content":"`+huge+`"}}}`)
			m = readRPC(t, res)
			r, _ := m["result"].(map[string]any)
			sc, _ := r["structuredContent"].(map[string]any)
			if m["id"] != float64(8) || r["isError"] != true || sc["code"] != "too_large" || !strings.Contains(sc["error"].(string), "bytes") {
				t.Errorf("oversized call: %v; want a too_large tool error under id 8", m)
			}
			// Any other oversized message: a JSON-RPC error.
			res = rawPost(t, srv.MCP(), srv.AdminToken, h, `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"_meta":{"junk":"`+huge+`"}}}`)
			m = readRPC(t, res)
			if e, _ := m["error"].(map[string]any); e == nil || m["id"] != float64(9) || !strings.Contains(e["message"].(string), "bytes") {
				t.Errorf("oversized ping: %v; want a JSON-RPC error under id 9", m)
			}
		})
	}
	// add_attachment carries a file of the size REST takes (25 MiB).
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	if res := callTool(t, cs, "write_page", map[string]any{"path": "Big.md", "content": "# Big"}); res.IsError {
		t.Fatal(res.StructuredContent)
	}
	file := base64.StdEncoding.EncodeToString(make([]byte, 25<<20))
	res := callTool(t, cs, "add_attachment", map[string]any{"page_path": "Big.md", "file_name": "big.bin", "content_base64": file})
	if res.IsError {
		t.Fatalf("add_attachment of 25 MiB: %v", res.StructuredContent)
	}
}
