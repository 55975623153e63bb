package githubfake

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// GitHub Apps as GitHub authenticates them: an App signs a JWT (RS256, iss
// its ID, at most 10 minutes long) with its private key, trades it at
// POST /app/installations/{id}/access_tokens for an installation token
// (ghs_…, an hour on GitHub; TokenTTL here), and the token then acts as
// "{slug}[bot]" until it expires. GET /repos/{owner}/{repo}/installation
// finds an App's installation with its JWT. Every App is installed on
// every repository of the fake.

// appState is the Apps a fake knows and the tokens it minted, under s.mu.
type appState struct {
	byID      map[int64]*fakeApp
	byInstall map[int64]*fakeApp
	tokens    map[string]installToken
	ttl       time.Duration
	mints     int
}

type fakeApp struct {
	id, install int64
	slug        string
	pub         *rsa.PublicKey
}

type installToken struct {
	app     *fakeApp
	expires time.Time
}

// AddApp registers a GitHub App with the public half of its key, installed
// on every repository; it returns the installation's ID.
func (s *Server) AddApp(id int64, slug string, pub *rsa.PublicKey) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &s.apps
	if a.byID == nil {
		a.byID, a.byInstall, a.tokens = map[int64]*fakeApp{}, map[int64]*fakeApp{}, map[string]installToken{}
	}
	x := &fakeApp{id: id, install: 70000 + int64(len(a.byID)) + 1, slug: slug, pub: pub}
	a.byID[id], a.byInstall[x.install] = x, x
	return x.install
}

// TokenTTL sets how long the installation tokens minted from now on last
// (GitHub's: an hour, the default).
func (s *Server) TokenTTL(d time.Duration) {
	s.mu.Lock()
	s.apps.ttl = d
	s.mu.Unlock()
}

// Mints is the number of installation tokens minted.
func (s *Server) Mints() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.apps.mints
}

// serveApp answers the App endpoints; false: req is not one of them.
func (s *Server) serveApp(w http.ResponseWriter, req *http.Request) bool {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) == 4 && parts[0] == "app" && parts[1] == "installations" && parts[3] == "access_tokens" && req.Method == http.MethodPost:
		app, msg := s.appJWT(req)
		if app == nil {
			s.fail(w, http.StatusUnauthorized, msg)
			return true
		}
		id, _ := strconv.ParseInt(parts[2], 10, 64)
		if s.apps.byInstall[id] != app {
			s.fail(w, http.StatusNotFound, "Not Found")
			return true
		}
		ttl := s.apps.ttl
		if ttl == 0 {
			ttl = time.Hour
		}
		b := make([]byte, 18)
		rand.Read(b)
		tok := "ghs_" + hex.EncodeToString(b)
		exp := time.Now().Add(ttl)
		s.apps.tokens[tok] = installToken{app: app, expires: exp}
		s.apps.mints++
		s.write(w, http.StatusCreated, map[string]any{
			"token": tok, "expires_at": exp.UTC().Format(time.RFC3339),
			"permissions":          map[string]string{"issues": "write", "metadata": "read"},
			"repository_selection": "all",
		})
		return true
	case len(parts) == 4 && parts[0] == "repos" && parts[3] == "installation" && req.Method == http.MethodGet:
		app, msg := s.appJWT(req)
		if app == nil {
			s.fail(w, http.StatusUnauthorized, msg)
			return true
		}
		s.write(w, http.StatusOK, map[string]any{
			"id": app.install, "app_id": app.id, "app_slug": app.slug, "target_type": "Organization",
			"account":              map[string]any{"login": parts[1], "type": "Organization"},
			"repository_selection": "all", "permissions": map[string]string{"issues": "write", "metadata": "read"},
		})
		return true
	}
	return false
}

// appJWT is the App whose JWT authenticates req, checked as GitHub does;
// nil and GitHub's message when it does not.
func (s *Server) appJWT(req *http.Request) (*fakeApp, string) {
	const undecodable = "A JSON web token could not be decoded"
	tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	parts := strings.Split(tok, ".")
	if !ok || len(parts) != 3 {
		return nil, undecodable
	}
	var head struct {
		Alg string `json:"alg"`
	}
	var claims struct {
		Iss      json.RawMessage `json:"iss"`
		Iat, Exp int64
	}
	hb, err1 := base64.RawURLEncoding.DecodeString(parts[0])
	cb, err2 := base64.RawURLEncoding.DecodeString(parts[1])
	sig, err3 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(hb, &head) != nil || json.Unmarshal(cb, &claims) != nil || head.Alg != "RS256" {
		return nil, undecodable
	}
	// GitHub takes iss as a number or a numeric string.
	id, err := strconv.ParseInt(strings.Trim(string(claims.Iss), `"`), 10, 64)
	app := s.apps.byID[id]
	if err != nil || app == nil {
		return nil, "'Issuer' claim ('iss') must be an Integer"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(app.pub, crypto.SHA256, sum[:], sig) != nil {
		return nil, undecodable
	}
	now := time.Now().Unix()
	switch {
	case claims.Exp <= now:
		return nil, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
	case claims.Exp-claims.Iat > 600:
		return nil, "'Expiration time' claim ('exp') is too far in the future"
	case claims.Iat > now+60:
		return nil, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
	}
	return app, ""
}

// authorized reports whether req's credentials are good: a live
// installation token, or Token (any when empty). An expired or unknown
// ghs_ token is refused even when any token goes.
func (s *Server) authorized(req *http.Request) bool {
	login, expires := s.actor(req)
	if login == "" {
		return false
	}
	return expires.IsZero() || time.Now().Before(expires)
}

// login is whom req acts as (serve checked it): an installation token's
// App's bot, else Login.
func (s *Server) login(req *http.Request) string {
	l, _ := s.actor(req)
	return l
}

// actor is whom req's credentials name and when they expire (zero: never);
// "" when they name nobody.
func (s *Server) actor(req *http.Request) (string, time.Time) {
	auth := req.Header.Get("Authorization")
	tok, _ := strings.CutPrefix(auth, "token ")
	tok, _ = strings.CutPrefix(tok, "Bearer ")
	if strings.HasPrefix(tok, "ghs_") {
		t, found := s.apps.tokens[tok]
		if !found {
			return "", time.Time{}
		}
		return t.app.slug + "[bot]", t.expires
	}
	if s.Token != "" && auth != "Bearer "+s.Token && auth != "token "+s.Token {
		return "", time.Time{}
	}
	return s.Login, time.Time{}
}
