// Package gateway puts other MCP servers behind Atrium: it reads an
// mcpServers file, supervises one process (or HTTP session) per server,
// re-exposes their tools as <server>_<tool> with destructive ones held back,
// routes calls, and reports status and health. Nothing it starts outlives
// it: each stdio server runs in its own process group, ended and reaped on
// reload and shutdown, grandchildren included.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// Options configure a Gateway. Zero fields mean defaults.
type Options struct {
	Logger *slog.Logger
	// OnChange is called when the exposed tools or prompts change (an
	// upstream started, re-listed, stopped, or a reload): the MCP surface
	// re-registers them, which tells clients with list_changed.
	OnChange func()
	// Reserved reports whether a name is one of Atrium's own tools: an
	// upstream's tool that would take it is held back.
	Reserved func(name string) bool
	// BackoffBase and BackoffMax bound the wait between restarts (1 s
	// doubling to 60 s); StopGrace is how long a stopping server gets after
	// each polite step before the next (2 s).
	BackoffBase, BackoffMax, StopGrace time.Duration
	// Environ is the environment servers inherit (os.Environ), Lookup where
	// ${VAR} is looked up (os.LookupEnv).
	Environ func() []string
	Lookup  func(string) (string, bool)
	// SignIn gives the OAuth client of an HTTP server (by name and URL)
	// that is configured with no Authorization header: a server that
	// answers 401 with OAuth metadata is signed in to with the tokens it
	// holds, refreshed as they expire. Nil: such servers are reached as
	// they are.
	// open sends a person to the authorization page; nil when nobody is
	// there to send (the supervisor's own attempts).
	SignIn func(sp *Spec, open func(ctx context.Context, url string) error) (OAuthClient, error)
}

// An OAuthClient signs the gateway in to one server (package oauthclient
// makes them); Close releases what it holds once the session is open.
type OAuthClient interface {
	auth.OAuthHandler
	Close() error
}

// A Gateway is the set of upstream servers of one gateway file.
type Gateway struct {
	opts Options
	// lastHealth is the last full health report, what readers get (see
	// Health).
	healthMu   sync.Mutex
	lastHealth *HealthReport
	log        *slog.Logger
	sdkLog     *slog.Logger
	path       string

	opMu      sync.Mutex // serialises Reload and Close
	mu        sync.Mutex // guards upstreams and closed
	upstreams map[string]*upstream
	closed    bool

	viewMu sync.Mutex
	view   atomic.Pointer[view]

	hookMu   sync.Mutex
	reserved func(string) bool
	onChange []func()
	audit    func(ctx context.Context, rec CallRecord) error

	progressSeq atomic.Int64
	progressMu  sync.Mutex
	progressTo  map[string]func(*mcp.ProgressNotificationParams)

	watchMu sync.Mutex
	watch   chan struct{} // closed and replaced at every change Status would show
}

// Start reads the file at path and starts every server it enables, in
// parallel; it does not wait for them (see Settled). An invalid file is an
// error, and nothing is started.
func Start(path string, opts Options) (*Gateway, error) {
	f, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = time.Second
	}
	if opts.BackoffMax <= 0 {
		opts.BackoffMax = time.Minute
	}
	if opts.StopGrace <= 0 {
		opts.StopGrace = 2 * time.Second
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.Lookup == nil {
		opts.Lookup = os.LookupEnv
	}
	if opts.Reserved == nil {
		opts.Reserved = func(string) bool { return false }
	}
	g := &Gateway{opts: opts, log: opts.Logger, sdkLog: slog.New(warnOnly{opts.Logger.Handler()}), path: path,
		upstreams: map[string]*upstream{}, progressTo: map[string]func(*mcp.ProgressNotificationParams){}, watch: make(chan struct{})}
	g.reserved = opts.Reserved
	if opts.OnChange != nil {
		g.onChange = append(g.onChange, opts.OnChange)
	}
	g.view.Store(newView())
	for _, name := range f.Names() {
		g.upstreams[name] = newUpstream(g, name, f.Servers[name])
	}
	for _, name := range f.Names() {
		g.upstreams[name].start()
	}
	g.log.Info("gateway: starting servers", "file", path, "servers", len(f.Servers))
	return g, nil
}

// Attach connects an MCP surface built after Start: reserved names Atrium's
// own tools (an upstream's tool may not take one), onChange is called when
// the exposed tools or prompts change.
func (g *Gateway) Attach(reserved func(string) bool, onChange func()) {
	g.hookMu.Lock()
	if reserved != nil {
		prev := g.reserved
		g.reserved = func(n string) bool { return prev(n) || reserved(n) }
	}
	if onChange != nil {
		g.onChange = append(g.onChange, onChange)
	}
	g.hookMu.Unlock()
	g.rebuild()
}

func (g *Gateway) hooks() (func(string) bool, []func()) {
	g.hookMu.Lock()
	defer g.hookMu.Unlock()
	return g.reserved, slices.Clone(g.onChange)
}

// Watch returns a channel closed at the next change of what Status
// reports, but for the stderr tails and call times: a server's state, its
// session, its errors, its tools, a reload. Whoever shows the status live
// (the browser's /gateway) waits on it, then asks for Status again and for
// a new channel. Changes made meanwhile close the same channel once.
func (g *Gateway) Watch() <-chan struct{} {
	g.watchMu.Lock()
	defer g.watchMu.Unlock()
	return g.watch
}

// changed wakes the watchers. It may be called with an upstream's mu held.
func (g *Gateway) changed() {
	g.watchMu.Lock()
	close(g.watch)
	g.watch = make(chan struct{})
	g.watchMu.Unlock()
}

// Path is the gateway file.
func (g *Gateway) Path() string { return g.path }

// Settled waits until every server has finished its first attempt to start,
// either way, or ctx ends: what a client listing tools right after start
// waits for, so that it sees the upstreams' tools.
func (g *Gateway) Settled(ctx context.Context) error {
	g.mu.Lock()
	ups := make([]*upstream, 0, len(g.upstreams))
	for _, u := range g.upstreams {
		ups = append(ups, u)
	}
	g.mu.Unlock()
	for _, u := range ups {
		select {
		case <-u.settled:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close stops every server and waits until all their processes are reaped.
func (g *Gateway) Close() {
	g.opMu.Lock()
	defer g.opMu.Unlock()
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = true
	ups := g.sortedLocked()
	g.mu.Unlock()
	var wg sync.WaitGroup
	for _, u := range ups {
		wg.Go(u.stop)
	}
	wg.Wait()
	g.rebuild()
}

// Tool is an upstream's tool as Atrium exposes it.
type Tool struct {
	Def      *mcp.Tool // the upstream's definition under the exposed name
	Server   string
	Upstream string // the tool's name on its server
	ReadOnly bool
}

// Tools returns the exposed tools, by name.
func (g *Gateway) Tools() []Tool {
	v := g.view.Load()
	out := make([]Tool, 0, len(v.order))
	for _, n := range v.order {
		e := v.tools[n]
		out = append(out, Tool{Def: e.def, Server: e.up.name, Upstream: e.tool.Name, ReadOnly: readOnly(e.tool)})
	}
	return out
}

// Lookup returns the exposed tool of that name; if a tool of that name is
// held back, held says why.
func (g *Gateway) Lookup(name string) (t Tool, ok bool, held string) {
	v := g.view.Load()
	if e := v.tools[name]; e != nil {
		return Tool{Def: e.def, Server: e.up.name, Upstream: e.tool.Name, ReadOnly: readOnly(e.tool)}, true, ""
	}
	if e := v.held[name]; e != nil {
		return Tool{Server: e.up.name, Upstream: e.tool.Name}, false, e.held
	}
	return Tool{}, false, ""
}

// CallTool calls the exposed tool name with args (a JSON object). progress,
// when set, receives the upstream's progress notifications for this call;
// cancelling ctx cancels the call upstream. A held-back tool is refused.
func (g *Gateway) CallTool(ctx context.Context, name string, args json.RawMessage, progress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	v := g.view.Load()
	e := v.tools[name]
	if e == nil {
		if h := v.held[name]; h != nil {
			return nil, atrium.Errorf(atrium.EPermission, "%s is held back by Atrium's gateway: %s (server %s in %s)", name, h.held, h.up.name, g.path)
		}
		return nil, atrium.Errorf(atrium.ENotFound, "no gateway tool %s", name)
	}
	u := e.up
	sess, err := u.session()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, or(u.spec.Timeouts.Call, defaultCall))
	defer cancel()
	params := &mcp.CallToolParams{Name: e.tool.Name}
	if len(args) > 0 && string(args) != "null" {
		params.Arguments = args
	}
	if progress != nil {
		tok := fmt.Sprintf("atrium-gw-%d", g.progressSeq.Add(1))
		g.progressMu.Lock()
		g.progressTo[tok] = progress
		g.progressMu.Unlock()
		defer func() {
			g.progressMu.Lock()
			delete(g.progressTo, tok)
			g.progressMu.Unlock()
		}()
		params.SetProgressToken(tok)
	}
	start := time.Now()
	res, err := sess.CallTool(ctx, params)
	if err != nil && sessionLost(err) && ctx.Err() == nil {
		// The call never ran: the server did not know the session. Once.
		u.kickNow()
		if sess, err = u.awaitReady(ctx, sess); err == nil {
			res, err = sess.CallTool(ctx, params)
		}
	}
	u.lat.add(time.Since(start), err != nil || res != nil && res.IsError)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			u.checkAlive(sess)
		}
		if why, broken := brokenConn(err); broken && ctx.Err() == nil {
			u.reconnect(sess, why)
			return nil, unavailable(fmt.Sprintf("server %s: %s; its connection is being opened again, so the next call can go through", u.name, why))
		}
		return nil, u.callErr(ctx, err)
	}
	return res, nil
}

// brokenConn says whether a call's error means the connection to the
// upstream is broken — not the call refused — and why, in words: an answer
// over the SDK's frame limit ends the connection's reader, and every call
// after it would fail as well.
func brokenConn(err error) (why string, broken bool) {
	switch {
	case strings.Contains(err.Error(), "exceeded the configured maximum line length"):
		return fmt.Sprintf("its answer was larger than %d MiB, the most one answer may be (ask for less: a filter, a smaller page)", mcp.DefaultMaxLineLength>>20), true
	case errors.Is(err, mcp.ErrConnectionClosed):
		return "the connection to it was lost", true
	}
	return "", false
}

// callErr turns a failed call into an Atrium error, secrets removed.
func (u *upstream) callErr(ctx context.Context, err error) error {
	msg := u.spec.redact.apply(err.Error())
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return unavailable(fmt.Sprintf("server %s did not answer within %s (timeouts.call)", u.name, or(u.spec.Timeouts.Call, defaultCall)))
	case ctx.Err() != nil:
		return atrium.Errorf(atrium.EUnavailable, "the call was cancelled")
	}
	if s, e := u.session(); s == nil {
		return e
	}
	return atrium.Errorf(atrium.EInvalid, "server %s refused the call: %s", u.name, msg)
}

func unavailable(msg string) error { return atrium.Errorf(atrium.EUnavailable, "%s", msg) }

// progress passes an upstream's progress notification to the call that asked
// for it.
func (g *Gateway) progress(_ context.Context, p *mcp.ProgressNotificationParams) {
	tok, _ := p.ProgressToken.(string)
	g.progressMu.Lock()
	fn := g.progressTo[tok]
	g.progressMu.Unlock()
	if fn != nil {
		fn(p)
	}
}

// Prompt is an upstream's prompt as Atrium exposes it.
type Prompt struct {
	Def    *mcp.Prompt
	Server string
}

// Prompts returns the exposed prompts.
func (g *Gateway) Prompts() []Prompt {
	v := g.view.Load()
	out := make([]Prompt, 0, len(v.promptOrder))
	for _, n := range v.promptOrder {
		e := v.prompts[n]
		out = append(out, Prompt{Def: e.def, Server: e.up.name})
	}
	return out
}

// GetPrompt gets the exposed prompt name from its server.
func (g *Gateway) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	e := g.view.Load().prompts[name]
	if e == nil {
		return nil, atrium.Errorf(atrium.ENotFound, "no gateway prompt %s", name)
	}
	sess, err := e.up.session()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, or(e.up.spec.Timeouts.Call, defaultCall))
	defer cancel()
	res, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: e.prompt.Name, Arguments: args})
	if err != nil {
		return nil, e.up.callErr(ctx, err)
	}
	return res, nil
}

// Resource is an upstream's resource, under its own URI.
type Resource struct {
	Def    *mcp.Resource
	Server string
}

// ResourceTemplate is an upstream's resource template, under its own URI
// template.
type ResourceTemplate struct {
	Def    *mcp.ResourceTemplate
	Server string
}

// Resources returns the upstreams' resources, by server then as listed. A
// URI two servers list is the first server's (by name).
func (g *Gateway) Resources() []Resource {
	v := g.view.Load()
	out := make([]Resource, 0, len(v.resourceOrder))
	for _, uri := range v.resourceOrder {
		e := v.resources[uri]
		out = append(out, Resource{Def: e.def, Server: e.up.name})
	}
	return out
}

// ResourceTemplates returns the upstreams' resource templates.
func (g *Gateway) ResourceTemplates() []ResourceTemplate {
	v := g.view.Load()
	out := make([]ResourceTemplate, 0, len(v.templateOrder))
	for _, t := range v.templateOrder {
		e := v.templates[t]
		out = append(out, ResourceTemplate{Def: e.def, Server: e.up.name})
	}
	return out
}

// SignIn signs the gateway in to server name, an HTTP server that takes
// OAuth, with a person sent to its authorization page by open; the tokens
// are kept (Options.SignIn's client keeps them) and the server is reached
// with them at once, not at the end of its backoff.
func (g *Gateway) SignIn(ctx context.Context, name string, open func(ctx context.Context, url string) error) error {
	g.mu.Lock()
	u := g.upstreams[name]
	g.mu.Unlock()
	switch {
	case u == nil || u.spec == nil:
		return atrium.Errorf(atrium.ENotFound, "no gateway server %q", name)
	case u.spec.Transport == "stdio":
		return atrium.Errorf(atrium.EInvalid, "%s runs on stdio: it has no OAuth sign-in", name)
	case hasAuthorization(u.spec.Headers):
		return atrium.Errorf(atrium.EInvalid, "%s is sent an Authorization header from the gateway file: it signs in with that", name)
	case g.opts.SignIn == nil:
		return atrium.Errorf(atrium.EUnavailable, "this gateway signs in to no server")
	}
	oc, err := g.opts.SignIn(u.spec, open)
	if err != nil {
		return err
	}
	defer oc.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "atrium-gateway", Version: atrium.Version}, nil)
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: u.spec.URL, OAuthHandler: oc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: upstreamProtocol})
	if err != nil {
		return atrium.Errorf(atrium.EUnavailable, "sign in to %s: %v", name, err)
	}
	sess.Close()
	u.kickNow()
	return nil
}

// ReadResource reads uri from server, one of the servers that lists it (or a
// template it matches).
func (g *Gateway) ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	g.mu.Lock()
	u := g.upstreams[server]
	g.mu.Unlock()
	if u == nil || u.spec == nil {
		return nil, atrium.Errorf(atrium.ENotFound, "no gateway server %s for %s", server, uri)
	}
	sess, err := u.session()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, or(u.spec.Timeouts.Call, defaultCall))
	defer cancel()
	res, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) && (rpc.Code == codeResourceNotFound ||
			rpc.Code == jsonrpc.CodeInvalidParams && strings.Contains(strings.ToLower(rpc.Message), "not found")) {
			return nil, atrium.Errorf(atrium.ENotFound, "server %s has nothing at %s", server, uri)
		}
		return nil, u.callErr(ctx, err)
	}
	return res, nil
}

// codeResourceNotFound is the resource-not-found error of the 2025 specs;
// from 2026-07-28 it is Invalid Params, with a message saying so.
const codeResourceNotFound = -32002

// sortedUpstreams returns the upstreams by name.
func (g *Gateway) sortedUpstreams() []*upstream {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sortedLocked()
}

func (g *Gateway) sortedLocked() []*upstream {
	names := make([]string, 0, len(g.upstreams))
	for n := range g.upstreams {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]*upstream, len(names))
	for i, n := range names {
		out[i] = g.upstreams[n]
	}
	return out
}

// warnOnly passes the SDK's records at warn and above.
type warnOnly struct{ slog.Handler }

func (q warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}
func (q warnOnly) WithAttrs(as []slog.Attr) slog.Handler { return warnOnly{q.Handler.WithAttrs(as)} }
func (q warnOnly) WithGroup(n string) slog.Handler       { return warnOnly{q.Handler.WithGroup(n)} }
