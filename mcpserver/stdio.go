package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is MCP over a client's stdin and stdout, one message per line, that
// answers a bad line with a JSON-RPC error and goes on, and answers every
// request it has read before its input ends.
//
// The SDK's own stdio transport ends the session on the first line it cannot
// decode, without an answer; here lines are framed and checked by Atrium
// (parseMessage) and only well-formed messages reach the SDK. The SDK also
// ends a session as soon as its input does, dropping the calls still running:
// `atrium mcp < requests.jsonl`, or a client that writes its last call and
// closes stdin, would get no answers, and the calls might not run. Here the
// end of input waits until each request read has been answered (or
// cancelled), or drain has passed.
func Stdio(r io.ReadCloser, w io.WriteCloser, drain time.Duration) mcp.Transport {
	return &drainTransport{inner: &lineTransport{r: r, w: w, max: maxMessage}, drain: drain}
}

// lineTransport is newline-delimited JSON-RPC over r and w.
type lineTransport struct {
	r   io.ReadCloser
	w   io.WriteCloser
	max int // bytes in one line
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{r: t.r, w: t.w, incoming: make(chan jsonrpc.Message), closed: make(chan struct{})}
	go c.readLines(t.max)
	return c, nil
}

// lineConn reads stdin in its own goroutine, so that Close unblocks a Read
// waiting on a stdin that never closes, as the SDK's transport does.
type lineConn struct {
	r io.ReadCloser
	w io.WriteCloser

	writeMu sync.Mutex

	incoming chan jsonrpc.Message // closed when input ends; readErr says why
	readErr  error

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg, ok := <-c.incoming:
		if !ok {
			return nil, c.readErr
		}
		return msg, nil
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if data, ok := encodeResult(msg); ok {
		return c.writeLine(data)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	return c.writeLine(append(data, '\n'))
}

// encodeResult writes a successful response's envelope around its result as
// the SDK encoded it, newline included. EncodeMessage would go over the whole
// result again: encoding/json checks and compacts every raw value it is
// given, and for read_page that is the page twice (its text and its
// structured content), a pass a client waits for on every call.
func encodeResult(msg jsonrpc.Message) ([]byte, bool) {
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.Error != nil || len(r.Result) == 0 || !r.ID.IsValid() {
		return nil, false
	}
	// As the SDK encodes it: HTML characters in a string id stay as they are.
	var idBuf bytes.Buffer
	enc := json.NewEncoder(&idBuf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.ID.Raw()); err != nil {
		return nil, false
	}
	id := bytes.TrimSuffix(idBuf.Bytes(), []byte("\n"))
	b := make([]byte, 0, len(r.Result)+len(id)+len(`{"jsonrpc":"2.0","id":,"result":}`)+1)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, r.Result...)
	return append(b, '}', '\n'), true
}

// writeLine writes one message, its newline included.
func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(data)
	return err
}

func (c *lineConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.closed)
		err = errors.Join(c.r.Close(), c.w.Close())
	})
	return err
}

// readLines frames input into lines of at most max bytes, answers the bad
// ones and hands the rest on, until input ends or the connection closes.
func (c *lineConn) readLines(max int) {
	defer close(c.incoming)
	br := bufio.NewReaderSize(c.r, 64<<10)
	var line []byte
	for {
		var tooLong bool
		var readErr, err error
		line, tooLong, readErr = readLine(br, max, line[:0])
		switch {
		case tooLong:
			err = c.answer(reject(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: the message is longer than %d bytes", max))
		case len(bytes.TrimSpace(line)) > 0:
			err = c.handle(line)
		}
		if err == nil {
			err = readErr
		}
		if err != nil {
			c.readErr = err
			return
		}
	}
}

// readLine appends the next line of br to buf, without its newline. A line
// longer than max is read to its end but not kept: tooLong.
func readLine(br *bufio.Reader, max int, buf []byte) (line []byte, tooLong bool, err error) {
	for {
		var chunk []byte
		chunk, err = br.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if !tooLong && len(buf)+len(chunk) > max {
			tooLong, buf = true, buf[:0]
		}
		if !tooLong {
			buf = append(buf, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, tooLong, err
		}
	}
}

// handle answers a bad line, or hands its message on.
func (c *lineConn) handle(line []byte) error {
	if isBatch(line) && checkJSON(line) == nil {
		return c.writeJSON(parseBatch(line))
	}
	msg, r := parseMessage(line)
	if r != nil {
		if r.quiet {
			return nil
		}
		return c.answer(r)
	}
	select {
	case c.incoming <- msg:
		return nil
	case <-c.closed:
		return io.EOF
	}
}

func (c *lineConn) answer(r *rejection) error { return c.writeJSON(r.response()) }

func (c *lineConn) writeJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.writeLine(append(data, '\n'))
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
	return &drainConn{Connection: c, drain: t.drain, pending: map[jsonrpc.ID]bool{}, cancelled: map[jsonrpc.ID]bool{}, idle: make(chan struct{}), closed: make(chan struct{})}, nil
}

// maxCancelled bounds the cancelled calls a session remembers: the SDK
// usually answers none of them, so nothing else forgets them.
const maxCancelled = 1024

// drainConn counts the requests read and not yet answered.
type drainConn struct {
	mcp.Connection
	drain time.Duration

	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	// cancelled are the calls the client cancelled while they ran: they get
	// no answer, even one the SDK writes because the session ended before
	// it had read the cancellation (the call then fails as cancelled).
	cancelled map[jsonrpc.ID]bool
	idle      chan struct{} // closed while nothing is pending, once input has ended
	ended     bool

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
	resp, ok := msg.(*jsonrpc.Response)
	if ok {
		c.mu.Lock()
		cancelled := c.cancelled[resp.ID]
		delete(c.cancelled, resp.ID)
		c.mu.Unlock()
		if cancelled {
			return nil
		}
	}
	err := c.Connection.Write(ctx, msg)
	if ok {
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
		c.mu.Lock()
		if c.pending[id] {
			if len(c.cancelled) >= maxCancelled {
				clear(c.cancelled) // calls the SDK never answered
			}
			c.cancelled[id] = true
		}
		c.mu.Unlock()
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
