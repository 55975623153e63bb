package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// A Client is an OAuth client as the consent page and the flow see it.
type Client struct {
	ID           string
	Kind         string // dcr or cimd
	Name         string
	URI          string // the client's home page, when it says
	RedirectURIs []string
}

// Host is where a client's metadata document lives, shown on the consent
// page so that a person can tell a real client from one named like it.
func (c Client) Host() string {
	if u, err := url.Parse(c.ID); err == nil && c.Kind == "cimd" {
		return u.Host
	}
	return ""
}

// maxDocument bounds a client metadata document or registration.
const maxDocument = 16 << 10

// documentAge bounds how long a document is trusted before it is fetched
// again, whatever its Cache-Control says; lastGood is how long the last good
// copy stands in when its host fails.
const (
	minDocumentAge = 5 * time.Minute
	maxDocumentAge = 24 * time.Hour
	lastGood       = 24 * time.Hour
)

// Client returns the client named by id: a registered one, or the one its
// metadata document describes (fetched when the stored copy is stale).
func (s *Service) Client(ctx context.Context, id string) (Client, error) {
	if id == "" {
		return Client{}, invalidRequest("client_id is missing")
	}
	if len(id) > 512 {
		return Client{}, invalidClient("client_id is too long")
	}
	var stored store.OAuthClient
	err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		stored, err = tx.OAuthClientByID(ctx, id)
		return err
	})
	if err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
		return Client{}, err
	}
	found := err == nil
	if !isDocumentURL(id, s.cfg.AllowPrivateDocuments) {
		if !found {
			return Client{}, invalidClient("unknown client_id %q: register again", id)
		}
		return clientOf(stored), nil
	}
	if found && s.db.Now().Before(stored.FreshUntil) {
		return clientOf(stored), nil
	}
	c, maxAge, status, ferr := s.fetchDocument(ctx, id)
	if ferr == nil {
		raw, _ := json.Marshal(c.RedirectURIs)
		meta, _ := json.Marshal(map[string]any{"client_name": c.Name, "client_uri": c.URI})
		now := s.db.Now()
		err := s.update(ctx, func(tx *store.Tx) error {
			return tx.PutOAuthClient(ctx, store.OAuthClient{ClientID: id, Kind: "cimd", Name: c.Name, RedirectURIs: string(raw), Metadata: string(meta),
				FetchedAt: now, FreshUntil: now.Add(maxAge)})
		})
		return c, err
	}
	if status == http.StatusGone && found {
		_ = s.update(ctx, func(tx *store.Tx) error { return tx.DeleteOAuthClient(ctx, id) })
		return Client{}, invalidClient("the client's metadata document at %s is gone", id)
	}
	if found && retryable(status) && s.db.Now().Sub(stored.FetchedAt) < lastGood {
		s.log.Warn("client metadata document unavailable: using the last good copy", "client_id", id, "fetched_at", stored.FetchedAt, "err", ferr)
		return clientOf(stored), nil
	}
	var oe *Error
	if errors.As(ferr, &oe) {
		return Client{}, oe
	}
	return Client{}, invalidClient("the client's metadata document at %s could not be read: %v", id, ferr)
}

// retryable reports whether a failed fetch (status 0: no answer) may fall
// back to the last good copy: the host is down, slow or overloaded, not
// saying the document is wrong.
func retryable(status int) bool {
	return status == 0 || status == http.StatusNotFound || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

func clientOf(c store.OAuthClient) Client {
	out := Client{ID: c.ClientID, Kind: c.Kind, Name: c.Name}
	_ = json.Unmarshal([]byte(c.RedirectURIs), &out.RedirectURIs)
	var meta struct {
		URI string `json:"client_uri"`
	}
	_ = json.Unmarshal([]byte(c.Metadata), &meta)
	out.URI = meta.URI
	return out
}

// isDocumentURL reports whether a client ID is the URL of a metadata
// document: https with a path (http too, with private addresses allowed).
func isDocumentURL(id string, allowHTTP bool) bool {
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" || u.Path == "" || u.Path == "/" {
		return false
	}
	return u.Scheme == "https" || allowHTTP && u.Scheme == "http"
}

// clientDocument is what Atrium reads of a metadata document or a
// registration request.
type clientDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ClientSecret            string   `json:"client_secret"`
	Scope                   string   `json:"scope"`
}

// fetchDocument fetches and checks the metadata document at id, and says
// how long it may be kept; status is the HTTP status of a failed answer (0:
// none came).
func (s *Service) fetchDocument(ctx context.Context, id string) (Client, time.Duration, int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DocumentTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return Client{}, 0, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.http.Do(req)
	if err != nil {
		return Client{}, 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Client{}, 0, resp.StatusCode, fmt.Errorf("its host answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument+1))
	if err != nil {
		return Client{}, 0, 0, err
	}
	if len(body) > maxDocument {
		return Client{}, 0, resp.StatusCode, invalidClient("the client's metadata document at %s is larger than %d bytes", id, maxDocument)
	}
	var doc clientDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return Client{}, 0, resp.StatusCode, invalidClient("the client's metadata document at %s is not a JSON object: %v", id, err)
	}
	if doc.ClientID != id {
		return Client{}, 0, resp.StatusCode, invalidClient("the metadata document at %s names another client_id (%q)", id, doc.ClientID)
	}
	if doc.ClientSecret != "" {
		return Client{}, 0, resp.StatusCode, invalidClient("the metadata document at %s holds a client_secret: a public document cannot", id)
	}
	if m := doc.TokenEndpointAuthMethod; m != "" && m != "none" {
		return Client{}, 0, resp.StatusCode, invalidClient("the metadata document at %s asks for token_endpoint_auth_method %q: Atrium takes public clients (none)", id, m)
	}
	if err := checkRedirects(doc.RedirectURIs); err != nil {
		return Client{}, 0, resp.StatusCode, invalidClient("the metadata document at %s: %s", id, err.Description)
	}
	name := doc.ClientName
	if name == "" {
		name = req.URL.Host
	}
	return Client{ID: id, Kind: "cimd", Name: clip(name, 100), URI: clip(doc.ClientURI, 300), RedirectURIs: doc.RedirectURIs}, maxAge(resp.Header.Get("Cache-Control")), 0, nil
}

// maxAge is how long a document may be kept: its Cache-Control max-age,
// within bounds, else an hour.
func maxAge(cc string) time.Duration {
	age := time.Hour
	for _, d := range strings.Split(cc, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(d), "max-age="); ok {
			if n, err := strconv.Atoi(v); err == nil {
				age = time.Duration(n) * time.Second
			}
		}
	}
	return min(max(age, minDocumentAge), maxDocumentAge)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// documentClient fetches client metadata documents: no redirects, no proxy,
// small answers, short timeouts, and — unless allowPrivate — never an
// address that is not public. The address is checked after resolution, on
// the connection itself, so a name that resolves to 127.0.0.1 or the cloud
// metadata address (169.254.169.254) is refused however it is spelled.
func documentClient(allowPrivate bool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: 3 * time.Second}
	if !allowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("refused address %q", address)
			}
			if !publicAddr(ap.Addr()) {
				return fmt.Errorf("refused %s: client metadata documents are fetched from public addresses only", ap.Addr())
			}
			return nil
		}
	}
	return &http.Client{
		Transport: &http.Transport{
			DialContext:            dialer.DialContext,
			TLSHandshakeTimeout:    3 * time.Second,
			ResponseHeaderTimeout:  3 * time.Second,
			MaxResponseHeaderBytes: 16 << 10,
			MaxIdleConns:           10,
			IdleConnTimeout:        30 * time.Second,
		},
		Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("client metadata documents are not followed through redirects")
		},
	}
}

// nonPublic are ranges that net/netip's predicates do not name: shared
// address space (carrier NAT), benchmarking, the IETF's, and reserved.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
}

func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	return !slices.ContainsFunc(nonPublic, func(p netip.Prefix) bool { return p.Contains(a) })
}

// checkRedirects checks a client's redirect URIs: https anywhere; http only
// to a loopback address (a native app's local listener, RFC 8252); or a
// private-use scheme of a native app (cursor://, vscode://). Never a
// fragment, and never a scheme a browser would run (javascript:, data:).
func checkRedirects(uris []string) *Error {
	if len(uris) == 0 {
		return oauthErr(http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is missing")
	}
	if len(uris) > 20 {
		return oauthErr(http.StatusBadRequest, "invalid_redirect_uri", "at most 20 redirect_uris")
	}
	for _, raw := range uris {
		if err := checkRedirect(raw); err != "" {
			return oauthErr(http.StatusBadRequest, "invalid_redirect_uri", "redirect_uri %q: %s", clip(raw, 200), err)
		}
	}
	return nil
}

func checkRedirect(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case len(raw) > 2000:
		return "too long"
	case err != nil || !u.IsAbs():
		return "not an absolute URL"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "a redirect URI has no fragment"
	case u.User != nil:
		return "a redirect URI has no user name or password"
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return "https needs a host"
		}
	case "http":
		if !loopbackHost(u.Hostname()) {
			return "http is for loopback addresses only (127.0.0.1, [::1], localhost); use https"
		}
	case "javascript", "data", "file", "vbscript", "about", "blob", "ftp", "ws", "wss":
		return "scheme " + u.Scheme + " is not allowed"
	default:
		if !strings.Contains(u.Scheme, ".") && len(u.Scheme) < 3 {
			return "unknown scheme " + u.Scheme
		}
	}
	return ""
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.IsLoopback()
}

// redirectAllowed reports whether the redirect_uri of a request is one the
// client registered: exactly, or, for a loopback listener, on any port (a
// native app picks a free one each time, RFC 8252 §7.3).
func (c Client) redirectAllowed(uri string) bool {
	if slices.Contains(c.RedirectURIs, uri) {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" || !loopbackHost(u.Hostname()) {
		return false
	}
	for _, r := range c.RedirectURIs {
		ru, err := url.Parse(r)
		if err == nil && ru.Scheme == "http" && ru.Hostname() == u.Hostname() && ru.Path == u.Path && ru.RawQuery == u.RawQuery {
			return true
		}
	}
	return false
}

// window counts registrations in a fixed window of time.
type window struct {
	start time.Time
	n     int
}

// allowRegistration counts a registration from addr, and refuses it when
// that address, or everyone, has registered too many this window.
func (s *Service) allowRegistration(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	take := func(key string, limit int) bool {
		w := s.windows[key]
		if w == nil || now.Sub(w.start) >= s.cfg.RegisterWindow {
			w = &window{start: now}
			s.windows[key] = w
		}
		if w.n >= limit {
			return false
		}
		w.n++
		return true
	}
	if len(s.windows) > 10000 { // forget old windows rather than grow
		for k, w := range s.windows {
			if now.Sub(w.start) >= s.cfg.RegisterWindow {
				delete(s.windows, k)
			}
		}
	}
	return take("", 20*s.cfg.RegisterLimit) && take(addr, s.cfg.RegisterLimit)
}

// Register registers a client dynamically (RFC 7591) from the request body
// raw, sent from addr, and returns the registration response. Only public
// clients are registered: whatever authentication method is asked for, the
// answer grants "none", and only the grant types Atrium has (a client is
// told what it got rather than refused, as VS Code needs).
func (s *Service) Register(ctx context.Context, raw []byte, addr string) (map[string]any, error) {
	if !s.cfg.DCR {
		return nil, oauthErr(http.StatusNotFound, "invalid_request", "dynamic client registration is off on this server; use a client ID metadata document")
	}
	if len(raw) > maxDocument {
		return nil, oauthErr(http.StatusRequestEntityTooLarge, "invalid_client_metadata", "the registration is larger than %d bytes", maxDocument)
	}
	if !s.allowRegistration(addr) {
		return nil, oauthErr(http.StatusTooManyRequests, "too_many_requests", "too many registrations: try again later")
	}
	var doc clientDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, oauthErr(http.StatusBadRequest, "invalid_client_metadata", "the registration is not a JSON object: %v", err)
	}
	if err := checkRedirects(doc.RedirectURIs); err != nil {
		return nil, err
	}
	name := clip(strings.TrimSpace(doc.ClientName), 100)
	if name == "" {
		name = "unnamed client"
	}
	id := dcrPrefix + strings.ToLower(secret("")[:26])
	uris, _ := json.Marshal(doc.RedirectURIs)
	meta, _ := json.Marshal(map[string]any{"client_name": name, "client_uri": clip(doc.ClientURI, 300)})
	var issued time.Time
	err := s.update(ctx, func(tx *store.Tx) error {
		if n, err := tx.CollectIdleClients(ctx, tx.Now().Add(-s.cfg.IdleClients)); err != nil {
			return err
		} else if n > 0 {
			s.log.Info("collected idle OAuth clients", "count", n)
		}
		issued = tx.Now()
		return tx.PutOAuthClient(ctx, store.OAuthClient{ClientID: id, Kind: "dcr", Name: name, RedirectURIs: string(uris), Metadata: string(meta), Remote: clip(addr, 100)})
	})
	if err != nil {
		return nil, err
	}
	out := map[string]any{
		"client_id":                  id,
		"client_id_issued_at":        issued.Unix(),
		"client_name":                name,
		"redirect_uris":              doc.RedirectURIs,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
	if doc.ClientURI != "" {
		out["client_uri"] = clip(doc.ClientURI, 300)
	}
	return out, nil
}
