package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/trackers/githubfake"
)

// The tracker mirror's figures (issue 22), measured as an outside client
// sees them: the real binary against the fake GitHub at a set latency.
//
//	go test ./e2e -run '^$' -bench Tracker -benchtime 1x -timeout 60m
//
// ATRIUM_BENCH_TRACKER_TASKS (default 1000, with 5 comments each) and
// ATRIUM_BENCH_TRACKER_LATENCY (default 50ms). Figures are reported, never
// asserted.

func trackerBenchLatency(b *testing.B) time.Duration {
	d, err := time.ParseDuration(cmpOr(os.Getenv("ATRIUM_BENCH_TRACKER_LATENCY"), "50ms"))
	if err != nil {
		b.Fatal(err)
	}
	return d
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// restJSON sends v to the server's REST API as its admin and decodes the
// answer into out (if not nil).
func restJSON(b testing.TB, srv *server, method, path string, v, out any) {
	body, _ := json.Marshal(v)
	req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+srv.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		var e bytes.Buffer
		e.ReadFrom(res.Body)
		b.Fatalf("%s %s: %d %s", method, path, res.StatusCode, e.String())
	}
	if out != nil {
		if err := json.NewDecoder(res.Body).Decode(out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrackerInitialMirror: a workspace of N tasks with 5N comments,
// linked, and mirrored by one `atrium tracker sync` (a process of its own);
// then the steady state: a sync of an unchanged repository.
func BenchmarkTrackerInitialMirror(b *testing.B) {
	n, _ := strconv.Atoi(cmpOr(os.Getenv("ATRIUM_BENCH_TRACKER_TASKS"), "1000"))
	lat := trackerBenchLatency(b)
	for range b.N {
		fake := githubfake.Start()
		fake.Token = "tok"
		srv := startServeEnv(b, append(trackerEnv(), "ATRIUM_TRACKER_INTERVAL=0"), "")
		start := time.Now()
		var wg sync.WaitGroup
		work := make(chan int)
		for range 8 {
			wg.Go(func() {
				for k := range work {
					var t struct {
						Task struct {
							Number int64 `json:"number"`
						} `json:"task"`
					}
					restJSON(b, srv, "POST", "/api/tasks", map[string]any{"title": fmt.Sprintf("Task %d", k), "body": "Generated for the mirror's benchmark."}, &t)
					for c := range 5 {
						restJSON(b, srv, "POST", fmt.Sprintf("/api/tasks/%d/comments", t.Task.Number), map[string]any{"body": fmt.Sprintf("comment %d of task %d", c, k)}, nil)
					}
				}
			})
		}
		for k := range n {
			work <- k
		}
		close(work)
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		b.Logf("seeded %d tasks and %d comments in %s", n, 5*n, time.Since(start).Round(time.Millisecond))
		if out, errOut, code := srv.cli(b, trackerEnv(), "tracker", "link", "github", "acme/bench", "--api-url", fake.URL); code != 0 {
			b.Fatalf("link: %s%s", out, errOut)
		}
		fake.SetLatency(lat)
		mirror := func() (syncReport, time.Duration, int) {
			used := fake.Used()
			// A process of its own, without the harness's minute: a first
			// mirror at GitHub's pace takes longer.
			cmd := exec.Command(binary, srv.globalArgs("tracker", "sync", "--json")...)
			cmd.Env = append(cleanEnv(), trackerEnv()...)
			var outb, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &outb, &errb
			t0 := time.Now()
			err := cmd.Run()
			took := time.Since(t0)
			out := outb.String()
			if err != nil && !strings.Contains(errb.String(), "rate limit") {
				b.Fatalf("sync: %v\n%s%s", err, out, errb.String())
			}
			var r struct {
				Pushed      int `json:"pushed"`
				Calls       int `json:"calls"`
				NotModified int `json:"not_modified"`
				Pending     int `json:"pending"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				b.Fatalf("sync report %q: %v", out, err)
			}
			return syncReport{Pushed: r.Pushed, Calls: r.Calls, NotModified: r.NotModified, Pending: r.Pending}, took, fake.Used() - used
		}
		// GitHub's budget is an hour's: a mirror that needs more stops at
		// its end and goes on in the next window, which here opens at once.
		var took time.Duration
		calls, windows := 0, 1
		for {
			r, t, used := mirror()
			took, calls = took+t, calls+r.Calls
			b.Logf("TRACKER initial mirror, window %d: %s, %d changes pushed, %d calls, %d of the budget, %d pending",
				windows, t.Round(time.Millisecond), r.Pushed, r.Calls, used, r.Pending)
			if r.Pending == 0 {
				break
			}
			windows++
			fake.NewWindow(5000) // GitHub's hour for a token
		}
		b.Logf("TRACKER initial mirror of %d tasks + %d comments at %s latency: %s in all, %d calls in %d rate-limit window(s) of %d; GitHub holds %d issues",
			n, 5*n, lat, took.Round(time.Millisecond), calls, windows, 5000, len(fake.Issues("acme/bench")))
		b.ReportMetric(took.Seconds(), "s/mirror")
		b.ReportMetric(float64(calls), "calls/mirror")
		// The next polls read back what the mirror itself wrote, then the
		// boundary of the moved cursor once (GitHub's since is inclusive);
		// from then on an unchanged repository answers 304.
		for k := 2; k <= 5; k++ {
			r, took, used := mirror()
			b.Logf("TRACKER poll %d after the mirror: %s, %d calls (%d answered 304), %d of the budget", k, took.Round(time.Millisecond), r.Calls, r.NotModified, used)
			if k == 5 {
				b.ReportMetric(float64(used), "budget/poll")
			}
		}
		fake.Close()
	}
}

// BenchmarkTrackerPushLatency: with `atrium serve` mirroring (its poll a
// minute away), a comment posted through the REST API, one at a time: how
// long until GitHub has it.
func BenchmarkTrackerPushLatency(b *testing.B) {
	lat := trackerBenchLatency(b)
	const rounds = 100
	for range b.N {
		fake := githubfake.Start()
		fake.Token = "tok"
		srv := startServeEnv(b, append(trackerEnv(), "ATRIUM_TRACKER_INTERVAL=1m"), "")
		if out, errOut, code := srv.cli(b, trackerEnv(), "tracker", "link", "github", "acme/latency", "--api-url", fake.URL); code != 0 {
			b.Fatalf("link: %s%s", out, errOut)
		}
		restJSON(b, srv, "POST", "/api/tasks", map[string]any{"title": "Latency"}, nil)
		for deadline := time.Now().Add(time.Minute); len(fake.Issues("acme/latency")) == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatal("the task never reached GitHub")
			}
		}
		fake.SetLatency(lat)
		var took []time.Duration
		for k := range rounds {
			text := fmt.Sprintf("latency probe %d", k)
			restJSON(b, srv, "POST", "/api/tasks/1/comments", map[string]any{"body": text}, nil)
			t0 := time.Now()
			for {
				cs := fake.Comments("acme/latency", 1)
				if len(cs) > 0 && strings.Contains(cs[len(cs)-1].Body, text) {
					break
				}
				if time.Since(t0) > time.Minute {
					b.Fatalf("probe %d never reached GitHub", k)
				}
				time.Sleep(2 * time.Millisecond)
			}
			took = append(took, time.Since(t0))
		}
		slices.Sort(took)
		p50, p95 := took[len(took)/2], took[len(took)*95/100]
		b.Logf("TRACKER a comment made in Atrium, on GitHub (%s latency), over %d probes: p50 %s, p95 %s, max %s", lat, rounds, p50.Round(time.Millisecond), p95.Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
		b.ReportMetric(float64(p50.Milliseconds()), "p50-ms")
		b.ReportMetric(float64(p95.Milliseconds()), "p95-ms")
		fake.Close()
	}
}
