package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/acp-go-sdk"
	"github.com/creack/pty"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// binary is scriptagent, built once for every test: the tests drive the real
// program, over its real stdio or terminal, as Atrium does.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "scriptagent-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "scriptagent")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build scriptagent: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const testToken = "tok-dede"

// fakeAtrium is an MCP server over Streamable HTTP on 127.0.0.1 with
// Atrium's tool names: each records its arguments as they arrived.
type fakeAtrium struct {
	url string

	mu           sync.Mutex
	calls        []recorded
	unauthorized int
}

type recorded struct {
	tool string
	args map[string]json.RawMessage // raw: a number must arrive as a number
}

func newFakeAtrium(t *testing.T) *fakeAtrium {
	f := &fakeAtrium{}
	server := mcp.NewServer(&mcp.Implementation{Name: "fake-atrium", Version: "1"}, nil)
	object := &jsonschema.Schema{Type: "object"}
	for _, name := range []string{"task_get_context", "write_page", "task_ask_question", "task_signal_complete"} {
		server.AddTool(&mcp.Tool{Name: name, InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.record(name, req.Params.Arguments)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ok: " + string(req.Params.Arguments)}}}, nil
		})
	}
	// A tool that answers with an error result, as Atrium does for a closed task.
	server.AddTool(&mcp.Tool{Name: "task_broken", InputSchema: object}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.record("task_broken", req.Params.Arguments)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "task is closed"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			f.mu.Lock()
			f.unauthorized++
			f.mu.Unlock()
			http.Error(w, "no or wrong bearer token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	f.url = ts.URL + "/mcp"
	return f
}

func (f *fakeAtrium) record(tool string, raw json.RawMessage) {
	var args map[string]json.RawMessage
	_ = json.Unmarshal(raw, &args)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, recorded{tool, args})
}

// tools are the tools called so far, in order.
func (f *fakeAtrium) tools() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.tool)
	}
	return out
}

func (f *fakeAtrium) call(t *testing.T, i int) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.calls) {
		t.Fatalf("call %d: only %d calls made", i, len(f.calls))
	}
	return f.calls[i]
}

// agentCmd is scriptagent with script, as Atrium starts it for @dede; extra
// adds to its environment. It returns the SCRIPTAGENT_LOG path too.
func agentCmd(t *testing.T, f *fakeAtrium, script string, extra []string, args ...string) (*exec.Cmd, string) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "script.json")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "prompts.log")
	cmd := exec.Command(binary, args...)
	cmd.Dir = ws
	cmd.Env = append([]string{
		"ATRIUM_URL=" + f.url, "ATRIUM_TOKEN=" + testToken, "ATRIUM_AGENT=dede", "ATRIUM_SESSION=sess-1",
		"AGENT_WORKSPACE=" + ws, "SCRIPTAGENT_SCRIPT=" + path, "SCRIPTAGENT_LOG=" + log,
	}, extra...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("scriptagent's stderr:\n%s", stderr.String())
		}
	})
	return cmd, log
}

// waitExit waits for cmd to end by itself and checks that it ended well.
func waitExit(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("scriptagent ended with %v, want exit 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("scriptagent did not exit")
	}
}

type logLine struct{ Agent, Session, CLISession, Mode, Prompt, At string }

func readLog(t *testing.T, path string) []logLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []logLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]string
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, logLine{m["agent"], m["session"], m["cli_session"], m["mode"], m["prompt"], m["at"]})
	}
	return out
}

// planScript is the brief's flow: plan, ask @duc, and finish on the answer.
const planScript = `{"rules":[
  {"match":"Why you were started", "unless":"answered", "calls":[
      {"tool":"task_get_context","args":{"issue_number":"{task}"}},
      {"tool":"write_page","args":{"path":"plans/{task}.md","content":"# Plan by {agent}\n..."}},
      {"tool":"task_ask_question","args":{"issue_number":"{task}","target":"duc","question":"Which database?"}}],
   "reply":"I asked @duc.", "exit": false},
  {"match":"PostgreSQL", "calls":[{"tool":"task_signal_complete","args":{"issue_number":"{task}","summary":"Plan done."}}], "reply":"done", "exit": true}
]}`

// streamJSON drives a stream-json agent: send writes a line, next reads one.
type streamJSON struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan map[string]any
}

func startStreamJSON(t *testing.T, cmd *exec.Cmd) *streamJSON {
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &streamJSON{t: t, in: in, lines: make(chan map[string]any, 100)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("stdout line is not JSON (stream-json allows nothing else): %q", sc.Text())
				continue
			}
			s.lines <- m
		}
	}()
	return s
}

func (s *streamJSON) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

func (s *streamJSON) next() map[string]any {
	s.t.Helper()
	select {
	case m, ok := <-s.lines:
		if !ok {
			s.t.Fatal("stdout ended")
		}
		return m
	case <-time.After(10 * time.Second):
		s.t.Fatal("no line from scriptagent")
	}
	return nil
}

// turn reads the lines of one turn, through its result line.
func (s *streamJSON) turn() []map[string]any {
	s.t.Helper()
	var out []map[string]any
	for {
		m := s.next()
		out = append(out, m)
		if m["type"] == "result" {
			return out
		}
	}
}

// block is the first content block of a stream-json message line.
func block(m map[string]any) map[string]any {
	content, _ := m["message"].(map[string]any)["content"].([]any)
	if len(content) == 0 {
		return nil
	}
	b, _ := content[0].(map[string]any)
	return b
}

func TestStreamJSON(t *testing.T) {
	f := newFakeAtrium(t)
	cmd, log := agentCmd(t, f, planScript, []string{"ATRIUM_TASK=42"},
		"-p", "--verbose", "--input-format", "stream-json", "--output-format", "stream-json",
		"--mcp-config", "/nonexistent/mcp.json", "--dangerously-skip-permissions", "--resume", "sa-fixed", "--mode", "stream-json")
	s := startStreamJSON(t, cmd)

	init := s.next()
	if init["type"] != "system" || init["subtype"] != "init" || init["session_id"] != "sa-fixed" || init["model"] != "scripted" {
		t.Fatalf("first line %v, want the system init of session sa-fixed", init)
	}
	if cwd, _ := init["cwd"].(string); filepath.Base(cwd) != "ws" {
		t.Errorf("init cwd %q, want the workspace", cwd)
	}

	s.send(`{"type":"user","message":{"role":"user","content":"You are @dede.\nWhy you were started: you were assigned.\n"}}`)
	lines := s.turn()
	// Three tool_use / tool_result pairs, the reply, the result.
	if len(lines) != 8 {
		t.Fatalf("turn 1: %d lines, want 8: %v", len(lines), lines)
	}
	for i, tool := range []string{"task_get_context", "write_page", "task_ask_question"} {
		use, result := lines[2*i], lines[2*i+1]
		b := block(use)
		if use["type"] != "assistant" || b["type"] != "tool_use" || b["name"] != tool || use["session_id"] != "sa-fixed" {
			t.Errorf("line %d: %v, want the assistant's tool_use of %s", 2*i, use, tool)
		}
		r := block(result)
		if result["type"] != "user" || r["type"] != "tool_result" || r["tool_use_id"] != b["id"] || r["is_error"] != false {
			t.Errorf("line %d: %v, want the tool_result of %v", 2*i+1, result, b["id"])
		}
		if c, _ := r["content"].(string); !strings.HasPrefix(c, tool+" ok") {
			t.Errorf("tool_result content %q, want the tool's text", c)
		}
	}
	if in := block(lines[0])["input"].(map[string]any); in["issue_number"] != float64(42) {
		t.Errorf("tool_use input %v, want issue_number 42", in)
	}
	if b := block(lines[6]); lines[6]["type"] != "assistant" || b["type"] != "text" || b["text"] != "I asked @duc." {
		t.Errorf("reply line %v", lines[6])
	}
	res := lines[7]
	if res["subtype"] != "success" || res["is_error"] != false || res["result"] != "I asked @duc." || res["session_id"] != "sa-fixed" || res["num_turns"] != float64(4) {
		t.Errorf("result line %v", res)
	}

	// Not a user turn: ignored.
	s.send(`{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}`)
	// The answer arrives as blocks; the exit rule ends the process with stdin open.
	s.send(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"@duc answered:"},{"type":"text","text":"PostgreSQL"}]}}`)
	lines = s.turn()
	if len(lines) != 4 || block(lines[0])["name"] != "task_signal_complete" || lines[3]["result"] != "done" || lines[3]["num_turns"] != float64(2) {
		t.Errorf("turn 2: %v", lines)
	}
	waitExit(t, cmd)

	if got, want := strings.Join(f.tools(), ","), "task_get_context,write_page,task_ask_question,task_signal_complete"; got != want {
		t.Errorf("calls %s, want %s", got, want)
	}
	if got := string(f.call(t, 0).args["issue_number"]); got != "42" {
		t.Errorf("task_get_context issue_number %s, want the number 42", got)
	}
	wp := f.call(t, 1).args
	if string(wp["path"]) != `"plans/42.md"` || string(wp["content"]) != `"# Plan by dede\n..."` {
		t.Errorf("write_page args %s %s", wp["path"], wp["content"])
	}
	if got := string(f.call(t, 2).args["target"]); got != `"duc"` {
		t.Errorf("task_ask_question target %s", got)
	}

	entries := readLog(t, log)
	if len(entries) != 2 {
		t.Fatalf("%d log lines, want 2 (one per prompt): %v", len(entries), entries)
	}
	for _, e := range entries {
		if e.Agent != "dede" || e.Session != "sess-1" || e.CLISession != "sa-fixed" || e.Mode != "stream-json" || e.At == "" {
			t.Errorf("log line %+v", e)
		}
	}
	if !strings.Contains(entries[0].Prompt, "Why you were started") || entries[1].Prompt != "@duc answered:\nPostgreSQL" {
		t.Errorf("logged prompts %q, %q", entries[0].Prompt, entries[1].Prompt)
	}
}

// A call that fails — an error result, or a tool Atrium does not have — is
// reported, and the rule goes on; a prompt no rule takes gets "nothing to do".
func TestFailuresAndNoRule(t *testing.T) {
	f := newFakeAtrium(t)
	script := `{"rules":[
	  {"match":"go", "unless":"stop", "calls":[
	    {"tool":"task_broken","args":{"issue_number":"{task}"}},
	    {"tool":"no_such_tool","args":{}},
	    {"tool":"task_get_context","args":{"issue_number":"{task}","note":"for {agent} on #{task}"}}],
	   "reply":"went on, {agent}"}]}`
	cmd, log := agentCmd(t, f, script, nil, "--mode=stream-json")
	s := startStreamJSON(t, cmd)
	if init := s.next(); init["subtype"] != "init" || !strings.HasPrefix(init["session_id"].(string), "sa-") {
		t.Fatalf("init %v, want a new sa- session", init)
	}

	s.send(`{"type":"user","message":{"role":"user","content":"go on with Task #7"}}`)
	lines := s.turn()
	if len(lines) != 8 {
		t.Fatalf("%d lines, want 8: %v", len(lines), lines)
	}
	for i, wantErr := range []bool{true, true, false} {
		if r := block(lines[2*i+1]); r["is_error"] != wantErr {
			t.Errorf("call %d: tool_result %v, want is_error %v", i, r, wantErr)
		}
	}
	if c := block(lines[1])["content"]; c != "task is closed" {
		t.Errorf("error result's content %q", c)
	}
	if c, _ := block(lines[3])["content"].(string); !strings.Contains(c, "no_such_tool") {
		t.Errorf("unknown tool's content %q, want the error", c)
	}
	if lines[7]["result"] != "went on, dede" {
		t.Errorf("result %v", lines[7])
	}

	for _, prompt := range []string{"hello", "go, but stop"} {
		s.send(`{"type":"user","message":{"role":"user","content":"` + prompt + `"}}`)
		lines = s.turn()
		if len(lines) != 2 || block(lines[0])["text"] != "nothing to do" || lines[1]["result"] != "nothing to do" {
			t.Errorf("%q: %v, want \"nothing to do\"", prompt, lines)
		}
	}
	s.in.Close() // end of input: the normal end
	waitExit(t, cmd)

	if got := strings.Join(f.tools(), ","); got != "task_broken,task_get_context" {
		t.Errorf("calls %s", got)
	}
	gc := f.call(t, 1).args
	if string(gc["issue_number"]) != "7" || string(gc["note"]) != `"for dede on #7"` {
		t.Errorf("task_get_context args %s %s, want the task of the prompt", gc["issue_number"], gc["note"])
	}
	if n := len(readLog(t, log)); n != 3 {
		t.Errorf("%d log lines, want 3", n)
	}
	if f.unauthorized != 0 {
		t.Errorf("%d requests without the bearer token", f.unauthorized)
	}
}

// acpClient records what the agent streams.
type acpClient struct {
	mu      sync.Mutex
	updates []acp.SessionUpdate
}

func (c *acpClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	return nil
}

// take returns the updates so far and forgets them.
func (c *acpClient) take() []acp.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.updates
	c.updates = nil
	return u
}

func (c *acpClient) RequestPermission(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	return acp.RequestPermissionResponse{}, fmt.Errorf("scriptagent asks no permission")
}
func (c *acpClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}
func (c *acpClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}
func (c *acpClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}
func (c *acpClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}
func (c *acpClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}
func (c *acpClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}
func (c *acpClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// checkACPTurn checks a turn's updates: for each tool, a tool_call in
// progress and a tool_call_update with its final status; then the reply.
func checkACPTurn(t *testing.T, updates []acp.SessionUpdate, tools []string, failed []bool, reply string) {
	t.Helper()
	if len(updates) != 2*len(tools)+1 {
		t.Fatalf("%d updates, want %d", len(updates), 2*len(tools)+1)
	}
	for i, tool := range tools {
		start, end := updates[2*i].ToolCall, updates[2*i+1].ToolCallUpdate
		if start == nil || start.Title != tool || start.Status != acp.ToolCallStatusInProgress {
			t.Errorf("update %d: %+v, want the tool_call of %s", 2*i, updates[2*i], tool)
			continue
		}
		want := acp.ToolCallStatusCompleted
		if failed[i] {
			want = acp.ToolCallStatusFailed
		}
		if end == nil || end.ToolCallId != start.ToolCallId || end.Status == nil || *end.Status != want || len(end.Content) != 1 {
			t.Errorf("update %d: %+v, want the tool_call_update of %s, %s", 2*i+1, updates[2*i+1], tool, want)
		}
	}
	last := updates[len(updates)-1].AgentMessageChunk
	if last == nil || last.Content.Text == nil || last.Content.Text.Text != reply {
		t.Errorf("last update %+v, want the reply %q", updates[len(updates)-1], reply)
	}
}

func TestACP(t *testing.T) {
	f := newFakeAtrium(t)
	script := strings.Replace(planScript, `"calls":[{"tool":"task_signal_complete"`, `"calls":[{"tool":"task_broken","args":{}},{"tool":"task_signal_complete"`, 1)
	cmd, log := agentCmd(t, f, script, []string{"ATRIUM_TASK=9"}, "--mode", "acp")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	client := &acpClient{}
	conn := acp.NewClientSideConnection(client, in, out)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	init, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != acp.ProtocolVersionNumber || !init.AgentCapabilities.LoadSession {
		t.Errorf("initialize: %+v", init)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: cmd.Dir, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}

	resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("Why you were started: you were assigned.")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stop reason %s", resp.StopReason)
	}
	checkACPTurn(t, client.take(), []string{"task_get_context", "write_page", "task_ask_question"}, []bool{false, false, false}, "I asked @duc.")

	if _, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: "sa-nope", Prompt: []acp.ContentBlock{acp.TextBlock("hi")}}); err == nil {
		t.Error("a prompt to an unknown session was taken")
	}

	resp, err = conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("@duc answered: PostgreSQL")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stop reason %s", resp.StopReason)
	}
	checkACPTurn(t, client.take(), []string{"task_broken", "task_signal_complete"}, []bool{true, false}, "done")
	waitExit(t, cmd) // the exit rule, with the connection still open

	if got := string(f.call(t, 4).args["issue_number"]); f.call(t, 4).tool != "task_signal_complete" || got != "9" {
		t.Errorf("last call %+v", f.call(t, 4))
	}
	entries := readLog(t, log)
	if len(entries) != 2 || entries[0].Mode != "acp" || entries[0].CLISession != string(sess.SessionId) {
		t.Errorf("log %+v", entries)
	}
}

// terminal collects what a pty agent prints.
type terminal struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (tm *terminal) Write(b []byte) (int, error) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.buf.Write(b)
}

func (tm *terminal) String() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.buf.String()
}

// waitFor waits until the screen holds want after from, and returns where
// it ends.
func (tm *terminal) waitFor(t *testing.T, from int, want string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if s := tm.String(); len(s) > from {
			if i := strings.Index(s[from:], want); i >= 0 {
				return from + i + len(want)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the terminal never showed %q; it shows:\n%s", want, tm.String())
	return 0
}

func TestPTY(t *testing.T) {
	f := newFakeAtrium(t)
	// The default mode; the first prompt on the command line, after Claude's flags.
	cmd, log := agentCmd(t, f, planScript, nil, "--mcp-config", "/x/mcp.json", "Task #5\nWhy you were started: you were assigned.")
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	screen := &terminal{}
	go func() { _, _ = io.Copy(screen, ptmx) }()

	at := screen.waitFor(t, 0, `● task_get_context {"issue_number":5}`)
	at = screen.waitFor(t, at, "⎿  task_get_context ok")
	at = screen.waitFor(t, at, "● write_page")
	at = screen.waitFor(t, at, "● I asked @duc.")
	at = screen.waitFor(t, at, promptMarker)

	if _, err := io.WriteString(ptmx, "@duc answered: PostgreSQL\r"); err != nil {
		t.Fatal(err)
	}
	at = screen.waitFor(t, at, "● task_signal_complete")
	screen.waitFor(t, at, "● done")
	waitExit(t, cmd)

	if c := f.call(t, 3); c.tool != "task_signal_complete" || string(c.args["issue_number"]) != "5" {
		t.Errorf("last call %+v", c)
	}
	entries := readLog(t, log)
	if len(entries) != 2 || entries[0].Mode != "pty" || entries[1].Prompt != "@duc answered: PostgreSQL" {
		t.Errorf("log %+v", entries)
	}
}

// A bracketed paste of several lines is one prompt; a line is one prompt.
func TestReadPrompt(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("one\r\n" + pasteStart + "two\nthree" + pasteEnd + " four\nfive"))
	for _, want := range []string{"one", "two\nthree four", "five"} {
		got, err := readPrompt(r)
		if got != want {
			t.Errorf("prompt %q, want %q", got, want)
		}
		if want == "five" && err != io.EOF {
			t.Errorf("last prompt: err %v, want EOF", err)
		}
	}
}

func TestParseArgs(t *testing.T) {
	o, err := parseArgs([]string{"-p", "--output-format=stream-json", "--input-format", "stream-json", "--verbose", "first", "--resume", "sa-1", "last"})
	if err != nil || o.mode != "pty" || o.resume != "sa-1" || o.prompt != "last" {
		t.Errorf("%+v, %v", o, err)
	}
	for _, bad := range [][]string{{"--model", "x"}, {"--mode", "tui"}, {"--script"}} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("%q was taken", bad)
		}
	}
}
