package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// upstreamProtocol is the version Atrium asks upstreams for: the newest with
// the initialize handshake, which every SDK in the wild speaks. Asking for
// 2026-07-28 first would cost each legacy server a refused server/discover
// on every (re)start, and that version has no ping for health probes.
const upstreamProtocol = "2025-11-25"

// connect starts or reaches the server and opens an MCP session with it. For
// a stdio server it returns the process too; for a URL it returns the
// transport that answered (http, or sse when Streamable HTTP was refused).
func (u *upstream) connect(ctx context.Context) (*mcp.ClientSession, *process, string, error) {
	sp := u.spec
	client := u.client()
	opts := &mcp.ClientSessionOptions{ProtocolVersion: upstreamProtocol}
	if sp.Transport == "stdio" {
		p, err := startProcess(sp, sp.environ(u.g.opts.Environ()), u.stderr)
		if err != nil {
			return nil, nil, "", fmt.Errorf("start %s: %w", sp.Command, err)
		}
		u.mu.Lock()
		u.pid = p.cmd.Process.Pid
		u.mu.Unlock()
		sess, err := client.Connect(ctx, &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, opts)
		if err != nil {
			p.stop(u.g.opts.StopGrace)
			select {
			case <-p.exited:
				return nil, nil, "", fmt.Errorf("it %s before completing the MCP handshake", describeExit(p.err))
			default:
			}
			return nil, nil, "", fmt.Errorf("MCP handshake: %w", err)
		}
		return sess, p, "stdio", nil
	}
	hc := &http.Client{Transport: headerTransport{headers: sp.Headers, next: upstreamHTTP}}
	if sp.Transport != "sse" {
		st := &mcp.StreamableClientTransport{Endpoint: sp.URL, HTTPClient: hc}
		if u.g.opts.SignIn != nil && !hasAuthorization(sp.Headers) {
			oc, err := u.g.opts.SignIn(sp, nil)
			if err != nil {
				return nil, nil, "", err
			}
			defer oc.Close()
			st.OAuthHandler = oc
		}
		sess, err := client.Connect(ctx, u.lasting(st), opts)
		if err == nil || ctx.Err() != nil {
			return sess, nil, "http", err
		}
		// The 2025 spec's fallback for servers of the 2024-11-05 era.
		sess, sseErr := client.Connect(ctx, u.lasting(&mcp.SSEClientTransport{Endpoint: sp.URL, HTTPClient: hc}), opts)
		if sseErr == nil {
			return sess, nil, "sse", nil
		}
		return nil, nil, "", fmt.Errorf("streamable HTTP: %v; legacy SSE: %v", err, sseErr)
	}
	sess, err := client.Connect(ctx, u.lasting(&mcp.SSEClientTransport{Endpoint: sp.URL, HTTPClient: hc}), opts)
	return sess, nil, "sse", err
}

// client is the MCP client of one session with the upstream: list changes
// re-list, progress goes back to whoever made the call.
func (u *upstream) client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "atrium-gateway", Version: atrium.Version}, &mcp.ClientOptions{
		Capabilities:               &mcp.ClientCapabilities{},
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { u.relistSoon() },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { u.relistSoon() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { u.relistSoon() },
		ProgressNotificationHandler: func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
			u.g.progress(ctx, r.Params)
		},
		Logger: u.g.sdkLog,
	})
}

// lasting connects t under the supervisor's context rather than the
// handshake's: the SSE transport ties its event stream to the context it is
// connected with, and the handshake's ends with its timeout.
func (u *upstream) lasting(t mcp.Transport) mcp.Transport { return lastingTransport{t, u.ctx} }

type lastingTransport struct {
	mcp.Transport
	ctx context.Context
}

// Connect still gives up when the handshake's context ends first: a server
// that never answers its GET must not hold up the supervisor.
func (t lastingTransport) Connect(hs context.Context) (mcp.Connection, error) {
	ctx, cancel := context.WithCancel(t.ctx)
	stop := context.AfterFunc(hs, cancel)
	conn, err := t.Transport.Connect(ctx)
	if !stop() || err != nil {
		cancel()
		if err == nil {
			conn.Close()
			err = hs.Err()
		}
		return nil, err
	}
	return conn, nil // ctx lives on with the connection, until the supervisor's ends
}

// hasAuthorization reports whether a server's configured headers carry its
// credentials already.
func hasAuthorization(h map[string]string) bool {
	for k := range h {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

// upstreamHTTP carries the calls to upstreams over HTTP. It lets a connection
// idle for 4 s go rather than reuse it: Node's HTTP servers (most MCP servers)
// and uvicorn close idle connections after 5 s, and a request sent on one as
// it closes fails with a reset, which the standard library does not retry for
// a POST (seen: a gateway health check's tools/list to server-everything).
var upstreamHTTP = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.IdleConnTimeout = 4 * time.Second
	return t
}()

// headerTransport adds a server's configured headers (its API key, usually)
// to every request.
type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.next.RoundTrip(r)
}

// sessionLost reports whether err says the upstream no longer knows the
// session (an HTTP 404): the client must initialise again, which the SDK
// leaves to its user.
func sessionLost(err error) bool { return errors.Is(err, mcp.ErrSessionMissing) }
