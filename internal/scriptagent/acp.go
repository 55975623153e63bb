package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/coder/acp-go-sdk"
)

// runACP serves the Agent Client Protocol on in and out until the client
// closes the connection or a rule exits.
func runACP(ctx context.Context, a *agent, in io.Reader, out io.Writer) error {
	w := &exitWriter{w: out, done: make(chan struct{})}
	g := &acpAgent{a: a, exit: w, sessions: map[acp.SessionId]*acpSession{}}
	conn := acp.NewAgentSideConnection(g, w, in)
	g.mu.Lock()
	g.conn = conn // under mu: a request may already be served
	g.mu.Unlock()
	select {
	case <-conn.Done():
	case <-w.done:
	}
	return nil
}

// exitWriter is the agent's stdout. Once armed by a rule that exits, it
// reports the write of the prompt's response (the only message with a
// stopReason): the process ends after its client has the answer, not
// before, and not some arbitrary while later.
type exitWriter struct {
	w     io.Writer
	mu    sync.Mutex
	armed bool
	done  chan struct{}
	once  sync.Once
}

func (e *exitWriter) Write(b []byte) (int, error) {
	n, err := e.w.Write(b)
	e.mu.Lock()
	armed := e.armed
	e.mu.Unlock()
	if armed && bytes.Contains(b, []byte(`"stopReason"`)) {
		e.once.Do(func() { close(e.done) })
	}
	return n, err
}

func (e *exitWriter) arm() {
	e.mu.Lock()
	e.armed = true
	e.mu.Unlock()
}

type acpAgent struct {
	a    *agent
	exit *exitWriter

	mu       sync.Mutex
	conn     *acp.AgentSideConnection
	sessions map[acp.SessionId]*acpSession
}

// acpSession is one conversation; cancel ends its running prompt.
type acpSession struct {
	cancel context.CancelFunc
}

var (
	_ acp.Agent       = (*acpAgent)(nil)
	_ acp.AgentLoader = (*acpAgent)(nil)
)

func (g *acpAgent) Initialize(ctx context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	// No fs or terminal of the client is used: the script's work is MCP.
	return acp.InitializeResponse{
		ProtocolVersion:   acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{LoadSession: true},
		AgentInfo:         &acp.Implementation{Name: "scriptagent", Version: "1"},
	}, nil
}

func (g *acpAgent) Authenticate(ctx context.Context, p acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

// NewSession opens a conversation. The client's mcpServers are not used:
// the agent reaches Atrium at ATRIUM_URL in every mode.
func (g *acpAgent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	id := acp.SessionId(newID("sa-"))
	g.mu.Lock()
	g.sessions[id] = &acpSession{}
	g.mu.Unlock()
	return acp.NewSessionResponse{SessionId: id}, nil
}

// LoadSession resumes a conversation: a script has no history to replay,
// so any id is taken as it is.
func (g *acpAgent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	g.mu.Lock()
	if g.sessions[p.SessionId] == nil {
		g.sessions[p.SessionId] = &acpSession{}
	}
	g.mu.Unlock()
	return acp.LoadSessionResponse{}, nil
}

func (g *acpAgent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	g.mu.Lock()
	s, conn := g.sessions[p.SessionId], g.conn
	if s == nil {
		g.mu.Unlock()
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown session %s: open it with session/new or session/load first", p.SessionId)})
	}
	ctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	g.mu.Unlock()
	defer cancel()

	update := func(u acp.SessionUpdate) {
		if err := conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: p.SessionId, Update: u}); err != nil {
			fmt.Fprintf(g.a.stderr, "scriptagent: session/update: %v\n", err)
		}
	}
	var texts []string
	for _, b := range p.Prompt {
		if b.Text != nil {
			texts = append(texts, b.Text.Text)
		}
	}
	t := g.a.respond(ctx, string(p.SessionId), strings.Join(texts, "\n"),
		func(s *step) {
			update(acp.StartToolCall(acp.ToolCallId(s.id), s.tool, acp.WithStartKind(acp.ToolKindOther),
				acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartRawInput(s.args)))
		},
		func(s *step) {
			status := acp.ToolCallStatusCompleted
			if s.failed {
				status = acp.ToolCallStatusFailed
			}
			update(acp.UpdateToolCall(acp.ToolCallId(s.id), acp.WithUpdateStatus(status),
				acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(s.text))})))
		})
	if ctx.Err() != nil {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	if t.reply != "" {
		update(acp.UpdateAgentMessageText(t.reply))
	}
	if t.exit {
		g.exit.arm()
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

func (g *acpAgent) Cancel(ctx context.Context, p acp.CancelNotification) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[p.SessionId]; s != nil && s.cancel != nil {
		s.cancel()
	}
	return nil
}

func (g *acpAgent) CloseSession(ctx context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.sessions[p.SessionId]; s != nil && s.cancel != nil {
		s.cancel()
	}
	delete(g.sessions, p.SessionId)
	return acp.CloseSessionResponse{}, nil
}

func (g *acpAgent) SetSessionMode(ctx context.Context, p acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, nil
}

// What scriptagent does not advertise, it does not serve.

func (g *acpAgent) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (g *acpAgent) ResumeSession(ctx context.Context, p acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (g *acpAgent) SetSessionConfigOption(ctx context.Context, p acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}
