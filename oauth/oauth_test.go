package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/oauth"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	svc    *services.Services
	oauth  *oauth.Service
	clock  *clock
	person atrium.Principal
}

const issuer = "http://127.0.0.1:8080"

func setup(t *testing.T, cfg oauth.Config) *fixture {
	t.Helper()
	c := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	svc := servicestest.MustOpen(t, store.SQLite, &store.Options{Now: c.now})
	is, err := svc.Identity.IssueToken(context.Background(), identity.TokenRequest{Principal: "ann", Workspace: atrium.DefaultWorkspace, Role: atrium.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	ann, err := svc.Identity.Authenticate(context.Background(), is.Secret, "")
	if err != nil {
		t.Fatal(err)
	}
	svc.ConfigureOAuth(cfg)
	return &fixture{svc: svc, oauth: svc.OAuth, clock: c, person: ann.Principal}
}

func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

const verifier = "a-verifier-of-more-than-forty-three-characters-0123456789"

// signIn runs a client through consent and the code exchange.
func (f *fixture) signIn(t *testing.T, role atrium.Role) (client string, tok oauth.TokenResponse) {
	t.Helper()
	ctx := context.Background()
	reg, err := f.oauth.Register(ctx, []byte(`{"client_name":"T","redirect_uris":["http://127.0.0.1:9/cb"]}`), "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	client = reg["client_id"].(string)
	p, err := f.oauth.CheckAuthorize(ctx, issuer, oauth.AuthRequest{ClientID: client, RedirectURI: "http://127.0.0.1:9/cb", ResponseType: "code",
		CodeChallenge: challenge(verifier), CodeChallengeMethod: "S256", Resource: issuer + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	to, err := f.oauth.Approve(ctx, f.person, p, oauth.Consent{Workspace: atrium.DefaultWorkspace, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(to)
	tok, err = f.oauth.Token(ctx, url.Values{"grant_type": {"authorization_code"}, "code": {u.Query().Get("code")}, "code_verifier": {verifier}}, client)
	if err != nil {
		t.Fatal(err)
	}
	return client, tok
}

func (f *fixture) works(access string) bool {
	_, err := f.svc.Identity.AuthenticateAccess(context.Background(), access, "", issuer+"/mcp")
	return err == nil
}

func oauthCode(err error) string {
	var oe *oauth.Error
	if errors.As(err, &oe) {
		return oe.Code
	}
	return ""
}

// After the grace, the refresh token before the newest is a copy: using it
// revokes the grant, and its newest access token stops working.
func TestRefreshGraceEnds(t *testing.T) {
	f := setup(t, oauth.Config{DCR: true, RefreshGrace: time.Minute})
	ctx := context.Background()
	client, first := f.signIn(t, atrium.RoleWriter)
	second, err := f.oauth.Token(ctx, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}}, client)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.add(30 * time.Second)
	if _, err := f.oauth.Token(ctx, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}}, client); err != nil {
		t.Errorf("within the grace: %v", err)
	}
	f.clock.add(time.Minute)
	if _, err := f.oauth.Token(ctx, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first.RefreshToken}}, client); oauthCode(err) != "invalid_grant" {
		t.Errorf("after the grace: %v", err)
	}
	if f.works(second.AccessToken) {
		t.Error("the grant's access token still works after its refresh token was reused")
	}
}

// Codes and access tokens expire; an expired access token is refused.
func TestCodesAndTokensExpire(t *testing.T) {
	f := setup(t, oauth.Config{DCR: true})
	ctx := context.Background()
	_, tok := f.signIn(t, atrium.RoleReader)
	if !f.works(tok.AccessToken) || tok.Scope != oauth.ScopeRead || tok.ExpiresIn != 3600 {
		t.Fatalf("fresh token: %+v", tok)
	}
	f.clock.add(61 * time.Minute)
	if f.works(tok.AccessToken) {
		t.Error("an access token works after it expired")
	}
	reg, _ := f.oauth.Register(ctx, []byte(`{"redirect_uris":["http://127.0.0.1:9/cb"]}`), "192.0.2.1")
	client := reg["client_id"].(string)
	p, err := f.oauth.CheckAuthorize(ctx, issuer, oauth.AuthRequest{ClientID: client, ResponseType: "code", CodeChallenge: challenge(verifier), CodeChallengeMethod: "S256", Resource: issuer + "/mcp/"})
	if err != nil {
		t.Fatal(err)
	}
	to, err := f.oauth.Approve(ctx, f.person, p, oauth.Consent{Workspace: atrium.DefaultWorkspace, Role: atrium.RoleReader})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(to)
	f.clock.add(2 * time.Minute)
	if _, err := f.oauth.Token(ctx, url.Values{"grant_type": {"authorization_code"}, "code": {u.Query().Get("code")}, "code_verifier": {verifier}}, client); oauthCode(err) != "invalid_grant" {
		t.Errorf("an expired code: %v", err)
	}
}

// A request the client cannot be sent back from (unknown client, a
// redirect_uri it did not register) is an error for the person; anything
// else goes back to the client, with its state and the issuer.
func TestCheckAuthorize(t *testing.T) {
	f := setup(t, oauth.Config{DCR: true})
	ctx := context.Background()
	reg, _ := f.oauth.Register(ctx, []byte(`{"redirect_uris":["http://127.0.0.1:9/cb","myapp.example:/cb"]}`), "192.0.2.1")
	client := reg["client_id"].(string)
	good := oauth.AuthRequest{ClientID: client, RedirectURI: "http://127.0.0.1:9/cb", ResponseType: "code", CodeChallenge: challenge(verifier),
		CodeChallengeMethod: "S256", Resource: issuer + "/w/default/mcp", State: "st"}
	for _, c := range []struct {
		name     string
		change   func(*oauth.AuthRequest)
		redirect string // the error code sent back, or "" for one shown
	}{
		{"unknown client", func(r *oauth.AuthRequest) { r.ClientID = "atrium-dcr-nope" }, ""},
		{"unregistered redirect", func(r *oauth.AuthRequest) { r.RedirectURI = "https://evil.example/cb" }, ""},
		{"missing redirect with two registered", func(r *oauth.AuthRequest) { r.RedirectURI = "" }, ""},
		{"plain PKCE", func(r *oauth.AuthRequest) { r.CodeChallengeMethod = "plain" }, "invalid_request"},
		{"no PKCE", func(r *oauth.AuthRequest) { r.CodeChallenge = "" }, "invalid_request"},
		{"implicit flow", func(r *oauth.AuthRequest) { r.ResponseType = "token" }, "unsupported_response_type"},
		{"no resource", func(r *oauth.AuthRequest) { r.Resource = "" }, "invalid_target"},
		{"another server's resource", func(r *oauth.AuthRequest) { r.Resource = "http://127.0.0.1:8081/mcp" }, "invalid_target"},
		{"not an MCP path", func(r *oauth.AuthRequest) { r.Resource = issuer + "/api/pages" }, "invalid_target"},
		{"bad workspace name", func(r *oauth.AuthRequest) { r.Resource = issuer + "/w/../mcp" }, "invalid_target"},
	} {
		req := good
		c.change(&req)
		_, err := f.oauth.CheckAuthorize(ctx, issuer, req)
		var re *oauth.RedirectError
		switch {
		case c.redirect == "" && (err == nil || errors.As(err, &re)):
			t.Errorf("%s: %v (want an error shown to the person)", c.name, err)
		case c.redirect != "" && !errors.As(err, &re):
			t.Errorf("%s: %v (want a redirect)", c.name, err)
		case c.redirect != "":
			u, _ := url.Parse(re.To)
			if q := u.Query(); q.Get("error") != c.redirect || q.Get("state") != "st" || q.Get("iss") != issuer || !strings.HasPrefix(re.To, "http://127.0.0.1:9/cb?") {
				t.Errorf("%s: redirect %s", c.name, re.To)
			}
		}
	}
	// A native app's loopback listener may take any port (RFC 8252).
	req := good
	req.RedirectURI = "http://127.0.0.1:54321/cb"
	if p, err := f.oauth.CheckAuthorize(ctx, issuer, req); err != nil || p.Workspace != "default" {
		t.Errorf("loopback on another port: %v", err)
	}
}

// Metadata documents come from public addresses only: the check is on the
// connection, so the server at 127.0.0.1 never hears the request.
func TestDocumentsFromPrivateAddressesAreRefused(t *testing.T) {
	var hits atomic.Int32
	docs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer docs.Close()
	f := setup(t, oauth.Config{})
	for _, id := range []string{docs.URL + "/client.json", "https://169.254.169.254/client.json", "https://[::1]:1/client.json", "https://10.1.2.3/client.json"} {
		_, err := f.oauth.Client(context.Background(), id)
		if oauthCode(err) != "invalid_client" || !strings.Contains(err.Error(), "public addresses only") {
			t.Errorf("%s: %v", id, err)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the private address was reached %d times", hits.Load())
	}
	for _, id := range []string{"http://example.com/client.json", "https://example.com/", "https://user@example.com/c.json"} {
		if _, err := f.oauth.Client(context.Background(), id); oauthCode(err) != "invalid_client" {
			t.Errorf("%s is not a document URL, and no registered client: %v", id, err)
		}
	}
}

// A document too large, too slow, or naming another client is refused; a
// good one is kept, and its last good copy stands in for a day when its
// host fails, until the host says it is gone.
func TestMetadataDocuments(t *testing.T) {
	var mode atomic.Value
	mode.Store("good")
	var srvURL string
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := srvURL + r.URL.Path
		switch mode.Load() {
		case "good":
			json.NewEncoder(w).Encode(map[string]any{"client_id": id, "client_name": "Doc", "redirect_uris": []string{"https://app.example/cb"}})
		case "huge":
			json.NewEncoder(w).Encode(map[string]any{"client_id": id, "redirect_uris": []string{"https://app.example/cb"}, "pad": strings.Repeat("x", 20000)})
		case "slow":
			time.Sleep(2 * time.Second)
		case "other":
			json.NewEncoder(w).Encode(map[string]any{"client_id": "https://else.example/c.json", "redirect_uris": []string{"https://app.example/cb"}})
		case "secret":
			json.NewEncoder(w).Encode(map[string]any{"client_id": id, "client_secret": "s", "redirect_uris": []string{"https://app.example/cb"}})
		case "down":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "gone":
			w.WriteHeader(http.StatusGone)
		}
	}))
	defer docs.Close()
	srvURL = docs.URL
	f := setup(t, oauth.Config{AllowPrivateDocuments: true, DocumentTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	for _, m := range []string{"huge", "slow", "other", "secret"} {
		mode.Store(m)
		start := time.Now()
		if _, err := f.oauth.Client(ctx, docs.URL+"/"+m+".json"); oauthCode(err) != "invalid_client" {
			t.Errorf("%s document: %v", m, err)
		}
		if time.Since(start) > 1500*time.Millisecond {
			t.Errorf("%s document: took %v", m, time.Since(start))
		}
	}
	id := docs.URL + "/client.json"
	mode.Store("good")
	if c, err := f.oauth.Client(ctx, id); err != nil || c.Name != "Doc" {
		t.Fatalf("good document: %+v %v", c, err)
	}
	mode.Store("down")
	f.clock.add(2 * time.Hour) // past its freshness: fetched again, and the host is down
	if c, err := f.oauth.Client(ctx, id); err != nil || c.Name != "Doc" {
		t.Errorf("host down, last good copy: %+v %v", c, err)
	}
	f.clock.add(25 * time.Hour)
	if _, err := f.oauth.Client(ctx, id); err == nil {
		t.Error("a copy more than a day old stood in")
	}
	mode.Store("good")
	if _, err := f.oauth.Client(ctx, id); err != nil {
		t.Fatal(err)
	}
	f.clock.add(2 * time.Hour)
	mode.Store("gone")
	if _, err := f.oauth.Client(ctx, id); oauthCode(err) != "invalid_client" {
		t.Errorf("gone: %v", err)
	}
	mode.Store("down")
	if _, err := f.oauth.Client(ctx, id); err == nil {
		t.Error("the copy of a document its host said was gone stood in")
	}
}

// Registered clients nobody uses, holding no grant, are collected.
func TestIdleClientsAreCollected(t *testing.T) {
	f := setup(t, oauth.Config{DCR: true})
	ctx := context.Background()
	held, _ := f.signIn(t, atrium.RoleReader)
	idle, _ := f.oauth.Register(ctx, []byte(`{"redirect_uris":["http://127.0.0.1:9/cb"]}`), "192.0.2.2")
	f.clock.add(8 * 24 * time.Hour)
	if _, err := f.oauth.Register(ctx, []byte(`{"redirect_uris":["http://127.0.0.1:9/cb"]}`), "192.0.2.3"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.oauth.Client(ctx, idle["client_id"].(string)); oauthCode(err) != "invalid_client" {
		t.Errorf("an idle client was kept: %v", err)
	}
	if _, err := f.oauth.Client(ctx, held); err != nil {
		t.Errorf("a client holding a grant was collected: %v", err)
	}
}

// Dynamic registration off: the endpoint says so, and metadata does not
// advertise it.
func TestRegistrationOff(t *testing.T) {
	f := setup(t, oauth.Config{})
	if _, err := f.oauth.Register(context.Background(), []byte(`{"redirect_uris":["http://127.0.0.1:9/cb"]}`), "192.0.2.1"); err == nil {
		t.Error("registered with DCR off")
	}
	if _, ok := f.oauth.ServerMetadata(issuer)["registration_endpoint"]; ok {
		t.Error("metadata advertises registration with DCR off")
	}
}

// Every grant's use is in the event log (token.used, at most once a minute
// per grant), with the client and the MCP URL, for admins only.
func TestUseIsAudited(t *testing.T) {
	f := setup(t, oauth.Config{DCR: true})
	client, tok := f.signIn(t, atrium.RoleWriter)
	for range 3 {
		if !f.works(tok.AccessToken) {
			t.Fatal("token refused")
		}
	}
	f.svc.Identity.Close() // the use is written in the background
	admin, err := f.svc.Identity.AdminActor(context.Background(), atrium.DefaultWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	events, err := f.svc.Activity.Since(atrium.NewContextWithActor(context.Background(), admin), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	used := 0
	for _, e := range events {
		if e.Kind == "token.used" {
			used++
			if !strings.Contains(string(e.Payload), client) || !strings.Contains(string(e.Payload), issuer+"/mcp") {
				t.Errorf("token.used: %s", e.Payload)
			}
		}
	}
	if used != 1 {
		t.Errorf("%d token.used events for three uses within a minute (want 1)", used)
	}
}
