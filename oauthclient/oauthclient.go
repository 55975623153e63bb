// Package oauthclient signs Atrium in to OAuth-protected MCP servers, as
// their client: the gateway's upstreams (PostHog, Vercel, Neon … host MCP
// servers that take only OAuth) and `atrium call|mcp --url` against a remote
// server. It wraps the go-sdk's authorization-code handler (discovery from
// the 401, Client ID Metadata Documents, pre-registration or dynamic
// registration, PKCE, the resource parameter, the issuer check, step-up)
// with what a long-running program needs: a loopback listener for the
// redirect, a way to send the person to the authorization URL, and the
// tokens kept encrypted on disk and refreshed before they expire, so that a
// person signs in once.
package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Config configures a client's sign-in to one server.
type Config struct {
	// Store keeps the tokens between runs; nil keeps them in memory only.
	Store *Store
	// Key names what the tokens are for in Store: the server's MCP URL, or
	// a gateway upstream's name.
	Key string
	// ClientName is what the client calls itself when it registers.
	ClientName string
	// MetadataURL is the client's Client ID Metadata Document, used when the
	// authorization server takes one (the 2025-11-25 way).
	MetadataURL string
	// ClientID and ClientSecret are a client registered beforehand with the
	// authorization server; otherwise the client registers dynamically.
	ClientID, ClientSecret string
	// Open sends the person to the authorization URL (a browser, or a
	// message to them). Required.
	Open func(ctx context.Context, url string) error
	// Timeout bounds the wait for the person; default 5 minutes.
	Timeout time.Duration
	// RedirectURL, with Callbacks, is where the authorization server sends
	// the person back when that is not this machine's loopback (a server's
	// own public route, which hands the answer to Callbacks). Empty: a
	// loopback listener of the handler's own.
	RedirectURL string
	Callbacks   *Callbacks
	// HTTPClient makes the discovery and token requests; default
	// http.DefaultClient.
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// Handler is an auth.OAuthHandler with a loopback listener for the redirect
// and tokens that outlive the process. Close it when done.
type Handler struct {
	*auth.AuthorizationCodeHandler
	cfg      Config
	srv      *http.Server // the loopback listener, if the handler has one
	callback string

	mu      sync.Mutex
	waiting map[string]chan url.Values // by state
}

// New returns a handler for cfg, listening on a loopback port for the
// redirect; a token kept in cfg.Store from an earlier run is used first.
func New(cfg Config) (*Handler, error) {
	if cfg.Open == nil {
		return nil, errors.New("oauthclient: Open is required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "Atrium"
	}
	h := &Handler{cfg: cfg, waiting: map[string]chan url.Values{}, callback: cfg.RedirectURL}
	if cfg.RedirectURL == "" || cfg.Callbacks == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("listen for the OAuth redirect: %w", err)
		}
		h.callback = "http://" + ln.Addr().String() + "/callback"
		h.srv = &http.Server{Handler: http.HandlerFunc(h.serveCallback), ReadHeaderTimeout: 10 * time.Second}
		go h.srv.Serve(ln)
	}

	ac := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              h.callback,
		AuthorizationCodeFetcher: h.fetch,
		RequestRefreshToken:      true,
		Client:                   cfg.HTTPClient,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			return h.keep(oc, tok), nil
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: cfg.ClientName, RedirectURIs: []string{h.callback},
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none",
		}},
	}
	if cfg.MetadataURL != "" {
		ac.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.MetadataURL}
	}
	if cfg.ClientID != "" {
		ac.PreregisteredClient = &oauthex.ClientCredentials{ClientID: cfg.ClientID}
		if cfg.ClientSecret != "" {
			ac.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
	}
	if cfg.Store != nil {
		if saved, err := cfg.Store.Load(cfg.Key); err == nil && saved != nil {
			ac.InitialTokenSource = h.keep(saved.config(), saved.Token)
		} else if err != nil {
			cfg.Logger.Warn("read the kept OAuth tokens; signing in again", "key", cfg.Key, "err", err)
		}
	}
	inner, err := auth.NewAuthorizationCodeHandler(ac)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.AuthorizationCodeHandler = inner
	return h, nil
}

// Close stops the loopback listener.
func (h *Handler) Close() error {
	if h.srv == nil {
		return nil
	}
	return h.srv.Close()
}

// CallbackURL is the redirect URI the handler listens on.
func (h *Handler) CallbackURL() string { return h.callback }

// fetch sends the person to the authorization URL and waits for the
// redirect to come back to the loopback listener.
func (h *Handler) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(args.URL)
	if err != nil {
		return nil, err
	}
	state := u.Query().Get("state")
	ch := make(chan url.Values, 1)
	h.mu.Lock()
	h.waiting[state] = ch
	h.mu.Unlock()
	if h.srv == nil {
		h.cfg.Callbacks.wait(state, ch)
	}
	defer func() {
		h.mu.Lock()
		delete(h.waiting, state)
		h.mu.Unlock()
		if h.srv == nil {
			h.cfg.Callbacks.done(state)
		}
	}()
	if err := h.cfg.Open(ctx, args.URL); err != nil {
		return nil, fmt.Errorf("open the authorization page: %w", err)
	}
	timer := time.NewTimer(h.cfg.Timeout)
	defer timer.Stop()
	select {
	case q := <-ch:
		if e := q.Get("error"); e != "" {
			return nil, fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	case <-timer.C:
		return nil, fmt.Errorf("no answer from the authorization page within %v", h.cfg.Timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// serveCallback takes the redirect of a sign-in this handler started (by
// its state); any other request is refused.
func (h *Handler) serveCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	h.mu.Lock()
	ch, ok := h.waiting[q.Get("state")]
	h.mu.Unlock()
	if r.URL.Path != "/callback" || !ok {
		http.Error(w, "no sign-in is waiting for this answer", http.StatusBadRequest)
		return
	}
	select {
	case ch <- q:
	default:
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if q.Get("error") != "" {
		fmt.Fprintln(w, "Sign-in refused. You can close this window.")
		return
	}
	fmt.Fprintln(w, "Signed in. You can close this window and go back to Atrium.")
}

// keep is a token source that refreshes tok through oc and writes every new
// token to the store, so that the next run starts from it (a rotated
// refresh token lost would cost the person a sign-in).
func (h *Handler) keep(oc *oauth2.Config, tok *oauth2.Token) oauth2.TokenSource {
	k := &kept{h: h, oc: oc, last: tok}
	k.src = oauth2.ReuseTokenSource(tok, oc.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, h.cfg.HTTPClient), tok))
	k.save(tok)
	return k
}

type kept struct {
	h   *Handler
	oc  *oauth2.Config
	src oauth2.TokenSource

	mu   sync.Mutex
	last *oauth2.Token
}

func (k *kept) Token() (*oauth2.Token, error) {
	tok, err := k.src.Token()
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	changed := k.last == nil || tok.AccessToken != k.last.AccessToken
	k.last = tok
	k.mu.Unlock()
	if changed {
		k.save(tok)
	}
	return tok, nil
}

func (k *kept) save(tok *oauth2.Token) {
	if k.h.cfg.Store == nil {
		return
	}
	s := &Saved{ClientID: k.oc.ClientID, ClientSecret: k.oc.ClientSecret, TokenURL: k.oc.Endpoint.TokenURL, AuthStyle: int(k.oc.Endpoint.AuthStyle), Token: tok}
	if err := k.h.cfg.Store.Save(k.h.cfg.Key, s); err != nil {
		k.h.cfg.Logger.Warn("keep the OAuth tokens", "key", k.h.cfg.Key, "err", err)
	}
}

// Callbacks hands answers that come back to a server's own route to the
// sign-ins waiting for them, by their state.
type Callbacks struct {
	mu      sync.Mutex
	waiting map[string]chan url.Values
}

func (c *Callbacks) wait(state string, ch chan url.Values) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting == nil {
		c.waiting = map[string]chan url.Values{}
	}
	c.waiting[state] = ch
}

func (c *Callbacks) done(state string) {
	c.mu.Lock()
	delete(c.waiting, state)
	c.mu.Unlock()
}

// Deliver hands the query of a redirect to the sign-in it answers, and
// reports whether one was waiting.
func (c *Callbacks) Deliver(q url.Values) bool {
	c.mu.Lock()
	ch, ok := c.waiting[q.Get("state")]
	c.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case ch <- q:
	default:
	}
	return true
}
