package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/internal/toolargs"
	"github.com/atrium-hq/atrium/mcpserver"
)

func newCallCmd(g *globals) *cobra.Command {
	var (
		surface  surfaceFlags
		jsonArgs string
		url      string
		stdio    string
	)
	cmd := &cobra.Command{
		Use:   "call TOOL [key=value …]",
		Short: "Call a tool and print its structured result as JSON",
		Long: `Call one tool and print its structured result as JSON on stdout. A tool error prints
{"error": …, "code": …} and exits 1.

Arguments are key=value pairs, typed by the tool's input schema: numbers, booleans,
objects as JSON, arrays as JSON or as a comma-separated list (tags=a,b). A value @FILE is
the content of FILE, and @- is stdin (write @@ for a value that starts with @): that is how
a long page is written, as an argument is limited to 128 KB. --json gives one JSON object
of arguments, inline, from a file (--json @FILE) or from stdin (--json -); pairs override it.

By default the call runs in-process against the local store (--data-dir/--db) as you
(your user name, a person) or the agent ATRIUM_AGENT, in ATRIUM_WORKSPACE. --url calls a
remote atrium serve (token in ATRIUM_TOKEN); --stdio runs any MCP server command and
calls it.`,
		Example: `  atrium call whoami
  atrium call write_page path=Notes/Today.md content='# Today'
  atrium call list_pages --json '{"depth": 2}'
  atrium call write_page path=Notes/Long.md content=@long.md overwrite=true
  atrium call search_pages query=backup tags=ops,db
  jq -n --rawfile c long.md '{path: "Notes/Long.md", content: $c}' | atrium call write_page --json -
  ATRIUM_TOKEN=atr_… atrium call whoami --url http://127.0.0.1:8080/mcp`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if url != "" && stdio != "" {
				return fmt.Errorf("--url and --stdio exclude each other")
			}
			ctx := cmd.Context()
			session, done, err := g.callSession(ctx, &surface, url, stdio)
			if err != nil {
				return err
			}
			defer done()
			res, err := callTool(ctx, session, args[0], args[1:], jsonArgs, g.stdin)
			if err != nil {
				return err
			}
			return g.printResult(res)
		},
	}
	surface.register(cmd)
	cmd.Flags().StringVar(&jsonArgs, "json", "", "arguments as one JSON object; @FILE reads it from a file, - from stdin")
	cmd.Flags().StringVar(&url, "url", os.Getenv("ATRIUM_URL"), "call a remote atrium serve at this MCP endpoint (env ATRIUM_URL; token in ATRIUM_TOKEN)")
	cmd.Flags().StringVar(&stdio, "stdio", "", "call the MCP server this shell command starts on stdio")
	return cmd
}

// callSession connects a client to the server the flags name and returns it
// with the function that disconnects it.
func (g *globals) callSession(ctx context.Context, surface *surfaceFlags, url, stdio string) (*mcp.ClientSession, func(), error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "atrium-call", Version: atrium.Version}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	switch {
	case url != "":
		t, release, err := g.remoteTransport(url)
		if err != nil {
			return nil, nil, err
		}
		s, err := client.Connect(ctx, t, nil)
		if err != nil {
			release()
			return nil, nil, fmt.Errorf("connect to %s: %w", url, err)
		}
		return s, func() { s.Close(); release() }, nil
	case stdio != "":
		c := exec.Command("sh", "-c", stdio)
		c.Stderr = g.stderr
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("start %q: %w", stdio, err)
		}
		return s, func() { s.Close() }, nil
	}
	a, actor, err := g.openLocal(ctx)
	if err != nil {
		return nil, nil, err
	}
	cfg := surface.config(a.Log, nil, true)
	a.supply(&cfg, nil, actor)
	srv, err := mcpserver.New(cfg)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.ForWorkspace(actor.Workspace).Connect(ctx, st, nil)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		a.Close()
		return nil, nil, err
	}
	return cs, func() {
		cs.Close()
		ss.Wait()
		srv.Close()
		a.Close()
	}, nil
}

// callTool finds the tool, types the arguments by its schema and calls it.
func callTool(ctx context.Context, s *mcp.ClientSession, name string, pairs []string, jsonArgs string, stdin io.Reader) (*mcp.CallToolResult, error) {
	var tool *mcp.Tool
	for t, err := range s.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		if t.Name == name {
			tool = t
			break
		}
	}
	if tool == nil {
		return nil, fmt.Errorf("no tool %q on this server (see: atrium tools)", name)
	}
	args, err := toolargs.Build(tool.InputSchema, pairs, jsonArgs, stdin)
	if err != nil {
		return nil, err
	}
	return s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// printResult prints a result's structured content, or its content when it has
// none; a tool error prints {error, code} and fails the command.
func (g *globals) printResult(res *mcp.CallToolResult) error {
	var out any = res.StructuredContent
	if out == nil {
		texts := []string{}
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
		if res.IsError {
			out = map[string]string{"error": strings.Join(texts, "\n"), "code": atrium.EInternal}
		} else {
			out = map[string]any{"content": res.Content}
		}
	}
	enc := json.NewEncoder(g.stdout)
	enc.SetEscapeHTML(false) // "Design > Storage", not "Design \u003e Storage"
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	if res.IsError {
		return exitError{code: 1}
	}
	return nil
}
