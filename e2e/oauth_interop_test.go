package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The official TypeScript OAuth clients sign in to the real binary, with the
// person's consent given in a real Chromium: the client prints the
// authorization URL and waits on its own 127.0.0.1 callback listener, the
// browser (signed in to Atrium) opens the URL, the person chooses and clicks
// Allow, and the browser follows the redirect to the client. The scripts
// are interop/oauth-sdk1.mjs and interop/oauth-client2.mjs.

// oauthScript is a running interop script: its stdout is read line by line,
// so that the authorization URL can be acted on while it waits.
type oauthScript struct {
	t    *testing.T
	cmd  *exec.Cmd
	urls chan string // each "AUTHORIZE <url>" line; closed at the end of stdout
	mu   sync.Mutex
	out  strings.Builder // stdout and stderr, for failures
}

func (s *oauthScript) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

type lockedWriter struct{ s *oauthScript }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.s.out.Write(p)
}

// startOAuthScript runs interop/NAME with Node 24, env added.
func startOAuthScript(t *testing.T, bin, name string, env []string, args ...string) *oauthScript {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "interop", name))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "node"), append([]string{script}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(cleanEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1"), env...)
	s := &oauthScript{t: t, cmd: cmd, urls: make(chan string, 4)}
	cmd.Stderr = lockedWriter{s}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		defer close(s.urls)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			line := sc.Text()
			lockedWriter{s}.Write([]byte(line + "\n"))
			if u, ok := strings.CutPrefix(line, "AUTHORIZE "); ok {
				s.urls <- u
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return s
}

// authorizationURL waits for the URL the client sends the person to.
func (s *oauthScript) authorizationURL() string {
	s.t.Helper()
	select {
	case u, ok := <-s.urls:
		if !ok {
			s.cmd.Wait()
			s.t.Fatalf("the client ended without sending the person to sign in:\n%s", s.log())
		}
		return u
	case <-time.After(time.Minute):
		s.t.Fatalf("no authorization URL in a minute:\n%s", s.log())
	}
	return ""
}

// result waits for the script to end and decodes what it saw.
func (s *oauthScript) result() map[string]any {
	s.t.Helper()
	for u := range s.urls {
		s.t.Errorf("the client asked for consent again: %s", u)
	}
	err := s.cmd.Wait()
	if err != nil {
		s.t.Fatalf("the client exited: %v\n%s", err, s.log())
	}
	return lastJSON(s.t, s.log())
}

// signInBrowser is Chromium signed in to srv as the admin, by the login link.
func signInBrowser(t *testing.T, srv *server) *browser {
	t.Helper()
	b := newBrowser(t)
	b.do("sign in with the login link", chromedp.Navigate(srv.URL+"/login?token="+srv.AdminToken), chromedp.WaitVisible(chromedp.CSS(".who")))
	return b
}

// consentInBrowser opens authURL in b as the client sent the person there,
// chooses the workspace, role and principal (as: "" for the person), clicks
// Allow and follows the redirect to the client's callback. It returns the
// consent page's text and where the browser ended.
func consentInBrowser(b *browser, authURL, ws, role, as string) (string, *url.URL) {
	b.t.Helper()
	allow := chromedp.CSS(`button[name=decision][value=approve]`)
	b.do("open the consent page", chromedp.Navigate(authURL), chromedp.WaitVisible(allow))
	page := read(b, "consent page", chromedp.Text(chromedp.CSS("main")))
	b.do("choose what the client gets",
		chromedp.Click(chromedp.CSS(`input[name=workspace][value="`+ws+`"]`)),
		chromedp.SetValue(chromedp.CSS(`select[name="role_`+ws+`"]`), role),
		chromedp.SetValue(chromedp.CSS(`select[name="as_`+ws+`"]`), as))
	b.do("allow, and follow the redirect to the client", chromedp.Click(allow), chromedp.WaitVisible(chromedp.CSS("#mcp-callback")))
	loc, err := url.Parse(read(b, "location", chromedp.Location()))
	if err != nil {
		b.t.Fatal(err)
	}
	return page, loc
}

// typeScriptPackage checks that an npm package of the interop set is
// installed; without it the test skips, unless interop is required.
func typeScriptPackage(t *testing.T, bin, pkg string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(bin, "..", filepath.FromSlash(pkg), "package.json")); err != nil {
		if os.Getenv("ATRIUM_REQUIRE_INTEROP") == "1" {
			t.Fatalf("%s is required (ATRIUM_REQUIRE_INTEROP=1) but not installed: run make interop-deps", pkg)
		}
		t.Skipf("no %s in interop/node_modules: run 'make interop-deps'", pkg)
	}
}

// str reads a string at a path of nested JSON objects.
func str(m map[string]any, path ...string) string {
	var v any = m
	for _, k := range path {
		o, _ := v.(map[string]any)
		v = o[k]
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	return ""
}

// checkOAuthRun checks what an interop script saw, the same for both
// clients: the authorization request, the redirect, the tokens, the grant's
// principal and role, a refresh that gave a new working access token, and
// the revoked refresh token ending every access token of the grant.
func checkOAuthRun(t *testing.T, srv *server, seen map[string]any, handle, role string) {
	t.Helper()
	authURL, err := url.Parse(str(seen, "authorizationURL"))
	if err != nil || !strings.HasPrefix(authURL.String(), srv.URL+"/oauth/authorize?") {
		t.Errorf("authorization URL %q is not the server's authorization endpoint", str(seen, "authorizationURL"))
	}
	q := authURL.Query()
	for k, want := range map[string]string{"response_type": "code", "code_challenge_method": "S256", "resource": srv.MCP(), "client_id": str(seen, "clientId")} {
		if q.Get(k) != want {
			t.Errorf("authorization request %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if len(q.Get("code_challenge")) != 43 {
		t.Errorf("code_challenge %q", q.Get("code_challenge"))
	}
	if str(seen, "callback", "iss") != srv.URL || str(seen, "callback", "hasCode") != "true" || str(seen, "callback", "state") != q.Get("state") {
		t.Errorf("redirect to the client: %v (want iss %s, a code and the state sent)", seen["callback"], srv.URL)
	}

	access, refresh := str(seen, "tokens", "access"), str(seen, "tokens", "refresh")
	if !strings.HasPrefix(access, "ato_") || !strings.HasPrefix(refresh, "atf_") || !strings.EqualFold(str(seen, "tokens", "type"), "bearer") {
		t.Errorf("tokens: %v (want ato_ and atf_, Bearer)", seen["tokens"])
	}
	for _, when := range []string{"", "afterRefresh"} {
		got := seen
		if when != "" {
			got, _ = seen[when].(map[string]any)
		}
		if str(got, "whoami", "handle") != handle || str(got, "whoami", "role") != role || str(got, "whoami", "workspace") != "default" {
			t.Errorf("whoami %s: %v, want %s as %s in default (the consent's choice)", when, got["whoami"], handle, role)
		}
		if tools, _ := got["tools"].([]any); !containsAny(tools, "whoami") || len(tools) < 5 {
			t.Errorf("tools/list %s: %v", when, got["tools"])
		}
	}

	newAccess, newRefresh := str(seen, "refresh", "access"), str(seen, "refresh", "refresh")
	if str(seen, "refresh", "result") != "AUTHORIZED" || str(seen, "refresh", "redirects") != "1" {
		t.Errorf("refresh through the SDK: %v (want AUTHORIZED with no second consent)", seen["refresh"])
	}
	if !strings.HasPrefix(newAccess, "ato_") || newAccess == access || !strings.HasPrefix(newRefresh, "atf_") || newRefresh == refresh {
		t.Errorf("refresh gave access %q refresh %q: want new ones (the refresh token rotates)", newAccess, newRefresh)
	}

	if str(seen, "revocationEndpoint") != srv.URL+"/oauth/revoke" {
		t.Errorf("revocation endpoint %q", str(seen, "revocationEndpoint"))
	}
	if str(seen, "beforeRevoke") != "200" || str(seen, "revoked") != "200" {
		t.Errorf("before revoking the refreshed token answered %s; revocation answered %s", str(seen, "beforeRevoke"), str(seen, "revoked"))
	}
	if str(seen, "afterRevoke", "status") != "401" || str(seen, "afterRevoke", "first") != "401" ||
		!strings.Contains(str(seen, "afterRevoke", "challenge"), `resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("after revocation: %v (want 401 with the discovery challenge, for both access tokens)", seen["afterRevoke"])
	}
	if str(seen, "afterRevoke", "sdk") != "unauthorized" || str(seen, "afterRevoke", "sentBackToConsent") != "true" {
		t.Errorf("the SDK with the revoked token: %v (want it refused and sent back to consent)", seen["afterRevoke"])
	}
	// And from outside Node, the tokens are as dead.
	for _, tok := range []string{access, newAccess} {
		if res, body := httpDo(t, "POST", srv.MCP(), tok); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("revoked grant's access token %.8s…: %d %s", tok, res.StatusCode, body)
		}
	}
	if code, out := tokenPost(t, srv, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {newRefresh}, "client_id": {str(seen, "clientId")}}); code != 400 || out["error"] != "invalid_grant" {
		t.Errorf("the revoked refresh token: %d %v", code, out)
	}
}

func containsAny(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// The TypeScript SDK 1.x: discovery from the 401, dynamic registration, the
// person's consent in Chromium (as themselves, writer), finishAuth, tools,
// a refresh through the SDK's auth(), revocation.
func TestOAuthTypeScriptSDK1InBrowser(t *testing.T) {
	bin := nodeBin(t)
	typeScriptPackage(t, bin, "@modelcontextprotocol/sdk")
	srv := startServe(t, "")
	b := signInBrowser(t, srv)

	s := startOAuthScript(t, bin, "oauth-sdk1.mjs", nil, srv.MCP())
	page, to := consentInBrowser(b, s.authorizationURL(), "default", "writer", "")
	if !strings.Contains(page, "TypeScript SDK 1.x interop") || !strings.Contains(page, "registered itself") || !strings.Contains(page, "signed in as admin") {
		t.Errorf("the consent page does not say who asks:\n%s", page)
	}
	if to.Hostname() != "127.0.0.1" || to.Path != "/callback" || to.Query().Get("iss") != srv.URL {
		t.Errorf("the browser ended at %s, want the client's callback with iss", to)
	}
	seen := s.result()
	if !strings.HasPrefix(str(seen, "clientId"), "atrium-dcr-") {
		t.Errorf("client_id %q: want a dynamically registered one", str(seen, "clientId"))
	}
	checkOAuthRun(t, srv, seen, "admin", "writer")
}

// The TypeScript client 2.x, known by its Client ID Metadata Document
// (served over HTTPS by the test; the server trusts the test's CA and may
// fetch from loopback), signs in acting as an agent the person administers,
// as reader: no registration at all.
func TestOAuthTypeScriptClient2MetadataDocumentInBrowser(t *testing.T) {
	bin := nodeBin(t)
	typeScriptPackage(t, bin, "@modelcontextprotocol/client")

	docs := httptest.NewTLSServer(nil)
	defer docs.Close()
	clientID := docs.URL + "/oauth/ts-client2.json"
	var fetched sync.Map
	docs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Store(r.URL.Path, true)
		if r.URL.Path != "/oauth/ts-client2.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=600")
		// A native client's document: a loopback redirect URI, whose port
		// the client picks when it runs (RFC 8252 §7.3).
		json.NewEncoder(w).Encode(map[string]any{"client_id": clientID, "client_name": "TypeScript client 2.x interop",
			"redirect_uris": []string{"http://127.0.0.1/callback"}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
	})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: docs.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServeEnv(t, []string{"SSL_CERT_FILE=" + ca, "ATRIUM_OAUTH_PRIVATE_DOCUMENTS=1"}, "")
	// The agent is a reader itself: the reader grant's write is then a tool
	// error, not a step-up (which would ask the person again).
	if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "bot", "--kind", "agent", "--workspace", "default", "--role", "reader"); code != 0 {
		t.Fatal(errOut)
	}
	b := signInBrowser(t, srv)

	s := startOAuthScript(t, bin, "oauth-client2.mjs", []string{"NODE_EXTRA_CA_CERTS=" + ca}, srv.MCP(), clientID)
	page, to := consentInBrowser(b, s.authorizationURL(), "default", "reader", "bot")
	host := strings.TrimPrefix(docs.URL, "https://")
	if !strings.Contains(page, "TypeScript client 2.x interop") || !strings.Contains(page, host) || strings.Contains(page, "registered itself") {
		t.Errorf("the consent page does not name the client and where its document lives:\n%s", page)
	}
	if to.Hostname() != "127.0.0.1" || to.Path != "/callback" || to.Query().Get("iss") != srv.URL {
		t.Errorf("the browser ended at %s, want the client's callback with iss", to)
	}
	seen := s.result()
	if str(seen, "clientId") != clientID {
		t.Errorf("client_id %q: want the metadata document's URL %s (no registration)", str(seen, "clientId"), clientID)
	}
	if _, ok := fetched.Load("/oauth/ts-client2.json"); !ok {
		t.Error("the server never fetched the client's metadata document")
	}
	if str(seen, "negotiated") == "" {
		t.Errorf("no protocol version negotiated: %v", seen)
	}
	checkOAuthRun(t, srv, seen, "bot", "reader")
	if str(seen, "readerWrite") != "refused" {
		t.Errorf("a grant consented as reader wrote a page: %v", seen["readerWrite"])
	}
}
