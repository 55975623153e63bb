package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway's benchmarks, reported in notes and never asserted (the
// machines are shared):
//
//	go test ./gateway -run '^$' -bench . -benchtime 2000x
//
// BenchmarkCallOverhead: one call of the test upstream's echo, made by
// Atrium's gateway (Gateway.CallTool) and made directly by an MCP client over
// stdio, interleaved so that both see the same machine; p50 of each and their
// ratio. (Through Atrium's MCP surface, with the client's own hop to Atrium,
// see e2e's BenchmarkGatewayCall.)
//
// BenchmarkIdleMemory: the Go heap and stacks the gateway holds per idle
// upstream (N ready servers against none), the servers' own processes not
// counted: they are other processes.
//
// BenchmarkStart20: twenty upstreams from Start to every one ready.

// benchGateway writes a file of n test upstreams and starts it.
func benchGateway(b *testing.B, n int) *Gateway {
	b.Helper()
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%02d", i)] = map[string]any{"command": upstreamBin}
	}
	path := filepath.Join(b.TempDir(), "gateway.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	g, err := Start(path, Options{Logger: slog.New(slog.DiscardHandler), StopGrace: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// allReady waits until every server of g is ready.
func allReady(b *testing.B, g *Gateway) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.Settled(ctx); err != nil {
		b.Fatal(err)
	}
	for _, u := range g.sortedUpstreams() {
		if st := u.status(g.view.Load()); st.State != Ready {
			b.Fatalf("%s is %s: %s", st.Name, st.State, st.LastError)
		}
	}
}

func BenchmarkCallOverhead(b *testing.B) {
	g := benchGateway(b, 1)
	defer g.Close()
	allReady(b, g)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(upstreamBin)}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	args := json.RawMessage(`{"text":"hello"}`)
	direct := func() {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}); err != nil || res.IsError {
			b.Fatalf("direct: %v %+v", err, res)
		}
	}
	proxied := func() {
		if res, err := g.CallTool(ctx, "s00_echo", args, nil); err != nil || res.IsError {
			b.Fatalf("through the gateway: %v %+v", err, res)
		}
	}
	for range 100 {
		direct()
		proxied()
	}
	var d, p []time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		direct()
		t1 := time.Now()
		proxied()
		d, p = append(d, t1.Sub(t0)), append(p, time.Since(t1))
	}
	b.StopTimer()
	dp50, pp50 := p50(d), p50(p)
	b.ReportMetric(float64(dp50.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(pp50.Microseconds()), "gateway-p50-µs")
	b.ReportMetric(float64(pp50)/float64(dp50), "ratio")
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// heapAndStacks is what the Go runtime holds for live objects and
// goroutine stacks, after a collection.
func heapAndStacks() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

func BenchmarkIdleMemory(b *testing.B) {
	const n = 20
	for range b.N {
		before := heapAndStacks()
		g := benchGateway(b, n)
		allReady(b, g)
		time.Sleep(200 * time.Millisecond) // their start-up chatter done
		after := heapAndStacks()
		goroutines := runtime.NumGoroutine()
		g.Close()
		b.ReportMetric(float64(int64(after)-int64(before))/n/1024, "KiB/upstream")
		b.ReportMetric(float64(goroutines)/n, "goroutines/upstream")
	}
}

func BenchmarkStart20(b *testing.B) {
	for range b.N {
		start := time.Now()
		g := benchGateway(b, 20)
		allReady(b, g)
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "ms-to-all-ready")
		g.Close()
	}
}
