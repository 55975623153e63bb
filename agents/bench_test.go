package agents_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/tasks"
)

// Figures of issue 19, reported, never asserted:
//
//	go test ./agents -run '^$' -bench . -benchtime 20x

// BenchmarkSessionStart times agent_start for a task of a repository of
// 10,000 files: the worktree, the token, the process in its PTY.
func BenchmarkSessionStart(b *testing.B) {
	v := newEnvB(b)
	repo := gitRepo(b)
	for i := range 10000 {
		dir := filepath.Join(repo, fmt.Sprintf("d%02d", i%100))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), []byte(strings.Repeat("x", 200)), 0o644)
	}
	git(b, repo, "add", ".")
	git(b, repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "10k files")
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "quick", Command: "/bin/sh", Args: []string{"-c", "sleep 1000"}, Repo: repo}); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new(fmt.Sprintf("Task %d", i))}})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "quick", Task: task.Number})
		took = append(took, time.Since(start))
		if err != nil || s.State != agents.StateRunning {
			b.Fatalf("%v %+v", err, s)
		}
		b.StopTimer()
		if _, err := v.svc.Agents.Stop(v.admin, s.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	reportPercentiles(b, took)
}

// BenchmarkKeystrokeEcho times a key typed into a cat session until its echo
// reaches the viewer that typed it.
func BenchmarkKeystrokeEcho(b *testing.B) {
	v := newEnvB(b)
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "cat", Command: "/bin/cat"}); err != nil {
		b.Fatal(err)
	}
	s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "cat"})
	if err != nil {
		b.Fatal(err)
	}
	viewer, _, _, err := v.svc.Agents.Attach(v.admin, s.ID)
	if err != nil {
		b.Fatal(err)
	}
	defer viewer.Detach()
	viewer.TakeControl()
	<-viewer.C // the control frame
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if err := viewer.Input([]byte("x")); err != nil {
			b.Fatal(err)
		}
		for f := range viewer.C {
			if strings.Contains(string(f.Output), "x") {
				break
			}
		}
		took = append(took, time.Since(start))
	}
	reportPercentiles(b, took)
}

// BenchmarkFanout sends 50 MB of a session's output to three viewers: MB/s
// at the slowest viewer.
func BenchmarkFanout(b *testing.B) {
	v := newEnvB(b)
	const size = 50_000_000
	script := fmt.Sprintf(`read go; head -c %d /dev/zero | tr '\0' 'a'; echo END; sleep 1000`, size)
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "loud", Command: "/bin/sh", Args: []string{"-c", script}}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "loud"})
		if err != nil {
			b.Fatal(err)
		}
		var viewers []*agents.Viewer
		for range 3 {
			vw, _, _, err := v.svc.Agents.Attach(v.admin, s.ID)
			if err != nil {
				b.Fatal(err)
			}
			viewers = append(viewers, vw)
		}
		viewers[0].TakeControl()
		start := time.Now()
		done := make(chan int, 3)
		for _, vw := range viewers {
			go func() {
				n := 0
				for f := range vw.C {
					n += len(f.Output)
					if strings.Contains(string(f.Output), "END") {
						break
					}
				}
				done <- n
			}()
		}
		viewers[0].Input([]byte("go\r"))
		for range 3 {
			if n := <-done; n < size {
				b.Errorf("a viewer got %d of %d bytes", n, size)
			}
		}
		b.ReportMetric(float64(size)/1e6/time.Since(start).Seconds(), "MB/s")
		for _, vw := range viewers {
			vw.Detach()
		}
		v.svc.Agents.Stop(v.admin, s.ID)
	}
}

// BenchmarkIdleSession is Atrium's own memory for each idle session, its
// ring buffer's 256 KiB included.
func BenchmarkIdleSession(b *testing.B) {
	v := newEnvB(b)
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "idle", Command: "/bin/sh", Args: []string{"-c", "echo ready; sleep 1000"}}); err != nil {
		b.Fatal(err)
	}
	const n = 20
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var ids []string
		for range n {
			task, _ := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("idle")}})
			s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "idle", Task: task.Number})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		time.Sleep(200 * time.Millisecond) // idle: started, said its line, waiting
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n/1024, "KiB/session")
		for _, id := range ids {
			v.svc.Agents.Stop(v.admin, id)
		}
	}
}

func newEnvB(b *testing.B) *env { return newEnv(b, store.SQLite) }

func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
}
