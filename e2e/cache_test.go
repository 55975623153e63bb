package e2e

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What Atrium answers over 2026-07-28 is cacheable only by the caller: pages
// and review threads are the workspace's data, read through the caller's
// token, and the spec's "public" lets a shared cache (a gateway, a proxy)
// serve them to callers with other tokens. The conformance fixtures, the same
// for every caller, stay public.
func TestReadsAreNotPubliclyCacheable(t *testing.T) {
	srv := startServe(t, "", "--toolsets", "all,conformance")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	created := structured(t, callTool(t, cs, "create_page", map[string]any{"title": "CacheProbe", "content": "Only for this workspace.\n"}))
	path, _ := created["path"].(string)
	if path == "" {
		t.Fatalf("create_page answered %v", created)
	}
	for _, tc := range []struct{ uri, scope string }{
		{"atrium://pages/" + path, "private"},
		{"atrium://annotations/" + path, "private"},
		{"test://static-text", "public"},
		{"test://static-binary", "public"},
	} {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tc.uri})
		if err != nil {
			t.Fatalf("read %s: %v", tc.uri, err)
		}
		if res.CacheScope != tc.scope {
			t.Errorf("read %s: cacheScope %q, want %q", tc.uri, res.CacheScope, tc.scope)
		}
	}
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if list.CacheScope != "private" {
		t.Errorf("resources/list: cacheScope %q, want private", list.CacheScope)
	}
}
