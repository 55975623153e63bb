// Package oidc checks access tokens that an external OpenID Connect issuer
// (Keycloak, Authentik, Entra …) signed, for teams that already run one:
// `atrium serve --auth oidc=ISSUER`. A token is a JWT signed with one of the
// issuer's published keys (RS256 or ES256), from that issuer, for this
// server's MCP URL (the audience check that naive middleware skips and
// Keycloak leaves out unless asked), and current. The caller is the
// principal its configured claim names; what they may do is their role in
// Atrium, as for any token.
package oidc

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
)

// Config configures a Verifier.
type Config struct {
	// Issuer is the issuer's URL, as its tokens' iss says.
	Issuer string
	// Claim names the principal: its value is an Atrium handle. Default
	// preferred_username.
	Claim string
	// HTTPClient fetches the discovery document and the keys; default one
	// with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Verifier checks tokens of one issuer.
type Verifier struct {
	cfg Config

	mu        sync.Mutex
	keys      map[string]crypto.PublicKey // by kid
	fetchedAt time.Time
	jwksURI   string
}

// New returns a verifier for cfg; the keys are fetched on first use.
func New(cfg Config) (*Verifier, error) {
	cfg.Issuer = strings.TrimSuffix(cfg.Issuer, "/")
	if !strings.HasPrefix(cfg.Issuer, "https://") && !strings.HasPrefix(cfg.Issuer, "http://") {
		return nil, fmt.Errorf("--auth oidc=%q: give the issuer's URL", cfg.Issuer)
	}
	if cfg.Claim == "" {
		cfg.Claim = "preferred_username"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Verifier{cfg: cfg}, nil
}

// Issuer is the issuer's URL: the authorization server clients are sent to.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// LooksLikeJWT reports whether a bearer token has a JWT's shape.
func LooksLikeJWT(tok string) bool {
	return strings.Count(tok, ".") == 2 && strings.HasPrefix(tok, "eyJ")
}

// skew is the clock difference tolerated on exp and nbf.
const skew = time.Minute

// Verify checks tok for audience (the MCP URL it is presented at) and
// returns the handle its claim names. Every refusal is unauthenticated.
func (v *Verifier) Verify(ctx context.Context, tok, audience string) (string, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "", refuse("not a JWT")
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := decodePart(parts[0], &header); err != nil {
		return "", refuse("its header is unreadable")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return "", refuse("its signature is unreadable")
	}
	key, err := v.key(ctx, header.Kid)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	switch k := key.(type) {
	case *rsa.PublicKey:
		if header.Alg != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) != nil {
			return "", refuse("its signature does not verify")
		}
	case *ecdsa.PublicKey:
		if header.Alg != "ES256" || len(sig) != 64 || !ecdsa.Verify(k, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			return "", refuse("its signature does not verify")
		}
	default:
		return "", refuse("its key is of a kind Atrium does not take")
	}
	var claims map[string]any
	if err := decodePart(parts[1], &claims); err != nil {
		return "", refuse("its claims are unreadable")
	}
	now := v.cfg.Now()
	switch {
	case claims["iss"] != v.cfg.Issuer:
		return "", refuse("it is from another issuer")
	case !audienceHas(claims["aud"], audience):
		return "", refuse("it is not for %s (its aud)", audience)
	case !timeClaim(claims["exp"]).After(now.Add(-skew)):
		return "", refuse("it has expired")
	case claims["nbf"] != nil && timeClaim(claims["nbf"]).After(now.Add(skew)):
		return "", refuse("it is not valid yet")
	}
	handle, _ := claims[v.cfg.Claim].(string)
	if err := atrium.ValidateName("principal handle", handle); err != nil {
		return "", refuse("its %s claim (%q) is not an Atrium handle", v.cfg.Claim, handle)
	}
	return handle, nil
}

func refuse(format string, args ...any) error {
	return atrium.Errorf(atrium.EUnauthenticated, "invalid access token: "+format, args...)
}

func decodePart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func audienceHas(aud any, want string) bool {
	match := func(s string) bool { return strings.TrimSuffix(s, "/") == strings.TrimSuffix(want, "/") }
	switch a := aud.(type) {
	case string:
		return match(a)
	case []any:
		for _, x := range a {
			if s, ok := x.(string); ok && match(s) {
				return true
			}
		}
	}
	return false
}

func timeClaim(v any) time.Time {
	f, _ := v.(float64)
	return time.Unix(int64(f), 0)
}

// refetchAfter bounds how often an unknown key ID makes the keys be fetched
// again (a key rotated in), and keysFor how long fetched keys are used.
const (
	refetchAfter = 30 * time.Second
	keysFor      = time.Hour
)

// key returns the issuer's key kid, fetching the keys when they are stale
// or do not have it.
func (v *Verifier) key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.cfg.Now()
	k, ok := v.keys[kid]
	if ok && now.Sub(v.fetchedAt) < keysFor {
		return k, nil
	}
	if v.keys != nil && now.Sub(v.fetchedAt) < refetchAfter {
		if ok {
			return k, nil
		}
		return nil, refuse("it is signed with a key the issuer does not publish")
	}
	keys, err := v.fetchKeys(ctx)
	if err != nil {
		if ok { // the issuer is down: the key it published still stands
			return k, nil
		}
		return nil, atrium.Errorf(atrium.EUnavailable, "the OIDC issuer's keys could not be fetched: %v", err)
	}
	v.keys, v.fetchedAt = keys, now
	if k, ok = keys[kid]; !ok {
		return nil, refuse("it is signed with a key the issuer does not publish")
	}
	return k, nil
}

func (v *Verifier) getJSON(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
}

func (v *Verifier) fetchKeys(ctx context.Context) (map[string]crypto.PublicKey, error) {
	if v.jwksURI == "" {
		var disc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, v.cfg.Issuer+"/.well-known/openid-configuration", &disc); err != nil {
			return nil, err
		}
		if strings.TrimSuffix(disc.Issuer, "/") != v.cfg.Issuer || disc.JWKSURI == "" {
			return nil, errors.New("the discovery document names another issuer or no jwks_uri")
		}
		v.jwksURI = disc.JWKSURI
	}
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Kid string `json:"kid"`
			Use string `json:"use"`
			N   string `json:"n"`
			E   string `json:"e"`
			Crv string `json:"crv"`
			X   string `json:"x"`
			Y   string `json:"y"`
		} `json:"keys"`
	}
	if err := v.getJSON(ctx, v.jwksURI, &set); err != nil {
		return nil, err
	}
	out := map[string]crypto.PublicKey{}
	num := func(s string) *big.Int {
		b, _ := base64.RawURLEncoding.DecodeString(s)
		return new(big.Int).SetBytes(b)
	}
	for _, k := range set.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch {
		case k.Kty == "RSA" && k.N != "" && k.E != "":
			out[k.Kid] = &rsa.PublicKey{N: num(k.N), E: int(num(k.E).Int64())}
		case k.Kty == "EC" && k.Crv == "P-256":
			x, errX := base64.RawURLEncoding.DecodeString(k.X)
			y, errY := base64.RawURLEncoding.DecodeString(k.Y)
			if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
				continue
			}
			// The parse checks the point is on the curve.
			if pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...)); err == nil {
				out[k.Kid] = pub
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("the issuer publishes no RS256 or ES256 signing key")
	}
	return out, nil
}
