// Package e2e drives the real atrium binary: it builds it once, starts it as
// `serve` or `mcp`, and talks to it with the go-sdk client over every
// transport, with the CLI, and with the real Node clients (mcporter, the MCP
// Inspector).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/store/storetest"
)

var (
	binary       string // the atrium binary under test
	serverBinary string // the one that serves (serve, mcp): binary, or its -race build
	scriptAgent  string // internal/scriptagent: a coding-agent CLI that follows a script
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "atrium-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary, serverBinary = filepath.Join(dir, "atrium"), filepath.Join(dir, "atrium")
	scriptAgent = filepath.Join(dir, "scriptagent")
	builds := [][]string{{"build", "-o", binary, "github.com/atrium-hq/atrium/cmd/atrium"}, {"build", "-o", scriptAgent, "github.com/atrium-hq/atrium/internal/scriptagent"}}
	// ATRIUM_E2E_RACE=1 (make reliability) has the servers (serve and mcp)
	// built with the race detector: the binary under load is where its
	// races would be. The CLI's commands (imports, tokens) stay fast.
	if os.Getenv("ATRIUM_E2E_RACE") == "1" {
		serverBinary = filepath.Join(dir, "atrium-race")
		builds = append(builds, []string{"build", "-race", "-o", serverBinary, "github.com/atrium-hq/atrium/cmd/atrium"})
	}
	for _, args := range builds {
		build := exec.Command("go", args...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build atrium:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is a running `atrium serve`.
type server struct {
	URL        string // http://127.0.0.1:PORT
	AdminToken string // printed on first start with --auth token
	DataDir    string
	DB         string   // --db, when set
	Env        []string // added to the process's environment
	cmd        *exec.Cmd
	stderr     *syncBuffer
	done       chan error
}

// MCP is the Streamable HTTP endpoint.
func (s *server) MCP() string { return s.URL + "/mcp" }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

var tokenRE = regexp.MustCompile(`atr_[A-Z0-9]+`)

// startServe starts `atrium serve` on a free loopback port with a fresh data
// folder (and db, if not empty) and stops it when t ends.
//
// With ATRIUM_E2E_ENGINE=postgres, a test that leaves the db to the default
// gets a fresh PostgreSQL schema instead: `make test` runs the suite's core
// a second time so, on the engine most of the suite never meets.
func startServe(t testing.TB, db string, args ...string) *server {
	t.Helper()
	return startServeEnv(t, nil, db, args...)
}

// startServeEnv is startServe with env added to the server's environment.
func startServeEnv(t testing.TB, env []string, db string, args ...string) *server {
	t.Helper()
	if db == "" && os.Getenv("ATRIUM_E2E_ENGINE") == "postgres" {
		db = storetest.PostgresDSN(t)
	}
	s := &server{DataDir: t.TempDir(), DB: db, Env: env}
	t.Cleanup(func() {
		s.stop(t)
		checkServerLog(t, "atrium serve", s.stderr)
	})
	s.launch(t, args...)
	return s
}

// faultRE matches the lines of a server's log that record a panic or an
// internal error. Every surface answers those with a bland "internal", which
// a test that accepts an error result would pass over; the log is where they
// show.
var faultRE = regexp.MustCompile(`panicked|WARNING: DATA RACE|level=ERROR msg="(tool failed|request failed|web request failed|render page)"`)

var abandonedRE = regexp.MustCompile(`err="[^"]*context canceled"`)

// checkServerLog fails t when the log of a process it started recorded a
// panic or an internal error.
func checkServerLog(t testing.TB, what string, log *syncBuffer) {
	t.Helper()
	if log == nil {
		return
	}
	var faults []string
	for line := range strings.Lines(log.String()) {
		// A request its client gave up (a browser that navigated on) is
		// none of the server's faults, though web logs it at ERROR.
		if faultRE.MatchString(line) && !abandonedRE.MatchString(line) {
			faults = append(faults, strings.TrimSpace(line))
		}
	}
	if len(faults) > 0 {
		t.Errorf("%s logged %d panic(s) or internal error(s):\n%s", what, len(faults), strings.Join(faults, "\n"))
	}
}

// restart starts the server again on the same data folder and db, after it
// stopped or was killed; the admin token stays the one of the first start.
func (s *server) restart(t testing.TB, args ...string) {
	t.Helper()
	s.launch(t, args...)
}

// launch starts the process and waits for its address (and, on a first start,
// its admin token).
func (s *server) launch(t testing.TB, args ...string) {
	t.Helper()
	// The log accumulates over restarts: checkServerLog reads all of it.
	if s.stderr == nil {
		s.stderr = &syncBuffer{}
	}
	s.done = make(chan error, 1)
	full := append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)
	s.cmd = exec.Command(serverBinary, s.globalArgs(full...)...)
	s.cmd.Env = append(cleanEnv(), s.Env...)
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				lines <- u
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case s.URL = <-lines:
	case err := <-s.done:
		t.Fatalf("atrium serve exited: %v\n%s", err, s.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("atrium serve did not start\n%s", s.stderr)
	}
	if s.AdminToken != "" {
		return
	}
	// The first-start banner goes to stderr just before the stdout line; give
	// the pipe a moment to deliver it.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s.AdminToken = tokenRE.FindString(s.stderr.String()); s.AdminToken != "" || strings.Contains(s.stderr.String(), "auth=none") {
			break
		}
	}
}

// kill ends the server with SIGKILL, as a crash would, and waits for it.
func (s *server) kill(t testing.TB) {
	t.Helper()
	s.cmd.Process.Kill()
	select {
	case err := <-s.done:
		s.done <- err
	case <-time.After(20 * time.Second):
		t.Fatalf("atrium serve did not die on SIGKILL")
	}
}

func (s *server) globalArgs(args ...string) []string {
	g := []string{"--data-dir", s.DataDir}
	if s.DB != "" {
		g = append(g, "--db", s.DB)
	}
	return append(g, args...)
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop(t testing.TB) {
	if s.cmd == nil || s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			t.Errorf("atrium serve exited with %v\n%s", err, s.stderr)
		}
	case <-time.After(20 * time.Second):
		// SIGQUIT has the Go runtime print every goroutine's stack to the
		// log: what the server was waiting on.
		s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case err := <-s.done:
			s.done <- err
		case <-time.After(5 * time.Second):
			s.cmd.Process.Kill()
		}
		t.Errorf("atrium serve did not stop on SIGTERM (its goroutines, from SIGQUIT, are at the end)\n%s", s.stderr)
	}
}

// cli runs an atrium command against the server's store.
func (s *server) cli(t testing.TB, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runAtrium(t, env, s.globalArgs(args...)...)
}

// runAtrium runs the binary and returns its output and exit code.
func runAtrium(t testing.TB, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runAtriumStdin(t, env, "", args...)
}

// runAtriumStdin is runAtrium with stdin.
func runAtriumStdin(t testing.TB, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run atrium %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// cleanEnv is the test's environment without ATRIUM_ variables, so that the
// developer's own settings never leak into a test.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ATRIUM_") {
			env = append(env, kv)
		}
	}
	return env
}

// bearer is an HTTP client that sends a token (and optionally a workspace).
func bearer(token, workspace string) *http.Client {
	return &http.Client{Transport: &headerTransport{token: token, workspace: workspace}}
}

type headerTransport struct{ token, workspace string }

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if h.token != "" {
		r.Header.Set("Authorization", "Bearer "+h.token)
	}
	if h.workspace != "" {
		r.Header.Set("X-Atrium-Workspace", h.workspace)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "atrium-e2e", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
}

// connectHTTP opens a Streamable HTTP session; version "" lets the client
// negotiate (2026-07-28), "2025-11-25" forces a 2025-era session.
func connectHTTP(t testing.TB, endpoint, token, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := tryConnectHTTP(endpoint, token, version)
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func tryConnectHTTP(endpoint, token, version string) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	return newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: bearer(token, ""), MaxRetries: -1}, opts)
}

func connectSSE(t *testing.T, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	// The SSE client keeps its event stream on the context it connects with.
	cs, err := newClient().Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: bearer(token, "")}, nil)
	if err != nil {
		t.Fatalf("connect SSE %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// connectStdio starts `atrium mcp` with env and opens a session to it.
func connectStdio(t *testing.T, env []string, args ...string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(serverBinary, append(args, "mcp")...)
	cmd.Env = append(cleanEnv(), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start atrium mcp: %v\n%s", err, stderr)
	}
	// Cleanups run last first: the log is read once the process has ended.
	t.Cleanup(func() { checkServerLog(t, "atrium mcp", stderr) })
	t.Cleanup(func() { cs.Close() })
	return cs
}

// structured returns a tool result's structured content as a map.
func structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := asMap(res.StructuredContent)
	if !ok {
		t.Fatalf("structured content = %#v", res.StructuredContent)
	}
	return m
}

func asMap(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// newRequest sends one HTTP request with a bearer token and a JSON body.
func newRequest(method, url, token, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err == nil {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	return res, err
}

// mcpProcess is a running `atrium mcp` spoken to through its pipes, for
// tests that write raw JSON-RPC or kill the process.
type mcpProcess struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader
	stderr *syncBuffer
	done   chan error // receives Wait's result once
}

// startMCP starts `atrium mcp` over srv's store as principal agent.
func startMCP(t *testing.T, srv *server, agent string) *mcpProcess {
	t.Helper()
	p := &mcpProcess{cmd: exec.Command(serverBinary, srv.globalArgs("mcp")...), stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd.Env = append(cleanEnv(), "ATRIUM_AGENT="+agent)
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if p.stdout, err = p.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { checkServerLog(t, "atrium mcp", p.stderr) })
	return p
}
