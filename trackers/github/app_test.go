package github_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
	"github.com/atrium-hq/atrium/trackers/github"
	"github.com/atrium-hq/atrium/trackers/githubfake"
)

func MustKey(tb testing.TB) *rsa.PrivateKey {
	tb.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// MustKeyFile writes k as GitHub hands App keys out (PKCS#1 PEM), or as
// PKCS#8, into dir; it returns the path.
func MustKeyFile(tb testing.TB, dir, name string, k *rsa.PrivateKey, pkcs8 bool) string {
	tb.Helper()
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}
	if pkcs8 {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			tb.Fatal(err)
		}
		block = &pem.Block{Type: "PRIVATE KEY", Bytes: b}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(block), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// An App links the repository (its installation found with its JWT),
// an agent with its own App posts as that App's bot, one without posts as
// the link's; installation tokens are minted once an identity and again
// when they expire, without the caller seeing it.
func TestAppsAgainstFake(t *testing.T) {
	f := githubfake.Start()
	defer f.Close()
	f.Token = "not-for-apps"
	linkKey, dedeKey := MustKey(t), MustKey(t)
	f.AddApp(11, "atrium-link", &linkKey.PublicKey)
	dedeInst := f.AddApp(22, "dede-app", &dedeKey.PublicKey)
	c, err := github.New(github.Config{Owner: "acme", Repo: "app", APIURL: f.URL, MaxWait: 10 * time.Millisecond,
		App:  &github.App{ID: 11, Key: linkKey},
		Apps: map[string]github.App{github.EnvHandle("dede"): {ID: 22, Key: dedeKey, InstallationID: dedeInst}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	title := "Add auth"
	i, err := c.CreateIssue(ctx, tasks.IssueFields{Title: &title})
	if err != nil || i.Author != "atrium-link[bot]" {
		t.Fatalf("create as the link's App: %+v %v", i, err)
	}
	if !c.Own("dede") || !c.Own("DeDe") || c.Own("baron") {
		t.Errorf("Own: dede %v, baron %v; want dede's App only", c.Own("dede"), c.Own("baron"))
	}
	if x, err := c.PostComment(ctx, 1, "dede", "❓ @baron Question: REST?"); err != nil || x.Author != "dede-app[bot]" {
		t.Errorf("dede's comment: %+v %v, want it by dede-app[bot]", x, err)
	}
	if x, err := c.PostComment(ctx, 1, "baron", "💬 @dede Answer: GraphQL."); err != nil || x.Author != "atrium-link[bot]" {
		t.Errorf("baron's comment: %+v %v, want it by the link's App", x, err)
	}
	if _, err := c.Comments(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if m := f.Mints(); m != 2 {
		t.Errorf("%d tokens minted, want 2 (one per identity, each lasting an hour)", m)
	}
	if b := c.Budget(); b.Calls != 4 || b.Limit != 5000 {
		t.Errorf("budget %+v, want 4 calls (the agent's among them) and the link's limit", b)
	}

	// Tokens of a second: each expires between calls and is minted anew.
	f.TokenTTL(time.Second)
	short, err := github.New(github.Config{Owner: "acme", Repo: "app", APIURL: f.URL, App: &github.App{ID: 11, Key: linkKey}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := short.Issue(ctx, 1); err != nil {
		t.Fatal(err)
	}
	minted := f.Mints()
	time.Sleep(1500 * time.Millisecond)
	if _, err := short.PostComment(ctx, 1, "baron", "after the token expired"); err != nil {
		t.Fatalf("a call after the token expired: %v", err)
	}
	if f.Mints() <= minted {
		t.Errorf("no token minted after the first expired (%d mints)", f.Mints())
	}

	// The fake refuses an expired installation token as GitHub does.
	it, err := ghinstallation.New(http.DefaultTransport, 22, dedeInst, pemOf(dedeKey))
	if err != nil {
		t.Fatal(err)
	}
	it.BaseURL = f.URL
	tok, err := it.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale, _ := github.New(github.Config{Owner: "acme", Repo: "app", APIURL: f.URL, Token: tok})
	if _, err := stale.Issue(ctx, 1); err != nil {
		t.Fatalf("a fresh installation token: %v", err)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := stale.Issue(ctx, 1); atrium.ErrorCode(err) != atrium.EPermission || !strings.Contains(err.Error(), "Bad credentials") {
		t.Errorf("an expired installation token: %v, want Bad credentials", err)
	}

	// A key that is not the App's mints nothing.
	wrong, _ := github.New(github.Config{Owner: "acme", Repo: "app", APIURL: f.URL, App: &github.App{ID: 11, Key: dedeKey}})
	if _, err := wrong.Issue(ctx, 1); atrium.ErrorCode(err) != atrium.EPermission {
		t.Errorf("an App with another's key: %v, want permission_denied", err)
	}
	if _, err := github.New(github.Config{Owner: "acme", Repo: "app", Token: "t", App: &github.App{ID: 11, Key: linkKey}}); atrium.ErrorCode(err) != atrium.EInvalid {
		t.Errorf("a token and an App: %v", err)
	}
}

func pemOf(k *rsa.PrivateKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

func TestAppsFromEnv(t *testing.T) {
	dir := t.TempDir()
	k := MustKey(t)
	p1 := MustKeyFile(t, dir, "dede.pem", k, false)
	MustKeyFile(t, dir, "baron.pem", k, true)
	apps := filepath.Join(dir, "apps.json")
	os.WriteFile(apps, []byte(`{"ba-ron": {"app_id": 7, "private_key_path": "baron.pem"}, "dede": {"app_id": 8, "private_key_path": "baron.pem"}}`), 0o600)
	link, agents, err := github.AppsFromEnv([]string{
		"ATRIUM_AGENT=dede", "GITHUB_TOKEN=x",
		"ATRIUM_GITHUB_APP_ID=5", "ATRIUM_GITHUB_APP_PRIVATE_KEY_PATH=" + p1, "ATRIUM_GITHUB_APP_INSTALLATION_ID=55",
		"ATRIUM_AGENT_DEDE_GITHUB_APP_ID=6", "ATRIUM_AGENT_DEDE_GITHUB_APP_PRIVATE_KEY_PATH=" + p1,
		"ATRIUM_GITHUB_APPS=" + apps,
	})
	if err != nil {
		t.Fatal(err)
	}
	if link == nil || link.ID != 5 || link.InstallationID != 55 || !link.Key.Equal(k) {
		t.Errorf("link: %v", link)
	}
	if len(agents) != 2 || agents["DEDE"].ID != 6 || agents["BA_RON"].ID != 7 || agents["BA_RON"].InstallationID != 0 {
		t.Errorf("agents: %v (want dede's from the environment over the file's, and ba-ron's)", agents)
	}
	if s := fmt.Sprintf("%v %+v %#v", link, agents, *link); strings.Contains(s, k.D.String()[:20]) {
		t.Errorf("printing an App shows its key: %s", s)
	}
	if link, agents, err := github.AppsFromEnv([]string{"GITHUB_TOKEN=x", "ATRIUM_AGENT=dede"}); err != nil || link != nil || len(agents) != 0 {
		t.Errorf("no App: %v %v %v", link, agents, err)
	}

	secret := filepath.Join(dir, "garbled.pem")
	os.WriteFile(secret, []byte("-----BEGIN RSA PRIVATE KEY-----\nTOPSECRETKEYMATERIAL\n-----END RSA PRIVATE KEY-----\n"), 0o600)
	for _, tc := range []struct {
		env  []string
		says []string
	}{
		{[]string{"ATRIUM_GITHUB_APP_ID=5", "ATRIUM_GITHUB_APP_PRIVATE_KEY_PATH=" + dir + "/nope.pem"}, []string{"ATRIUM_GITHUB_APP_PRIVATE_KEY_PATH", "nope.pem", "no such file"}},
		{[]string{"ATRIUM_AGENT_DE_DE_GITHUB_APP_ID=5", "ATRIUM_AGENT_DE_DE_GITHUB_APP_PRIVATE_KEY_PATH=" + secret}, []string{"ATRIUM_AGENT_DE_DE_GITHUB_APP_PRIVATE_KEY_PATH", "garbled.pem", "not an RSA private key"}},
		{[]string{"ATRIUM_AGENT_DEDE_GITHUB_APP_ID=5"}, []string{"ATRIUM_AGENT_DEDE_GITHUB_APP_PRIVATE_KEY_PATH"}},
		{[]string{"ATRIUM_GITHUB_APP_ID=five", "ATRIUM_GITHUB_APP_PRIVATE_KEY_PATH=" + p1}, []string{"ATRIUM_GITHUB_APP_ID", "five"}},
		{[]string{"ATRIUM_GITHUB_APPS=" + secret}, []string{"ATRIUM_GITHUB_APPS", "garbled.pem", "not a JSON object"}},
		{[]string{"ATRIUM_GITHUB_APPS=" + dir + "/none.json"}, []string{"ATRIUM_GITHUB_APPS", "none.json"}},
	} {
		_, _, err := github.AppsFromEnv(tc.env)
		if atrium.ErrorCode(err) != atrium.EInvalid {
			t.Errorf("%v: %v, want invalid", tc.env, err)
			continue
		}
		for _, w := range tc.says {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not say %q", tc.env, err, w)
			}
		}
		if strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("the error shows the key file's content: %v", err)
		}
	}
}
