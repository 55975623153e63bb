package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTimeout bounds one tool call, connecting included: a test that
// breaks Atrium sees a failed call, not an agent that hangs.
const callTimeout = 2 * time.Minute

// atriumClient is the agent's MCP connection to Atrium, made on the first
// call (a script with no calls needs no server) and kept for the next.
type atriumClient struct {
	url, token, workspace string

	mu      sync.Mutex // calls of concurrent ACP sessions share the connection
	session *mcp.ClientSession
}

// call calls tool and returns the text of its result, and whether it
// failed: an error result, or no answer at all.
func (c *atriumClient) call(ctx context.Context, tool string, args map[string]any) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	s, err := c.connect(ctx)
	if err != nil {
		return err.Error(), true
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		// A JSON-RPC error is Atrium's answer (an unknown tool, bad
		// arguments); anything else may be a lost connection, made anew on
		// the next call.
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			c.drop(s)
		}
		return err.Error(), true
	}
	return resultText(res), res.IsError
}

// resultText is a result as an agent reads it: its text, else its
// structured content as JSON.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, content := range res.Content {
		if t, ok := content.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		return string(b)
	}
	return strings.Join(parts, "\n")
}

func (c *atriumClient) connect(ctx context.Context) (*mcp.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != nil {
		return c.session, nil
	}
	if c.url == "" {
		return nil, fmt.Errorf("ATRIUM_URL is not set: it is Atrium's MCP endpoint (http://host:port/mcp), which Atrium sets for its sessions")
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "scriptagent", Version: "1"}, nil)
	t := &mcp.StreamableClientTransport{
		Endpoint:   c.url,
		HTTPClient: &http.Client{Transport: &bearer{token: c.token, workspace: c.workspace}},
		// Nothing Atrium pushes is for a script: no standing GET stream,
		// and a failure shows at once instead of after retries.
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	s, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to Atrium at %s: %w", c.url, err)
	}
	c.session = s
	return s, nil
}

// drop forgets s so that the next call connects again.
func (c *atriumClient) drop(s *mcp.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == s {
		c.session = nil
		_ = s.Close()
	}
}

// close ends the MCP session, so that Atrium does not keep it until it
// times out.
func (c *atriumClient) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != nil {
		_ = c.session.Close()
		c.session = nil
	}
}

// bearer sends the session's token, and its workspace as atrium mcp does
// (authn.WorkspaceHeader), with every request.
type bearer struct{ token, workspace string }

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	if b.workspace != "" {
		r.Header.Set("X-Atrium-Workspace", b.workspace)
	}
	return http.DefaultTransport.RoundTrip(r)
}
