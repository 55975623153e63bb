// Package storetest opens real stores for tests: a fresh SQLite file, and a
// fresh schema in the local PostgreSQL so that concurrent runs never collide.
//
// PostgreSQL is found through ATRIUM_TEST_POSTGRES (a URL) or at
// 127.0.0.1:5432 (database test). Without one, PostgreSQL cases skip with a
// message — unless ATRIUM_REQUIRE_POSTGRES=1, as in CI, where they fail.
package storetest

import (
	"context"
	"crypto/rand"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium/store"
)

// DefaultPostgres is where tests look for PostgreSQL when ATRIUM_TEST_POSTGRES is unset.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	pgOnce sync.Once
	pgURL  string
	pgErr  error
)

func postgresBase() (string, error) {
	pgOnce.Do(func() {
		pgURL = os.Getenv("ATRIUM_TEST_POSTGRES")
		if pgURL == "" {
			pgURL = DefaultPostgres
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, pgURL)
		if err != nil {
			pgErr = err
			return
		}
		pgErr = conn.Ping(ctx)
		conn.Close(ctx)
	})
	return pgURL, pgErr
}

// PostgresRequired reports whether PostgreSQL tests must run (CI).
func PostgresRequired() bool { return os.Getenv("ATRIUM_REQUIRE_POSTGRES") == "1" }

// PostgresDSN returns the URL of a new, empty schema that is dropped when tb
// ends, or skips tb when there is no PostgreSQL (fails it when required).
func PostgresDSN(tb testing.TB) string {
	tb.Helper()
	base, err := postgresBase()
	if err != nil {
		if PostgresRequired() {
			tb.Fatalf("PostgreSQL is required (ATRIUM_REQUIRE_POSTGRES=1) but %s does not answer: %v", redact(base), err)
		}
		tb.Skipf("no PostgreSQL at %s (%v): set ATRIUM_TEST_POSTGRES to run the PostgreSQL cases", redact(base), err)
	}
	schema := "atrium_test_" + strings.ToLower(rand.Text()[:12])
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		tb.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		tb.Fatalf("create schema: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("parse %s: %v", redact(base), err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// SQLiteDSN returns the path of a new SQLite file in tb's temporary folder.
func SQLiteDSN(tb testing.TB) string {
	return filepath.Join(tb.TempDir(), "atrium.db")
}

// DSN returns a fresh database of engine e.
func DSN(tb testing.TB, e store.Engine) string {
	tb.Helper()
	if e == store.Postgres {
		return PostgresDSN(tb)
	}
	return SQLiteDSN(tb)
}

// MustOpen opens a fresh store on engine e, closed when tb ends. Unless opts
// say otherwise, the store has one connection to read with (and, on
// PostgreSQL, to write with), so that a call that waits for a connection
// while it holds one deadlocks in every test rather than under load only.
func MustOpen(tb testing.TB, e store.Engine, opts *store.Options) *store.DB {
	tb.Helper()
	var o store.Options
	if opts != nil {
		o = *opts
	}
	if o.Conns == 0 {
		o.Conns = 1
	}
	db, err := store.Open(context.Background(), DSN(tb, e), &o)
	if err != nil {
		tb.Fatalf("open %s store: %v", e, err)
	}
	tb.Cleanup(func() { db.Close() })
	db.DeriveStemsWith(HeadingStems)
	return db
}

// HeadingStems is the store's derivation of a page's stems in store tests,
// which write the index by hand (the docs service gives the real one): the
// distinct words of its headings, sorted. A test that gives a page stems
// gives it those headings.
func HeadingStems(t store.PageTexts) []string {
	stems := strings.Fields(t.Headings)
	slices.Sort(stems)
	return slices.Compact(stems)
}

// Engines are the engines every store-backed suite runs on.
var Engines = []store.Engine{store.SQLite, store.Postgres}

// Each runs fn as a subtest per engine.
func Each(t *testing.T, fn func(t *testing.T, e store.Engine)) {
	t.Helper()
	for _, e := range Engines {
		t.Run(string(e), func(t *testing.T) { fn(t, e) })
	}
}
