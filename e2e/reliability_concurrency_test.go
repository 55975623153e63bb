package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mcptools"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// questions are multi-word searches over the generated vault's vocabulary:
// the shape that scores many candidates per search.
var questions = []string{
	"how does the project plan the review of notes",
	"what is the release risk for the database migration",
	"which team owns the search index latency budget",
	"where is the deploy runbook for the cache cluster",
	"why did the session token policy change after the incident",
	"who reviews the storage design and the backup restore",
}

// loadPages is the size of the generated store: big enough that a
// multi-word search scores in parallel (1,500 pages deadlocked SQLite's read
// pool), small enough to import in seconds.
var loadPages = sized(1500, 3000)

// TestReliabilityConcurrency holds 64 mixed calls in flight over stdio,
// Streamable HTTP and REST at once against one `atrium serve` on a generated
// store, on both engines: every call is answered within a generous bound,
// every acknowledged write is readable after, and a second client's light
// calls keep being answered meanwhile. Then the two shapes that deadlocked:
// 8 searches piped into one `atrium mcp`, and 32 parallel searches over HTTP
// after which /healthz still answers. Last, browsers on the web routes while
// an agent writes over MCP.
func TestReliabilityConcurrency(t *testing.T) {
	vault := t.TempDir()
	if _, errOut, code := runAtrium(t, nil, "dev", "gen-vault", "-n", fmt.Sprint(loadPages), "--seed", "1", vault); code != 0 {
		t.Fatalf("gen-vault: exit %d\n%s", code, errOut)
	}
	eachEngine(t, func(t *testing.T, e store.Engine, db string) {
		srv := startServeWith(t, db, func(s *server) {
			if _, errOut, code := s.cli(t, []string{"ATRIUM_AGENT=importer"}, "import", vault); code != 0 {
				t.Fatalf("import: exit %d\n%s", code, errOut)
			}
		})
		t.Run("mixed", func(t *testing.T) { mixedLoad(t, srv, string(e)) })
		t.Run("stdio pipe of 8 searches", func(t *testing.T) { pipedSearches(t, srv, string(e), 8) })
		t.Run("http 32 searches", func(t *testing.T) { parallelHTTPSearches(t, srv, string(e), 32) })
		t.Run("web", func(t *testing.T) { webLoad(t, srv, string(e)) })
	})
}

// startServeWith prepares a fresh data folder (and db) with prepare, then
// starts `atrium serve` on it.
func startServeWith(t *testing.T, db string, prepare func(s *server), args ...string) *server {
	t.Helper()
	s := &server{DataDir: t.TempDir(), DB: db}
	t.Cleanup(func() { s.stop(t) })
	prepare(s)
	s.launch(t, args...)
	return s
}

// ack is an acknowledged write: what must be readable after the load.
type ack struct {
	path     string
	revision int64  // write: the revision acknowledged
	content  string // write: the whole page; edit: a line the page must hold
	edit     bool
	thread   string // create_annotation: the thread's ID
}

// caller makes calls over one surface; each call returns an error only when
// it got no answer (transport error, timeout), and the answer otherwise.
type caller interface {
	call(tool string, args map[string]any) (map[string]any, string, error) // structured result, error code
	name() string
}

type mcpCaller struct {
	cs      *mcp.ClientSession
	surface string
}

func (c mcpCaller) name() string { return c.surface }

func (c mcpCaller) call(tool string, args map[string]any) (map[string]any, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), answerBound)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, "", err
	}
	m, _ := asMap(res.StructuredContent)
	if res.IsError {
		code, _ := m["code"].(string)
		if code == "" {
			code = "error"
		}
		return m, code, nil
	}
	return m, "", nil
}

// restCaller maps the tools the load uses onto their REST routes.
type restCaller struct{ base, token string }

func (c restCaller) name() string { return "rest" }

func (c restCaller) call(tool string, args map[string]any) (map[string]any, string, error) {
	var method, path, body string
	switch tool {
	case "search_pages":
		method, path = "GET", "/api/search?q="+url.QueryEscape(args["query"].(string))
	case "read_page":
		method, path = "GET", "/api/pages/"+escapePath(args["path"].(string))
	case "write_page":
		method, path = "PUT", "/api/pages/"+escapePath(args["path"].(string))
		body = mustJSON(map[string]any{"content": args["content"]})
	case "edit_page":
		method, path = "PATCH", "/api/pages/"+escapePath(args["path"].(string))
		body = mustJSON(map[string]any{"operations": args["operations"]})
	case "list_pages":
		method, path = "GET", "/api/pages?path="+url.QueryEscape(args["path"].(string))+"&depth=1&limit=50"
	case "create_annotation":
		method, path, body = "POST", "/api/annotations", mustJSON(args)
	default:
		return nil, "", fmt.Errorf("no REST route for %s", tool)
	}
	status, b, err := do(method, c.base+path, c.token, body)
	if err != nil {
		return nil, "", err
	}
	m := jsonBody(b)
	if status >= 300 {
		code, _ := m["code"].(string)
		return m, fmt.Sprintf("%s (%d)", code, status), nil
	}
	return m, "", nil
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// The search gate's limits, as the README states them and pages'
// TestSearchGateHasTheREADMEsLimits asserts: the floors below derive from them.
const (
	searchesPerCaller = 64  // running or waiting, per caller
	searchQueue       = 256 // waiting, over all callers
	// teamSearches is how many searches each of a team's agents sends at
	// once in the bursts below: a team is several principals.
	teamSearches = 8
)

// writeTools are the mixed load's writes, which have a floor of their own.
var writeTools = map[string]bool{"write_page": true, "edit_page": true, "create_annotation": true}

// mixedLoad is the 64-in-flight load with a second client alongside.
func mixedLoad(t *testing.T, srv *server, engine string) {
	const inFlight = 64
	ops := sized(4, 12) // calls per worker after its first write
	other := srv.createToken(t, "bystander", "default", "writer")

	// Two stdio processes and four HTTP sessions (stateless and stateful)
	// share the workers of their surface: many calls in flight on each. Each
	// client is its own principal, as separate agents would be: the server
	// may cap one caller's searches in progress.
	var callers []caller
	for i := range 2 {
		callers = append(callers, mcpCaller{connectStdio(t, []string{fmt.Sprintf("ATRIUM_AGENT=stdio-loader-%d", i)}, srv.globalArgs()...), "stdio"})
	}
	for i, v := range []string{"", "2025-11-25", "", "2025-11-25"} {
		callers = append(callers, mcpCaller{connectHTTP(t, srv.MCP(), srv.createToken(t, fmt.Sprintf("http-loader-%d", i), "default", "writer"), v), "http"})
	}
	rests := []caller{restCaller{srv.URL, srv.createToken(t, "rest-loader-0", "default", "writer")}, restCaller{srv.URL, srv.createToken(t, "rest-loader-1", "default", "writer")}}

	var (
		mu        sync.Mutex
		acks      []ack
		failures  []string
		refusals  = map[string]int{}
		calls     atomic.Int64
		byKind    sync.Map
		stopOther = make(chan struct{})
		// For the floors: writes sent and acknowledged, searches sent and
		// answered.
		writes, writesAcked, searches, searchesAnswered atomic.Int64
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	// send makes one call and sorts its answer: nil and false when it was
	// refused or not answered.
	send := func(c caller, tool string, args map[string]any) (map[string]any, bool) {
		calls.Add(1)
		n, _ := byKind.LoadOrStore(tool, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		isWrite := writeTools[tool]
		if isWrite {
			writes.Add(1)
		} else if tool == "search_pages" {
			searches.Add(1)
		}
		m, code, err := c.call(tool, args)
		switch {
		case err != nil:
			fail("%s %s over %s: no answer: %v", engine, tool, c.name(), err)
			return nil, false
		case code != "":
			mu.Lock()
			refusals[tool+" "+code]++
			mu.Unlock()
			// The search gate may turn one caller's burst away, clearly: 64
			// calls in flight never fill its queue. A database busy past its
			// timeout is unavailable too, and counts against the writes'
			// floor; anything else is a defect under load.
			msg, _ := m["error"].(string)
			switch {
			case !strings.HasPrefix(code, "unavailable"):
				fail("%s %s over %s: refused %s: %v", engine, tool, c.name(), code, m)
			case tool == "search_pages" && !strings.Contains(msg, fmt.Sprintf("already have %d searches", searchesPerCaller)):
				fail("%s search over %s refused though no caller can fill the queue of %d: %v", engine, c.name(), searchQueue, m)
			}
			return nil, false
		}
		if isWrite {
			writesAcked.Add(1)
		} else if tool == "search_pages" {
			searchesAnswered.Add(1)
		}
		return m, true
	}

	// The second client: light calls that must keep being answered while
	// the load runs.
	var light, lightFailed atomic.Int64
	otherDone := make(chan struct{})
	go func() {
		defer close(otherDone)
		cs, err := tryConnectHTTP(srv.MCP(), other, "")
		if err != nil {
			fail("second client: connect: %v", err)
			return
		}
		defer cs.Close()
		page := "/api/pages/" + escapePath(vaultgen.PathAt(loadPages, 3))
		for i := 0; i < 2000; i++ {
			select {
			case <-stopOther:
				return
			case <-time.After(20 * time.Millisecond):
			}
			var err error
			switch i % 3 {
			case 0:
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
				cancel()
			case 1:
				err = lightGet(srv.URL+"/healthz", "")
			case 2:
				err = lightGet(srv.URL+page, other)
			}
			light.Add(1)
			if err != nil {
				lightFailed.Add(1)
				fail("second client, call %d: %v", i, err)
			}
		}
	}()

	kinds := []string{"search_pages", "read_page", "write_page", "edit_page", "list_pages", "create_annotation"}
	start := time.Now()
	var wg sync.WaitGroup
	for g := range inFlight {
		c := rests[g%len(rests)]
		if g%3 != 2 {
			c = callers[g%len(callers)]
		}
		wg.Go(func() {
			own := fmt.Sprintf("Load/Worker %02d.md", g)
			section := fmt.Sprintf("Worker %02d", g)
			content := fmt.Sprintf("# %s\n\nThe page worker %d edits over %s.\n", section, g, c.name())
			// The worker's page is what its edits and threads need: a
			// refused first write is tried again, as a client would.
			for try := 0; ; try++ {
				if _, ok := send(c, "write_page", map[string]any{"path": own, "content": content, "overwrite": true}); ok {
					mu.Lock()
					acks = append(acks, ack{path: own, content: "The page worker"})
					mu.Unlock()
					break
				}
				if try == 20 {
					fail("%s worker %d over %s: its first write refused 20 times", engine, g, c.name())
					return
				}
				time.Sleep(100 * time.Millisecond) // a client's backoff, not synchronization
			}
			for i := range ops {
				tool := kinds[(g+i)%len(kinds)]
				var args map[string]any
				switch tool {
				case "search_pages":
					args = map[string]any{"query": questions[(g+i)%len(questions)]}
				case "read_page":
					args = map[string]any{"path": vaultgen.PathAt(loadPages, (g*97+i*31)%loadPages)}
				case "write_page":
					args = map[string]any{"path": fmt.Sprintf("Load/Written/g%02d-%02d.md", g, i),
						"content": fmt.Sprintf("# Write %d of worker %d\n\nover %s, %s\n", i, g, c.name(), engine)}
				case "edit_page":
					args = map[string]any{"path": own, "operations": []map[string]any{{"op": "append", "text": fmt.Sprintf("edit %d of worker %d", i, g)}}}
				case "list_pages":
					args = map[string]any{"path": []string{"Projects", "Areas", "Load"}[i%3]}
				case "create_annotation":
					args = map[string]any{"doc_path": own, "section": section, "content": fmt.Sprintf("thread %d of worker %d", i, g)}
				}
				m, ok := send(c, tool, args)
				if !ok {
					continue
				}
				switch tool {
				case "write_page":
					rev, _ := m["revision"].(float64)
					mu.Lock()
					acks = append(acks, ack{path: args["path"].(string), revision: int64(rev), content: args["content"].(string)})
					mu.Unlock()
				case "edit_page":
					mu.Lock()
					acks = append(acks, ack{path: own, content: fmt.Sprintf("edit %d of worker %d", i, g), edit: true})
					mu.Unlock()
				case "create_annotation":
					a, _ := m["annotation"].(map[string]any)
					id, _ := a["id"].(string)
					if id == "" {
						fail("%s create_annotation over %s acknowledged without an ID: %v", engine, c.name(), m)
						continue
					}
					mu.Lock()
					acks = append(acks, ack{path: own, thread: id})
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopOther)
	<-otherDone

	// Every acknowledged write is there, read back over REST by the admin.
	lost := 0
	for _, a := range acks {
		var status int
		var b []byte
		var err error
		if a.thread != "" {
			status, b, err = do("GET", srv.URL+"/api/annotations/"+a.thread, srv.AdminToken, "")
		} else {
			status, b, err = do("GET", srv.URL+"/api/pages/"+escapePath(a.path), srv.AdminToken, "")
		}
		if err != nil || status != http.StatusOK {
			lost++
			fail("%s %+v: not readable after the load: %d %v %s", engine, a, status, err, b)
			continue
		}
		m := jsonBody(b)
		got, _ := m["content"].(string)
		rev, _ := m["revision"].(float64)
		switch {
		case a.thread != "":
		case a.revision > 0 && (int64(rev) != a.revision || got != a.content):
			lost++
			fail("%s %s: revision %v %q, acknowledged revision %d %q", engine, a.path, rev, got, a.revision, a.content)
		case a.revision == 0 && !strings.Contains(got, a.content):
			lost++
			fail("%s %s: %q lacks the acknowledged %q", engine, a.path, got, a.content)
		}
	}
	var kindCounts []string
	for _, k := range kinds {
		if n, ok := byKind.Load(k); ok {
			kindCounts = append(kindCounts, fmt.Sprintf("%s=%d", k, n.(*atomic.Int64).Load()))
		}
	}
	refused := 0
	for _, n := range refusals {
		refused += n
	}
	report(t, "concurrency/"+engine, "in_flight", inFlight, "calls", calls.Load(), "acknowledged", len(acks), "lost", lost,
		"refused", refused, "second_client_calls", light.Load(), "second_client_failed", lightFailed.Load(),
		"seconds", fmt.Sprintf("%.1f", elapsed.Seconds()), "mix", strings.Join(kindCounts, ","))
	for _, f := range failures {
		t.Error(f)
	}
	if light.Load() == 0 {
		t.Error("the second client made no call while the load ran")
	}
	// The floors. One writer with shared commits sustains 64 writers: at
	// most 1 in 20 writes may meet a database busy past its timeout (the
	// stdio processes are other processes on the same SQLite file). Searches
	// are refused only for a caller past its 8: at least half are answered.
	if w, a := writes.Load(), writesAcked.Load(); w == 0 || a*20 < w*19 {
		t.Errorf("%s: %d of %d writes acknowledged, want at least 95%%", engine, a, w)
	}
	if s, a := searches.Load(), searchesAnswered.Load(); s == 0 || a*2 < s {
		t.Errorf("%s: %d of %d searches answered, want at least half", engine, a, s)
	}
	if len(refusals) > 0 {
		t.Logf("refused under load: %v", refusals)
	}
}

// lightGet is one light GET that must answer 200 within 10 s.
func lightGet(url, token string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", url, res.StatusCode)
	}
	return nil
}

// pipedSearches writes one initialize and n search_pages calls into one
// `atrium mcp` at once, without waiting: each must be answered.
func pipedSearches(t *testing.T, srv *server, engine string, n int) {
	p := startMCP(t, srv, "piper")
	cmd, stdin, stdout, stderr, done := p.cmd, p.stdin, p.stdout, p.stderr, p.done
	defer func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("atrium mcp did not exit within 10 s of stdin closing\n%s", stderr)
		}
	}()
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_pages","arguments":{"query":%q}}}`+"\n", i, questions[i%len(questions)])
	}
	if _, err := io.WriteString(stdin, in.String()); err != nil {
		t.Fatal(err)
	}
	answers := make(chan map[string]any)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				answers <- m
			}
		}
		close(answers)
	}()
	got := map[float64]map[string]any{}
	deadline := time.After(2 * answerBound)
	start := time.Now()
	for len(got) < n+1 {
		select {
		case m, ok := <-answers:
			if !ok {
				t.Fatalf("atrium mcp closed stdout after %d of %d answers\n%s", len(got), n+1, stderr)
			}
			if id, ok := m["id"].(float64); ok {
				got[id] = m
			}
		case <-deadline:
			report(t, "concurrency/"+engine+"/stdio-pipe", "searches", n, "answered", len(got)-1, "lost", n+1-len(got))
			t.Fatalf("%d of %d requests answered within %s (ids %v)\n%s", len(got), n+1, 2*answerBound, keys(got), stderr)
		}
	}
	failed := 0
	for id, m := range got {
		if id == 0 {
			continue
		}
		r, _ := asMap(m["result"])
		if m["error"] != nil || r == nil || r["isError"] == true {
			failed++
			t.Errorf("search %v: %v", id, m)
		}
	}
	report(t, "concurrency/"+engine+"/stdio-pipe", "searches", n, "answered", len(got)-1, "failed", failed, "lost", 0,
		"seconds", fmt.Sprintf("%.1f", time.Since(start).Seconds()))
}

func keys[V any](m map[float64]V) []float64 {
	var out []float64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// parallelHTTPSearches sends n searches over Streamable HTTP at once, as
// n/8 callers (a team's agents, each its own principal) with 8 each: within
// every limit of the search gate, so every one must be answered. Then one
// caller's burst of n (one token's, or everyone's under --auth none): within
// its limit of 64, so answered too (issue 23.18). After them the server must
// still answer /healthz and a token check.
func parallelHTTPSearches(t *testing.T, srv *server, engine string, n int) {
	callers := max(1, n/teamSearches)
	var sessions []*mcp.ClientSession
	for i := range callers {
		sessions = append(sessions, connectHTTP(t, srv.MCP(), srv.createToken(t, fmt.Sprintf("searcher-%d", i), "default", "reader"), []string{"", "2025-11-25"}[i%2]))
	}
	burst := func(sessionOf func(i int) *mcp.ClientSession, n int) (answered, refusedPerCaller, failed int64) {
		var a, r, f atomic.Int64
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				c := mcpCaller{sessionOf(i), "http"}
				m, code, err := c.call("search_pages", map[string]any{"query": questions[i%len(questions)]})
				msg, _ := m["error"].(string)
				switch {
				case err != nil:
					f.Add(1)
					t.Errorf("search %d: no answer: %v", i, err)
				case code == "":
					a.Add(1)
				case strings.HasPrefix(code, "unavailable") && strings.Contains(msg, fmt.Sprintf("already have %d searches", searchesPerCaller)):
					r.Add(1)
				default:
					f.Add(1)
					t.Errorf("search %d: refused %s: %v", i, code, m)
				}
			})
		}
		wg.Wait()
		return a.Load(), r.Load(), f.Load()
	}
	start := time.Now()
	answered, refused, failed := burst(func(i int) *mcp.ClientSession { return sessions[i%callers] }, n)
	elapsed := time.Since(start)
	if answered != int64(n) {
		t.Errorf("%s: %d of %d searches answered by %d callers of %d each (%d refused), want all: within the gate's limits", engine, answered, n, callers, teamSearches, refused)
	}
	oneAnswered, oneRefused, oneFailed := burst(func(int) *mcp.ClientSession { return sessions[0] }, n)
	if oneAnswered != int64(n) {
		t.Errorf("%s: one caller's %d searches at once: %d answered, want all: within its %d", engine, n, oneAnswered, searchesPerCaller)
	}
	healthy := lightGet(srv.URL+"/healthz", "") == nil
	if !healthy {
		t.Errorf("/healthz does not answer 200 after %d parallel searches", n)
	}
	if err := lightGet(srv.URL+"/api/access", srv.AdminToken); err != nil {
		t.Errorf("a token check after %d parallel searches: %v", n, err)
	}
	report(t, "concurrency/"+engine+"/http-burst", "searches", n, "callers", callers, "answered", answered, "refused_unavailable", refused, "failed", failed+oneFailed,
		"one_caller_burst", n, "one_caller_answered", oneAnswered, "one_caller_refused", oneRefused,
		"healthz_after", healthy, "seconds", fmt.Sprintf("%.1f", elapsed.Seconds()))
}

// TestReliabilityConcurrencyInProcess is the same load without processes, so
// that `go test -race` sees every goroutine of it: the MCP server, the docs
// and review services and a real store, with 64 calls in flight over
// in-memory sessions, on both engines. The 64 workers are 8 agents of 8 (the
// search gate's per-caller limit), on the store's default connections: within
// every limit, so every call must be answered and every write acknowledged.
func TestReliabilityConcurrencyInProcess(t *testing.T) {
	n := sized(1500, 3000)
	if raceBuild {
		n = 600 // -race is after data races, which any concurrent searches show; the import is its cost
	}
	eachEngine(t, func(t *testing.T, e store.Engine, _ string) {
		db := storetest.MustOpen(t, e, &store.Options{Conns: map[store.Engine]int{store.SQLite: 4, store.Postgres: 16}[e]}) // the defaults
		svc := servicestest.Over(t, db)
		actor := servicestest.Agent(t, svc, "racer", "")
		d := svc.Pages
		ctx := atrium.NewContextWithActor(context.Background(), actor)
		files := func(yield func(pages.File) bool) {
			for i := range n {
				p := vaultgen.PageAt(1, n, i)
				if !yield(pages.File{Path: p.Path, Content: p.Content}) {
					return
				}
			}
		}
		if res, err := d.Import(ctx, files, pages.ImportOptions{}); err != nil || len(res.Failed) > 0 {
			t.Fatalf("import: %v %v", err, res.Failed)
		}
		const inFlight = 64
		var sessions []*mcp.ClientSession
		for a := range inFlight / teamSearches {
			agent := servicestest.Agent(t, svc, fmt.Sprintf("racer-%d", a), "")
			srv, err := mcpserver.New(mcpserver.Config{Toolsets: mcptools.All(mcptools.Options{}), Actor: agent, Services: svc})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			st, ct := mcp.NewInMemoryTransports()
			ss, err := srv.ForWorkspace(agent.Workspace).Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := newClient().Connect(context.Background(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close(); ss.Wait() })
			sessions = append(sessions, cs)
		}
		ops := sized(3, 8)
		var calls, unanswered, refused atomic.Int64
		var mu sync.Mutex
		written := map[string]string{}
		var wg sync.WaitGroup
		for g := range inFlight {
			c := mcpCaller{sessions[g%len(sessions)], "in-memory"}
			wg.Go(func() {
				for i := range ops {
					var tool string
					var args map[string]any
					switch (g + i) % 4 {
					case 0:
						tool, args = "search_pages", map[string]any{"query": questions[(g+i)%len(questions)]}
					case 1:
						tool, args = "read_page", map[string]any{"path": vaultgen.PathAt(n, (g*97+i*31)%n)}
					case 2:
						tool, args = "write_page", map[string]any{"path": fmt.Sprintf("Race/g%02d-%d.md", g, i), "content": fmt.Sprintf("# Race %d %d\n", g, i)}
					case 3:
						tool, args = "list_pages", map[string]any{"path": "Projects"}
					}
					calls.Add(1)
					_, code, err := c.call(tool, args)
					switch {
					case err != nil:
						unanswered.Add(1)
						t.Errorf("%s: no answer: %v", tool, err)
					case code != "":
						// No caller passes its 8, 64 cannot fill the queue,
						// one process has the database: nothing may be refused.
						refused.Add(1)
						t.Errorf("%s: refused %s within every limit", tool, code)
					case tool == "write_page":
						mu.Lock()
						written[args["path"].(string)] = args["content"].(string)
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		lost := 0
		for p, want := range written {
			res, err := d.ReadPage(ctx, pages.ReadRequest{Path: p})
			if err != nil || res.Content != want {
				lost++
				t.Errorf("acknowledged write of %s: %v %q", p, err, res.Content)
			}
		}
		name := "concurrency-in-process/" + string(e)
		if raceBuild {
			name += "/race"
		}
		if want := int64(inFlight * ops); calls.Load() != want || refused.Load() != 0 || unanswered.Load() != 0 {
			t.Errorf("%d calls, %d refused, %d unanswered: want all %d answered", calls.Load(), refused.Load(), unanswered.Load(), want)
		}
		report(t, name, "pages", n, "in_flight", inFlight, "calls", calls.Load(),
			"unanswered", unanswered.Load(), "refused", refused.Load(), "acknowledged", len(written), "lost", lost)
	})
}
