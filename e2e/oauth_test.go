package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// browser is a person's browser signed in to Atrium: a cookie jar that does
// not follow redirects, so that a test sees where each answer sends it.
type personBrowser struct {
	t   testing.TB
	srv *server
	c   *http.Client
}

func signedIn(t testing.TB, srv *server, token string) *personBrowser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &personBrowser{t: t, srv: srv, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	res, body := b.do("POST", srv.URL+"/login", url.Values{"token": {token}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", res.StatusCode, body)
	}
	return b
}

func (b *personBrowser) do(method, u string, form url.Values) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.srv.URL)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res, string(out)
}

// consent opens the consent page of authURL, as the person's browser does
// when a client sends it there, and answers it with choice (workspace,
// role_WS, as_WS, decision). It returns where the answer sends the browser.
func (b *personBrowser) consent(authURL string, choice url.Values) (*url.URL, error) {
	b.t.Helper()
	res, page := b.do("GET", authURL, nil)
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("consent page: %d %s %s", res.StatusCode, res.Header.Get("Location"), page)
	}
	if !strings.Contains(page, "Let ") || !strings.Contains(page, `name="decision" value="approve"`) {
		return nil, fmt.Errorf("consent page does not ask:\n%s", page)
	}
	u, _ := url.Parse(authURL)
	form := u.Query()
	for k, v := range choice {
		form[k] = v
	}
	res, page = b.do("POST", b.srv.URL+"/oauth/authorize", form)
	if res.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("consent answer: %d %s", res.StatusCode, page)
	}
	return url.Parse(res.Header.Get("Location"))
}

func approve(ws, role, as string) url.Values {
	return url.Values{"workspace": {ws}, "role_" + ws: {role}, "as_" + ws: {as}, "decision": {"approve"}}
}

// fetcher is the go-sdk client's AuthorizationCodeFetcher: the person's
// browser consents with choice, and the code comes back from the redirect.
func (b *personBrowser) fetcher(choice url.Values) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		to, err := b.consent(args.URL, choice)
		if err != nil {
			return nil, err
		}
		q := to.Query()
		if q.Get("error") != "" {
			return nil, fmt.Errorf("authorization refused: %s %s", q.Get("error"), q.Get("error_description"))
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// oauthConnect connects the go-sdk client to endpoint through handler.
func oauthConnect(t testing.TB, endpoint string, h auth.OAuthHandler) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, OAuthHandler: h, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func whoami(t testing.TB, cs *mcp.ClientSession) map[string]any {
	t.Helper()
	return structured(t, callTool(t, cs, "whoami", nil))
}

// tokenPost posts form to the token (or revocation) endpoint.
func tokenPost(t testing.TB, srv *server, path string, form url.Values) (int, map[string]any) {
	t.Helper()
	res, err := http.PostForm(srv.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// The go-sdk's OAuth client signs in to Atrium by dynamic registration:
// discovery from the 401, registration, the person's consent in the
// browser, the code for tokens with PKCE and the resource, then tools. The
// tokens rotate on refresh, the one before the newest is taken once more
// within the grace, an older one revokes the grant, a token works only at
// the MCP URL it was issued for, and API tokens keep working beside OAuth.
func TestOAuthSignInWithGoSDKClient(t *testing.T) {
	srv := startServe(t, "")
	person := signedIn(t, srv, srv.AdminToken)
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "Go SDK client", RedirectURIs: []string{"http://127.0.0.1:1/callback"}, GrantTypes: []string{"authorization_code", "refresh_token"}}},
		AuthorizationCodeFetcher: person.fetcher(approve("default", "writer", "")),
		RequestRefreshToken:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := oauthConnect(t, srv.MCP(), h)
	if err != nil {
		t.Fatalf("connect with OAuth: %v\n%s", err, srv.stderr)
	}
	me := whoami(t, cs)
	if handleOf(me) != "admin" || me["role"] != "writer" || me["workspace"] != "default" {
		t.Errorf("whoami over OAuth: %v (want admin as writer, the role consented, not admin's own)", me)
	}
	ts, _ := h.TokenSource(context.Background())
	tok, err := ts.Token()
	if err != nil || !strings.HasPrefix(tok.AccessToken, "ato_") || !strings.HasPrefix(tok.RefreshToken, "atf_") {
		t.Fatalf("tokens: %v %v", tok, err)
	}

	// The access token works at the MCP URL it was issued for, nowhere else.
	if res, body := httpDo(t, "POST", srv.URL+"/w/default/mcp", tok.AccessToken); res.StatusCode != 401 ||
		!strings.Contains(string(body), "issued for "+srv.MCP()) || !strings.Contains(res.Header.Get("WWW-Authenticate"), `resource_metadata="`+srv.URL+`/.well-known/oauth-protected-resource/w/default/mcp"`) {
		t.Errorf("access token at another MCP URL: %d %s %q", res.StatusCode, body, res.Header.Get("WWW-Authenticate"))
	}
	if res, body := httpDo(t, "GET", srv.URL+"/api/pages", tok.AccessToken); res.StatusCode != 401 || !strings.Contains(string(body), "only at the MCP endpoint") {
		t.Errorf("access token on REST: %d %s", res.StatusCode, body)
	}
	// An API token on the same endpoint is taken before any OAuth challenge.
	if api := connectHTTP(t, srv.MCP(), srv.AdminToken, ""); whoami(t, api)["role"] != "admin" {
		t.Error("API token beside OAuth")
	}

	// Refresh: a new pair; the old refresh token once more within the
	// grace; then a token two rotations old revokes the grant.
	client := tokenClientID(t, srv, tok.AccessToken)
	code, r1 := tokenPost(t, srv, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}})
	if code != 200 || r1["access_token"] == tok.AccessToken || r1["scope"] != "workspace:read workspace:write" {
		t.Fatalf("refresh: %d %v", code, r1)
	}
	code, r2 := tokenPost(t, srv, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r1["refresh_token"].(string)}, "client_id": {client}})
	if code != 200 {
		t.Fatalf("second refresh: %d %v", code, r2)
	}
	if code, again := tokenPost(t, srv, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r1["refresh_token"].(string)}, "client_id": {client}}); code != 200 {
		t.Errorf("the previous refresh token within the grace: %d %v", code, again)
	}
	if code, old := tokenPost(t, srv, "/oauth/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}, "client_id": {client}}); code != 400 || old["error"] != "invalid_grant" {
		t.Errorf("a refresh token two rotations old: %d %v", code, old)
	}
	if res, body := httpDo(t, "POST", srv.MCP(), r2["access_token"].(string)); res.StatusCode != 401 {
		t.Errorf("after a reused refresh token the grant is revoked, but its access token answers %d %s", res.StatusCode, body)
	}
}

// tokenClientID is the client an access token was issued to, as the admin's
// token list says.
func tokenClientID(t testing.TB, srv *server, access string) string {
	t.Helper()
	out, errOut, code := srv.cli(t, nil, "token", "list", "--json")
	if code != 0 {
		t.Fatalf("token list: %s", errOut)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("token list: %v\n%s", err, out)
	}
	for i := len(list) - 1; i >= 0; i-- {
		if c, _ := list[i]["client"].(string); c != "" {
			return c
		}
	}
	t.Fatalf("no OAuth grant in the token list:\n%s", out)
	return ""
}

// A client known by its Client ID Metadata Document (the 2025-11-25 way)
// signs in acting as an agent the person administers, with the role they
// chose; the consent page names where the document lives.
func TestOAuthClientIDMetadataDocument(t *testing.T) {
	docs := httptest.NewTLSServer(nil)
	defer docs.Close()
	clientID := docs.URL + "/oauth/client.json"
	docs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/oauth/client.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"client_id": clientID, "client_name": "Docs Client", "redirect_uris": []string{"http://127.0.0.1:1/callback"},
			"grant_types": []string{"authorization_code", "refresh_token"}, "token_endpoint_auth_method": "none"})
	})
	// The server trusts the test's certificate authority, and fetches
	// documents from loopback (which it refuses outside tests).
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: docs.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServeEnv(t, []string{"SSL_CERT_FILE=" + ca, "ATRIUM_OAUTH_PRIVATE_DOCUMENTS=1"}, "")
	if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "bot", "--kind", "agent", "--workspace", "default", "--role", "writer"); code != 0 {
		t.Fatal(errOut)
	}
	person := signedIn(t, srv, srv.AdminToken)
	var page string
	asked := 0
	choice := approve("default", "reader", "bot")
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: clientID},
		RedirectURL:                    "http://127.0.0.1:1/callback",
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			asked++
			_, page = person.do("GET", args.URL, nil)
			return person.fetcher(choice)(ctx, args)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := oauthConnect(t, srv.MCP(), h)
	if err != nil {
		t.Fatalf("connect with a metadata document: %v\n%s", err, srv.stderr)
	}
	if me := whoami(t, cs); handleOf(me) != "bot" || me["role"] != "reader" {
		t.Errorf("whoami: %v (want the agent bot, as reader)", me)
	}
	host := strings.TrimPrefix(docs.URL, "https://")
	if !strings.Contains(page, "Docs Client") || !strings.Contains(page, host) || !strings.Contains(page, "agent bot") {
		t.Errorf("the consent page does not say who asks and where it is described:\n%s", page)
	}
	// A reader grant cannot write, whatever the agent itself may do: the
	// call is refused with insufficient_scope, the client asks the person
	// again, they grant reader again, and the call stays refused.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_page", Arguments: map[string]any{"path": "x.md", "content": "x"}})
	if err == nil && !res.IsError {
		t.Error("a grant consented as reader wrote a page")
	}
	if asked != 2 {
		t.Errorf("the person was asked %d times (want 2: the sign-in, then the step-up)", asked)
	}
}

func handleOf(me map[string]any) string {
	p, _ := me["principal"].(map[string]any)
	h, _ := p["handle"].(string)
	return h
}

func callToolRaw(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// pkce is a verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	verifier = strings.Repeat("v", 20) + fmt.Sprint(len(os.Args)) + strings.Repeat("x", 30)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// register registers a client dynamically and returns its ID.
func register(t testing.TB, srv *server, redirect string) string {
	t.Helper()
	res, err := http.Post(srv.URL+"/oauth/register", "application/json", strings.NewReader(`{"client_name":"Abuse","redirect_uris":["`+redirect+`"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != 201 {
		t.Fatalf("register: %d %v", res.StatusCode, out)
	}
	return out["client_id"].(string)
}

// Abuse through the real binary: each attempt is refused, and nothing is
// granted by it.
func TestOAuthRefusesAbuse(t *testing.T) {
	srv := startServe(t, "")
	person := signedIn(t, srv, srv.AdminToken)
	const redirect = "http://127.0.0.1:1/callback"
	client := register(t, srv, redirect)
	verifier, challenge := pkce()
	authURL := func(extra url.Values) string {
		q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "code_challenge": {challenge},
			"code_challenge_method": {"S256"}, "resource": {srv.MCP()}, "state": {"s1"}}
		for k, v := range extra {
			q[k] = v
		}
		return srv.URL + "/oauth/authorize?" + q.Encode()
	}
	codeFor := func() string {
		to, err := person.consent(authURL(nil), approve("default", "writer", ""))
		if err != nil {
			t.Fatal(err)
		}
		if to.Query().Get("iss") != srv.URL || to.Query().Get("state") != "s1" {
			t.Errorf("redirect lacks iss or state: %s", to)
		}
		return to.Query().Get("code")
	}
	exchange := func(code, verifier string) (int, map[string]any) {
		return tokenPost(t, srv, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
			"client_id": {client}, "redirect_uri": {redirect}, "resource": {srv.MCP()}})
	}

	t.Run("wrong code_verifier", func(t *testing.T) {
		if code, out := exchange(codeFor(), strings.Repeat("w", 50)); code != 400 || out["error"] != "invalid_grant" {
			t.Errorf("%d %v", code, out)
		}
	})
	t.Run("code replayed", func(t *testing.T) {
		c := codeFor()
		code, first := exchange(c, verifier)
		if code != 200 {
			t.Fatalf("first exchange: %d %v", code, first)
		}
		if code, second := exchange(c, verifier); code != 400 || second["error"] != "invalid_grant" {
			t.Errorf("replay: %d %v", code, second)
		}
		if res, body := httpDo(t, "POST", srv.MCP(), first["access_token"].(string)); res.StatusCode != 401 {
			t.Errorf("the replayed code's first grant still works: %d %s", res.StatusCode, body)
		}
	})
	t.Run("resource of another server", func(t *testing.T) {
		res, _ := person.do("GET", authURL(url.Values{"resource": {"https://evil.example/mcp"}}), nil)
		if to, _ := url.Parse(res.Header.Get("Location")); res.StatusCode != 302 || to.Query().Get("error") != "invalid_target" {
			t.Errorf("%d %s", res.StatusCode, res.Header.Get("Location"))
		}
	})
	t.Run("token for another workspace", func(t *testing.T) {
		if _, errOut, code := srv.cli(t, nil, "workspace", "create", "other"); code != 0 {
			t.Fatal(errOut)
		}
		to, err := person.consent(authURL(url.Values{"resource": {srv.URL + "/w/default/mcp"}}), approve("default", "reader", ""))
		if err != nil {
			t.Fatal(err)
		}
		_, out := exchange(to.Query().Get("code"), verifier)
		if out["error"] == nil {
			t.Fatalf("the resource differs from the request's, yet: %v", out)
		}
		to, _ = person.consent(authURL(url.Values{"resource": {srv.URL + "/w/default/mcp"}}), approve("default", "reader", ""))
		code, out := tokenPost(t, srv, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {to.Query().Get("code")}, "code_verifier": {verifier}, "client_id": {client}})
		if code != 200 {
			t.Fatalf("exchange: %d %v", code, out)
		}
		if res, body := httpDo(t, "POST", srv.URL+"/w/other/mcp", out["access_token"].(string)); res.StatusCode != 401 {
			t.Errorf("a token for /w/default/mcp at /w/other/mcp: %d %s", res.StatusCode, body)
		}
		// And the consent page will not grant a workspace the resource does not name.
		res, page := person.do("POST", srv.URL+"/oauth/authorize", mergeValues(mustQuery(authURL(url.Values{"resource": {srv.URL + "/w/default/mcp"}})), approve("other", "reader", "")))
		if res.StatusCode != 403 || res.Header.Get("Location") != "" {
			t.Errorf("consent to another workspace than the resource's: %d %s", res.StatusCode, page)
		}
	})
	t.Run("consent above the person's role", func(t *testing.T) {
		if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "wendy", "--workspace", "default", "--role", "writer"); code != 0 {
			t.Fatal(errOut)
		}
		out, _, _ := srv.cli(t, nil, "token", "create", "--principal", "wendy")
		wendy := signedIn(t, srv, tokenRE.FindString(out))
		res, page := wendy.do("POST", srv.URL+"/oauth/authorize", mergeValues(mustQuery(authURL(nil)), approve("default", "admin", "")))
		if res.StatusCode != 403 || res.Header.Get("Location") != "" || !strings.Contains(page, "cannot grant admin") {
			t.Errorf("a writer granting admin: %d %s\n%s", res.StatusCode, res.Header.Get("Location"), page)
		}
		res, page = wendy.do("POST", srv.URL+"/oauth/authorize", mergeValues(mustQuery(authURL(nil)), approve("default", "reader", "admin")))
		if res.StatusCode != 404 && res.StatusCode != 403 || res.Header.Get("Location") != "" {
			t.Errorf("a writer letting a client act as another principal: %d %s", res.StatusCode, page)
		}
	})
	t.Run("a session of a workspace's token grants only there", func(t *testing.T) {
		if _, errOut, code := srv.cli(t, nil, "workspace", "create", "third"); code != 0 {
			t.Fatal(errOut)
		}
		if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "bea", "--workspace", "default", "--role", "writer"); code != 0 {
			t.Fatal(errOut)
		}
		out, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "bea", "--workspace", "third", "--role", "writer")
		if code != 0 {
			t.Fatal(errOut)
		}
		bea := signedIn(t, srv, tokenRE.FindString(out))
		if _, page := bea.do("GET", authURL(nil), nil); strings.Contains(page, `value="default"`) || !strings.Contains(page, `value="third"`) {
			t.Errorf("the consent page offers workspaces the session's token does not grant:\n%s", page)
		}
		res, page := bea.do("POST", srv.URL+"/oauth/authorize", mergeValues(mustQuery(authURL(nil)), approve("default", "reader", "")))
		if res.StatusCode != 403 || res.Header.Get("Location") != "" {
			t.Errorf("consent to a workspace the session's token does not grant: %d %s", res.StatusCode, page)
		}
	})
	t.Run("open redirect", func(t *testing.T) {
		res, page := person.do("GET", authURL(url.Values{"redirect_uri": {"https://evil.example/cb"}}), nil)
		if res.StatusCode != 400 || res.Header.Get("Location") != "" || !strings.Contains(page, "is not one the client") {
			t.Errorf("unregistered redirect_uri: %d %s", res.StatusCode, res.Header.Get("Location"))
		}
		if res, _ := http.Post(srv.URL+"/oauth/register", "application/json", strings.NewReader(`{"redirect_uris":["javascript:alert(1)"]}`)); res.StatusCode != 400 {
			t.Errorf("registering a javascript: redirect: %d", res.StatusCode)
		}
	})
	t.Run("metadata documents at private addresses", func(t *testing.T) {
		for _, id := range []string{"https://127.0.0.1:1/client.json", "https://169.254.169.254/latest/meta-data/client.json", "https://localhost/client.json"} {
			res, page := person.do("GET", authURL(url.Values{"client_id": {id}}), nil)
			if res.StatusCode == 200 || res.StatusCode == 302 || !strings.Contains(page, "public addresses only") {
				t.Errorf("client_id %s: %d %s\n%s", id, res.StatusCode, res.Header.Get("Location"), page)
			}
		}
	})
	t.Run("registration flood", func(t *testing.T) {
		refused := 0
		for range 40 {
			res, err := http.Post(srv.URL+"/oauth/register", "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:1/cb"]}`))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode == 429 {
				refused++
			}
		}
		if refused < 20 { // 20 per address per 10 minutes, counting the test's own
			t.Errorf("40 registrations from one address: %d refused", refused)
		}
	})
	t.Run("unknown client forces re-registration", func(t *testing.T) {
		code, out := tokenPost(t, srv, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {"atc_x"}, "code_verifier": {verifier}, "client_id": {"atrium-dcr-gone"}})
		if code != 401 || out["error"] != "invalid_client" {
			t.Errorf("%d %v", code, out)
		}
	})
	t.Run("revoke", func(t *testing.T) {
		_, out := exchange(codeFor(), verifier)
		access := out["access_token"].(string)
		if res, _ := httpDo(t, "POST", srv.MCP(), access); res.StatusCode == 401 {
			t.Fatal("fresh token refused")
		}
		if code, _ := tokenPost(t, srv, "/oauth/revoke", url.Values{"token": {out["refresh_token"].(string)}, "client_id": {client}}); code != 200 {
			t.Errorf("revoke: %d", code)
		}
		if res, _ := httpDo(t, "POST", srv.MCP(), access); res.StatusCode != 401 {
			t.Errorf("access token after its grant was revoked: %d", res.StatusCode)
		}
	})
}

func mustQuery(u string) url.Values {
	p, _ := url.Parse(u)
	return p.Query()
}

func mergeValues(a, b url.Values) url.Values {
	out := url.Values{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// `atrium call --url` signs in to a remote Atrium with OAuth when it has no
// token: the person approves in the browser ($BROWSER here: curl with their
// session), the tokens are kept encrypted under the data folder, and the next
// call uses them without asking again.
func TestOAuthCLISignsInOnce(t *testing.T) {
	srv := startServe(t, "")
	dir := t.TempDir()
	browser := approvingBrowser(t, srv, "reader")
	data := filepath.Join(dir, "data")
	env := []string{"BROWSER=" + browser}
	out, errOut, code := runAtrium(t, env, "--data-dir", data, "call", "whoami", "--url", srv.MCP())
	if code != 0 || !strings.Contains(out, `"role": "reader"`) || !strings.Contains(errOut, "asks you to sign in") {
		t.Fatalf("first call: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runAtrium(t, []string{"BROWSER=false"}, "--data-dir", data, "call", "whoami", "--url", srv.MCP())
	if code != 0 || !strings.Contains(out, `"role": "reader"`) || strings.Contains(errOut, "sign in") {
		t.Errorf("second call, with the kept token: exit %d\n%s\n%s", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(data, "oauth-tokens", "*"))
	if len(files) < 2 {
		t.Fatalf("no kept token: %v", files)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "ato_") || strings.Contains(string(b), "atf_") {
			t.Errorf("%s holds a token in the clear", f)
		}
		if fi, _ := os.Stat(f); fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s is readable by others: %v", f, fi.Mode())
		}
	}
}

// approvingBrowser writes a $BROWSER for the CLI: a script that signs the
// admin of srv in with curl and approves the page it is given with role.
func approvingBrowser(t *testing.T, srv *server, role string) string {
	t.Helper()
	browser := filepath.Join(t.TempDir(), "browser.sh")
	script := `#!/bin/sh
set -eu
jar=$(mktemp)
curl -sf -c "$jar" -b "$jar" -o /dev/null -d "token=` + srv.AdminToken + `" "` + srv.URL + `/login"
q=${1#*\?}
to=$(curl -sf -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' -H "Origin: ` + srv.URL + `" --data "$q&workspace=default&role_default=` + role + `&decision=approve" "` + srv.URL + `/oauth/authorize")
curl -sf -o /dev/null "$to"
`
	if err := os.WriteFile(browser, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return browser
}

// The gateway in front of a server that takes only OAuth (here another
// Atrium): it says who must sign in, \`atrium gateway login\` signs it in
// once in the browser, and the running gateway then reaches the server with
// the kept tokens — its tools are served, called as the person approved.
func TestGatewaySignsInToAnOAuthServer(t *testing.T) {
	upstream := startServe(t, "")
	dir := t.TempDir()
	gwPath := filepath.Join(dir, "gateway.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": map[string]any{"url": upstream.MCP()}}})
	if err := os.WriteFile(gwPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startServe(t, "", "--gateway", gwPath)
	waitFor(t, "the gateway to say who must sign in", func() bool {
		return strings.Contains(gw.stderr.String(), "atrium gateway login up")
	})
	out, errOut, code := runAtrium(t, []string{"BROWSER=" + approvingBrowser(t, upstream, "writer")}, "--data-dir", gw.DataDir, "gateway", "login", "up", "--gateway", gwPath)
	if code != 0 || !strings.Contains(out, "signed in to up") {
		t.Fatalf("gateway login: exit %d\n%s\n%s", code, out, errOut)
	}
	cs := connectHTTP(t, gw.MCP(), gw.AdminToken, "")
	// The gateway's next attempt is on its backoff (up to a minute).
	var res *mcp.CallToolResult
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up_whoami"})
		if err == nil && !r.IsError {
			res = r
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not reach the server with the kept tokens: %v %v\n%s", r, err, gw.stderr)
		}
	}
	me := structured(t, res)
	if handleOf(me) != "admin" || me["role"] != "writer" {
		t.Errorf("up_whoami through the gateway: %v", me)
	}
}

// The same from the gateway page: an admin starts the sign-in there,
// follows the link to the server's authorization page, approves, and comes
// back to the gateway, which then serves the server's tools at once.
func TestGatewayPageSignsInToAnOAuthServer(t *testing.T) {
	upstream := startServe(t, "")
	gwPath := filepath.Join(t.TempDir(), "gateway.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"up": map[string]any{"url": upstream.MCP()}}})
	if err := os.WriteFile(gwPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startServe(t, "", "--gateway", gwPath)
	admin := signedIn(t, gw, gw.AdminToken)
	if _, page := admin.do("GET", gw.URL+"/gateway", nil); !strings.Contains(page, `action="/gateway/up/login"`) {
		t.Fatalf("the gateway page offers no sign-in:\n%s", page)
	}
	res, page := admin.do("POST", gw.URL+"/gateway/up/login", url.Values{})
	link := regexp.MustCompile(`id="sign-in-link" href="([^"]+)"`).FindStringSubmatch(page)
	if res.StatusCode != 200 || link == nil {
		t.Fatalf("start the sign-in: %d\n%s", res.StatusCode, page)
	}
	authURL := html.UnescapeString(link[1])
	if !strings.HasPrefix(authURL, upstream.URL+"/oauth/authorize?") || !strings.Contains(authURL, url.QueryEscape(gw.URL+"/gateway/oauth/callback")) {
		t.Errorf("authorization URL: %s", authURL)
	}
	to, err := signedIn(t, upstream, upstream.AdminToken).consent(authURL, approve("default", "reader", ""))
	if err != nil {
		t.Fatal(err)
	}
	if res, page := admin.do("GET", to.String(), nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/gateway" {
		t.Fatalf("back at the gateway: %d %s", res.StatusCode, page)
	}
	cs := connectHTTP(t, gw.MCP(), gw.AdminToken, "")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up_whoami"})
		if err == nil && !r.IsError {
			if me := structured(t, r); handleOf(me) != "admin" || me["role"] != "reader" {
				t.Errorf("up_whoami: %v", me)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not reach the server after the sign-in: %v %v\n%s", r, err, gw.stderr)
		}
	}
	// An answer nobody waits for (replayed) is refused.
	if res, _ := admin.do("GET", to.String(), nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("a replayed answer: %d", res.StatusCode)
	}
}

// Step-up: a client the person granted reading only, whose call needs
// writing, gets 403 insufficient_scope naming the scope that would do; the
// go-sdk client asks the person again, they grant writer, and the call goes
// through. A reader's client gets no such chance: its membership is the
// limit, and the call is a tool error.
func TestOAuthStepUp(t *testing.T) {
	srv := startServe(t, "")
	person := signedIn(t, srv, srv.AdminToken)
	var asked []string
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "step-up", RedirectURIs: []string{"http://127.0.0.1:1/callback"}}},
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			u, _ := url.Parse(args.URL)
			asked = append(asked, u.Query().Get("scope"))
			role := "reader"
			if len(asked) > 1 {
				role = "writer"
			}
			return person.fetcher(approve("default", role, ""))(ctx, args)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := oauthConnect(t, srv.MCP(), h)
	if err != nil {
		t.Fatal(err)
	}
	if me := whoami(t, cs); me["role"] != "reader" {
		t.Fatalf("first grant: %v", me)
	}
	if res, _ := httpDo(t, "POST", srv.MCP(), mustAccess(t, h)); res.StatusCode == 403 {
		t.Fatal("a request that is no tool call is refused as a step-up")
	}
	if r := callTool(t, cs, "write_page", map[string]any{"path": "Stepped.md", "content": "# up"}); r.IsError {
		t.Fatalf("write after step-up: %+v", r.StructuredContent)
	}
	if len(asked) != 2 || !strings.Contains(asked[1], "workspace:write") {
		t.Errorf("the person was asked %d times, for %q", len(asked), asked)
	}
	if me := whoami(t, cs); me["role"] != "writer" {
		t.Errorf("after step-up: %v", me)
	}

	// A reader's own client: its membership is the limit, no step-up.
	if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "rhea", "--workspace", "default", "--role", "reader"); code != 0 {
		t.Fatal(errOut)
	}
	out, _, _ := srv.cli(t, nil, "token", "create", "--principal", "rhea")
	rhea := signedIn(t, srv, tokenRE.FindString(out))
	rh, _ := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "reader's", RedirectURIs: []string{"http://127.0.0.1:1/callback"}}},
		AuthorizationCodeFetcher: rhea.fetcher(approve("default", "reader", "")),
	})
	rcs, err := oauthConnect(t, srv.MCP(), rh)
	if err != nil {
		t.Fatal(err)
	}
	if r := callToolRaw(t, rcs, "write_page", map[string]any{"path": "No.md", "content": "x"}); !r.IsError {
		t.Error("a reader's client wrote")
	}
}

func mustAccess(t *testing.T, h *auth.AuthorizationCodeHandler) string {
	t.Helper()
	ts, _ := h.TokenSource(context.Background())
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	return tok.AccessToken
}

// A person lists the clients they connected and revokes one, without being
// an admin; nobody else can revoke it for them there.
func TestOAuthConnectionsRevokedByTheirOwner(t *testing.T) {
	srv := startServe(t, "")
	if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "wren", "--workspace", "default", "--role", "writer"); code != 0 {
		t.Fatal(errOut)
	}
	out, _, _ := srv.cli(t, nil, "token", "create", "--principal", "wren")
	wren := signedIn(t, srv, tokenRE.FindString(out))
	h := oauthHandler(t, wren)
	if _, err := oauthConnect(t, srv.MCP(), h); err != nil {
		t.Fatal(err)
	}
	access := mustAccess(t, h)
	_, page := wren.do("GET", srv.URL+"/connections", nil)
	m := regexp.MustCompile(`action="/connections/(\d+)/revoke"`).FindStringSubmatch(page)
	if m == nil || !strings.Contains(page, "OAuth: bench") {
		t.Fatalf("connections page:\n%s", page)
	}
	admin := signedIn(t, srv, srv.AdminToken)
	if res, _ := admin.do("POST", srv.URL+"/connections/"+m[1]+"/revoke", url.Values{}); res.StatusCode != 404 {
		t.Errorf("someone else revoking it there: %d", res.StatusCode)
	}
	if res, _ := httpDo(t, "POST", srv.MCP(), access); res.StatusCode == 401 {
		t.Fatal("revoked by someone else")
	}
	if res, _ := wren.do("POST", srv.URL+"/connections/"+m[1]+"/revoke", url.Values{}); res.StatusCode != 303 {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	if res, _ := httpDo(t, "POST", srv.MCP(), access); res.StatusCode != 401 {
		t.Errorf("a revoked client's token answers %d", res.StatusCode)
	}
	if _, page := wren.do("GET", srv.URL+"/connections", nil); !strings.Contains(page, "revoked") {
		t.Error("the page does not show it revoked")
	}
}
