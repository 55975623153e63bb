// Command testupstream is a small MCP server for the gateway's tests: real
// processes, whose environment chooses how they misbehave.
//
//	TESTUP_CRASH_AT_START=1   exit 3 at once, after a line on stderr
//	TESTUP_CRASH_AFTER=N      answer N tool calls, then exit 2 on the next
//	TESTUP_HANG=1             never answer anything
//	TESTUP_IGNORE_TERM=1      ignore SIGTERM (only SIGKILL ends it)
//	TESTUP_STDERR_LINES=N     write N lines to stderr at start
//	TESTUP_SAY=text           write text to stderr at start (secrets for redaction tests)
//	TESTUP_SLOW_PING=300ms    answer ping after that long
//	TESTUP_HANG_AFTER=N       answer N tool calls, then never answer anything again
//	TESTUP_STDERR_FLOOD=1     write to stderr without pause, for as long as it runs
//	TESTUP_START_DELAY=1s     wait that long before serving (a slow start, npx's)
//	TESTUP_START_GATE=path    wait until that file exists before serving (a start the test ends)
//	TESTUP_HTTP=127.0.0.1:0   serve Streamable HTTP there instead of stdio; print the URL on stdout
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if os.Getenv("TESTUP_IGNORE_TERM") != "" {
		signal.Ignore(syscall.SIGTERM)
	}
	if s := os.Getenv("TESTUP_SAY"); s != "" {
		fmt.Fprintln(os.Stderr, s)
	}
	if n, _ := strconv.Atoi(os.Getenv("TESTUP_STDERR_LINES")); n > 0 {
		for i := range n {
			fmt.Fprintf(os.Stderr, "noise line %d %s\n", i, strings.Repeat("x", 60))
		}
	}
	if os.Getenv("TESTUP_CRASH_AT_START") != "" {
		fmt.Fprintln(os.Stderr, "testupstream: crashing at start as asked")
		os.Exit(3)
	}
	if os.Getenv("TESTUP_HANG") != "" {
		select {}
	}
	if os.Getenv("TESTUP_STDERR_FLOOD") != "" {
		go func() {
			line := []byte("flood " + strings.Repeat("y", 90) + "\n")
			for i := 0; ; i++ {
				if _, err := os.Stderr.Write(append([]byte(strconv.Itoa(i)+" "), line...)); err != nil {
					return
				}
			}
		}()
	}
	if d, err := time.ParseDuration(os.Getenv("TESTUP_START_DELAY")); err == nil {
		time.Sleep(d)
	}
	if gate := os.Getenv("TESTUP_START_GATE"); gate != "" {
		for _, err := os.Stat(gate); err != nil; _, err = os.Stat(gate) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	srv := newServer()
	if addr := os.Getenv("TESTUP_HTTP"); addr != "" {
		serveHTTP(srv, addr)
		return
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testupstream:", err)
	}
}

var (
	calls     atomic.Int64
	cancelled atomic.Int64
	running   atomic.Int64 // slow calls under way
)

type textIn struct {
	Text string `json:"text,omitempty"`
}
type nameIn struct {
	Name string `json:"name"`
}
type bigIn struct {
	Bytes int `json:"bytes"`
}
type slowIn struct {
	MS    int `json:"ms"`
	Steps int `json:"steps,omitempty"`
}
type out struct {
	Text string `json:"text"`
}

func text(s string) (*mcp.CallToolResult, out, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, out{Text: s}, nil
}

func ro() *mcp.ToolAnnotations    { return &mcp.ToolAnnotations{ReadOnlyHint: true} }
func safe() *mcp.ToolAnnotations  { f := false; return &mcp.ToolAnnotations{DestructiveHint: &f} }
func wipes() *mcp.ToolAnnotations { t := true; return &mcp.ToolAnnotations{DestructiveHint: &t} }

func newServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "testupstream", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Prompts: &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true}},
	})
	if d, err := time.ParseDuration(os.Getenv("TESTUP_SLOW_PING")); err == nil {
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "ping" {
					time.Sleep(d)
				}
				return next(ctx, method, req)
			}
		})
	}
	crashAfter, _ := strconv.Atoi(os.Getenv("TESTUP_CRASH_AFTER"))
	hangAfter, hangSet := os.LookupEnv("TESTUP_HANG_AFTER")
	hangN, _ := strconv.Atoi(hangAfter)
	var hung atomic.Bool
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if hung.Load() {
				select {}
			}
			if method == "tools/call" {
				if n := calls.Load() + 1; hangSet && n > int64(hangN) {
					hung.Store(true)
					fmt.Fprintf(os.Stderr, "testupstream: hanging from call %d as asked\n", n)
					select {}
				}
				if n := calls.Add(1); crashAfter > 0 && n > int64(crashAfter) {
					fmt.Fprintf(os.Stderr, "testupstream: crashing on call %d as asked\n", n)
					os.Exit(2)
				}
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes text.", Annotations: ro()}, func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, out, error) {
		return text(in.Text)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "env", Description: "Returns an environment variable.", Annotations: ro()}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, out, error) {
		v, ok := os.LookupEnv(in.Name)
		if !ok {
			return text("<unset>")
		}
		return text(v)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "header", Description: "Returns an HTTP request header (HTTP only).", Annotations: ro()}, func(_ context.Context, req *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, out, error) {
		if req.Extra == nil || req.Extra.Header == nil {
			return text("<no headers>")
		}
		return text(req.Extra.Header.Get(in.Name))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "pid", Description: "Returns the process id and group.", Annotations: ro()}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		return text(fmt.Sprintf("%d %d", os.Getpid(), syscall.Getpgrp()))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "Answers with that many bytes of text.", Annotations: ro()}, func(_ context.Context, _ *mcp.CallToolRequest, in bigIn) (*mcp.CallToolResult, out, error) {
		return text(strings.Repeat("x", in.Bytes))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "stats", Description: "Counts calls, cancellations and slow calls under way.", Annotations: ro()}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		return text(fmt.Sprintf("calls=%d cancelled=%d running=%d", calls.Load(), cancelled.Load(), running.Load()))
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "slow", Description: "Sleeps, reporting progress.", Annotations: ro()}, func(ctx context.Context, req *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, out, error) {
		running.Add(1)
		defer running.Add(-1)
		steps := max(in.Steps, 1)
		for i := range steps {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: float64(steps)})
			}
			select {
			case <-time.After(time.Duration(in.MS/steps) * time.Millisecond):
			case <-ctx.Done():
				cancelled.Add(1)
				return text("cancelled")
			}
		}
		return text("done")
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "write_note", Description: "Writes a note.", Annotations: safe()}, func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, out, error) {
		return text("wrote " + in.Text)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "plain", Description: "No annotations at all."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		return text("plain")
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "wipe", Description: "Destroys everything.", Annotations: wipes()}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		return text("wiped")
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "delete_note", Description: "Says read-only, but deletes.", Annotations: ro()}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		return text("deleted")
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "a_tool_whose_name_is_far_too_long_for_any_client_to_accept_as_it_is", Description: "Long name.", Annotations: ro()}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		return text("long")
	})
	var mu sync.Mutex
	mcp.AddTool(srv, &mcp.Tool{Name: "add_tool", Description: "Adds a read-only tool, so the list changes.", Annotations: safe()}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, out, error) {
		mu.Lock()
		defer mu.Unlock()
		name := in.Name
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "Added at run time.", Annotations: ro()}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
			return text("I am " + name)
		})
		return text("added " + name)
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "drop_sessions", Description: "Forgets every session (HTTP), as a restarted server would.", Annotations: ro()}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, out, error) {
		go func() {
			time.Sleep(50 * time.Millisecond)
			for ss := range srv.Sessions() {
				ss.Close()
			}
		}()
		return text("dropping")
	})
	srv.AddResource(&mcp.Resource{URI: "test://notes/readme", Name: "readme", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "read me"}}}, nil
	})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://notes/{name}", Name: "note", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		name := strings.TrimPrefix(req.Params.URI, "test://notes/")
		if name == "missing" {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "note " + name}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["who"]}}}}, nil
	})
	return srv
}

func serveHTTP(srv *mcp.Server, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{SessionTimeout: time.Minute})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	_ = http.Serve(ln, mux)
}
