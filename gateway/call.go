package gateway

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// CallRecord is the audit record of one call of an upstream's tool made
// through the gateway, refusals included.
type CallRecord struct {
	Tool     string // the name in Atrium, <server>_<tool>
	Server   string // the upstream server
	Upstream string // the tool's name on that server
	Outcome  string // ok, tool_error, refused or error
	Code     string // the error's code, when it failed
	Duration time.Duration
}

// SetAudit makes audit record every call made through Call from now on. It
// is given a context that outlives the caller's: the call happened, so its
// record must not depend on the caller still waiting for the answer.
func (g *Gateway) SetAudit(audit func(ctx context.Context, rec CallRecord) error) {
	g.hookMu.Lock()
	g.audit = audit
	g.hookMu.Unlock()
}

// Call calls the exposed tool name for caller, the one policy every surface
// goes through: a held-back tool is refused saying why, a tool that is not
// read-only upstream needs the writer role, the call and its outcome are
// audited. progress, when set, hears the upstream's progress.
func (g *Gateway) Call(ctx context.Context, caller *atrium.Actor, name string, args json.RawMessage, progress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	start := time.Now()
	t, ok, held := g.Lookup(name)
	rec := CallRecord{Tool: name, Server: t.Server, Upstream: t.Upstream}
	var (
		res *mcp.CallToolResult
		err error
	)
	switch {
	case !ok && held != "":
		err = atrium.Errorf(atrium.EPermission, "%s is held back by Atrium's gateway: %s (server %s in %s)", name, held, t.Server, g.Path())
		rec.Outcome = "refused"
	case !ok:
		err = atrium.Errorf(atrium.ENotFound, "no tool %s: its server may have been removed or changed; list the tools again", name)
	default:
		need := atrium.RoleWriter
		if t.ReadOnly {
			need = atrium.RoleReader
		}
		if !caller.Role.Allows(need) {
			err = atrium.Errorf(atrium.EPermission, "%s is %s in workspace %s; %s needs %s (the upstream tool is not read-only)", caller.Principal.Handle, caller.Role, caller.Workspace.Name, name, need)
			rec.Outcome = "refused"
			break
		}
		res, err = g.CallTool(atrium.NewContextWithActor(ctx, caller), name, args, progress)
		switch {
		case err != nil:
			rec.Outcome = "error"
		case res.IsError:
			rec.Outcome = "tool_error"
		default:
			rec.Outcome = "ok"
		}
	}
	if err != nil {
		rec.Code = atrium.ErrorCode(err)
	}
	rec.Duration = time.Since(start)
	g.hookMu.Lock()
	audit := g.audit
	g.hookMu.Unlock()
	if rec.Outcome != "" && audit != nil {
		if aerr := audit(context.WithoutCancel(atrium.NewContextWithActor(ctx, caller)), rec); aerr != nil {
			g.log.Error("gateway: audit a call", "tool", name, "err", aerr)
		}
	}
	return res, err
}
