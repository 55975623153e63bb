package oidc_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/oidc"
)

// A key the issuer rotates in is fetched when a token names it (at most
// every 30 s); while the issuer is down, the keys it published stand; a
// key it never published is refused.
func TestKeysRotateAndOutliveAnOutage(t *testing.T) {
	var (
		mu      sync.Mutex
		keys    = map[string]*rsa.PrivateKey{}
		down    atomic.Bool
		fetches atomic.Int32
		url     string
	)
	add := func(kid string) *rsa.PrivateKey {
		k, _ := rsa.GenerateKey(rand.Reader, 2048)
		mu.Lock()
		keys[kid] = k
		mu.Unlock()
		return k
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			json.NewEncoder(w).Encode(map[string]string{"issuer": url, "jwks_uri": url + "/jwks"})
		case "/jwks":
			fetches.Add(1)
			var set []map[string]string
			mu.Lock()
			for kid, k := range keys {
				set = append(set, map[string]string{"kty": "RSA", "kid": kid, "n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
					"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())})
			}
			mu.Unlock()
			json.NewEncoder(w).Encode(map[string]any{"keys": set})
		}
	}))
	defer srv.Close()
	url = srv.URL
	now := time.Now()
	var clock sync.Mutex
	v, err := oidc.New(oidc.Config{Issuer: url, Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }})
	if err != nil {
		t.Fatal(err)
	}
	advance := func(d time.Duration) { clock.Lock(); now = now.Add(d); clock.Unlock() }
	sign := func(kid string, k *rsa.PrivateKey) string {
		h, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": kid})
		c, _ := json.Marshal(map[string]any{"iss": url, "aud": "https://a.example/mcp", "exp": now.Add(time.Hour).Unix(), "preferred_username": "kim"})
		in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
		sum := sha256.Sum256([]byte(in))
		sig, _ := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
		return in + "." + base64.RawURLEncoding.EncodeToString(sig)
	}
	verify := func(tok string) error {
		_, err := v.Verify(context.Background(), tok, "https://a.example/mcp")
		return err
	}
	k1 := add("k1")
	if err := verify(sign("k1", k1)); err != nil {
		t.Fatal(err)
	}
	k2 := add("k2") // rotated in
	if err := verify(sign("k2", k2)); atrium.ErrorCode(err) != atrium.EUnauthenticated {
		t.Errorf("a new key within 30 s of the last fetch: %v", err)
	}
	advance(31 * time.Second)
	if err := verify(sign("k2", k2)); err != nil {
		t.Errorf("a new key after 30 s: %v", err)
	}
	down.Store(true)
	advance(2 * time.Hour)
	if err := verify(sign("k1", k1)); err != nil {
		t.Errorf("issuer down, a key it published: %v", err)
	}
	rogue, _ := rsa.GenerateKey(rand.Reader, 2048)
	if err := verify(sign("k1", rogue)); atrium.ErrorCode(err) != atrium.EUnauthenticated {
		t.Errorf("a token signed by another key under k1's id: %v", err)
	}
	if n := fetches.Load(); n != 2 {
		t.Errorf("%d key fetches, want 2", n)
	}
}
