package mcptools_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/mcpserver"
)

// BenchmarkToolCallInMemory isolates the MCP layer's own cost: the same client
// calls a bare go-sdk server's no-op tool and Atrium's whoami over in-memory
// transports, so that neither processes nor sockets blur the difference.
func BenchmarkToolCallInMemory(b *testing.B) {
	bare := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	type empty struct{}
	type ok struct {
		OK bool `json:"ok"`
	}
	mcp.AddTool(bare, &mcp.Tool{Name: "noop", Description: "Does nothing."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, ok, error) {
		return nil, ok{true}, nil
	})
	actor := mustActor(b)
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Actor: actor})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, tool string
		server     *mcp.Server
	}{
		{"bare-noop", "noop", bare},
		{"atrium-whoami", "whoami", srv.ForWorkspace(actor.Workspace)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cs := connectInMemory(b, tc.server)
			params := &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
