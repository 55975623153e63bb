package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkHandoffWake measures, through the binary, what an asker waits
// for: from task_ask_question's call to the prompt in the agent's hands
// (the scripted CLI stamps each prompt as it reads it), for an agent with no
// session (a session starts: worktree-less, stream-json) and for one whose
// session on the task runs (the question goes in as a message). The agent
// reads its inbox (both questions) at the second, and ends.
//
//	go test ./e2e -run '^$' -bench HandoffWake -benchtime 40x
//
// It reports p50 and p95 of each, in milliseconds. Figures go in notes,
// never in assertions.
func BenchmarkHandoffWake(b *testing.B) {
	srv := startServe(b, "", "--max-sessions", "64")
	dir := b.TempDir()
	log := filepath.Join(dir, "prompts.jsonl")
	script := filepath.Join(dir, "duc.json")
	if err := os.WriteFile(script, []byte(`{"rules":[
		{"match":"[Atrium] New for you","calls":[{"tool":"task_inbox","args":{}}],"reply":"ok","exit":true},
		{"match":"","reply":"ok"}]}`), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, errOut, code := srv.cli(b, nil, "agent", "add", "duc", "--command", scriptAgent, "--arg", "--mode", "--arg", "stream-json", "--wake", "stream-json",
		"--max-sessions", "64", "--env", "SCRIPTAGENT_SCRIPT="+script, "--env", "SCRIPTAGENT_LOG="+log); code != 0 {
		b.Fatalf("agent add: %d\n%s%s", code, out, errOut)
	}
	cs := connectHTTP(b, srv.MCP(), srv.createToken(b, "ada", "", "writer"), "")
	b.Cleanup(func() {
		if b.Failed() {
			out, _, _ := srv.cli(b, nil, "agent", "deliveries", "--limit", "5")
			b.Logf("deliveries:\n%s\nlog:\n%s", out, srv.stderr.String())
		}
	})
	var started, running []time.Duration
	for b.Loop() {
		task := structured(b, callTool(b, cs, "task_create", map[string]any{"title": "Wake " + strconv.Itoa(len(started))}))
		n := int64(task["task"].(map[string]any)["number"].(float64))
		mark := "task #" + strconv.FormatInt(n, 10) + " ("
		t0 := time.Now()
		callTool(b, cs, "task_ask_question", map[string]any{"issue_number": n, "target": "duc", "question": "First?"})
		started = append(started, promptAt(b, log, mark, 1).Sub(t0))
		t1 := time.Now()
		callTool(b, cs, "task_ask_question", map[string]any{"issue_number": n, "target": "duc", "question": "Second?"})
		running = append(running, promptAt(b, log, mark, 2).Sub(t1))
		// The agent reads both, then its session ends by itself.
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"new-session", started}, {"running-session", running}} {
		slices.Sort(m.d)
		b.ReportMetric(float64(m.d[len(m.d)/2].Microseconds())/1000, m.name+"-p50-ms")
		b.ReportMetric(float64(m.d[len(m.d)*95/100].Microseconds())/1000, m.name+"-p95-ms")
	}
}

// promptAt waits until the scripted agent has read its nth prompt that
// contains mark, and returns when it read it.
func promptAt(tb testing.TB, log, mark string, nth int) time.Time {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if f, err := os.Open(log); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 16<<20)
			seen := 0
			for sc.Scan() {
				var p struct{ Prompt, At string }
				if json.Unmarshal(sc.Bytes(), &p) == nil && strings.Contains(p.Prompt, mark) {
					if seen++; seen == nth {
						f.Close()
						at, err := time.Parse(time.RFC3339Nano, p.At)
						if err != nil {
							tb.Fatal(err)
						}
						return at
					}
				}
			}
			f.Close()
		}
		time.Sleep(time.Millisecond)
	}
	tb.Fatalf("no prompt %d with %q in 20 s", nth, mark)
	return time.Time{}
}
