package mcpserver

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// A Proxy is a local MCP server that forwards everything to a remote one: what
// `atrium mcp --url` runs so that a client configured for stdio reaches a
// deployed `atrium serve`, with the token in the client's environment rather
// than on a command line. Tools, resources, templates, prompts, completions and
// subscriptions pass through; list changes, resource updates, progress and log
// messages come back.
type Proxy struct {
	log    *slog.Logger
	local  *mcp.Server
	remote *mcp.ClientSession

	mu    sync.Mutex
	tools []string // names registered on local, to remove on resync
}

// DialProxy connects to the remote server over t and returns the proxy.
func DialProxy(ctx context.Context, t mcp.Transport, log *slog.Logger) (*Proxy, error) {
	p := &Proxy{log: log}
	client := mcp.NewClient(&mcp.Implementation{Name: "atrium-proxy", Version: atrium.Version}, &mcp.ClientOptions{
		Capabilities:           &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) { p.sync(ctx) },
		PromptListChangedHandler: func(ctx context.Context, _ *mcp.PromptListChangedRequest) {
			p.sync(ctx)
		},
		ResourceListChangedHandler: func(ctx context.Context, _ *mcp.ResourceListChangedRequest) { p.sync(ctx) },
		ResourceUpdatedHandler: func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			if p.local != nil {
				_ = p.local.ResourceUpdated(ctx, r.Params)
			}
		},
		ProgressNotificationHandler: func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
			if p.local == nil {
				return
			}
			for ss := range p.local.Sessions() {
				_ = ss.NotifyProgress(ctx, r.Params)
			}
		},
	})
	remote, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	p.remote = remote
	info := remote.InitializeResult()
	impl := &mcp.Implementation{Name: "atrium", Version: atrium.Version}
	var instructions string
	caps := &mcp.ServerCapabilities{}
	if info != nil {
		if info.ServerInfo != nil {
			impl = info.ServerInfo
		}
		instructions = info.Instructions
		if info.Capabilities != nil {
			caps = info.Capabilities
		}
	}
	p.local = mcp.NewServer(impl, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       log,
		Capabilities: caps,
		CompletionHandler: func(ctx context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return p.remote.Complete(ctx, r.Params)
		},
		SubscribeHandler: func(ctx context.Context, r *mcp.SubscribeRequest) error {
			return p.remote.Subscribe(ctx, r.Params)
		},
		UnsubscribeHandler: func(ctx context.Context, r *mcp.UnsubscribeRequest) error {
			return p.remote.Unsubscribe(ctx, r.Params)
		},
	})
	if err := p.sync(ctx); err != nil {
		remote.Close()
		return nil, err
	}
	return p, nil
}

// Server is the local side, to run on stdio.
func (p *Proxy) Server() *mcp.Server { return p.local }

// Close ends the remote session.
func (p *Proxy) Close() error { return p.remote.Close() }

// sync mirrors the remote's tools, resources, templates and prompts on the
// local server, which tells local clients what changed.
func (p *Proxy) sync(ctx context.Context) error {
	if p.local == nil {
		return nil // still connecting: the first sync follows
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	caps := p.remote.InitializeResult().Capabilities
	var names []string
	if caps == nil || caps.Tools != nil {
		for t, err := range p.remote.Tools(ctx, nil) {
			if err != nil {
				p.log.Warn("list remote tools", "err", err)
				return err
			}
			names = append(names, t.Name)
			p.local.AddTool(t, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return p.remote.CallTool(ctx, &mcp.CallToolParams{Meta: r.Params.Meta, Name: r.Params.Name, Arguments: r.Params.Arguments})
			})
		}
	}
	var gone []string
	for _, n := range p.tools {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		p.local.RemoveTools(gone...)
	}
	p.tools = names
	read := func(ctx context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return p.remote.ReadResource(ctx, r.Params)
	}
	if caps == nil || caps.Resources != nil {
		for r, err := range p.remote.Resources(ctx, nil) {
			if err != nil {
				return err
			}
			p.local.AddResource(r, read)
		}
		for r, err := range p.remote.ResourceTemplates(ctx, nil) {
			if err != nil {
				return err
			}
			p.local.AddResourceTemplate(r, read)
		}
	}
	if caps == nil || caps.Prompts != nil {
		for pr, err := range p.remote.Prompts(ctx, nil) {
			if err != nil {
				return err
			}
			p.local.AddPrompt(pr, func(ctx context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return p.remote.GetPrompt(ctx, r.Params)
			})
		}
	}
	return nil
}
