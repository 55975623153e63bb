package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
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

	"github.com/atrium-hq/atrium/store/storetest"
)

// The replicas harness: three atrium serve replicas on one PostgreSQL
// behind HAProxy (Debian's haproxy, started here on loopback), under a mixed
// load from this process — agents over Streamable HTTP on both protocol
// generations (stateless 2026-07-28; 2025-11-25 sessions, kept on their
// replica by HAProxy's stick table), REST writers, and browser-like /events
// streams that reconnect every 100–400 ms with Last-Event-ID — while one
// replica is killed with kill -9 and started again (and, with
// ATRIUM_SCALE=full, PostgreSQL is restarted: make scale). It checks what
// must hold — no acknowledged write lost; every live stream sees every
// write's event exactly once, in order — and reports latency per call kind
// before, during and after each fault, and how long until HAProxy routes
// around the dead replica. CI runs the short variant with make test.

// haproxyConfig routes to the replicas: round robin for stateless calls,
// sticky by Mcp-Session-Id for 2025-era sessions, health checks every
// 200 ms, and a request that could not connect retried on another replica
// (never one that reached a replica: a write is not retried blind).
const haproxyConfig = `global
  maxconn 4096
defaults
  mode http
  timeout connect 1s
  timeout client 1h
  timeout server 1h
  timeout tunnel 1h
  retries 3
  option redispatch
  retry-on conn-failure
frontend atrium
  bind 127.0.0.1:%d
  default_backend replicas
backend replicas
  balance roundrobin
  option httpchk
  http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host 127.0.0.1
  stick-table type string len 64 size 100k expire 30m
  stick on req.hdr(Mcp-Session-Id)
  stick store-response res.hdr(Mcp-Session-Id)
%s`

// startHAProxy runs haproxy in front of ports and returns its URL.
func startHAProxy(t *testing.T, ports []int) string {
	t.Helper()
	path, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("ATRIUM_REQUIRE_TOOLS") == "1" {
			t.Fatal("haproxy is required (ATRIUM_REQUIRE_TOOLS=1) but not installed: apt-get install haproxy")
		}
		t.Skip("no haproxy here: apt-get install haproxy to run the replicas harness")
	}
	var servers strings.Builder
	for i, p := range ports {
		fmt.Fprintf(&servers, "  server r%d 127.0.0.1:%d check inter 200ms fall 2 rise 2\n", i+1, p)
	}
	front := freePort(t)
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(haproxyConfig, front, servers.String())), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "-db", "-f", cfg)
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://127.0.0.1:" + strconv.Itoa(front)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(url + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not answer: %s", logs.String())
		}
	}
}

// calls records latencies per kind and phase, and failures.
type calls struct {
	mu    sync.Mutex
	phase string
	lat   map[string][]time.Duration // "kind/phase"
	fails map[string]int
	errAt []time.Time       // when each failure was seen
	errs  map[string]string // a sample failure per kind/phase
}

func (c *calls) setPhase(p string) { c.mu.Lock(); c.phase = p; c.mu.Unlock() }

func (c *calls) record(kind string, d time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := kind + "/" + c.phase
	if err != nil {
		c.fails[key]++
		c.errAt = append(c.errAt, time.Now())
		c.errs[key] = err.Error()
		return
	}
	c.lat[key] = append(c.lat[key], d)
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// acked is the set of writes a client was told succeeded.
type acked struct {
	mu    sync.Mutex
	paths map[string]bool
	at    map[string]time.Time
}

func (a *acked) add(p string) { a.mu.Lock(); a.paths[p] = true; a.at[p] = time.Now(); a.mu.Unlock() }

// sseReader is a browser-like /events stream through the load balancer that
// reconnects every 100–400 ms with Last-Event-ID, and keeps every page event
// it is given, in order.
type sseReader struct {
	url, token string
	mu         sync.Mutex
	last       int64
	seen       []string // subjects of page events, in arrival order
	ids        []int64
	reconnects int
}

func (r *sseReader) run(ctx context.Context) {
	for ctx.Err() == nil {
		r.once(ctx, time.Duration(100+rand.IntN(300))*time.Millisecond)
	}
}

func (r *sseReader) once(ctx context.Context, life time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, life)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", r.url+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	// Always a position, as a page gives its stream (data-live-after):
	// from the log's start for a stream that has seen nothing yet.
	r.mu.Lock()
	req.Header.Set("Last-Event-ID", strconv.FormatInt(r.last, 10))
	r.reconnects++
	r.mu.Unlock()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		time.Sleep(50 * time.Millisecond)
		return
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		io.Copy(io.Discard, res.Body)
		time.Sleep(50 * time.Millisecond)
		return
	}
	sc := bufio.NewScanner(res.Body)
	var id int64
	var kind, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			kind = line[7:]
		case strings.HasPrefix(line, "data: "):
			data = line[6:]
		case line == "":
			if id > 0 {
				r.mu.Lock()
				if strings.HasPrefix(kind, "page.") {
					var e struct{ Subject string }
					_ = json.Unmarshal([]byte(data), &e)
					r.seen = append(r.seen, e.Subject)
					r.ids = append(r.ids, id)
				}
				r.last = id
				r.mu.Unlock()
			}
			id, kind, data = 0, "", ""
		}
	}
}

// mcpWriter writes pages over MCP through the load balancer; a 2025-era
// session that loses its replica starts a new session (it is told 404).
type mcpWriter struct {
	url, token, version, name string
	cs                        *mcp.ClientSession
	reinits                   int
}

func (w *mcpWriter) write(ctx context.Context, path string) error {
	if w.cs == nil {
		cs, err := tryConnectHTTP(w.url+"/mcp", w.token, w.version)
		if err != nil {
			return err
		}
		w.cs = cs
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := w.cs.CallTool(cctx, &mcp.CallToolParams{Name: "write_page", Arguments: map[string]any{"path": path, "content": "# " + path + "\n\nwritten under load\n"}})
	if err != nil {
		w.cs.Close()
		w.cs = nil
		w.reinits++
		return err
	}
	if res.IsError {
		return fmt.Errorf("write_page: %v", res.Content)
	}
	return nil
}

func restWrite(ctx context.Context, url, token, path string) error {
	body, _ := json.Marshal(map[string]any{"content": "# " + path + "\n\nwritten over REST\n"})
	req, _ := http.NewRequestWithContext(ctx, "PUT", url+"/api/pages/"+path, strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("PUT %s: %d %s", path, res.StatusCode, b)
	}
	return nil
}

func TestScaleReplicasBehindHAProxy(t *testing.T) {
	full := os.Getenv("ATRIUM_SCALE") == "full"
	t.Run("postgres-3", func(t *testing.T) { runScale(t, storetest.PostgresDSN(t), 3, full) })
	if full {
		// The comparison: one replica on SQLite, behind the same balancer;
		// its kill is an outage until it is back.
		t.Run("sqlite-1", func(t *testing.T) { runScale(t, "", 1, false) })
	}
}

// runScale runs the harness on n replicas of dsn ("": SQLite, one replica);
// pgRestart adds the PostgreSQL restart.
func runScale(t *testing.T, dsn string, n int, pgRestart bool) {
	full := os.Getenv("ATRIUM_SCALE") == "full"
	phase := 3 * time.Second
	writersPerKind := 2
	if full {
		phase, writersPerKind = 15*time.Second, 6
	}
	var ports []int
	var replicas []*server
	for range n {
		p := freePort(t)
		ports = append(ports, p)
		replicas = append(replicas, startServe(t, dsn, "--addr", "127.0.0.1:"+strconv.Itoa(p)))
	}
	victim := n / 2 // the replica killed: the middle one, or the only one
	lb := startHAProxy(t, ports)
	token := replicas[0].createToken(t, "loader", "", "writer")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	streams := make([]*sseReader, 3)
	for i := range streams {
		streams[i] = &sseReader{url: lb, token: token}
		wg.Go(func() { streams[i].run(ctx) })
	}
	time.Sleep(500 * time.Millisecond) // the streams are open before the first write
	c := &calls{phase: "before", lat: map[string][]time.Duration{}, fails: map[string]int{}, errs: map[string]string{}}
	ok := &acked{paths: map[string]bool{}, at: map[string]time.Time{}}
	var seq atomic.Int64
	loadCtx, stopLoad := context.WithCancel(ctx)
	var load sync.WaitGroup
	var writers []*mcpWriter
	for _, version := range []string{"", "2025-11-25"} {
		kind := map[string]string{"": "mcp-2026", "2025-11-25": "mcp-2025"}[version]
		for i := range writersPerKind {
			w := &mcpWriter{url: lb, token: token, version: version, name: fmt.Sprintf("%s-%d", kind, i)}
			writers = append(writers, w)
			load.Go(func() {
				for loadCtx.Err() == nil {
					path := fmt.Sprintf("scale/%s/%d.md", w.name, seq.Add(1))
					t0 := time.Now()
					err := w.write(loadCtx, path)
					if loadCtx.Err() != nil {
						return // stopped mid-call: not a failure of Atrium's
					}
					c.record(kind, time.Since(t0), err)
					if err == nil {
						ok.add(path)
					}
				}
			})
		}
	}
	for i := range writersPerKind {
		load.Go(func() {
			for loadCtx.Err() == nil {
				path := fmt.Sprintf("scale/rest-%d/%d.md", i, seq.Add(1))
				t0 := time.Now()
				err := restWrite(loadCtx, lb, token, path)
				if loadCtx.Err() != nil {
					return
				}
				c.record("rest", time.Since(t0), err)
				if err == nil {
					ok.add(path)
				}
			}
		})
	}

	time.Sleep(phase)
	c.setPhase("during-kill")
	killed := time.Now()
	replicas[victim].kill(t)
	time.Sleep(phase)
	c.setPhase("after-restart")
	replicas[victim].restart(t, "--addr", "127.0.0.1:"+strconv.Itoa(ports[victim]))
	time.Sleep(phase)
	if pgRestart {
		c.setPhase("during-pg-restart")
		restartPostgres(t)
		time.Sleep(phase)
		c.setPhase("after-pg-restart")
		time.Sleep(phase)
	}
	stopLoad()
	load.Wait()
	// Routed around: the last failure after the kill, within its phase
	// (calls in flight on the killed replica fail; later ones go elsewhere).
	routedAround := time.Duration(0)
	c.mu.Lock()
	for _, at := range c.errAt {
		if d := at.Sub(killed); d > 0 && d < phase && d > routedAround {
			routedAround = d
		}
	}
	c.mu.Unlock()

	// Every acknowledged write is there (asked of a replica directly: the
	// check does not depend on the load balancer).
	cs := connectHTTP(t, replicas[0].MCP(), token, "")
	var paths []string
	for p := range ok.paths {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	lost := 0
	for _, p := range paths {
		if res := callTool(t, cs, "read_page", map[string]any{"path": p}); res.IsError {
			lost++
			t.Errorf("acknowledged write %s is lost", p)
		}
	}
	// Every live stream sees every write's event, once, in order; let them
	// catch up first.
	deadline := time.Now().Add(20 * time.Second)
	for _, st := range streams {
		for {
			st.mu.Lock()
			have := map[string]int{}
			for _, s := range st.seen {
				have[s]++
			}
			missing := 0
			for _, p := range paths {
				if have[p] == 0 {
					missing++
				}
			}
			st.mu.Unlock()
			if missing == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	cancel()
	wg.Wait()
	for i, st := range streams {
		have := map[string]int{}
		for _, s := range st.seen {
			have[s]++
		}
		missing, twice := 0, 0
		for _, p := range paths {
			switch n := have[p]; {
			case n == 0:
				missing++
			case n > 1:
				twice++
			}
		}
		disorder := 0
		for j := 1; j < len(st.ids); j++ {
			if st.ids[j] <= st.ids[j-1] {
				disorder++
			}
		}
		if missing > 0 {
			var sample []string
			for _, p := range paths {
				if have[p] == 0 && len(sample) < 8 {
					sample = append(sample, fmt.Sprintf("%s (acknowledged %s after the kill)", p, ok.at[p].Sub(killed).Round(time.Millisecond)))
				}
			}
			t.Logf("stream %d never saw: %s", i, strings.Join(sample, ", "))
		}
		if missing+twice+disorder > 0 {
			t.Errorf("stream %d (%d reconnects): of %d acknowledged writes, %d never seen, %d seen twice; %d events out of order", i, st.reconnects, len(paths), missing, twice, disorder)
		}
		t.Logf("SCALE stream %d: %d page events, %d reconnects", i, len(st.seen), st.reconnects)
	}
	reinits := 0
	for _, w := range writers {
		if w.version != "" {
			reinits += w.reinits
		}
	}
	t.Logf("SCALE %s: %d acknowledged writes, %d lost; HAProxy routed around the killed replica within %s; 2025-11-25 sessions re-initialised %d times", t.Name(), len(paths), lost, routedAround.Round(time.Millisecond), reinits)
	phases := []string{"before", "during-kill", "after-restart"}
	if pgRestart {
		phases = append(phases, "during-pg-restart", "after-pg-restart")
	}
	for _, kind := range []string{"mcp-2026", "mcp-2025", "rest"} {
		var line strings.Builder
		for _, p := range phases {
			key := kind + "/" + p
			fmt.Fprintf(&line, "  %s: n=%d p50=%s p95=%s failed=%d", p, len(c.lat[key]), pct(c.lat[key], 50).Round(10*time.Microsecond), pct(c.lat[key], 95).Round(10*time.Microsecond), c.fails[key])
			if e := c.errs[key]; e != "" {
				fmt.Fprintf(&line, " (%.80s)", e)
			}
		}
		t.Logf("SCALE %s%s", kind, line.String())
	}
	if len(paths) == 0 {
		t.Fatal("no write was acknowledged")
	}
}

// restartPostgres restarts the local PostgreSQL cluster (make scale only:
// every other test on the machine shares it).
func restartPostgres(t testing.TB) {
	t.Helper()
	ver, err := os.ReadDir("/etc/postgresql")
	if err != nil || len(ver) == 0 {
		t.Fatalf("restart PostgreSQL: no cluster under /etc/postgresql (%v)", err)
	}
	out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", ver[0].Name(), "main", "restart").CombinedOutput()
	if err != nil {
		t.Fatalf("pg_ctlcluster restart: %v\n%s", err, out)
	}
	t.Logf("SCALE PostgreSQL restarted")
}
