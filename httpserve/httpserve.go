// Package httpserve runs Atrium's HTTP server: it mounts the surfaces (MCP,
// REST, UI) on one mux behind the checks every route shares — Host and Origin
// against DNS rebinding and cross-site requests, metrics, panic recovery — and
// serves /healthz and /metrics. Shutdown is graceful: in-flight requests finish
// before long-lived streams are closed.
package httpserve

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/metrics"
)

// Config configures a Server.
type Config struct {
	// Addr is the address to listen on, e.g. 127.0.0.1:8080 (port 0 picks one).
	Addr string
	// Register mounts the surfaces' routes.
	Register func(mux *http.ServeMux)
	// CloseStreams ends long-lived streams (SSE, sessions) at shutdown, once
	// in-flight requests are done.
	CloseStreams func()
	// Health reports whether the server can do its work (the database answers).
	Health func(ctx context.Context) error
	// Engine names the store engine, for /healthz.
	Engine string
	// AllowedHosts are host names, besides loopback ones, that requests may
	// name in Host and Origin.
	AllowedHosts []string
	// ShutdownGrace bounds how long shutdown waits for in-flight requests.
	// Default 10s.
	ShutdownGrace time.Duration
	// Auth authenticates requests. With it in token mode, every route refuses
	// a malformed Authorization header, and /metrics needs an admin's token.
	Auth *authn.Authenticator
	// CrossOrigin reports whether a path takes requests from any origin and
	// reads its own Authorization header (the OAuth endpoints: they take no
	// cookie, and a client authenticates to them with HTTP Basic).
	CrossOrigin func(path string) bool
	// MetricsOpen serves /metrics to anyone who can reach the listener (a
	// scraper on a private network that sends no token).
	MetricsOpen bool
	Metrics     *metrics.Registry
	Logger      *slog.Logger
}

// streamLinger is how long shutdown waits between the last answer and the
// closing of event streams.
const streamLinger = 250 * time.Millisecond

// Server is Atrium's HTTP server.
type Server struct {
	cfg      Config
	log      *slog.Logger
	srv      *http.Server
	ln       net.Listener
	inflight atomic.Int64 // requests that end on their own (not event streams)

	requests *metrics.Counter
	duration *metrics.Histogram
}

// New returns a server for cfg; Listen then Serve run it.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 10 * time.Second
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	s := &Server{cfg: cfg, log: cfg.Logger}
	s.requests = cfg.Metrics.Counter("atrium_http_requests_total", "HTTP requests, by route and status.", "route", "status")
	s.duration = cfg.Metrics.Histogram("atrium_http_request_seconds", "Time to answer an HTTP request, by route.", metrics.DurationBuckets, "route")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", s.metrics())
	if cfg.Auth == nil || !cfg.Auth.OAuth && cfg.Auth.OIDC == nil {
		noOAuth(mux)
	}
	if cfg.Register != nil {
		cfg.Register(mux)
	}
	s.srv = &http.Server{
		Handler:           s.guard(s.observe(mux)),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	return s
}

// Handler returns the server's root handler, for tests.
func (s *Server) Handler() http.Handler { return s.srv.Handler }

// Listen binds the address; Addr then tells the port picked for ":0".
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	s.ln = ln
	return nil
}

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve answers requests until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return s.shutdown()
}

// shutdown stops accepting connections, lets in-flight requests finish (up to
// the grace period), then closes event streams so that their connections end.
func (s *Server) shutdown() error {
	s.log.Info("shutting down: finishing in-flight requests", "in_flight", s.inflight.Load())
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownGrace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.srv.Shutdown(ctx) }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.inflight.Load() > 0 && ctx.Err() == nil {
		<-tick.C
	}
	// Let clients read the last answers before their event streams end: a
	// client that sees its stream close first may fail a call whose result
	// is already on the wire.
	select {
	case <-time.After(streamLinger):
	case <-ctx.Done():
	}
	if s.cfg.CloseStreams != nil {
		// Bounded by the grace period too: closing an MCP session waits for
		// its calls to drain, and one that never does must not keep the
		// process from ending.
		closed := make(chan struct{})
		go func() {
			s.cfg.CloseStreams()
			close(closed)
		}()
		select {
		case <-closed:
		case <-ctx.Done():
			s.log.Warn("shutdown grace period over while closing event streams and sessions; closing connections")
		}
	}
	err := <-done
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("shutdown grace period over; closing remaining connections")
		return s.srv.Close()
	}
	return err
}

// metrics serves /metrics to admins only, unless the operator opened it:
// counts of calls, tools and sessions describe what every tenant does.
func (s *Server) metrics() http.Handler {
	if s.cfg.MetricsOpen {
		return s.cfg.Metrics
	}
	admin := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a := atrium.ActorFromContext(r.Context()); a == nil || !a.Role.Allows(atrium.RoleAdmin) {
			authn.WriteError(w, r, s.log, atrium.Errorf(atrium.EPermission, "/metrics is for admins: send an admin's bearer token, or start the server with --metrics-open"))
			return
		}
		s.cfg.Metrics.ServeHTTP(w, r)
	})
	if s.cfg.Auth == nil {
		return admin // no way to authenticate: nobody may read
	}
	return s.cfg.Auth.Middleware(admin)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	body := map[string]string{"status": "ok", "engine": s.cfg.Engine, "version": atrium.Version}
	status := http.StatusOK
	if s.cfg.Health != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.cfg.Health(ctx); err != nil {
			s.log.Warn("health check failed", "err", err)
			body["status"], status = "unavailable", http.StatusServiceUnavailable
			if atrium.ErrorCode(err) == atrium.EUnavailable {
				body["reason"] = atrium.ErrorMessage(err) // "the disk is full: …", for the operator
			}
			w.Header().Set("Retry-After", "5")
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// isEventStream tells a long-lived stream from a request that ends by itself.
func isEventStream(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// observe counts requests and recovers panics, so that no handler's panic
// reaches the client as a dropped connection or stops the server.
func (s *Server) observe(next http.Handler) http.Handler {
	mux, _ := next.(*http.ServeMux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isEventStream(r) {
			s.inflight.Add(1)
			defer s.inflight.Add(-1)
		}
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		route := "other"
		if mux != nil {
			if _, pattern := mux.Handler(r); pattern != "" {
				route = pattern
			}
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("HTTP handler panicked", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
				if !rec.wrote {
					authn.WriteError(rec, r, s.log, atrium.Errorf(atrium.EInternal, "internal error"))
				}
			}
			s.requests.Inc(route, strconv.Itoa(rec.statusCode()))
			s.duration.Since(start, route)
		}()
		next.ServeHTTP(rec, r)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (r *statusRecorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if !r.wrote {
		r.status, r.wrote = http.StatusOK, true
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// Flush lets streaming handlers (SSE) push events through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// guard refuses requests that a browser could be tricked into sending: on a
// loopback connection, a Host that is not loopback or allowed (DNS
// rebinding); anywhere, an Origin naming another host. It also refuses an
// Authorization header that is not a bearer token.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open := s.cfg.CrossOrigin != nil && s.cfg.CrossOrigin(r.URL.Path)
		if err := s.checkHostOrigin(r, open); err != nil {
			authn.WriteError(w, r, s.log, err)
			return
		}
		// Here rather than in each surface's middleware, so that no route
		// (health, metrics, one not found) reads a malformed header as none.
		// Without tokens (--auth none) the header means nothing.
		if s.cfg.Auth != nil && s.cfg.Auth.Mode == authn.ModeToken && !open {
			if _, err := authn.ParseAuthorization(r); err != nil {
				s.cfg.Auth.Refuse(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) checkHostOrigin(r *http.Request, anyOrigin bool) error {
	host := hostname(r.Host)
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && isLoopbackAddr(local.String()) {
		if !isLoopbackHost(host) && !s.allowedHost(host) {
			return atrium.Errorf(atrium.EPermission, "refused Host %q: this server listens on loopback; add the name with --allowed-hosts to serve it", r.Host)
		}
	}
	if origin := r.Header.Get("Origin"); origin != "" && !anyOrigin {
		u, err := url.Parse(origin)
		if err != nil || u.Host == "" {
			return atrium.Errorf(atrium.EPermission, "refused Origin %q", origin)
		}
		if !strings.EqualFold(u.Host, r.Host) && !s.allowedHost(hostname(u.Host)) {
			return atrium.Errorf(atrium.EPermission, "refused cross-origin request from %q", origin)
		}
	}
	return nil
}

func (s *Server) allowedHost(h string) bool {
	return slices.ContainsFunc(s.cfg.AllowedHosts, func(a string) bool { return strings.EqualFold(a, h) })
}

func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.Trim(h, "[]")
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isLoopbackAddr(addr string) bool {
	return isLoopbackHost(hostname(addr))
}

// IsLoopbackListen reports whether addr (host:port) listens on loopback only.
func IsLoopbackListen(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil || h == "" {
		return false // ":8080" listens on every interface
	}
	return isLoopbackHost(h)
}
