package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
)

var testUpstream = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "web-gw")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "testupstream")
	if out, err := exec.Command("go", "build", "-o", bin, "../gateway/internal/testupstream").CombinedOutput(); err != nil {
		return "", &exec.Error{Name: string(out), Err: err}
	}
	return bin, nil
})

func upstreamBin(t *testing.T) string {
	t.Helper()
	bin, err := testUpstream()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// tokenFor makes a token of role for a new principal of the site's
// workspace.
func (s *site) tokenFor(t *testing.T, handle string, role atrium.Role) string {
	t.Helper()
	secret, _, err := s.ids.CreateToken(context.Background(), identity.TokenRequest{Principal: handle, Workspace: atrium.DefaultWorkspace, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

func (s *site) as(token, method, target string) (int, string, http.Header) {
	req := httptest.NewRequest(method, target, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String(), rec.Header()
}

// /gateway shows each server: its state, tools exposed and held back with
// why, its last error; the stderr tail to admins only. A member who is not
// an admin sees the rest; an anonymous visitor is sent to sign in.
func TestGatewayPage(t *testing.T) {
	bin := upstreamBin(t)
	s := newSiteWithGateway(t, map[string]any{
		"good": map[string]any{"command": bin, "env": map[string]string{"TESTUP_STDERR_LINES": "2"},
			"health": []map[string]any{{"tool": "echo", "arguments": map[string]any{"text": "all deployments green"}}}},
		"dead": map[string]any{"command": bin, "env": map[string]string{"TESTUP_CRASH_AT_START": "1"}},
		"off":  map[string]any{"command": bin, "disabled": true},
	})
	code, body := s.get("/gateway")
	if code != http.StatusOK {
		t.Fatalf("GET /gateway: %d\n%s", code, body)
	}
	for _, want := range []string{
		`href="/gateway"`, // offered in the navigation
		`id="upstream-good"`, `data-state="ready"`, `<code>good_echo</code>`,
		`<code>good_wipe</code> <span class="reason">destructive: destructiveHint is true`,
		`id="upstream-dead"`, "exit status 3", `id="stderr-dead"`, "crashing at start as asked", "noise line 1",
		`id="upstream-off"`, `data-state="stopped"`, "disabled in the gateway file",
		`<code>test://notes/readme</code>`,
		`action="/gateway/health"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}

	reader := s.tokenFor(t, "rita", atrium.RoleReader)
	code, body, _ = s.as(reader, "GET", "/gateway")
	if code != http.StatusOK || !strings.Contains(body, `<code>good_echo</code>`) || !strings.Contains(body, "exit status 3") {
		t.Fatalf("a reader's /gateway: %d\n%s", code, body)
	}
	if strings.Contains(body, "crashing at start") || strings.Contains(body, "noise line") || strings.Contains(body, `id="stderr-`) {
		t.Error("a reader is shown a server's stderr")
	}
	code, _, hdr := s.as("", "GET", "/gateway")
	if code != http.StatusSeeOther || hdr.Get("Location") != "/login" {
		t.Errorf("an anonymous /gateway: %d to %q, want 303 to /login", code, hdr.Get("Location"))
	}
	if code, _, _ := s.as("", "POST", "/gateway/health"); code != http.StatusUnauthorized {
		t.Errorf("an anonymous health check: %d, want 401", code)
	}

	// Check health now: the report, above the servers. A reader's check
	// makes no tool call (ping and tools/list), saying so; after a writer's
	// full one, a reader is shown that.
	code, body, _ = s.as(reader, "POST", "/gateway/health")
	if code != http.StatusOK || strings.Contains(body, "tools/call echo") || !strings.Contains(body, "ping and tools/list only") {
		t.Fatalf("a reader's POST /gateway/health: %d, want no tool call and why\n%s", code, body)
	}
	writer := s.tokenFor(t, "wes", atrium.RoleWriter)
	for _, who := range []string{writer, reader} {
		code, body, _ = s.as(who, "POST", "/gateway/health")
		if code != http.StatusOK {
			t.Fatalf("POST /gateway/health: %d\n%s", code, body)
		}
		for _, want := range []string{`id="health"`, `data-health="degraded"`, `id="health-good" data-health="healthy"`, `id="health-dead" data-health="unhealthy"`, "ping: answered", "tools/call echo: answered", `<pre class="probe-result">all deployments green</pre>`, `id="upstream-good"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the health report lacks %q", want)
			}
		}
	}
	if !strings.Contains(body, "(the last full check)") {
		t.Error("a reader's cached report does not say it is the last full check")
	}
	if strings.Contains(body, `id="health-off"`) {
		t.Error("a disabled server is in the health report")
	}
}

// Without a gateway, /gateway says so and the navigation does not offer it.
func TestGatewayPageWithoutAGateway(t *testing.T) {
	s := newSiteWithGateway(t, nil)
	code, body := s.get("/gateway")
	if code != http.StatusNotFound || !strings.Contains(body, "no gateway is configured") {
		t.Errorf("GET /gateway: %d\n%s", code, body)
	}
	if _, home := s.get("/"); strings.Contains(home, `href="/gateway"`) {
		t.Error("the navigation offers /gateway with no gateway")
	}
	if code, _, _ := s.as(s.secret, "POST", "/gateway/health"); code != http.StatusNotFound {
		t.Errorf("POST /gateway/health: %d", code)
	}
}

// /events?gateway says gateway.changed, with no id, when a server changes;
// a stream that did not ask is not told.
func TestGatewayChangesReachTheEventStream(t *testing.T) {
	bin := upstreamBin(t)
	s := newSiteWithGateway(t, map[string]any{"up": map[string]any{"command": bin}})
	srv := httptest.NewServer(s.mux)
	t.Cleanup(srv.Close) // after the streams' own clean-ups, registered later

	open := func(query string) *bufio.Reader {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/events"+query, nil)
		req.Header.Set("Authorization", "Bearer "+s.secret)
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET /events%s: %v %v", query, res, err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return bufio.NewReader(res.Body)
	}
	watching, other := open("?gateway"), open("")
	lines := make(chan string, 100)
	go func() {
		for {
			l, err := watching.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()
	otherLines := make(chan string, 100)
	go func() {
		for {
			l, err := other.ReadString('\n')
			if err != nil {
				return
			}
			otherLines <- l
		}
	}()
	// The server goes: its state changes.
	path := s.gw.Path()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{}})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.gw.Reload(); err != nil {
		t.Fatal(err)
	}
	var got []string
	deadline := time.After(20 * time.Second)
	for !strings.Contains(strings.Join(got, ""), "event: gateway.changed\n") {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the stream ended: %q", got)
			}
			got = append(got, l)
		case <-deadline:
			t.Fatalf("no gateway.changed: %q", got)
		}
	}
	if k := len(got) - 1; k > 0 && strings.HasPrefix(got[k-1], "id:") {
		t.Errorf("gateway.changed carries an id: %q", got)
	}
	time.Sleep(300 * time.Millisecond)
	for {
		select {
		case l := <-otherLines:
			if strings.Contains(l, "gateway.changed") {
				t.Error("a stream that did not ask for the gateway was told of it")
			}
			continue
		default:
		}
		break
	}
}
