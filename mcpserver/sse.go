package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
)

// sseHandler serves the legacy HTTP+SSE transport (protocol 2024-11-05): a GET
// opens a session and its event stream, POSTs to ?sessionid=… carry the
// client's messages. Unlike the SDK's SSEHandler it remembers who opened each
// session and refuses posts from anyone else, so that knowing a session ID is
// not enough to act in it.
type sseHandler struct {
	server  func(*http.Request) *mcp.Server
	maxBody int64
	log     *slog.Logger

	mu       sync.Mutex
	sessions map[string]*sseSession
}

type sseSession struct {
	transport *mcp.SSEServerTransport
	owner     string
	session   *mcp.ServerSession
	// extra carries the requests the SDK's transport would refuse before
	// the session saw them: it checks posts against the standard methods
	// only, so an extension's methods (skills/list) registered on the server
	// would get a plain-text 400 and the client no answer.
	extra  chan jsonrpc.Message
	closed chan struct{}
}

func newSSEHandler(server func(*http.Request) *mcp.Server, maxBody int64, log *slog.Logger) *sseHandler {
	return &sseHandler{server: server, maxBody: maxBody, log: log, sessions: map[string]*sseSession{}}
}

func (h *sseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.open(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

func (h *sseHandler) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return
	}
	id := r.URL.Query().Get("sessionid")
	if id == "" {
		http.Error(w, "sessionid must be provided", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	sess := h.sessions[id]
	h.mu.Unlock()
	if sess == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if a := atrium.ActorFromContext(r.Context()); a == nil || ownerKey(a) != sess.owner {
		authn.WriteError(w, r, h.log, atrium.Errorf(atrium.EPermission, "this session belongs to another caller"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		http.Error(w, "failed to read the request body", http.StatusRequestEntityTooLarge)
		return
	}
	if msg, rej := parseMessage(body); rej == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && methodParams[req.Method] == nil {
			select {
			case sess.extra <- msg:
				w.WriteHeader(http.StatusAccepted)
			case <-sess.closed:
				http.Error(w, "session closed", http.StatusBadRequest)
			case <-r.Context().Done():
			}
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	sess.transport.ServeHTTP(w, r)
}

// sseTransport is the SDK's SSE transport with a second way in: the requests
// of sseSession.extra.
type sseTransport struct {
	*mcp.SSEServerTransport
	sess *sseSession
}

func (t sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.SSEServerTransport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	conn := &sseConn{Connection: c, extra: t.sess.extra, in: make(chan jsonrpc.Message), ended: make(chan struct{}), stop: make(chan struct{})}
	go conn.pump()
	return conn, nil
}

// sseConn reads the SDK connection's messages and the extra ones.
type sseConn struct {
	mcp.Connection
	extra chan jsonrpc.Message
	in    chan jsonrpc.Message
	ended chan struct{} // closed when the SDK connection's input ends: err says why
	err   error
	stop  chan struct{} // closed by Close
	once  sync.Once
}

func (c *sseConn) pump() {
	for {
		msg, err := c.Connection.Read(context.Background())
		if err != nil {
			c.err = err
			close(c.ended)
			return
		}
		select {
		case c.in <- msg:
		case <-c.stop:
			return
		}
	}
}

func (c *sseConn) Close() error {
	c.once.Do(func() { close(c.stop) })
	return c.Connection.Close()
}

func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.ended:
		return nil, c.err
	case msg := <-c.extra:
		return msg, nil
	case <-c.stop:
		// Closed. pump may have ended without closing ended: a message in
		// hand when stop came, with nobody reading. Without this the SDK's
		// reader waited here forever, and with it the session's Close and
		// the server's shutdown.
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *sseHandler) open(w http.ResponseWriter, r *http.Request) {
	a := atrium.ActorFromContext(r.Context())
	server := h.server(r)
	if a == nil || server == nil {
		http.Error(w, "no server available", http.StatusBadRequest)
		return
	}
	id := rand.Text()
	endpoint, err := r.URL.Parse("?sessionid=" + id)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	sess := &sseSession{
		transport: &mcp.SSEServerTransport{Endpoint: endpoint.RequestURI(), Response: w, MaxRequestBodyBytes: h.maxBody},
		owner:     ownerKey(a),
		extra:     make(chan jsonrpc.Message),
		closed:    make(chan struct{}),
	}
	defer close(sess.closed)
	h.mu.Lock()
	h.sessions[id] = sess
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
	}()
	ss, err := server.Connect(r.Context(), sseTransport{sess.transport, sess}, nil)
	if err != nil {
		h.log.Error("open SSE session", "err", err)
		return
	}
	h.mu.Lock()
	sess.session = ss
	h.mu.Unlock()
	defer ss.Close()
	ended := make(chan struct{})
	go func() {
		ss.Wait()
		close(ended)
	}()
	select {
	case <-r.Context().Done():
	case <-ended:
	}
}

// closeAll ends every open SSE session, which ends its GET stream.
func (h *sseHandler) closeAll() {
	h.mu.Lock()
	var open []*mcp.ServerSession
	for _, s := range h.sessions {
		if s.session != nil {
			open = append(open, s.session)
		}
	}
	h.mu.Unlock()
	for _, ss := range open {
		_ = ss.Close()
	}
}
