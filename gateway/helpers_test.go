package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// upstreamBin is the test MCP server, built once.
var upstreamBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gwtest")
	if err != nil {
		panic(err)
	}
	upstreamBin = filepath.Join(dir, "testupstream")
	if out, err := exec.Command("go", "build", "-o", upstreamBin, "./internal/testupstream").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build testupstream: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var tokenSeq atomic.Int64

// harness is one test's gateway file and the mark every process it starts
// carries in its environment, so that leaks can be found in /proc even after
// they are reparented.
type harness struct {
	t     *testing.T
	mark  string
	path  string
	logs  *logBuf
	env   map[string]string // Atrium's environment, as the gateway sees it
	top   map[string]any    // keys of the file beside mcpServers
	g     *Gateway
	notes atomic.Int64 // OnChange calls
	// reserved stands for Atrium's own tool names.
	reserved func(string) bool

	mu     sync.Mutex
	groups []string // the process groups of the servers started
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, mark: fmt.Sprintf("GW_TEST_MARK=%d-%d-%s", os.Getpid(), tokenSeq.Add(1), t.Name()), logs: &logBuf{},
		env: map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}}
	h.path = filepath.Join(t.TempDir(), "gateway.json")
	// The package's tests do not run in parallel: one harness at a time
	// hears of the groups started.
	startedHook = func(pgid int) {
		h.mu.Lock()
		h.groups = append(h.groups, strconv.Itoa(pgid))
		h.mu.Unlock()
	}
	t.Cleanup(func() {
		if h.g != nil {
			h.g.Close()
		}
		h.assertNoLeaks()
		startedHook = nil
	})
	return h
}

// server is a testupstream server config with env added.
func (h *harness) server(env map[string]string) map[string]any {
	e := map[string]any{}
	for k, v := range env {
		e[k] = v
	}
	return map[string]any{"command": upstreamBin, "env": e}
}

func (h *harness) write(servers map[string]any) {
	h.t.Helper()
	// Every server carries the mark, declared: upstreams do not inherit
	// Atrium's environment.
	k, v, _ := strings.Cut(h.mark, "=")
	for _, sc := range servers {
		m, ok := sc.(map[string]any)
		if !ok || m["command"] == nil {
			continue
		}
		switch env := m["env"].(type) {
		case map[string]any:
			env[k] = v
		case map[string]string:
			env[k] = v
		default:
			m["env"] = map[string]any{k: v}
		}
	}
	file := map[string]any{"mcpServers": servers}
	for k, v := range h.top {
		file[k] = v
	}
	b, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.path, b, 0o600); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) start(servers map[string]any) *Gateway {
	h.t.Helper()
	h.write(servers)
	k, v, _ := strings.Cut(h.mark, "=")
	h.env[k] = v
	g, err := Start(h.path, Options{
		Logger:      slog.New(slog.NewTextHandler(h.logs, nil)),
		OnChange:    func() { h.notes.Add(1) },
		BackoffBase: 50 * time.Millisecond, BackoffMax: 400 * time.Millisecond, StopGrace: 300 * time.Millisecond,
		Environ: func() []string {
			var out []string
			for k, v := range h.env {
				out = append(out, k+"="+v)
			}
			return out
		},
		Lookup:   func(k string) (string, bool) { v, ok := h.env[k]; return v, ok },
		Reserved: h.reserved,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.g = g
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Settled(ctx); err != nil {
		h.t.Fatal(err)
	}
	return g
}

func (h *harness) status(name string) UpstreamStatus {
	for _, s := range h.g.Status(atrium.RoleAdmin) {
		if s.Name == name {
			return s
		}
	}
	h.t.Fatalf("no server %s in status", name)
	return UpstreamStatus{}
}

// waitFor polls cond: the machine is shared and slow, so conditions are
// awaited, never timed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) call(name string, args any) (string, error) {
	h.t.Helper()
	b, _ := json.Marshal(args)
	res, err := h.g.CallTool(context.Background(), name, b, nil)
	if err != nil {
		return "", err
	}
	return resultText(res), nil
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "")
}

// marked lists the live processes whose environment carries the test's mark:
// every process the gateway started for it, and their children, wherever
// they have been reparented.
func (h *harness) marked() []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte(h.mark+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			continue // a zombie is dead; reaping it is its parent's business
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
	}
	return out
}

// grouped lists the live processes of the process groups the gateway
// started for the test: those that dropped the mark from their environment
// (env -i) too.
func (h *harness) grouped() []string {
	h.mu.Lock()
	groups := slices.Clone(h.groups)
	h.mu.Unlock()
	if len(groups) == 0 {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		i := bytes.LastIndexByte(stat, ')')
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:])) // state ppid pgrp …
		if len(f) < 3 || f[0] == "Z" || !slices.Contains(groups, f[2]) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, fmt.Sprintf("%s %s (group %s)", e.Name(), bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}), f[2]))
	}
	return out
}

func (h *harness) assertNoLeaks() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := append(h.marked(), h.grouped()...)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Errorf("processes outlived the gateway:\n%s", strings.Join(left, "\n"))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
