package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is MCP over a client's stdin and stdout that answers every request
// it has read before it ends. The SDK ends a session as soon as its input
// does, dropping the calls still running: `atrium mcp < requests.jsonl`, or
// a client that writes its last call and closes stdin, would get no answers,
// and the calls might not run. Here the end of input waits until each
// request read has been answered (or cancelled), or drain has passed.
func Stdio(r io.ReadCloser, w io.WriteCloser, drain time.Duration) mcp.Transport {
	return &drainTransport{inner: &mcp.IOTransport{Reader: r, Writer: w}, drain: drain}
}

type drainTransport struct {
	inner mcp.Transport
	drain time.Duration
}

func (t *drainTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, drain: t.drain, pending: map[jsonrpc.ID]bool{}, idle: make(chan struct{}), closed: make(chan struct{})}, nil
}

// drainConn counts the requests read and not yet answered.
type drainConn struct {
	mcp.Connection
	drain time.Duration

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	idle    chan struct{} // closed while nothing is pending, once input has ended
	ended   bool

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok {
			c.track(req)
		}
		return msg, nil
	}
	if !errors.Is(err, io.EOF) {
		return nil, err
	}
	c.mu.Lock()
	c.ended = true
	c.signalIdle()
	c.mu.Unlock()
	timer := time.NewTimer(c.drain)
	defer timer.Stop()
	select {
	case <-c.idle:
	case <-timer.C:
	case <-c.closed:
	case <-ctx.Done():
	}
	return nil, err
}

func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.done(resp.ID)
	}
	return err
}

func (c *drainConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Connection.Close()
}

// track notes a call read, or forgets one the client cancelled: a cancelled
// call gets no answer.
func (c *drainConn) track(req *jsonrpc.Request) {
	if req.IsCall() {
		c.mu.Lock()
		c.pending[req.ID] = true
		c.mu.Unlock()
		return
	}
	if req.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
		c.done(id)
	}
}

func (c *drainConn) done(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.signalIdle()
	c.mu.Unlock()
}

// signalIdle closes idle once input has ended and nothing is pending. c.mu is held.
func (c *drainConn) signalIdle() {
	if c.ended && len(c.pending) == 0 {
		select {
		case <-c.idle:
		default:
			close(c.idle)
		}
	}
}
