package mcpserver

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// This file is what a toolset defined outside this package needs: the
// conformance fixtures (package mcpserver/conformance) live apart from the
// product's tools, and build their tools with the same caller checks, panic
// recovery and error mapping as Atrium's own.

var (
	extraMu sync.Mutex
	extra   []func() *Toolset
)

// RegisterToolset makes a toolset defined outside this package available to
// every Server built afterwards, after the built-in ones. Unless it says
// Default, it is off until named (--toolsets all,conformance). Packages
// register in init; the binary links them in (cmd/atrium).
func RegisterToolset(build func() *Toolset) {
	if build == nil {
		panic("mcpserver: RegisterToolset(nil)")
	}
	extraMu.Lock()
	defer extraMu.Unlock()
	extra = append(extra, build)
}

// extraToolsets builds the registered toolsets for one Server.
func extraToolsets() []*Toolset {
	extraMu.Lock()
	defer extraMu.Unlock()
	out := make([]*Toolset, len(extra))
	for i, build := range extra {
		out[i] = build()
	}
	return out
}

// NewTool builds a typed tool, as the built-in toolsets do: In's schema is
// inferred and enforced, Out becomes the structured result, a returned
// *atrium.Error reaches the caller as {error, code}.
func NewTool[In, Out any](spec *mcp.Tool, need atrium.Role, h Handler[In, Out]) *Tool {
	return newTool(spec, need, h)
}

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
