package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/gateway"
)

// GatewayToolset holds Atrium's own tools about the gateway (004): status,
// reload and health. The upstreams' tools themselves are not in it: they are
// registered as they come and go (see gateway.go).
const GatewayToolset = "gateway"

func gatewayToolset(s *Server) *Toolset {
	return &Toolset{
		Name:        GatewayToolset,
		Description: "Other MCP servers behind Atrium: their status, reload and health.",
		// Part of "all" only when a gateway file is configured: without one
		// these tools could only say so, and every listed tool costs context.
		Default: s.cfg.Gateway != nil,
		Tools:   []*Tool{gatewayStatusTool(s), reloadGatewayTool(s), healthCheckTool(s)},
	}
}

func (s *Server) gateway() (*gateway.Gateway, error) {
	if s.cfg.Gateway == nil {
		return nil, atrium.Errorf(atrium.EUnavailable, "no gateway is configured: start Atrium with --gateway FILE (env ATRIUM_GATEWAY), a file in the mcpServers format")
	}
	return s.cfg.Gateway, nil
}

// GatewayStatusInput takes nothing.
type GatewayStatusInput struct{}

// GatewayStatus is get_status's answer.
type GatewayStatus struct {
	File      string                   `json:"file" jsonschema:"the gateway file"`
	Upstreams []gateway.UpstreamStatus `json:"upstreams" jsonschema:"every server in the file, by name"`
}

func gatewayStatusTool(s *Server) *Tool {
	return newTool(&mcp.Tool{
		Name:        "get_status",
		Title:       "Gateway status",
		Description: "Reports every MCP server behind Atrium's gateway: its state (starting, ready, backoff, failed, stopped), transport, the tools it exposes (as <server>_<tool>) and those held back with why, restarts, recent errors, the tail of its stderr (admins only) and its call times (p50/p95). Secrets are never shown.",
		Annotations: readOnly("Gateway status"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, _ GatewayStatusInput) (GatewayStatus, error) {
		gw, err := s.gateway()
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

func reloadGatewayTool(s *Server) *Tool {
	return newTool(&mcp.Tool{
		Name:        "reload_external_mcps",
		Title:       "Reload the gateway file",
		Description: "Re-reads the gateway file and applies it: starts servers added, stops those removed, restarts those whose configuration changed, and leaves the others running. Returns the difference. An invalid file changes nothing and the error names its line.",
		Annotations: writes("Reload the gateway file", true, false),
	}, atrium.RoleAdmin, func(context.Context, *mcp.CallToolRequest, ReloadGatewayInput) (ReloadGatewayOutput, error) {
		gw, err := s.gateway()
		if err != nil {
			return ReloadGatewayOutput{}, err
		}
		d, err := gw.Reload()
		return ReloadGatewayOutput{File: gw.Path(), Diff: d}, err
	})
}

// HealthCheckInput takes nothing.
type HealthCheckInput struct{}

func healthCheckTool(s *Server) *Tool {
	return newTool(&mcp.Tool{
		Name:        "system_health_check",
		Title:       "How are my apps?",
		Description: "Probes every MCP server behind Atrium's gateway at once (ping, tools/list and the calls of its own tools its health configuration names, such as a list of deployments; each under its own timeout) and reports each as healthy, degraded (slow, or a probe failed) or unhealthy (down, or no probe answered), with the evidence: latencies, errors and what the tools answered. overall sums them up.",
		Annotations: &mcp.ToolAnnotations{Title: "How are my apps?", ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(true)},
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, _ HealthCheckInput) (gateway.HealthReport, error) {
		gw, err := s.gateway()
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
