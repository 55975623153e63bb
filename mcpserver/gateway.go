package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/gateway"
)

// gatewayTools remembers, per built MCP server, which upstream tools and
// prompts it has registered and in which version, so that a change
// re-registers only what changed: each Add or Remove makes the SDK send
// list_changed to that server's sessions.
type gatewayTools struct {
	tools     map[string]string // name → definition as JSON
	prompts   map[string]string
	resources map[string]string // URI → definition as JSON
	templates map[string]string // URI template → definition as JSON
}

// gatewayChanged registers the gateway's current tools and prompts on every
// server built so far.
func (s *Server) gatewayChanged() {
	s.mu.Lock()
	servers := make([]*mcp.Server, 0, len(s.servers)+1)
	wss := make([]int64, 0, len(s.servers)+1)
	for ws, ms := range s.servers {
		if ms != s.local {
			servers, wss = append(servers, ms), append(wss, ws)
		}
	}
	if s.local != nil {
		servers, wss = append(servers, s.local), append(wss, localWS)
	}
	s.mu.Unlock()
	for i, ms := range servers {
		s.syncGateway(ms, wss[i])
	}
}

// syncGateway makes ms's upstream tools and prompts those the gateway
// exposes now (in --read-only, only read-only tools).
func (s *Server) syncGateway(ms *mcp.Server, ws int64) {
	gw := s.cfg.Gateway
	if gw == nil {
		return
	}
	s.gwMu.Lock()
	defer s.gwMu.Unlock()
	have := s.gwHave[ms]
	if have == nil {
		have = &gatewayTools{tools: map[string]string{}, prompts: map[string]string{}, resources: map[string]string{}, templates: map[string]string{}}
		s.gwHave[ms] = have
	}
	want := map[string]gateway.Tool{}
	for _, t := range gw.Tools() {
		if s.cfg.ReadOnly && !t.ReadOnly {
			continue
		}
		want[t.Def.Name] = t
	}
	var gone []string
	for name := range have.tools {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(have.tools, name)
		}
	}
	if len(gone) > 0 {
		ms.RemoveTools(gone...)
	}
	for name, t := range want {
		b, _ := json.Marshal(t.Def)
		if have.tools[name] == string(b) {
			continue
		}
		if err := addUpstreamTool(ms, t.Def, s.upstreamHandler(ws, name)); err != nil {
			s.log.Warn("gateway: cannot re-expose a tool", "tool", name, "err", err)
			continue
		}
		have.tools[name] = string(b)
	}
	wantPrompts := map[string]gateway.Prompt{}
	for _, p := range gw.Prompts() {
		wantPrompts[p.Def.Name] = p
	}
	gone = gone[:0]
	for name := range have.prompts {
		if _, ok := wantPrompts[name]; !ok {
			gone = append(gone, name)
			delete(have.prompts, name)
		}
	}
	if len(gone) > 0 {
		ms.RemovePrompts(gone...)
	}
	for name, p := range wantPrompts {
		b, _ := json.Marshal(p.Def)
		if have.prompts[name] == string(b) {
			continue
		}
		ms.AddPrompt(p.Def, s.upstreamPrompt(ws, name))
		have.prompts[name] = string(b)
	}
	s.syncGatewayResources(ms, ws, gw, have)
}

// syncGatewayResources makes ms's upstream resources and templates those the
// gateway exposes now, under their own URIs.
func (s *Server) syncGatewayResources(ms *mcp.Server, ws int64, gw *gateway.Gateway, have *gatewayTools) {
	want := map[string]gateway.Resource{}
	for _, r := range gw.Resources() {
		want[r.Def.URI] = r
	}
	syncRegistered(have.resources, want, ms.RemoveResources, func(uri string, r gateway.Resource) error {
		def := *r.Def
		err := registerSafely(func() { ms.AddResource(&def, s.resourceHandler(s.upstreamResource(r.Server), ws)) })
		if err != nil {
			s.log.Warn("gateway: cannot re-expose a resource", "uri", uri, "server", r.Server, "err", err)
		}
		return err
	})
	wantT := map[string]gateway.ResourceTemplate{}
	for _, t := range gw.ResourceTemplates() {
		wantT[t.Def.URITemplate] = t
	}
	syncRegistered(have.templates, wantT, ms.RemoveResourceTemplates, func(ut string, t gateway.ResourceTemplate) error {
		def := *t.Def
		err := registerSafely(func() { ms.AddResourceTemplate(&def, s.resourceHandler(s.upstreamResource(t.Server), ws)) })
		if err != nil {
			s.log.Warn("gateway: cannot re-expose a resource template", "uri_template", ut, "server", t.Server, "err", err)
		}
		return err
	})
}

// syncRegistered brings what a server has registered (key → the JSON of
// what was registered under it) to want: what is gone is removed, what is
// new or changed is added.
func syncRegistered[T any](have map[string]string, want map[string]T, remove func(...string), add func(string, T) error) {
	var gone []string
	for k := range have {
		if _, ok := want[k]; !ok {
			gone = append(gone, k)
			delete(have, k)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
	for k, v := range want {
		b, _ := json.Marshal(v)
		if have[k] == string(b) {
			continue
		}
		if add(k, v) == nil {
			have[k] = string(b)
		}
	}
}

// upstreamResource reads a resource from the server that lists it; the
// caller (any member: resources are read-only) is checked by
// resourceHandler.
func (s *Server) upstreamResource(server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return s.cfg.Gateway.ReadResource(ctx, server, req.Params.URI)
	}
}

// registerSafely runs add, which the SDK makes panic on a definition it
// cannot take (an invalid URI or template): such an upstream resource is
// left out rather than stopping Atrium.
func registerSafely(add func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	add()
	return nil
}

// addUpstreamTool registers an upstream's definition as it is, unchanged but
// for its name. The SDK panics on a schema it cannot take; the gateway holds
// such tools back, and this keeps any it missed from stopping Atrium.
func addUpstreamTool(ms *mcp.Server, def *mcp.Tool, h mcp.ToolHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	d := *def
	ms.AddTool(&d, h)
	return nil
}

// upstreamHandler forwards a call of the exposed tool name: the caller needs
// the writer role unless the upstream says the tool is read-only; progress
// comes back to the caller, cancellation goes up; the call is audited.
func (s *Server) upstreamHandler(ws int64, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.callUpstream(ctx, req, ws, name)
	}
}

func (s *Server) callUpstream(ctx context.Context, req *mcp.CallToolRequest, ws int64, name string) (*mcp.CallToolResult, error) {
	start := time.Now()
	actor, err := s.actor(ctx, req, ws)
	if err != nil {
		return errorResult(err), nil
	}
	ctx = atrium.NewContextWithActor(ctx, actor)
	gw := s.cfg.Gateway
	t, ok, held := gw.Lookup(name)
	rec := activity.UpstreamCall{Tool: name, Server: t.Server, Upstream: t.Upstream}
	var res *mcp.CallToolResult
	switch {
	case !ok && held != "":
		err = atrium.Errorf(atrium.EPermission, "%s is held back by Atrium's gateway: %s (server %s in %s)", name, held, t.Server, gw.Path())
		rec.Outcome = "refused"
	case !ok:
		err = atrium.Errorf(atrium.ENotFound, "no tool %s: its server may have been removed or changed; list the tools again", name)
	default:
		need := atrium.RoleWriter
		if t.ReadOnly {
			need = atrium.RoleReader
		}
		if !actor.Role.Allows(need) {
			err = atrium.Errorf(atrium.EPermission, "%s is %s in workspace %s; %s needs %s (the upstream tool is not read-only)", actor.Principal.Handle, actor.Role, actor.Workspace.Name, name, need)
			rec.Outcome = "refused"
			break
		}
		var progress func(*mcp.ProgressNotificationParams)
		if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
			progress = func(p *mcp.ProgressNotificationParams) {
				q := *p
				q.ProgressToken = tok
				_ = req.Session.NotifyProgress(ctx, &q)
			}
		}
		res, err = gw.CallTool(ctx, name, req.Params.Arguments, progress)
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
	rec.DurationMS = time.Since(start).Milliseconds()
	if rec.Outcome != "" && s.cfg.Audit != nil {
		// The call happened: its record must not depend on the caller
		// still waiting for the answer.
		if aerr := s.cfg.Audit(context.WithoutCancel(ctx), rec); aerr != nil {
			s.log.Error("gateway: audit a call", "tool", name, "err", aerr)
		}
	}
	if err != nil {
		return errorResult(err), nil
	}
	return res, nil
}

// refuseHeld answers a call of a held-back upstream tool — which no server
// registers, so the SDK would say only "unknown tool" — with why it is held
// back.
func (s *Server) refuseHeld(ws int64) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" || s.cfg.Gateway == nil {
				return next(ctx, method, req)
			}
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || s.toolNames[p.Name] {
				return next(ctx, method, req)
			}
			if _, exposed, held := s.cfg.Gateway.Lookup(p.Name); !exposed && held != "" {
				if cr, ok := req.(*mcp.CallToolRequest); ok {
					return s.callUpstream(ctx, cr, ws, p.Name)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// upstreamPrompt forwards prompts/get of the exposed prompt name.
func (s *Server) upstreamPrompt(ws int64, name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if _, err := s.actor(ctx, req, ws); err != nil {
			return nil, rpcError(err)
		}
		res, err := s.cfg.Gateway.GetPrompt(ctx, name, req.Params.Arguments)
		if err != nil {
			return nil, rpcError(err)
		}
		return res, nil
	}
}

// awaitGateway holds a list (or a call of a tool not Atrium's) until every upstream has had its
// first chance to start (at most gatewaySettle), so that a client that lists
// tools right after connecting — most do, once — sees the upstreams' tools.
func (s *Server) awaitGateway(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		wait := method == "tools/list" || method == "prompts/list" || method == "prompts/get" ||
			method == "resources/list" || method == "resources/templates/list"
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && (!s.toolNames[p.Name] || gatewayToolNames[p.Name]) {
			// perhaps an upstream's tool, called without listing first, or
			// a question about the upstreams best answered once they started
			wait = true
		}
		if wait && s.cfg.Gateway != nil {
			wait, cancel := context.WithTimeout(ctx, gatewaySettle)
			_ = s.cfg.Gateway.Settled(wait)
			cancel()
		}
		return next(ctx, method, req)
	}
}

var gatewayToolNames = map[string]bool{"get_status": true, "system_health_check": true, "reload_external_mcps": true}

// gatewaySettle bounds how long a list waits for upstreams to start: npx may
// download a server on its first start, and a client must not wait for that.
const gatewaySettle = 10 * time.Second
