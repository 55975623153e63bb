package mcpserver

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// RawHandler is the body of a tool that shapes its whole result (see NewRawTool).
type RawHandler func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)

// NewRawTool builds a tool whose handler shapes the whole result itself: mixed
// content, input requests (SEP-2322). def must carry an input schema. A
// returned *jsonrpc.Error is answered as that protocol error — fixtures of
// protocol failures need it; no product tool returns one — and any other
// error becomes {error, code} like every tool's.
func NewRawTool(def *mcp.Tool, need atrium.Role, h RawHandler) *Tool {
	return NewServerTool(def, need, func(*mcp.Server) RawHandler { return h })
}

// NewServerTool is NewRawTool for a handler that acts on the MCP server it is
// added to (one per workspace): bind is called once per server.
func NewServerTool(def *mcp.Tool, need atrium.Role, bind func(ms *mcp.Server) RawHandler) *Tool {
	t := newRawTool(def, need, nil)
	// The SDK keeps the hand-written input schema: its transport checks the
	// Mcp-Param-* headers of the properties marked x-mcp-header (SEP-2243).
	reg := registration(def)
	reg.InputSchema = def.InputSchema
	t.add = func(s *Server, ms *mcp.Server, ws int64) {
		h := bind(ms)
		ms.AddTool(reg, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var protocolErr *jsonrpc.Error
			res, err := s.call(ctx, req, ws, t, func(ctx context.Context) (*mcp.CallToolResult, error) {
				res, err := h(ctx, req)
				if errors.As(err, &protocolErr) {
					return nil, nil
				}
				return res, err
			})
			if protocolErr != nil {
				return nil, protocolErr
			}
			return res, err
		})
	}
	return t
}
