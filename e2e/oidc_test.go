package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// issuer is an OpenID Connect issuer on loopback that speaks the real wire
// format (discovery, JWKS) and signs tokens with RS256 or ES256 keys.
type issuer struct {
	*httptest.Server
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	is := &issuer{rsa: rk, ec: ek}
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	is.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			json.NewEncoder(w).Encode(map[string]any{"issuer": is.URL, "jwks_uri": is.URL + "/jwks", "authorization_endpoint": is.URL + "/auth", "token_endpoint": is.URL + "/token"})
		case "/jwks":
			pub, _ := ek.PublicKey.Bytes()
			json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]any{
				{"kty": "RSA", "kid": "r1", "use": "sig", "alg": "RS256", "n": b64(rk.N.Bytes()), "e": b64(big.NewInt(int64(rk.E)).Bytes())},
				{"kty": "EC", "kid": "e1", "use": "sig", "alg": "ES256", "crv": "P-256", "x": b64(pub[1:33]), "y": b64(pub[33:])},
			}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(is.Close)
	return is
}

// token signs claims (iss and a one-hour exp by default) with alg's key.
func (is *issuer) token(t *testing.T, alg string, claims map[string]any) string {
	t.Helper()
	full := map[string]any{"iss": is.URL, "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
	for k, v := range claims {
		if v == nil {
			delete(full, k)
			continue
		}
		full[k] = v
	}
	kid := map[string]string{"RS256": "r1", "ES256": "e1"}[alg]
	h, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT", "kid": kid})
	c, _ := json.Marshal(full)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	switch alg {
	case "RS256":
		sig, _ = rsa.SignPKCS1v15(rand.Reader, is.rsa, crypto.SHA256, sum[:])
	case "ES256":
		r, s, _ := ecdsa.Sign(rand.Reader, is.ec, sum[:])
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// --auth oidc=ISSUER: an external issuer's tokens for this server's MCP URL
// act as the principal their claim names, with that principal's role; a
// token for another audience, expired, from another key or issuer, or naming
// no principal of Atrium's is refused; the resource metadata names the
// issuer; API tokens keep working.
func TestOIDCIssuerTokens(t *testing.T) {
	is := newIssuer(t)
	srv := startServe(t, "", "--auth", "oidc="+is.URL)
	if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "kim", "--workspace", "default", "--role", "reader"); code != 0 {
		t.Fatal(errOut)
	}
	for _, alg := range []string{"RS256", "ES256"} {
		tok := is.token(t, alg, map[string]any{"aud": []string{"account", srv.MCP()}, "preferred_username": "kim"})
		if me := whoami(t, connectHTTP(t, srv.MCP(), tok, "")); handleOf(me) != "kim" || me["role"] != "reader" {
			t.Errorf("%s: whoami %v", alg, me)
		}
	}
	other := newIssuer(t)
	for name, tok := range map[string]string{
		"another audience": is.token(t, "RS256", map[string]any{"aud": "https://else.example/mcp", "preferred_username": "kim"}),
		"no audience":      is.token(t, "RS256", map[string]any{"preferred_username": "kim"}),
		"expired":          is.token(t, "ES256", map[string]any{"aud": srv.MCP(), "preferred_username": "kim", "exp": time.Now().Add(-time.Hour).Unix()}),
		"another issuer":   is.token(t, "RS256", map[string]any{"aud": srv.MCP(), "preferred_username": "kim", "iss": other.URL}),
		"another's key":    other.token(t, "RS256", map[string]any{"aud": srv.MCP(), "preferred_username": "kim", "iss": is.URL}),
		"not a handle":     is.token(t, "RS256", map[string]any{"aud": srv.MCP(), "preferred_username": "Kim@Example.com"}),
	} {
		res, body := httpDo(t, "POST", srv.MCP(), tok)
		if res.StatusCode != 401 || !strings.Contains(res.Header.Get("WWW-Authenticate"), "resource_metadata=") {
			t.Errorf("%s: %d %s %q", name, res.StatusCode, body, res.Header.Get("WWW-Authenticate"))
		}
	}
	stranger := is.token(t, "RS256", map[string]any{"aud": srv.MCP(), "preferred_username": "nobody"})
	if res, body := httpDo(t, "POST", srv.MCP(), stranger); res.StatusCode != 403 || !strings.Contains(string(body), "no principal of Atrium") {
		t.Errorf("a user Atrium does not know: %d %s", res.StatusCode, body)
	}
	good := is.token(t, "RS256", map[string]any{"aud": srv.MCP(), "preferred_username": "kim"})
	if res, _ := httpDo(t, "GET", srv.URL+"/api/pages", good); res.StatusCode != 401 {
		t.Errorf("an issuer's token on REST: %d", res.StatusCode)
	}
	res, body := httpDo(t, "GET", srv.URL+"/.well-known/oauth-protected-resource/mcp", "")
	var prm map[string]any
	json.Unmarshal(body, &prm)
	if res.StatusCode != 200 || prm["resource"] != srv.MCP() || prm["authorization_servers"].([]any)[0] != is.URL {
		t.Errorf("resource metadata: %d %s", res.StatusCode, body)
	}
	if res, _ := httpDo(t, "GET", srv.URL+"/.well-known/oauth-authorization-server", ""); res.StatusCode == 200 {
		t.Error("with an external issuer, Atrium serves authorization server metadata of its own")
	}
	if me := whoami(t, connectHTTP(t, srv.MCP(), srv.AdminToken, "")); me["role"] != "admin" {
		t.Errorf("an API token beside OIDC: %v", me)
	}
}
