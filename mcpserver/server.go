// Package mcpserver is Atrium's MCP surface: the toolset registry (each tool is
// data: definition, toolset, annotations, handler), resources and prompts, and
// the transports — stdio, Streamable HTTP serving both protocol generations,
// and legacy HTTP+SSE. Handlers are thin: they read the caller from the
// request, call a service and shape its answer. No business rule lives here.
package mcpserver

import (
	"context"
	"io/fs"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/metrics"
	"github.com/atrium-hq/atrium/services"
)

// Config configures a Server. Nil fields mean defaults.
type Config struct {
	// Toolsets are every toolset the server can serve, in the order their
	// tools are listed (cmd/atrium passes mcptools.All); Enable picks some.
	Toolsets []NewToolset
	// Enable names the toolsets to serve: "all" (the default) is every
	// toolset that is on by default; others, like "conformance", must be named.
	Enable []string
	// ReadOnly drops every tool not annotated read-only.
	ReadOnly bool
	// Actor is the fixed caller of a local server (stdio, in-process). HTTP
	// servers leave it nil: their callers come from authentication.
	Actor   *atrium.Actor
	Logger  *slog.Logger
	Metrics *metrics.Registry

	// Services serve the toolsets' calls; a server built without them
	// still lists its tools (atrium tools) but cannot call them.
	Services *services.Services
	// LocalFiles is the folder local callers may attach files from (stdio:
	// the working folder); empty on HTTP, where file_path is refused.
	LocalFiles string
	// Local says, on a local server, which store and data folder it uses:
	// whoami reports it, because a client that drops the environment it was
	// told to pass silently gets another store. HTTP servers leave it false:
	// their callers have no business with the server's files.
	Local bool

	// Open, when set, fills in the fields that need the store (Actor,
	// Services) after New returns. Meanwhile the server answers the
	// handshake and lists its tools, prompts and resources, so that an MCP
	// client is not kept waiting while the store opens — or, after an
	// upgrade, rebuilds its search index; every other request waits for Open.
	// If Open fails, they fail with its error (see Opened).
	Open func(ctx context.Context, cfg *Config) error
}

// Server builds the MCP servers of Atrium, one per workspace, from the enabled
// toolsets. A server per workspace keeps resource notifications inside their
// tenant: the SDK notifies every subscribed session of a server.
//
// Toolsets reach the registry through the Server they are built with: the
// caller of a request (Actor), the services once open (Services), the
// servers built so far (EachServer).
type Server struct {
	cfg      Config
	log      *slog.Logger
	sdkLog   *slog.Logger
	toolsets []*Toolset
	tools    []*Tool
	// listed are the tool definitions as tools/list sends them, by name,
	// made once, in the background from New (see listedDefs).
	listed func() map[string]*mcp.Tool

	ctx    context.Context // ends background work of the built servers
	cancel context.CancelFunc

	// opened is closed when cfg is complete (see Config.Open); openErr is
	// then why it could not be.
	opened  chan struct{}
	openErr error

	mu      sync.Mutex
	servers map[int64]*mcp.Server
	local   *mcp.Server // the server Local built, if any
	// onAccess are told when an event may have changed someone's access
	// (activity.ChangesAccess); HTTP uses it to end revoked streams.
	onAccess []func()

	calls     *metrics.Counter
	duration  *metrics.Histogram
	toolNames map[string]bool // the tools it serves, for metrics labels
}

// New returns a Server with the toolsets cfg names.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Server{cfg: cfg, log: cfg.Logger, sdkLog: slog.New(quiet{cfg.Logger.Handler()}), servers: map[int64]*mcp.Server{}}
	all := make([]*Toolset, 0, len(cfg.Toolsets))
	for _, build := range cfg.Toolsets {
		all = append(all, build(s))
	}
	enabled, err := selectToolsets(all, cfg.Enable)
	if err != nil {
		return nil, err
	}
	s.toolsets = enabled
	s.ctx, s.cancel = context.WithCancel(context.Background())
	for _, ts := range enabled {
		for _, t := range ts.Tools {
			t.Toolset = ts.Name
			if cfg.ReadOnly && !t.ReadOnly() {
				continue
			}
			s.tools = append(s.tools, t)
		}
	}
	s.toolNames = map[string]bool{}
	for _, t := range s.tools {
		s.toolNames[t.Name()] = true
	}
	for _, ts := range enabled {
		if ts.Attach != nil {
			ts.Attach()
		}
	}
	s.listed = sync.OnceValue(s.listedDefs)
	go s.listed() // beside the store's opening, before the first tools/list
	s.opened = make(chan struct{})
	if cfg.Open == nil {
		s.start()
	} else {
		go func() {
			if err := cfg.Open(s.ctx, &s.cfg); err != nil {
				s.openErr = err
				close(s.opened)
				return
			}
			s.start()
		}()
	}
	if cfg.Metrics != nil {
		s.calls = cfg.Metrics.Counter("atrium_mcp_requests_total", "MCP requests handled, by method, tool and outcome.", "method", "tool", "outcome")
		s.duration = cfg.Metrics.Histogram("atrium_mcp_request_seconds", "Time to handle an MCP request, by method.", metrics.DurationBuckets, "method")
		cfg.Metrics.GaugeFunc("atrium_mcp_sessions", "MCP sessions open now, on every transport.", func() float64 { return float64(s.SessionCount()) })
	}
	return s, nil
}

// start begins serving calls once the configuration is complete.
func (s *Server) start() {
	if s.cfg.Services != nil {
		events, stop := s.cfg.Services.Events()
		go func() {
			<-s.ctx.Done()
			stop()
		}()
		go s.watch(events)
		for _, ts := range s.toolsets {
			if ts.Run != nil {
				go ts.Run(s.ctx)
			}
		}
	}
	s.mu.Lock()
	if s.local != nil {
		s.servers[s.cfg.Actor.Workspace.ID] = s.local // for watch
	}
	close(s.opened)
	s.mu.Unlock()
}

// Opened waits until the server can serve calls (see Config.Open) and
// returns why it cannot, if it cannot.
func (s *Server) Opened(ctx context.Context) error {
	select {
	case <-s.opened:
		return s.openErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops background work and closes every open session.
func (s *Server) Close() {
	for _, ts := range s.toolsets {
		if ts.Close != nil {
			ts.Close()
		}
	}
	s.cancel()
	s.mu.Lock()
	servers := make([]*mcp.Server, 0, len(s.servers))
	for _, ms := range s.servers {
		servers = append(servers, ms)
	}
	s.mu.Unlock()
	for _, ms := range servers {
		for ss := range ms.Sessions() {
			ss.Close()
		}
	}
}

// SessionCount counts open sessions on all workspaces' servers.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, ms := range s.servers {
		for range ms.Sessions() {
			n++
		}
	}
	return n
}

// Tools returns the enabled tools, in registration order.
func (s *Server) Tools() []*Tool { return s.tools }

// ToolsetNames returns the names of the enabled toolsets.
func (s *Server) ToolsetNames() []string {
	names := make([]string, len(s.toolsets))
	for i, ts := range s.toolsets {
		names[i] = ts.Name
	}
	return names
}

// ForWorkspace returns the MCP server of workspace ws, building it on first use.
func (s *Server) ForWorkspace(ws atrium.Workspace) *mcp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ms := s.servers[ws.ID]; ms != nil {
		return ms
	}
	ms := s.build(ws)
	s.servers[ws.ID] = ms
	return ms
}

// LocalWorkspace stands for the local caller's workspace on the server Local
// builds, which may exist before the caller is known.
const LocalWorkspace = 0

// Local returns the MCP server of the local caller, cfg.Actor (stdio). With
// Config.Open, it is ready before the caller is known.
func (s *Server) Local() *mcp.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.local == nil {
		s.local = s.build(atrium.Workspace{ID: LocalWorkspace})
		select {
		case <-s.opened:
			if s.openErr == nil {
				s.servers[s.cfg.Actor.Workspace.ID] = s.local
			}
		default: // start registers it
		}
	}
	return s.local
}

const instructions = `Atrium is the shared workspace where people and agents work on the same documents, review threads and tasks. Call whoami to learn who you act as, in which workspace and with which role. Every tool acts in your workspace only. Failed calls return {error, code}; the message says what to change.`

func (s *Server) build(ws atrium.Workspace) *mcp.Server {
	// Declared in full so that clients know from the start what may change:
	// tools come and go with gateway reloads.
	caps := &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		//lint:ignore SA1019 deprecated in 2026-07-28, but 2025-era clients (and the conformance suite) still set log levels
		Logging:     &mcp.LoggingCapabilities{},
		Completions: &mcp.CompletionCapabilities{},
	}
	for _, ts := range s.toolsets {
		for id, settings := range ts.Extensions {
			caps.AddExtension(id, settings)
		}
	}
	ms := mcp.NewServer(&mcp.Implementation{Name: "atrium", Title: "Atrium", Version: atrium.Version, Icons: []mcp.Icon{Icon}}, &mcp.ServerOptions{
		Instructions:       instructions,
		Logger:             s.sdkLog,
		CompletionHandler:  s.completer(ws.ID),
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		SetCacheable:       privateByDefault,
		Capabilities:       caps,
	})
	ms.AddReceivingMiddleware(s.recoverPanics, s.observe, s.awaitOpen, s.listTools, s.listResources(ws.ID), s.readResources)
	for _, ts := range s.toolsets {
		if ts.Receiving != nil {
			ms.AddReceivingMiddleware(ts.Receiving(ws.ID))
		}
		if ts.Sending != nil {
			ms.AddSendingMiddleware(ts.Sending)
		}
	}
	for _, t := range s.tools {
		t.add(s, ms, ws.ID)
	}
	for _, ts := range s.toolsets {
		if ts.Added != nil {
			ts.Added(ms, ws.ID)
		}
	}
	for _, ts := range s.toolsets {
		for _, r := range ts.Resources {
			ms.AddResource(r.Def, s.ResourceHandler(r.Handler, ws.ID))
		}
		for _, r := range ts.Templates {
			ms.AddResourceTemplate(r.Def, s.ResourceHandler(r.Handler, ws.ID))
		}
		for _, p := range ts.Prompts {
			ms.AddPrompt(p.Def, p.Handler)
		}
		if ts.Start != nil {
			go ts.Start(s.ctx, ms, ws)
		}
	}
	return ms
}

// privateByDefault gives every cacheable 2026-07-28 result (server/discover,
// the lists, resources/read) that does not say otherwise the cacheScope
// "private". The SDK's default, "public", lets any shared cache (a gateway,
// a proxy) serve the result across authorization contexts, and what Atrium
// answers is its workspace's data — pages, review threads — read with the
// caller's token. A resource the same for every caller may say "public".
func privateByDefault(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
	if c.CacheScope == "" {
		c.CacheScope = "private"
	}
}

// actorKey is where HTTP authentication leaves the actor in a token's Extra.
const actorKey = "atrium.actor"

// Actor returns the caller of a request on the server of workspace ws: from the
// request's token on Streamable HTTP, from the session's on SSE, or the fixed
// local actor on stdio. A caller of another workspace is refused.
func (s *Server) Actor(ctx context.Context, req mcp.Request, ws int64) (*atrium.Actor, error) {
	var a *atrium.Actor
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		a, _ = extra.TokenInfo.Extra[actorKey].(*atrium.Actor)
	} else if ti := auth.TokenInfoFromContext(ctx); ti != nil {
		a, _ = ti.Extra[actorKey].(*atrium.Actor)
	} else {
		a = s.cfg.Actor
	}
	if a == nil {
		return nil, atrium.Errorf(atrium.EUnauthenticated, "no caller identity: authenticate first")
	}
	if a.Workspace.ID != ws && (ws != LocalWorkspace || a != s.cfg.Actor) {
		return nil, atrium.Errorf(atrium.EPermission, "this session belongs to another workspace")
	}
	return a, nil
}

// ResourceHandler gives a resource handler the caller in its context and turns
// Atrium errors into JSON-RPC errors.
func (s *Server) ResourceHandler(h mcp.ResourceHandler, ws int64) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		a, err := s.Actor(ctx, req, ws)
		if err != nil {
			return nil, RPCError(err)
		}
		res, err := h(atrium.NewContextWithActor(ctx, a), req)
		if err != nil {
			if atrium.ErrorCode(err) == atrium.ENotFound {
				return nil, s.resourceNotFound(req, err)
			}
			if _, ok := err.(*jsonrpc.Error); ok {
				return nil, err
			}
			return nil, RPCError(s.callerError("resources/read", a, err))
		}
		return res, nil
	}
}

// RPCError is err as a JSON-RPC error, for methods whose failures are protocol
// errors rather than tool results.
func RPCError(err error) error {
	code := int64(jsonrpc.CodeInternalError)
	if c := atrium.ErrorCode(err); c == atrium.EInvalid || c == atrium.ENotFound {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: atrium.ErrorMessage(err)}
}

// tool is the tool named name, or nil.
func (s *Server) tool(name string) *Tool {
	for _, t := range s.tools {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// completer answers completion/complete for the server of workspace ws from
// the toolsets, with the caller in the context like every other handler.
func (s *Server) completer(ws int64) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		a, err := s.Actor(ctx, req, ws)
		if err != nil {
			return nil, RPCError(err)
		}
		ctx = atrium.NewContextWithActor(ctx, a)
		for _, ts := range s.toolsets {
			if ts.Complete == nil {
				continue
			}
			if res, ok, err := ts.Complete(ctx, req); ok || err != nil {
				if err != nil {
					return nil, RPCError(s.callerError("completion/complete", a, err))
				}
				return res, nil
			}
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	}
}

// recoverPanics keeps a panic in any handler from reaching the client or
// stopping the process: it becomes an internal error, and the stack is logged.
func (s *Server) recoverPanics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("MCP handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
			}
		}()
		return next(ctx, method, req)
	}
}

// awaitOpen holds every request that may need the store until the server's
// configuration is complete (see Config.Open). The handshake, pings and lists
// go through at once.
func (s *Server) awaitOpen(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/call", "resources/read", "resources/subscribe", "resources/unsubscribe", "subscriptions/listen", "prompts/get", "completion/complete":
		default:
			return next(ctx, method, req)
		}
		if err := s.Opened(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err() // the caller gave up
			}
			err = atrium.Errorf(atrium.EUnavailable, "Atrium could not open its store: %v", err)
			if method == "tools/call" {
				return errorResult(err), nil
			}
			return nil, RPCError(err)
		}
		return next(ctx, method, req)
	}
}

func (s *Server) observe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if s.calls == nil {
			return next(ctx, method, req)
		}
		start := time.Now()
		res, err := next(ctx, method, req)
		tool := ""
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			tool = s.toolLabel(p.Name)
		}
		outcome := "ok"
		if r, ok := res.(*mcp.CallToolResult); err != nil || ok && r.IsError {
			outcome = "error"
		}
		s.calls.Inc(method, tool, outcome)
		s.duration.Since(start, method)
		return res, err
	}
}

// toolLabel is the metrics label of a called tool: its name if the server
// has it, else "unknown", so that a client cannot add a series per name it
// makes up.
func (s *Server) toolLabel(name string) string {
	if s.toolNames[name] {
		return name
	}
	return "unknown"
}

// A Toolset groups tools, resources and prompts that are switched on
// together, with whatever the toolset needs of every request or every server:
// its own middleware, state and background work live with it, in its own
// package, and the registry knows none of them.
type Toolset struct {
	// Name is what --toolsets and clients' configurations name it by.
	Name        string
	Description string
	// Default toolsets are part of "all".
	Default   bool
	Tools     []*Tool
	Resources []Resource
	Templates []ResourceTemplate
	Prompts   []Prompt
	// Extensions are the protocol extensions the toolset serves, by
	// identifier, with their settings: declared in the capabilities of every
	// server that has the toolset (and of no other). Their methods the
	// toolset registers itself (Added, with mcp.AddReceivingCustomMethod).
	Extensions map[string]map[string]any
	// Defs are the toolset's stored tool definitions, defs/NAME.json, as
	// tools/list sends them (see listedDefs); its golden test keeps them
	// equal to the code's.
	Defs fs.FS
	// Complete answers completion/complete for the references it knows; ok
	// false passes the request on.
	Complete func(ctx context.Context, req *mcp.CompleteRequest) (res *mcp.CompleteResult, ok bool, err error)
	// ListResources, when set, adds resources of the caller's workspace to
	// the first page of resources/list (see listResources).
	ListResources func(ctx context.Context) ([]*mcp.Resource, error)
	// Updates are the resources a store event changed, which their
	// subscribers are told of (see watch).
	Updates func(ev atrium.Event) []ResourceUpdate
	// NotFoundHint, given a resource URI that names nothing, may say what
	// the caller likely meant.
	NotFoundHint func(uri string) string
	// Skill is the toolset's part of the agent skill (atrium skill), written
	// before the tool reference; enabled reports whether a toolset is on.
	Skill func(enabled func(toolset string) bool) string
	// Receiving wraps every request to the server of workspace ws, inside
	// the registry's own checks; Sending wraps what every server sends.
	Receiving func(ws int64) mcp.Middleware
	Sending   mcp.Middleware
	// Attach runs once the registry has chosen its tools (New).
	Attach func()
	// Added runs when the registry has built the server of workspace ws
	// (LocalWorkspace for the local server), before it serves anyone.
	Added func(ms *mcp.Server, ws int64)
	// Start runs background work for the server of one workspace until ctx ends.
	Start func(ctx context.Context, ms *mcp.Server, ws atrium.Workspace)
	// Run runs the toolset's background work once the services are open,
	// until ctx ends.
	Run func(ctx context.Context)
	// Close runs when the server closes, before its sessions are closed.
	Close func()
}

// NewToolset builds a toolset for the server s: its tools reach the
// services and the caller through s when they are called.
type NewToolset func(s *Server) *Toolset

// A ResourceUpdate is a resource an event changed. Meta travels with the
// notification to the sending middleware (which may act on it and must take
// off what is not for clients).
type ResourceUpdate struct {
	URI  string
	Meta mcp.Meta
}

// Resource is a static resource and its handler.
type Resource struct {
	Def     *mcp.Resource
	Handler mcp.ResourceHandler
}

// ResourceTemplate is a resource template and its handler.
type ResourceTemplate struct {
	Def     *mcp.ResourceTemplate
	Handler mcp.ResourceHandler
}

// Prompt is a prompt and its handler.
type Prompt struct {
	Def     *mcp.Prompt
	Handler mcp.PromptHandler
}

// CoreToolset is always enabled.
const CoreToolset = "core"

// selectToolsets picks the toolsets names asks for. Core is always in; "all"
// means every default toolset.
func selectToolsets(all []*Toolset, names []string) ([]*Toolset, error) {
	want := map[string]bool{CoreToolset: true}
	if len(names) == 0 {
		names = []string{"all"}
	}
	known := make([]string, 0, len(all))
	for _, ts := range all {
		known = append(known, ts.Name)
	}
	for _, n := range names {
		n = strings.TrimSpace(strings.ToLower(n))
		switch {
		case n == "":
		case n == "all":
			for _, ts := range all {
				if ts.Default {
					want[ts.Name] = true
				}
			}
		case slices.Contains(known, n):
			want[n] = true
		default:
			return nil, atrium.Errorf(atrium.EInvalid, "unknown toolset %q (known: all, %s)", n, strings.Join(known, ", "))
		}
	}
	var out []*Toolset
	for _, ts := range all {
		if want[ts.Name] {
			out = append(out, ts)
		}
	}
	return out, nil
}

// ParseToolsets splits a comma-separated --toolsets value.
func ParseToolsets(v string) []string {
	var out []string
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// quiet passes the SDK's records at warn and above only, unless the operator
// asked for debug logs: the SDK reports every session at info.
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	if q.Handler.Enabled(ctx, slog.LevelDebug) {
		return true
	}
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}

func (q quiet) WithAttrs(as []slog.Attr) slog.Handler { return quiet{q.Handler.WithAttrs(as)} }
func (q quiet) WithGroup(n string) slog.Handler       { return quiet{q.Handler.WithGroup(n)} }
