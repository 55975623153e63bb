package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/web"
)

// The browser's routes, swept as the REST ones are: built from web.Routes(),
// so that a new page or action is covered without anyone adding it. Every
// route is tried by an anonymous visitor, a reader, a revoked token, another
// workspace's admin, and a signed-in browser made to post from another site;
// none sees what only members of the workspace may see, none but the
// signed-in browser of its own site changes anything.
func TestReliabilityWebIsolation(t *testing.T) {
	// With a gateway (of one disabled server: nothing to start), so that
	// its page and form are swept too.
	gwFile := filepath.Join(t.TempDir(), "gateway.json")
	if err := os.WriteFile(gwFile, []byte(`{"mcpServers": {"off": {"command": "true", "disabled": true}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "", "--gateway", gwFile)
	if _, errOut, code := srv.cli(t, nil, "workspace", "create", "beta"); code != 0 {
		t.Fatal(errOut)
	}
	token := func(args ...string) string {
		out, errOut, code := srv.cli(t, nil, append([]string{"token", "create"}, args...)...)
		if code != 0 {
			t.Fatal(errOut)
		}
		return strings.TrimSpace(out)
	}
	const marker = "web-sweep-private-marker"
	// The reader's token is named with the marker: only the workspace's
	// admin page shows token names.
	reader := token("--principal", "rita", "--workspace", "default", "--role", "reader", "--name", marker)
	beta := token("--principal", "bob", "--workspace", "beta", "--role", "admin")
	revoked := token("--principal", "rex", "--workspace", "default", "--role", "writer")
	if _, errOut, code := srv.cli(t, nil, "token", "revoke", "4"); code != 0 {
		t.Fatal(errOut)
	}
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	callTool(t, cs, "write_page", map[string]any{"path": "Secret.md", "content": "# Secret\n\n" + marker + " plans\n"})
	callTool(t, cs, "write_page", map[string]any{"path": "Gone.md", "content": "# Gone\n\n" + marker + " gone\n"})
	thread := structured(t, callTool(t, cs, "create_annotation", map[string]any{"doc_path": "Secret.md", "content": marker + " thread", "status": "submitted"}))
	annID := thread["annotation"].(map[string]any)["id"].(string)
	trashID := structured(t, callTool(t, cs, "delete_page", map[string]any{"path": "Gone.md"}))["page_id"].(string)
	// A signed-in browser of the workspace, for the cross-site attempts.
	req, _ := http.NewRequest("POST", srv.URL+"/login", strings.NewReader("token="+url.QueryEscape(srv.AdminToken)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	session := ""
	for _, c := range res.Cookies() {
		if c.Name == "atrium_session" {
			session = c.Value
		}
	}
	if session == "" {
		t.Fatalf("no session from signing in: %d", res.StatusCode)
	}
	sessionID := strings.Fields(strings.Split(strings.TrimSpace(mustCLI(t, srv, "session", "list")), "\n")[1])[0]
	// Task #1, with the marker, and a question to the reader.
	callTool(t, cs, "task_create", map[string]any{"title": marker + " task", "body": marker + " details"})
	callTool(t, cs, "task_ask_question", map[string]any{"issue_number": 1, "target": "rita", "question": marker + " question"})
	state := func() map[string]any {
		task := structured(t, callTool(t, cs, "task_get_context", map[string]any{"issue_number": 1}))
		return map[string]any{
			"task":     task["issue"].(map[string]any)["revision"],
			"comments": len(task["comments"].([]any)),
			"page":     structured(t, callTool(t, cs, "read_page", map[string]any{"path": "Secret.md"}))["revision"],
			"thread":   structured(t, callTool(t, cs, "get_annotation", map[string]any{"annotation_id": annID}))["annotation"].(map[string]any)["status"],
			"trash":    len(structured(t, callTool(t, cs, "list_trash", nil))["pages"].([]any)),
			// What the admin page changes: which tokens are revoked, who
			// is signed in, and a member's role.
			"revoked":  revokedTokens(t, srv),
			"sessions": strings.Count(mustCLI(t, srv, "session", "list"), "\n"),
			"role":     access(t, srv, reader)["role"],
			// What /admin/tracker changes: the workspace's link.
			"tracker": trackerStatus(t, srv),
		}
	}
	before := state()

	type request struct{ method, path, form string }
	var requests []request
	for _, pattern := range web.Routes() {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.TrimSuffix(path, "{$}")
		fill := strings.NewReplacer("{id}", annID)
		switch {
		case strings.HasPrefix(path, "/admin/"):
			// The admin's own token and browser, and the reader, whom a
			// reader would make an admin.
			fill := strings.NewReplacer("/tokens/{id}", "/tokens/1", "/sessions/{id}", "/sessions/"+sessionID, "/dead/{id}", "/dead/1", "/conflicts/{id}", "/conflicts/1", "{handle}", "rita")
			requests = append(requests, request{method, fill.Replace(path), "principal=rita&role=admin&name=taken&kind=github&repo=acme/stolen"})
		case strings.HasPrefix(path, "/trash/{id}"):
			requests = append(requests, request{method, strings.Replace(path, "{id}", trashID, 1), "new_path=Stolen.md"})
		case strings.Contains(path, "{path...}") && method == http.MethodGet:
			for _, p := range []string{"Secret.md", "Secret.md?edit", "Secret.md/history"} { // the page's old addresses too
				requests = append(requests, request{method, strings.Replace(path, "{path...}", p, 1), ""})
			}
		case strings.Contains(path, "{path...}"):
			requests = append(requests, request{method, strings.Replace(path, "{path...}", "Secret.md", 1),
				"content=taken&base_revision=1&destination_path=Stolen.md&revision=1&action=save"})
		case strings.HasPrefix(path, "/tasks/{n}"):
			// Each form of task #1, filled as it would succeed.
			forms := map[string]string{"comment": "type=note&body=taken", "ask": "target=admin&question=taken", "answer": "target=admin&answer=taken",
				"blocked": "reason=taken", "complete": "summary=taken", "status": "status=taken", "edit": "base_revision=1&title=taken", "claim": ""}
			// The route's last segment names its form (none for GET /tasks/{n}).
			requests = append(requests, request{method, strings.Replace(path, "{n}", "1", 1), forms[path[strings.LastIndex(path, "/")+1:]]})
		case method == http.MethodGet:
			requests = append(requests, request{method, fill.Replace(path) + "?q=plans+thread+gone", ""})
		default:
			requests = append(requests, request{method, fill.Replace(path), "doc_path=Secret.md&content=taken&parent_id=" + annID + "&summary=taken&title=taken&ack=i1"})
		}
	}
	send := func(rq request, headers map[string]string) (int, string) {
		t.Helper()
		// An event stream never ends by itself: what it sends first is
		// what this sweep reads of it.
		bound := answerBound
		if strings.HasPrefix(rq.path, "/events") {
			bound = time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), bound)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, rq.method, srv.URL+rq.path, strings.NewReader(rq.form))
		if err != nil {
			t.Fatal(err)
		}
		if rq.form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 32<<10)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil || b.Len() > 1<<20 {
				break
			}
		}
		return res.StatusCode, b.String()
	}
	failed, tried := 0, 0
	bad := func(format string, args ...any) {
		t.Helper()
		failed++
		t.Errorf(format, args...)
	}
	for _, rq := range requests {
		write := rq.method != http.MethodGet
		if rq.path == "/login" || rq.path == "/logout" || strings.HasPrefix(rq.path, "/login?") || strings.HasPrefix(rq.path, "/logout") {
			continue // signing in and out act on the caller's own session only
		}
		callers := map[string]map[string]string{
			"anonymous":               {"Accept": "text/event-stream"},
			"a reader":                {"Authorization": "Bearer " + reader},
			"a revoked token":         {"Authorization": "Bearer " + revoked},
			"another workspace admin": {"Authorization": "Bearer " + beta},
		}
		if write {
			callers["a signed-in browser, from another site"] = map[string]string{"Cookie": "atrium_session=" + session, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
		}
		for who, h := range callers {
			st, body := send(rq, h)
			tried++
			if who != "a reader" && strings.Contains(body, marker) {
				bad("%s %s by %s shows a member's content: %d", rq.method, rq.path, who, st)
			}
			if who == "a revoked token" && st != http.StatusUnauthorized {
				bad("%s %s by %s: %d, want 401", rq.method, rq.path, who, st)
			}
			if who == "a reader" && strings.HasPrefix(rq.path, "/admin") && st != http.StatusForbidden {
				bad("%s %s by %s: %d, want 403: the admin page is for admins", rq.method, rq.path, who, st)
			}
			// A reader marks their own inbox read: their read state only.
			ownReadState := who == "a reader" && rq.path == "/inbox/ack"
			// A reader may check the gateway's health, as over MCP: it
			// probes the upstreams and changes nothing.
			probes := who == "a reader" && rq.path == "/gateway/health"
			if write && st < 400 && !(who == "another workspace admin") && !ownReadState && !probes {
				bad("%s %s by %s: %d, want a refusal", rq.method, rq.path, who, st)
			}
		}
	}
	// The reader follows the workspace's work, not its administration:
	// their replay of every event names no token (the marker is one's
	// name), session, member or role change.
	tried++
	if _, body := send(request{http.MethodGet, "/events?after=0", ""}, map[string]string{"Authorization": "Bearer " + reader}); !strings.Contains(body, "event: page.created") {
		bad("a reader's /events?after=0 replays no page event:\n%.500s", body)
	} else {
		for _, kind := range []string{"event: token.", "event: session.", "event: member.", "event: principal.", "event: workspace.", marker} {
			if strings.Contains(body, kind) {
				bad("a reader's /events?after=0 replays %q, which only admins see", kind)
			}
		}
	}
	if diff := cmp.Diff(before, state()); diff != "" {
		bad("the workspace changed during the sweep (-before +after):\n%s", diff)
	}
	report(t, "web-isolation", "routes", len(web.Routes()), "requests", len(requests), "attempts", tried, "not_refused_or_leaked", failed)
}

// trackerStatus is the workspace's tracker link as `tracker status` says
// it, or the refusal it gives when there is none.
func trackerStatus(t *testing.T, srv *server) string {
	out, errOut, _ := srv.cli(t, nil, "tracker", "status")
	return strings.SplitN(out+errOut, "\n", 2)[0]
}

func mustCLI(t *testing.T, srv *server, args ...string) string {
	t.Helper()
	out, errOut, code := srv.cli(t, nil, args...)
	if code != 0 {
		t.Fatalf("atrium %s: %s", strings.Join(args, " "), errOut)
	}
	return out
}

// revokedTokens are the IDs of the revoked tokens, from atrium token list.
func revokedTokens(t *testing.T, srv *server) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(mustCLI(t, srv, "token", "list")), "\n")[1:] {
		if f := strings.Fields(line); f[len(f)-1] != "-" {
			out = append(out, f[0])
		}
	}
	return out
}

// access is what GET /api/access says of token's holder.
func access(t *testing.T, srv *server, token string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+"/api/access", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("GET /api/access: %d, %v", res.StatusCode, err)
	}
	out["status"] = res.StatusCode
	return out
}
