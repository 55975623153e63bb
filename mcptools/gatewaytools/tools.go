package gatewaytools

import (
	"context"
	"embed"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/mcpserver"
)

// Name is the toolset's name, as --toolsets and clients name it.
const Name = "gateway"

//go:embed defs/*.json
var defs embed.FS

// New is the gateway toolset over gw (nil when no gateway file is
// configured): Atrium's own tools about the gateway (004: status, reload,
// health), and the upstreams' tools, prompts and resources, registered on
// every server as they come and go (see gateway.go).
func New(gw *gateway.Gateway) mcpserver.NewToolset {
	return func(s *mcpserver.Server) *mcpserver.Toolset {
		x := &exposed{s: s, gw: gw, have: map[*mcp.Server]*gatewayTools{}}
		ts := &mcpserver.Toolset{
			Name:        Name,
			Description: "Other MCP servers behind Atrium: their status, reload and health.",
			// Part of "all" only when a gateway file is configured: without one
			// these tools could only say so, and every listed tool costs context.
			Default: gw != nil,
			Tools:   []*mcpserver.Tool{gatewayStatusTool(x), reloadGatewayTool(x), healthCheckTool(x)},
			Defs:    defs,
		}
		if gw != nil {
			ts.Attach = func() { gw.Attach(s.HasTool, x.changed) }
			ts.Added = x.sync
			ts.Receiving = func(ws int64) mcp.Middleware {
				refuse := x.refuseHeld(ws)
				return func(next mcp.MethodHandler) mcp.MethodHandler { return x.awaitGateway(refuse(next)) }
			}
		}
		return ts
	}
}

// exposed is what the toolset keeps: the gateway, and per built server what
// it has registered of the upstreams'.
type exposed struct {
	s    *mcpserver.Server
	gw   *gateway.Gateway
	mu   sync.Mutex
	have map[*mcp.Server]*gatewayTools
}

func (x *exposed) gateway() (*gateway.Gateway, error) {
	if x.gw == nil {
		return nil, atrium.Errorf(atrium.EUnavailable, "no gateway is configured: start Atrium with --gateway FILE (env ATRIUM_GATEWAY), a file in the mcpServers format")
	}
	return x.gw, nil
}

// GatewayStatusInput takes nothing.
type GatewayStatusInput struct{}

// GatewayStatus is get_status's answer.
type GatewayStatus struct {
	File      string                   `json:"file" jsonschema:"the gateway file"`
	Upstreams []gateway.UpstreamStatus `json:"upstreams" jsonschema:"every server in the file, by name"`
}

func gatewayStatusTool(x *exposed) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "get_status",
		Title:       "Gateway status",
		Description: "Reports every MCP server behind Atrium's gateway: its state (starting, ready, backoff, failed, stopped), transport, the tools it exposes (as <server>_<tool>) and those held back with why, restarts, recent errors, the tail of its stderr (admins only) and its call times (p50/p95). Secrets are never shown.",
		Annotations: mcpserver.Reads("Gateway status"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, _ GatewayStatusInput) (GatewayStatus, error) {
		gw, err := x.gateway()
		if err != nil {
			return GatewayStatus{}, err
		}
		var role atrium.Role
		if a := atrium.ActorFromContext(ctx); a != nil {
			role = a.Role
		}
		return GatewayStatus{File: gw.Path(), Upstreams: emptyIfNil(gw.Status(role))}, nil
	})
}

// ReloadGatewayInput takes nothing.
type ReloadGatewayInput struct{}

// ReloadGatewayOutput is what a reload did.
type ReloadGatewayOutput struct {
	File string       `json:"file" jsonschema:"the gateway file that was read"`
	Diff gateway.Diff `json:"diff" jsonschema:"the servers added, removed, changed (restarted) and left as they were"`
}

func reloadGatewayTool(x *exposed) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "reload_external_mcps",
		Title:       "Reload the gateway file",
		Description: "Re-reads the gateway file and applies it: starts servers added, stops those removed, restarts those whose configuration changed, and leaves the others running. Returns the difference. An invalid file changes nothing and the error names its line.",
		Annotations: mcpserver.Writes("Reload the gateway file", true, false),
	}, atrium.RoleAdmin, func(context.Context, *mcp.CallToolRequest, ReloadGatewayInput) (ReloadGatewayOutput, error) {
		gw, err := x.gateway()
		if err != nil {
			return ReloadGatewayOutput{}, err
		}
		d, err := gw.Reload()
		return ReloadGatewayOutput{File: gw.Path(), Diff: d}, err
	})
}

// HealthCheckInput takes nothing.
type HealthCheckInput struct{}

func healthCheckTool(x *exposed) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "system_health_check",
		Title:       "How are my apps?",
		Description: "Probes every MCP server behind Atrium's gateway at once (ping, tools/list and the calls of its own tools its health configuration names, such as a list of deployments; each under its own timeout) and reports each as healthy, degraded (slow, or a probe failed) or unhealthy (down, or no probe answered), with the evidence: latencies, errors and what the tools answered. overall sums them up. A reader gets the last full check (cached) or ping and tools/list only.",
		Annotations: &mcp.ToolAnnotations{Title: "How are my apps?", ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(true)},
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, _ HealthCheckInput) (gateway.HealthReport, error) {
		gw, err := x.gateway()
		if err != nil {
			return gateway.HealthReport{}, err
		}
		return gw.Health(ctx), nil
	})
}

func emptyIfNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
