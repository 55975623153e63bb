package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// BenchmarkReadPageInMemory sets read_page of a typical generated page beside
// whoami over in-memory transports: the difference is what a 2 KB page costs
// the MCP layer (encoding, the JSON text copy, the client's decoding) and the
// docs service.
func BenchmarkReadPageInMemory(b *testing.B) {
	db := storetest.MustOpen(b, store.SQLite, nil)
	actor := identitytest.Agent(b, identitytest.New(b, db), "tester", "")
	d := pages.New(db, nil)
	p := vaultgen.PageAt(42, 100000, 50000)
	if _, err := d.WritePage(atrium.NewContextWithActor(context.Background(), actor), pages.WriteRequest{Path: p.Path, Content: p.Content}); err != nil {
		b.Fatal(err)
	}
	b.Logf("page %s: %d bytes", p.Path, len(p.Content))
	srv, err := mcpserver.New(mcpserver.Config{Actor: actor, Docs: d})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	cs := connectInMemory(b, srv.ForWorkspace(actor.Workspace))
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{{"whoami", map[string]any{}}, {"read_page", map[string]any{"path": p.Path}}} {
		b.Run(tc.tool, func(b *testing.B) {
			params := &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
