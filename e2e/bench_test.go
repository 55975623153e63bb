package e2e

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The benchmarks compare Atrium's per-call cost with a bare go-sdk server (one
// no-op tool; internal/benchserver) on the same transports, in the same run:
//
//	go test ./e2e -run '^$' -bench Call -benchtime 3000x
//
// They report ns/op (one call, sequentially), p50 and p99 latency, and calls/s.
// Figures are reported in notes, never asserted: machines here are shared.

var (
	bareOnce sync.Once
	bareBin  string
	bareErr  error
)

func bareServer(b *testing.B) string {
	bareOnce.Do(func() {
		bareBin = filepath.Join(filepath.Dir(binary), "benchserver")
		out, err := exec.Command("go", "build", "-o", bareBin, "github.com/atrium-hq/atrium/internal/benchserver").CombinedOutput()
		if err != nil {
			bareErr = err
			bareBin = string(out)
		}
	})
	if bareErr != nil {
		b.Fatalf("build benchserver: %v\n%s", bareErr, bareBin)
	}
	return bareBin
}

// startBareHTTP runs the bare server on a free port and returns its /mcp URL.
func startBareHTTP(b *testing.B) string {
	cmd := exec.Command(bareServer(b), "-http", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
			return u + "/mcp"
		}
	}
	b.Fatal("benchserver did not start")
	return ""
}

func stdioSession(b *testing.B, cmd *exec.Cmd) *mcp.ClientSession {
	cs, err := newClient().Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

func httpSession(b *testing.B, url, token, version string) *mcp.ClientSession {
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: bearer(token, ""), MaxRetries: -1}, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchCalls calls tool b.N times and reports latency percentiles and calls/s.
func benchCalls(b *testing.B, cs *mcp.ClientSession, tool string) {
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
	for range 50 { // warm up connections, caches and the JIT-free but cold paths
		if _, err := cs.CallTool(ctx, params); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, params)
		lat = append(lat, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatalf("call %s: %v %+v", tool, err, res)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

func BenchmarkCall(b *testing.B) {
	b.Run("stdio/bare-noop", func(b *testing.B) {
		benchCalls(b, stdioSession(b, exec.Command(bareServer(b))), "noop")
	})
	b.Run("stdio/atrium-whoami", func(b *testing.B) {
		cmd := exec.Command(binary, "--data-dir", b.TempDir(), "mcp")
		cmd.Env = append(cleanEnv(), "ATRIUM_AGENT=bench")
		benchCalls(b, stdioSession(b, cmd), "whoami")
	})

	bare := startBareHTTP(b)
	srv := startServe(b, "")
	for _, v := range []struct{ name, version string }{{"http-2026", ""}, {"http-2025", "2025-11-25"}} {
		b.Run(v.name+"/bare-noop", func(b *testing.B) {
			benchCalls(b, httpSession(b, bare, "", v.version), "noop")
		})
		b.Run(v.name+"/atrium-whoami", func(b *testing.B) {
			benchCalls(b, httpSession(b, srv.MCP(), srv.AdminToken, v.version), "whoami")
		})
	}
}
