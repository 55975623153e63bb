package oauthclient_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/atrium-hq/atrium/oauthclient"
)

// Tokens are kept sealed: the file holds no secret in the clear, opens
// with the folder's key only, under the key it was saved for, and a file
// changed by a byte does not open.
func TestStoreSealsTokens(t *testing.T) {
	dir := t.TempDir()
	s, err := oauthclient.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	saved := &oauthclient.Saved{ClientID: "c1", TokenURL: "https://as.example/token",
		Token: &oauth2.Token{AccessToken: "access-secret", RefreshToken: "refresh-secret", Expiry: time.Now().Add(time.Hour).Round(time.Second)}}
	if err := s.Save("https://mcp.example/mcp", saved); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("https://mcp.example/mcp")
	if err != nil || got.Token.RefreshToken != "refresh-secret" || got.ClientID != "c1" || !got.Token.Expiry.Equal(saved.Token.Expiry) {
		t.Fatalf("load: %+v %v", got, err)
	}
	if other, err := s.Load("https://other.example/mcp"); other != nil || err != nil {
		t.Errorf("another key: %+v %v", other, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	var token string
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "secret") {
			t.Errorf("%s holds a secret in the clear", f)
		}
		if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", f, fi.Mode().Perm())
		}
		if strings.HasSuffix(f, ".token") {
			token = f
		}
	}
	b, _ := os.ReadFile(token)
	b[len(b)-1] ^= 1
	os.WriteFile(token, b, 0o600)
	if _, err := s.Load("https://mcp.example/mcp"); err == nil {
		t.Error("a changed file opened")
	}
	// Another folder's key does not open it.
	b[len(b)-1] ^= 1
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, filepath.Base(token)), b, 0o600)
	s2, _ := oauthclient.OpenStore(other)
	s2.Save("x", saved) // makes its own key
	if _, err := s2.Load("https://mcp.example/mcp"); err == nil {
		t.Error("a file opened under another folder's key")
	}
	if err := s.Forget("https://mcp.example/mcp"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load("https://mcp.example/mcp"); got != nil {
		t.Error("forgotten tokens still load")
	}
}
