// Package services opens Atrium's store and wires the services over it into
// one value, Services, that every surface is handed whole: the MCP toolsets,
// the REST API, the browser UI and the folder mirror. It is the one place
// that knows how the services depend on each other; cmd/atrium and the tests
// both build it with Open, so that a test runs the wiring the binary runs.
//
// A new service is one field here and one line in Open.
package services

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/metrics"
	"github.com/atrium-hq/atrium/oauth"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/tasks"
)

// Services are Atrium's services over one open store.
type Services struct {
	Log      *slog.Logger
	Identity *identity.Service
	Pages    *pages.Service
	Review   *review.Service
	Tasks    *tasks.Service
	Activity *activity.Service
	// Agents configures agents and, in a server that enabled it, runs their
	// sessions.
	Agents *agents.Service
	// OAuth is the authorization server remote MCP clients sign in through
	// (dynamic registration on; see ConfigureOAuth).
	OAuth *oauth.Service
	// Calls writes the audit records of gateway calls, in the background.
	Calls   *activity.CallLog
	Metrics *metrics.Registry
	// Where names the store and the data folder, for people (whoami).
	Where Where

	db *store.DB
	// stopIndexing ends a rebuild of the search index under way.
	stopIndexing func()
}

// Where names a store for people: never a password.
type Where struct {
	Store   string `json:"store" jsonschema:"the database: sqlite and its file, or postgres and its host and database (never a password)"`
	DataDir string `json:"data_dir" jsonschema:"the data folder (--data-dir, env ATRIUM_DATA_DIR)"`
}

// Options say which store to open and how. Zero values mean defaults.
type Options struct {
	// DSN is a postgres:// URL or a SQLite file path.
	DSN string
	// ListenDSN is the PostgreSQL connection that LISTENs for other
	// replicas' events, when DSN cannot (a transaction-pooling PgBouncer).
	ListenDSN string
	// DataDir is the data folder, reported by whoami.
	DataDir string
	Logger  *slog.Logger
	// TrashRetention is how long deleted pages stay restorable; 0 keeps them
	// until purged.
	TrashRetention time.Duration
	// PublicURL is where people open the UI, for the url of a task; empty
	// lets a server announce its own.
	PublicURL string
	// Store tunes the store (tests set its knobs); nil means defaults.
	Store *store.Options
}

// Open opens the store (migrating it), wires the services over it, makes
// sure the default workspace exists and that the search index is current.
func Open(ctx context.Context, o Options) (*Services, error) {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	so := store.Options{}
	if o.Store != nil {
		so = *o.Store
	}
	if so.Logger == nil {
		so.Logger = log
	}
	if so.ListenDSN == "" {
		so.ListenDSN = o.ListenDSN
	}
	db, err := store.Open(ctx, o.DSN, &so)
	if err != nil {
		return nil, err
	}
	s := New(db, log)
	s.Where = Where{Store: storeLabel(db.Engine(), o.DSN), DataDir: absPath(o.DataDir)}
	s.Pages.TrashRetention = o.TrashRetention
	s.Tasks.BaseURL = strings.TrimSuffix(o.PublicURL, "/")
	if _, err := s.Identity.Bootstrap(ctx, false); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.Tasks.LoadBaseURL(ctx); err != nil {
		log.Warn("read the UI's address", "err", err)
	}
	if s.stopIndexing, err = s.Pages.KeepIndexCurrent(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("rebuild search index: %w", err)
	}
	return s, nil
}

// New wires the services over an open store, which Close then closes. It
// neither migrates nor bootstraps: tests that bring their own store use it.
func New(db *store.DB, log *slog.Logger) *Services {
	if log == nil {
		log = slog.Default()
	}
	s := &Services{Log: log, db: db, Metrics: metrics.New()}
	s.Identity = identity.New(db, log)
	s.Pages = pages.New(db, log)
	s.Review = review.New(db, s.Pages, log) // keeps review anchors in step with page changes
	s.Tasks = tasks.New(db, log)
	s.Tasks.Pages = s.Pages
	s.Activity = activity.New(db)
	s.Agents = agents.New(db, log, s.Identity, s.Tasks)
	s.Calls = s.Activity.NewCallLog(log)
	s.OAuth = oauth.New(db, oauth.Config{DCR: true, Logger: log})
	return s
}

// ConfigureOAuth replaces the authorization server with one configured by cfg.
func (s *Services) ConfigureOAuth(cfg oauth.Config) {
	if cfg.Logger == nil {
		cfg.Logger = s.Log
	}
	s.OAuth = oauth.New(s.db, cfg)
}

// Close flushes what is written in the background and closes the store.
func (s *Services) Close() {
	if s.stopIndexing != nil {
		s.stopIndexing()
	}
	s.Calls.Close() // its last records, before the store closes
	s.Identity.Close()
	if err := s.db.Close(); err != nil {
		s.Log.Warn("close store", "err", err)
	}
}

// Backup writes a consistent copy of an SQLite store to path while it is in
// use (see store.DB.Backup); PostgreSQL is backed up with pg_dump.
func (s *Services) Backup(ctx context.Context, path string) error { return s.db.Backup(ctx, path) }

// Events subscribes to the store's events of every workspace, for live
// notifications; stop ends the subscription.
func (s *Services) Events() (events <-chan atrium.Event, stop func()) { return s.db.Subscribe(1024) }

// Ping reports whether the store answers, for health checks.
func (s *Services) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Engine names the store's engine: sqlite or postgres.
func (s *Services) Engine() string { return string(s.db.Engine()) }

// PurgeTrash purges the pages past the trash's retention now and every hour
// until ctx ends: a server's housekeeping.
func (s *Services) PurgeTrash(ctx context.Context) {
	for {
		if n, err := s.Pages.PurgeExpired(ctx); err != nil && ctx.Err() == nil {
			s.Log.Warn("purge the trash", "err", err)
		} else if n > 0 {
			s.Log.Info("purged pages past the trash's retention", "pages", n, "retention", s.Pages.TrashRetention)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Hour):
		}
	}
}

// storeLabel names a store for people: the engine and the SQLite file, or the
// PostgreSQL host and database — never the credentials a DSN may hold.
func storeLabel(engine store.Engine, dsn string) string {
	if engine != store.Postgres {
		return string(engine) + " " + absPath(strings.TrimPrefix(strings.SplitN(dsn, "?", 2)[0], "file:"))
	}
	if u, err := url.Parse(dsn); err == nil && u.Host != "" {
		return string(engine) + " " + u.Host + u.Path
	}
	var host, name string
	for _, kv := range strings.Fields(dsn) { // key=value form
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "host":
			host = v
		case "dbname":
			name = v
		}
	}
	return strings.TrimSpace(string(engine) + " " + host + "/" + name)
}

// absPath is p made absolute, or p when it cannot be.
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// SchemaVersion reports the newest migration the store has applied.
func (s *Services) SchemaVersion(ctx context.Context) (int, error) { return s.db.SchemaVersion(ctx) }
