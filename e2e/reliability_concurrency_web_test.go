package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// webClient is one browser's worth of requests: a bearer token (as a
// session would be), redirects not followed, so that a save's 303 is seen.
type webClient struct {
	base, token string
	http        *http.Client
}

func newWebClient(base, token string) *webClient {
	return &webClient{base: base, token: token, http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// send makes one request within answerBound; err is set only when there was
// no answer.
func (c *webClient) send(method, target string, form url.Values, header http.Header) (int, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), answerBound)
	defer cancel()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+target, body)
	if err != nil {
		return 0, "", err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

var baseRevision = regexp.MustCompile(`name="base_revision" value="(\d+)"`)

// webLoad is several browsers at once on the web routes — page views,
// search, the tree and its fragments, the home page, comments and saves
// with a base revision, some on a page they all share — while an agent
// writes over MCP, the shared page included. No request gets a 5xx or goes
// unanswered, every save acknowledged (303) is the revision it claimed, and
// /healthz answers after.
func webLoad(t *testing.T, srv *server, engine string) {
	browsers, rounds := sized(4, 8), sized(6, 20)
	const shared = "Web/Shared.md"
	agent := connectHTTP(t, srv.MCP(), srv.createToken(t, "web-agent", "default", "writer"), "")
	if res := callTool(t, agent, "write_page", map[string]any{"path": shared, "content": "# Shared\n\nby the agent, first\n"}); res.IsError {
		t.Fatalf("shared page: %+v", res.Content)
	}
	type save struct {
		path     string
		revision int64
		content  string
	}
	var (
		mu       sync.Mutex
		saves    []save
		failures []string
		requests atomic.Int64
		byStatus sync.Map
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	// ask makes one request and fails the load on a 5xx or no answer.
	ask := func(c *webClient, method, target string, form url.Values, header http.Header) (int, string) {
		requests.Add(1)
		code, body, err := c.send(method, target, form, header)
		n, _ := byStatus.LoadOrStore(code, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		switch {
		case err != nil:
			fail("%s %s %s: no answer: %v", engine, method, target, err)
		case code >= 500:
			fail("%s %s %s: %d %.200s", engine, method, target, code, body)
		}
		return code, body
	}
	// saveAt posts a page's content on base; an acknowledged save is kept.
	saveAt := func(c *webClient, path string, base int64, content string) (ok bool, current int64) {
		code, body := ask(c, "POST", "/pages/"+escapePath(path), url.Values{"content": {content}, "base_revision": {strconv.FormatInt(base, 10)}}, nil)
		switch code {
		case http.StatusSeeOther:
			mu.Lock()
			saves = append(saves, save{path, base + 1, content})
			mu.Unlock()
			return true, base + 1
		case http.StatusConflict:
			if m := baseRevision.FindStringSubmatch(body); m != nil {
				current, _ = strconv.ParseInt(m[1], 10, 64)
			}
			return false, current
		}
		fail("%s save %s on %d: %d", engine, path, base, code)
		return false, base
	}

	agentDone := make(chan struct{})
	var agentWrites atomic.Int64
	go func() {
		defer close(agentDone)
		base := int64(1)
		for i := range rounds * 2 {
			ctx, cancel := context.WithTimeout(context.Background(), answerBound)
			res, err := agent.CallTool(ctx, mcpCall("write_page", map[string]any{"path": fmt.Sprintf("Web/Agent/Note %d.md", i), "content": fmt.Sprintf("# Note %d\n\nfrom the agent\n", i)}))
			if err != nil || res.IsError {
				fail("%s agent write %d: %v", engine, i, err)
			} else {
				agentWrites.Add(1)
			}
			content := fmt.Sprintf("# Shared\n\nthe agent's turn %d\n", i)
			res, err = agent.CallTool(ctx, mcpCall("write_page", map[string]any{"path": shared, "content": content, "base_revision": base}))
			cancel()
			switch {
			case err != nil:
				fail("%s agent shared write %d: %v", engine, i, err)
			case !res.IsError:
				m, _ := asMap(res.StructuredContent)
				rev, _ := m["revision"].(float64)
				mu.Lock()
				saves = append(saves, save{shared, int64(rev), content})
				mu.Unlock()
				base = int64(rev)
			default: // a conflict: read again
				if r, err := agent.CallTool(context.Background(), mcpCall("read_page", map[string]any{"path": shared})); err == nil && !r.IsError {
					m, _ := asMap(r.StructuredContent)
					rev, _ := m["revision"].(float64)
					base = int64(rev)
				}
			}
		}
	}()

	start := time.Now()
	var wg sync.WaitGroup
	for b := range browsers {
		wg.Go(func() {
			c := newWebClient(srv.URL, srv.createToken(t, fmt.Sprintf("browser-%d", b), "default", "writer"))
			own := fmt.Sprintf("Web/Browser %d/Notes.md", b)
			ownRev := int64(0)
			sharedRev := int64(1)
			fragment := http.Header{"X-Atrium-Fragment": {"1"}}
			for i := range rounds {
				content := fmt.Sprintf("# Notes of browser %d\n\nround %d\n", b, i)
				if ok, cur := saveAt(c, own, ownRev, content); ok {
					ownRev = cur
				} else {
					fail("%s browser %d lost its own page's revision at round %d (now %d)", engine, b, i, cur)
					ownRev = cur
				}
				ask(c, "GET", "/pages/"+escapePath(own), nil, nil)
				ask(c, "GET", "/edit/"+escapePath(shared), nil, nil)
				if ok, cur := saveAt(c, shared, sharedRev, fmt.Sprintf("# Shared\n\nbrowser %d, round %d\n", b, i)); ok || cur > 0 {
					sharedRev = cur
				}
				ask(c, "GET", "/search?q="+url.QueryEscape(questions[(b+i)%len(questions)]), nil, nil)
				ask(c, "GET", "/tree", nil, nil)
				ask(c, "GET", "/tree?folder=Web", nil, fragment)
				ask(c, "GET", "/", nil, nil)
				ask(c, "POST", "/threads", url.Values{"doc_path": {own}, "content": {fmt.Sprintf("comment %d", i)}}, nil)
			}
		})
	}
	wg.Wait()
	<-agentDone
	elapsed := time.Since(start)

	// Every acknowledged save is the revision it claimed.
	reader := newWebClient(srv.URL, srv.AdminToken)
	lost := 0
	for _, s := range saves {
		code, body := ask(reader, "GET", fmt.Sprintf("/api/pages/%s?revision=%d", escapePath(s.path), s.revision), nil, http.Header{"Accept": {"application/json"}})
		if code != 200 || !strings.Contains(jsonString(jsonBody([]byte(body)), "content"), strings.TrimSpace(s.content)) {
			lost++
			fail("%s %s revision %d does not hold the save acknowledged for it (%d)", engine, s.path, s.revision, code)
		}
	}
	healthy := lightGet(srv.URL+"/healthz", "") == nil
	if !healthy {
		t.Errorf("/healthz does not answer 200 after the web load")
	}
	var statuses []string
	byStatus.Range(func(k, v any) bool {
		statuses = append(statuses, fmt.Sprintf("%v:%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	report(t, "concurrency/"+engine+"/web", "browsers", browsers, "requests", requests.Load(), "saves_acknowledged", len(saves), "lost", lost,
		"agent_writes", agentWrites.Load(), "statuses", strings.Join(statuses, ","), "healthz_after", healthy, "seconds", fmt.Sprintf("%.1f", elapsed.Seconds()))
	for _, f := range failures {
		t.Error(f)
	}
}

func mcpCall(tool string, args map[string]any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: args}
}

func jsonString(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
