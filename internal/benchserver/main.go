// Command benchserver is the baseline of Atrium's MCP benchmarks: a bare go-sdk
// server with one no-op tool and nothing else — no store, no authentication,
// no middleware — served the way Atrium serves (stdio, or Streamable HTTP that
// is stateless for 2026-07-28 and session-based for older clients). Atrium's
// per-call cost is measured against it in the same run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type empty struct{}

type result struct {
	OK bool `json:"ok"`
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this address instead of stdio")
	flag.Parse()
	server := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	mcp.AddTool(server, &mcp.Tool{Name: "noop", Description: "Does nothing."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, result, error) {
		return nil, result{OK: true}, nil
	})
	if *addr == "" {
		if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
		return
	}
	get := func(*http.Request) *mcp.Server { return server }
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	stateful := mcp.NewStreamableHTTPHandler(get, nil)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "listening on http://%s\n", ln.Addr())
	log.Fatal(http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})))
}
