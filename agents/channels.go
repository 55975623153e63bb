package agents

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// How a message reaches an agent's running session: an MCP notification
// starts no turn in any client, so each CLI is woken through the channel it
// has. The structured ones come first; typing into the terminal is the
// fallback, and only when the agent is idle.
const (
	// WakeStreamJSON: Claude Code's headless session (-p --input-format
	// stream-json): each message is a user turn on its stdin.
	WakeStreamJSON = "stream-json"
	// WakeACP: the Agent Client Protocol over stdio; each message is a
	// session/prompt.
	WakeACP = "acp"
	// WakePTY: typed into the terminal, pasted then Enter, once its output
	// has been quiet a while (the fallback).
	WakePTY = "pty"
	// WakeNone: a running session is never written into (a shell would run
	// the message as a command); the delivery waits for it to end.
	WakeNone = "none"
)

// WakeModes lists the channels, for validation and help.
var WakeModes = []string{WakeStreamJSON, WakeACP, WakePTY, WakeNone}

// Session statuses: what the agent is doing, from the best source the
// session has (a structured channel's events, then its output, then the
// process). A terminal alone cannot tell waiting from thinking: it says
// unknown rather than a stale "busy".
const (
	StatusPending       = "pending"
	StatusActive        = "active"
	StatusAwaitingInput = "awaiting_input"
	StatusComplete      = "complete"
	StatusError         = "error"
	StatusStale         = "stale"
	StatusUnknown       = "unknown"
)

// Timings of status and typing.
const (
	// staleAfter: no activity this long and a session is stale.
	staleAfter = 30 * time.Minute
	// activeQuiet: a terminal that printed within this is active.
	activeQuiet = 3 * time.Second
	// idleQuiet: a terminal quiet this long may be typed into.
	idleQuiet = 1500 * time.Millisecond
)

// A channel carries messages into a running session.
type channel interface {
	// send gives the agent text as a new turn.
	send(text string) error
	// name says how, for the delivery's history.
	name() string
	// ready reports whether a message may go in now (a terminal: only when
	// idle), and if not, why.
	ready() (bool, string)
}

// setStatus records what the session is doing, and the CLI's own session
// id once it says it; a change is handed to onStatus.
func (ru *run) setStatus(status, cliSession string) {
	ru.mu.Lock()
	changed := status != ru.status || cliSession != "" && cliSession != ru.cliSession
	ru.status = status
	if cliSession != "" {
		ru.cliSession = cliSession
	}
	cb, cli := ru.onStatus, ru.cliSession
	ru.mu.Unlock()
	if changed && cb != nil {
		cb(status, cli)
	}
}

// liveStatus is the status of a running session now.
func (ru *run) liveStatus() string {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	quiet := time.Since(ru.lastOutput)
	switch {
	case quiet > staleAfter && ru.status != StatusAwaitingInput:
		return StatusStale
	case ru.tty == nil:
		return ru.status
	case quiet < activeQuiet:
		return StatusActive
	case ru.status == StatusPending:
		return StatusPending
	}
	return StatusUnknown
}

// say shows a line of Atrium's own in the session's terminal.
func (ru *run) say(format string, args ...any) {
	ru.output([]byte("\r\n\x1b[2m[atrium] " + strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "\r\n") + "\x1b[0m\r\n"))
}

// typeLine takes what a viewer types into a structured session: echoed,
// edited with backspace, and sent as a turn at Enter.
func (ru *run) typeLine(p []byte) (int, error) {
	var send []string
	var echo []byte
	ru.mu.Lock()
	for _, c := range p {
		switch {
		case c == '\r' || c == '\n':
			if len(ru.line) > 0 {
				send = append(send, string(ru.line))
				ru.line = ru.line[:0]
			}
			echo = append(echo, '\r', '\n')
		case c == 0x7f || c == 0x08:
			if n := len(ru.line); n > 0 {
				ru.line = ru.line[:n-1]
				echo = append(echo, '\b', ' ', '\b')
			}
		case c >= 0x20:
			ru.line = append(ru.line, c)
			echo = append(echo, c)
		}
	}
	ru.mu.Unlock()
	if len(echo) > 0 {
		ru.output(echo)
	}
	for _, text := range send {
		if err := ru.ch.send(text); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// streamJSON is Claude Code's headless session: stream-json on stdin and
// stdout.
type streamJSON struct {
	ru *run
	mu sync.Mutex
	in io.WriteCloser
}

func (c *streamJSON) name() string          { return WakeStreamJSON }
func (c *streamJSON) ready() (bool, string) { return true, "" }

func (c *streamJSON) send(text string) error {
	b, err := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []map[string]string{{"type": "text", "text": text}}}})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("the session's input is closed: %w", err)
	}
	c.ru.setStatus(StatusActive, "")
	return nil
}

// readStreamJSON shows a stream-json session's output as a person reads
// it, and takes its status from it: init and each message mean active, a
// result means it awaits input.
func readStreamJSON(ru *run, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var m struct {
			Type      string `json:"type"`
			Subtype   string `json:"subtype"`
			SessionID string `json:"session_id"`
			IsError   bool   `json:"is_error"`
			Result    string `json:"result"`
			Message   struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &m) != nil || m.Type == "" {
			ru.output(append(append([]byte(nil), line...), '\r', '\n'))
			continue
		}
		switch m.Type {
		case "system":
			if m.Subtype == "init" {
				ru.say("session %s started", m.SessionID)
			}
			ru.setStatus(StatusActive, m.SessionID)
		case "assistant", "user":
			ru.output([]byte(renderContent(m.Type, m.Message.Content)))
			ru.setStatus(StatusActive, m.SessionID)
		case "result":
			mark := "✓"
			if m.IsError {
				mark = "✗"
			}
			ru.output([]byte("\r\n" + mark + " " + crlf(firstLine(m.Result, 300)) + "\r\n"))
			ru.setStatus(StatusAwaitingInput, m.SessionID)
		}
	}
}

// renderContent shows a message's content blocks: text as it is, a tool
// call and its result on a line each.
func renderContent(role string, raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		if role == "user" {
			return "\r\n\x1b[1m> " + crlf(text) + "\x1b[0m\r\n"
		}
		return crlf(text) + "\r\n"
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Name    string          `json:"name"`
		Input   json.RawMessage `json:"input"`
		Content json.RawMessage `json:"content"`
		IsError bool            `json:"is_error"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		switch bl.Type {
		case "text":
			if role == "user" {
				b.WriteString("\r\n\x1b[1m> " + crlf(firstLine(bl.Text, 500)) + "\x1b[0m\r\n")
			} else {
				b.WriteString(crlf(bl.Text) + "\r\n")
			}
		case "tool_use":
			b.WriteString("● " + bl.Name + " " + firstLine(string(bl.Input), 200) + "\r\n")
		case "tool_result":
			var s string
			if json.Unmarshal(bl.Content, &s) != nil {
				s = string(bl.Content)
			}
			mark := "⎿"
			if bl.IsError {
				mark = "⎿ ✗"
			}
			b.WriteString("  " + mark + " " + firstLine(s, 200) + "\r\n")
		}
	}
	return b.String()
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// firstLine is s's first line, at most n bytes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// ptyChannel types into the terminal: the text pasted (bracketed, so that a
// newline in it does not submit half of it), then Enter. Only when the
// terminal has been quiet, and only when the preset allows it at all.
type ptyChannel struct {
	ru    *run
	typed bool
	mu    sync.Mutex
}

func (c *ptyChannel) name() string { return WakePTY + " (typed into the terminal: the fallback)" }

func (c *ptyChannel) ready() (bool, string) {
	if !c.typed {
		return false, "this agent's preset takes no messages into a running session: it waits for the session to end"
	}
	c.ru.mu.Lock()
	quiet := time.Since(c.ru.lastOutput)
	c.ru.mu.Unlock()
	if quiet < idleQuiet {
		return false, "the agent is busy (its terminal printed " + quiet.Round(time.Millisecond).String() + " ago): it is typed in once idle"
	}
	return true, ""
}

func (c *ptyChannel) send(text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.ru.tty.Write([]byte("\x1b[200~" + text + "\x1b[201~")); err != nil {
		return err
	}
	// Enter apart from the paste: a TUI that takes the paste as one event
	// would otherwise take the Enter as part of it.
	time.Sleep(50 * time.Millisecond)
	_, err := c.ru.tty.Write([]byte("\r"))
	return err
}

// acpChannel is an Agent Client Protocol agent: Atrium is its client, the
// session one ACP session, each message one prompt, one at a time.
type acpChannel struct {
	ru     *run
	conn   *acp.ClientSideConnection
	in     io.WriteCloser
	dir    string
	queue  chan string
	ready0 chan struct{} // closed once the ACP session exists (or failed)
	mu     sync.Mutex
	sid    acp.SessionId
	err    error
	// mcp is the stdio MCP server the agent is given: atrium mcp.
	mcp acp.McpServerStdio
}

func newACP(ru *run, in io.WriteCloser, out io.Reader, dir string) *acpChannel {
	c := &acpChannel{ru: ru, in: in, dir: dir, queue: make(chan string, 1024), ready0: make(chan struct{})}
	c.conn = acp.NewClientSideConnection(acpClient{c}, in, out)
	return c
}

func (c *acpChannel) name() string { return WakeACP }

func (c *acpChannel) ready() (bool, string) {
	select {
	case <-c.ready0:
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.err != nil {
			return false, "the agent's ACP session failed: " + c.err.Error()
		}
	default:
	}
	return true, "" // queued until the session exists
}

func (c *acpChannel) send(text string) error {
	select {
	case c.queue <- text:
		return nil
	default:
		return fmt.Errorf("the agent has 1024 prompts queued")
	}
}

// serve sets the ACP session up, then prompts with each queued message in
// turn until the agent's output ends.
func (c *acpChannel) serve() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-c.conn.Done()
		cancel()
	}()
	err := c.open(ctx)
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.ready0)
	if err != nil {
		c.ru.say("the agent's ACP session could not start: %v", err)
		c.in.Close()
		<-c.conn.Done()
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case text := <-c.queue:
			c.ru.output([]byte("\r\n\x1b[1m> " + crlf(firstLine(text, 500)) + "\x1b[0m\r\n"))
			c.ru.setStatus(StatusActive, "")
			res, err := c.conn.Prompt(ctx, acp.PromptRequest{SessionId: c.sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				c.ru.say("the prompt failed: %v", err)
				c.ru.setStatus(StatusError, "")
				continue
			}
			c.ru.output([]byte("\r\n✓ " + string(res.StopReason) + "\r\n"))
			c.ru.setStatus(StatusAwaitingInput, "")
		}
	}
}

func (c *acpChannel) open(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo: &acp.Implementation{Name: "atrium", Version: "1"}}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	servers := []acp.McpServer{}
	if c.mcp.Command != "" {
		m := c.mcp
		servers = append(servers, acp.McpServer{Stdio: &m})
	}
	res, err := c.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: c.dir, McpServers: servers})
	if err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	c.sid = res.SessionId
	c.ru.say("ACP session %s started", res.SessionId)
	c.ru.setStatus(StatusAwaitingInput, string(res.SessionId))
	return nil
}

// acpClient answers the agent's requests: its updates are shown; Atrium
// grants no file system or terminal of its own (the agent has its worktree)
// and lets the agent go on where it asks permission, as an unattended
// session must (the agent's preset decides what it asks).
type acpClient struct{ c *acpChannel }

func (a acpClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	u, ru := n.Update, a.c.ru
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		ru.output([]byte(crlf(u.AgentMessageChunk.Content.Text.Text)))
	case u.ToolCall != nil:
		ru.output([]byte("\r\n● " + u.ToolCall.Title + " (" + string(u.ToolCall.Status) + ")\r\n"))
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		ru.output([]byte("  ⎿ " + string(*u.ToolCallUpdate.Status) + "\r\n"))
	}
	ru.setStatus(StatusActive, "")
	return nil
}

func (a acpClient) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	for _, o := range p.Options {
		if o.Kind == acp.PermissionOptionKindAllowOnce || o.Kind == acp.PermissionOptionKindAllowAlways {
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}, nil
		}
	}
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
}

var errNoCapability = &acp.RequestError{Code: -32601, Message: "Atrium grants no file system or terminal: use your working folder"}

func (acpClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, errNoCapability
}
func (acpClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, errNoCapability
}
func (acpClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, errNoCapability
}
func (acpClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, errNoCapability
}
func (acpClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, errNoCapability
}
func (acpClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, errNoCapability
}
func (acpClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, errNoCapability
}
