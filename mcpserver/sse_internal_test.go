package mcpserver

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// oneMessage is an SDK connection that yields one message and then nothing
// until it is closed.
type oneMessage struct {
	mcp.Connection
	msgs   chan jsonrpc.Message
	closed chan struct{}
}

func (c *oneMessage) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.msgs:
		return m, nil
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *oneMessage) Close() error { close(c.closed); return nil }

// A closed SSE connection's Read returns, even when its pump ended holding a
// message nobody read (seen: a server whose shutdown waited forever on an
// SSE session's Close).
func TestClosedSSEConnStopsReading(t *testing.T) {
	inner := &oneMessage{msgs: make(chan jsonrpc.Message, 1), closed: make(chan struct{})}
	req, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	inner.msgs <- req
	c := &sseConn{Connection: inner, extra: make(chan jsonrpc.Message), in: make(chan jsonrpc.Message), ended: make(chan struct{}), stop: make(chan struct{})}
	go c.pump()
	// The pump holds the message, waiting for a reader; none comes before
	// the close.
	time.Sleep(20 * time.Millisecond)
	c.Close()
	time.Sleep(20 * time.Millisecond) // the pump sees stop and ends
	read := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		read <- err
	}()
	select {
	case err := <-read:
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("Read after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read after Close did not return")
	}
}
