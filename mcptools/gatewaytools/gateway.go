package gatewaytools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/mcpserver"
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

// changed registers the gateway's current tools and prompts on every
// server built so far.
func (x *exposed) changed() { x.s.EachServer(x.sync) }

// syncGateway makes ms's upstream tools and prompts those the gateway
// exposes now (in --read-only, only read-only tools).
func (x *exposed) sync(ms *mcp.Server, ws int64) {
	gw := x.gw
	if gw == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	have := x.have[ms]
	if have == nil {
		have = &gatewayTools{tools: map[string]string{}, prompts: map[string]string{}, resources: map[string]string{}, templates: map[string]string{}}
		x.have[ms] = have
	}
	want := map[string]gateway.Tool{}
	for _, t := range gw.Tools() {
		if x.s.ReadOnly() && !t.ReadOnly {
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
		if err := addUpstreamTool(ms, t.Def, x.upstreamHandler(ws, name)); err != nil {
			x.s.Logger().Warn("gateway: cannot re-expose a tool", "tool", name, "err", err)
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
		ms.AddPrompt(p.Def, x.upstreamPrompt(ws, name))
		have.prompts[name] = string(b)
	}
	x.syncResources(ms, ws, have)
}

// syncGatewayResources makes ms's upstream resources and templates those the
// gateway exposes now, under their own URIs.
func (x *exposed) syncResources(ms *mcp.Server, ws int64, have *gatewayTools) {
	gw := x.gw
	want := map[string]gateway.Resource{}
	for _, r := range gw.Resources() {
		want[r.Def.URI] = r
	}
	syncRegistered(have.resources, want, ms.RemoveResources, func(uri string, r gateway.Resource) error {
		def := *r.Def
		err := registerSafely(func() { ms.AddResource(&def, x.s.ResourceHandler(x.upstreamResource(r.Server), ws)) })
		if err != nil {
			x.s.Logger().Warn("gateway: cannot re-expose a resource", "uri", uri, "server", r.Server, "err", err)
		}
		return err
	})
	wantT := map[string]gateway.ResourceTemplate{}
	for _, t := range gw.ResourceTemplates() {
		wantT[t.Def.URITemplate] = t
	}
	syncRegistered(have.templates, wantT, ms.RemoveResourceTemplates, func(ut string, t gateway.ResourceTemplate) error {
		def := *t.Def
		err := registerSafely(func() { ms.AddResourceTemplate(&def, x.s.ResourceHandler(x.upstreamResource(t.Server), ws)) })
		if err != nil {
			x.s.Logger().Warn("gateway: cannot re-expose a resource template", "uri_template", ut, "server", t.Server, "err", err)
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
func (x *exposed) upstreamResource(server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return x.gw.ReadResource(ctx, server, req.Params.URI)
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

// upstreamHandler forwards a call of the exposed tool name through the
// gateway's call policy (gateway.Call); progress comes back to the caller,
// cancellation goes up.
func (x *exposed) upstreamHandler(ws int64, name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return x.callUpstream(ctx, req, ws, name)
	}
}

func (x *exposed) callUpstream(ctx context.Context, req *mcp.CallToolRequest, ws int64, name string) (*mcp.CallToolResult, error) {
	actor, err := x.s.Actor(ctx, req, ws)
	if err != nil {
		return mcpserver.ErrorResult(err), nil
	}
	var progress func(*mcp.ProgressNotificationParams)
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		progress = func(p *mcp.ProgressNotificationParams) {
			q := *p
			q.ProgressToken = tok
			_ = req.Session.NotifyProgress(ctx, &q)
		}
	}
	res, err := x.gw.Call(ctx, actor, name, req.Params.Arguments, progress)
	if err != nil {
		return mcpserver.ErrorResult(err), nil
	}
	return res, nil
}

// refuseHeld answers a call of a held-back upstream tool — which no server
// registers, so the SDK would say only "unknown tool" — with why it is held
// back.
func (x *exposed) refuseHeld(ws int64) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" || x.gw == nil {
				return next(ctx, method, req)
			}
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || x.s.HasTool(p.Name) {
				return next(ctx, method, req)
			}
			if _, exposed, held := x.gw.Lookup(p.Name); !exposed && held != "" {
				if cr, ok := req.(*mcp.CallToolRequest); ok {
					return x.callUpstream(ctx, cr, ws, p.Name)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// upstreamPrompt forwards prompts/get of the exposed prompt name.
func (x *exposed) upstreamPrompt(ws int64, name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if _, err := x.s.Actor(ctx, req, ws); err != nil {
			return nil, mcpserver.RPCError(err)
		}
		res, err := x.gw.GetPrompt(ctx, name, req.Params.Arguments)
		if err != nil {
			return nil, mcpserver.RPCError(err)
		}
		return res, nil
	}
}

// awaitGateway holds a list (or a call of a tool not Atrium's) until every upstream has had its
// first chance to start (at most gatewaySettle), so that a client that lists
// tools right after connecting — most do, once — sees the upstreams' tools.
func (x *exposed) awaitGateway(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		wait := method == "tools/list" || method == "prompts/list" || method == "prompts/get" ||
			method == "resources/list" || method == "resources/templates/list"
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && (!x.s.HasTool(p.Name) || gatewayToolNames[p.Name]) {
			// perhaps an upstream's tool, called without listing first, or
			// a question about the upstreams best answered once they started
			wait = true
		}
		if wait && x.gw != nil {
			wait, cancel := context.WithTimeout(ctx, gatewaySettle)
			_ = x.gw.Settled(wait)
			cancel()
		}
		return next(ctx, method, req)
	}
}

var gatewayToolNames = map[string]bool{"get_status": true, "system_health_check": true, "reload_external_mcps": true}

// gatewaySettle bounds how long a list waits for upstreams to start: npx may
// download a server on its first start, and a client must not wait for that.
const gatewaySettle = 10 * time.Second
