package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/store"
)

// TestReliabilityHygiene opens and closes many sessions over Streamable HTTP
// (stateful and stateless) and legacy SSE against one `atrium serve`, and
// starts and ends `atrium mcp` processes on its store: afterwards the
// server's goroutines and resident memory return to their baseline, within a
// generous margin, and every stdio process exits cleanly on its own.
func TestReliabilityHygiene(t *testing.T) {
	eachEngine(t, func(t *testing.T, e store.Engine, db string) {
		sessions, stdios := sized(40, 200), sized(5, 20)
		srv := startServe(t, db)
		pid := srv.cmd.Process.Pid

		// Warm up what is built on first use (per-workspace servers, caches,
		// connection pools), so that the baseline is the steady state.
		openAndClose(t, srv, 6, nil)
		g0, rss0 := settle(t, srv, pid, -1)

		peak := 0
		const batch = 10
		for done := 0; done < sessions; done += batch {
			openAndClose(t, srv, min(batch, sessions-done), func() { peak = max(peak, goroutines(t, srv)) })
		}
		for i := range stdios {
			stdioProcess(t, srv, i)
		}
		// Generous: a leak of one goroutine per session shows over 40; the
		// margin absorbs idle pool connections and timers.
		margin := 25
		g1, rss1 := settle(t, srv, pid, g0+margin)
		rssMargin := int64(48 << 10) // KiB
		report(t, "hygiene/"+string(e), "sessions", sessions, "stdio_processes", stdios, "goroutines_before", g0, "goroutines_peak", peak,
			"goroutines_after", g1, "rss_kib_before", rss0, "rss_kib_after", rss1)
		if peak <= g0 {
			t.Errorf("goroutines with %d sessions open: %d, no more than the baseline %d: the measure does not see sessions", batch, peak, g0)
		}
		if g1 > g0+margin {
			t.Errorf("goroutines %d after %d sessions, baseline %d (margin %d)", g1, sessions, g0, margin)
		}
		if rss1 > rss0+rssMargin {
			t.Errorf("resident memory %d KiB after %d sessions, baseline %d KiB (margin %d KiB)", rss1, sessions, rss0, rssMargin)
		}
	})
}

// openAndClose opens n sessions at once, spread over the HTTP transports,
// makes a call in each, runs open (if not nil) while they are all open, and
// closes them.
func openAndClose(t *testing.T, srv *server, n int, open func()) {
	t.Helper()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		sessions []*mcp.ClientSession
	)
	for i := range n {
		wg.Go(func() {
			var cs *mcp.ClientSession
			var err error
			switch i % 3 {
			case 0:
				cs, err = tryConnectHTTP(srv.MCP(), srv.AdminToken, "2025-11-25")
			case 1:
				cs, err = tryConnectHTTP(srv.MCP(), srv.AdminToken, "")
			case 2:
				// The SSE client keeps its event stream on this context.
				cs, err = newClient().Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: srv.URL + "/mcp/sse", HTTPClient: bearer(srv.AdminToken, "")}, nil)
			}
			if err != nil {
				t.Errorf("session %d: connect: %v", i, err)
				return
			}
			mu.Lock()
			sessions = append(sessions, cs)
			mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), answerBound)
			defer cancel()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}}); err != nil {
				t.Errorf("session %d: whoami: %v", i, err)
			}
		})
	}
	wg.Wait()
	if open != nil {
		open()
	}
	for _, cs := range sessions {
		wg.Go(func() { cs.Close() })
	}
	wg.Wait()
}

// stdioProcess starts `atrium mcp` on the server's store, makes a call and
// ends the session by closing stdin: the process must exit by itself, with
// status 0.
func stdioProcess(t *testing.T, srv *server, i int) {
	t.Helper()
	p := startMCP(t, srv, "hygiene")
	cmd, stdin, stdout, stderr, done := p.cmd, p.stdin, p.stdout, p.stderr, p.done
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hygiene","version":"1"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	answered := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), `{"jsonrpc":"2.0","id":2,"result"`) {
				answered <- true
			}
		}
	}()
	select {
	case <-answered:
	case <-time.After(answerBound):
		t.Errorf("stdio process %d: whoami not answered\n%s", i, stderr)
	}
	stdin.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stdio process %d exited with %v\n%s", i, err, stderr)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Errorf("stdio process %d did not exit within 10 s of stdin closing\n%s", i, stderr)
	}
}

// settle waits (bounded) until the server's goroutines are at most target
// (-1: until they stop falling), and returns them with its resident memory.
func settle(t *testing.T, srv *server, pid, target int) (int, int64) {
	t.Helper()
	g, prev := goroutines(t, srv), -1
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		if target >= 0 && g <= target || target < 0 && g == prev {
			break
		}
		time.Sleep(500 * time.Millisecond)
		prev, g = g, goroutines(t, srv)
	}
	return g, rssKiB(t, pid)
}

// goroutines reads atrium_goroutines from /metrics, as an admin.
func goroutines(t *testing.T, srv *server) int {
	t.Helper()
	status, b, err := do(http.MethodGet, srv.URL+"/metrics", srv.AdminToken, "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", status, err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "atrium_goroutines "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("atrium_goroutines %q", v)
			}
			return int(n)
		}
	}
	t.Fatalf("no atrium_goroutines in /metrics:\n%s", b)
	return 0
}

// rssKiB is a process's resident memory, from /proc.
func rssKiB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q", v)
			}
			return n
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
