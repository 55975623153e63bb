package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The gateway through the real binary, reported and never asserted:
//
//	go test ./e2e -run '^$' -bench GatewayCall -benchtime 2000x
//	go test ./e2e -run '^$' -bench GatewayIdle -benchtime 1x
//
// BenchmarkGatewayCall: the test upstream's echo called directly over stdio,
// and as up_echo through `atrium mcp --gateway` (the client's hop to Atrium,
// Atrium's MCP surface with its role check and audit record, then the
// upstream): each alone, then interleaved for their ratio on the same
// machine at the same moment.
//
// BenchmarkGatewayIdle: the resident memory of `atrium mcp --gateway` with
// 20 idle upstreams against none (the upstreams are other processes: not
// counted), the proportional memory of the small sh that guards each
// server's group (Atrium's too, so reported), and how long the 20 take to
// be ready.

// gatewayFile writes a gateway file of n test upstreams named s00…, and
// returns its path.
func gatewayFile(b *testing.B, n int) string {
	up := testUpstream(b)
	servers := map[string]any{}
	for i := range n {
		servers[fmt.Sprintf("s%02d", i)] = map[string]any{"command": up}
	}
	path := filepath.Join(b.TempDir(), "gateway.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// atriumGateway starts `atrium mcp --gateway path` and returns its session
// and process.
func atriumGateway(b *testing.B, path string) (*mcp.ClientSession, *exec.Cmd) {
	cmd := exec.Command(binary, "--data-dir", b.TempDir(), "mcp", "--gateway", path)
	cmd.Env = append(cleanEnv(), "ATRIUM_AGENT=bench")
	return stdioSession(b, cmd), cmd
}

func BenchmarkGatewayCall(b *testing.B) {
	up := testUpstream(b)
	b.Run("stdio/direct-echo", func(b *testing.B) {
		benchCalls(b, stdioSession(b, exec.Command(up)), "echo")
	})
	b.Run("stdio/atrium-gateway-echo", func(b *testing.B) {
		cs, _ := atriumGateway(b, gatewayFile(b, 1))
		benchCalls(b, cs, "s00_echo")
	})
	// Interleaved, for the ratio: a no-op call, where the client's own hop to
	// Atrium is as long as Atrium's to the upstream, and a call that works
	// for 5 ms, as a real tool does.
	for _, c := range []struct {
		name string
		tool string
		args map[string]any
	}{{"echo", "echo", map[string]any{"text": "hello"}}, {"work-5ms", "slow", map[string]any{"ms": 5}}} {
		b.Run("stdio/interleaved-"+c.name, func(b *testing.B) {
			direct := stdioSession(b, exec.Command(up))
			proxied, _ := atriumGateway(b, gatewayFile(b, 1))
			ctx := context.Background()
			call := func(cs *mcp.ClientSession, tool string) time.Duration {
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: c.args})
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %+v", tool, err, res)
				}
				return time.Since(t0)
			}
			for range 50 {
				call(direct, c.tool)
				call(proxied, "s00_"+c.tool)
			}
			var d, p []time.Duration
			b.ResetTimer()
			for range b.N {
				d = append(d, call(direct, c.tool))
				p = append(p, call(proxied, "s00_"+c.tool))
			}
			b.StopTimer()
			slices.Sort(d)
			slices.Sort(p)
			b.ReportMetric(float64(d[len(d)/2].Microseconds()), "direct-p50-µs")
			b.ReportMetric(float64(p[len(p)/2].Microseconds()), "gateway-p50-µs")
			b.ReportMetric(float64(p[len(p)/2])/float64(d[len(d)/2]), "ratio")
		})
	}
}

// rss is a process's resident set, in KiB, from /proc.
func rss(b *testing.B, pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			n, _ := strconv.ParseInt(string(bytes.Fields(v)[0]), 10, 64)
			return n
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// ready waits until get_status says every server is ready, and says when.
func ready(b *testing.B, cs *mcp.ClientSession, n int) time.Time {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_status", Arguments: map[string]any{}})
		if err != nil {
			b.Fatal(err)
		}
		var st struct {
			Upstreams []struct{ State string } `json:"upstreams"`
		}
		data, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(data, &st)
		count := 0
		for _, u := range st.Upstreams {
			if u.State == "ready" {
				count++
			}
		}
		if count == n {
			return time.Now()
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d ready after a minute", count, n)
		}
	}
}

// ppidOf is a process's parent, from /proc.
func ppidOf(pid string) string {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return ""
	}
	f := bytes.Fields(data[i+1:]) // state ppid …
	if len(f) < 2 {
		return ""
	}
	return string(f[1])
}

// guardians are the processes the gateway starts beside each server to end
// its group if Atrium dies: the children of atrium's children that run sh.
// It returns how many, and their proportional set size in KiB, summed.
func guardians(atrium int) (n int, pssKiB int64) {
	entries, _ := os.ReadDir("/proc")
	servers := map[string]bool{}
	for _, e := range entries {
		if ppidOf(e.Name()) == strconv.Itoa(atrium) {
			servers[e.Name()] = true
		}
	}
	for _, e := range entries {
		if !servers[ppidOf(e.Name())] {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if !bytes.HasPrefix(cmd, []byte("/bin/sh\x00")) {
			continue
		}
		n++
		rollup, _ := os.ReadFile("/proc/" + e.Name() + "/smaps_rollup")
		for line := range bytes.Lines(rollup) {
			if v, ok := bytes.CutPrefix(line, []byte("Pss:")); ok {
				kib, _ := strconv.ParseInt(string(bytes.Fields(v)[0]), 10, 64)
				pssKiB += kib
			}
		}
	}
	return n, pssKiB
}

func BenchmarkGatewayIdle(b *testing.B) {
	const n = 20
	for range b.N {
		var guards int
		var guardPSS int64
		measure := func(count int) (kib int64, toReady time.Duration) {
			path := gatewayFile(b, count)
			start := time.Now()
			cs, cmd := atriumGateway(b, path)
			// The tools list waits for the servers' first start, as a
			// client's first list does.
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				b.Fatal(err)
			}
			at := ready(b, cs, count)
			time.Sleep(2 * time.Second) // idle: start-up garbage collected, stderr quiet
			kib = rss(b, cmd.Process.Pid)
			if count > 0 {
				guards, guardPSS = guardians(cmd.Process.Pid)
			}
			cs.Close()
			return kib, at.Sub(start)
		}
		none, _ := measure(0)
		some, toReady := measure(n)
		b.ReportMetric(float64(none), "rss-0-KiB")
		b.ReportMetric(float64(some), "rss-20-KiB")
		b.ReportMetric(float64(some-none)/n, "KiB/upstream")
		b.ReportMetric(float64(toReady.Milliseconds()), "ms-start-to-20-ready")
		if guards > 0 {
			b.ReportMetric(float64(guardPSS)/float64(guards), "guardian-PSS-KiB")
		}
	}
}
