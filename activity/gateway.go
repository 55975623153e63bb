package activity

import (
	"context"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// EventGatewayCall is the kind of the audit event of a call made through the
// gateway to another MCP server.
const EventGatewayCall = "gateway.call"

// UpstreamCall is one call through the gateway, as the audit log keeps it:
// who (the event's actor) called which upstream tool, how it ended and how
// long it took. Arguments and results are not kept: they may hold anything.
type UpstreamCall struct {
	Tool       string `json:"tool"`          // the name in Atrium, <server>_<tool>
	Server     string `json:"server"`        // the upstream server
	Upstream   string `json:"upstream_tool"` // the tool's name on that server
	Outcome    string `json:"outcome"`       // ok, tool_error, refused or error
	Code       string `json:"code,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// RecordUpstreamCall writes c to the caller's workspace's event log.
func (s *Service) RecordUpstreamCall(ctx context.Context, c UpstreamCall) error {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventGatewayCall, c.Tool, c)
	})
}
