package mcptools_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
)

// BenchmarkReadPageInMemory sets read_page of a typical generated page beside
// whoami over in-memory transports: the difference is what a 2 KB page costs
// the MCP layer (encoding, the JSON text copy, the client's decoding) and the
// docs service.
func BenchmarkReadPageInMemory(b *testing.B) {
	svc := servicestest.MustOpen(b, store.SQLite, nil)
	actor := servicestest.Agent(b, svc, "tester", "")
	d := svc.Pages
	p := vaultgen.PageAt(42, 100000, 50000)
	if _, err := d.WritePage(atrium.NewContextWithActor(context.Background(), actor), pages.WriteRequest{Path: p.Path, Content: p.Content}); err != nil {
		b.Fatal(err)
	}
	b.Logf("page %s: %d bytes", p.Path, len(p.Content))
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Actor: actor, Services: svc})
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
