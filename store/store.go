// Package store keeps Atrium's data in SQLite (the embedded default) or
// PostgreSQL, behind one query layer. Public methods of DB open a transaction;
// the methods of Tx run inside one and compose, so that a service call and its
// event rows commit together or not at all. The store knows SQL and nothing of
// transports or business rules.
package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver

	"github.com/atrium-hq/atrium"
)

// Engine names a database engine.
type Engine string

const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

//go:embed migrations
var migrationFS embed.FS

// Options configure Open. The zero value means defaults.
type Options struct {
	// Now is the store's clock; services use it through Tx.Now so that tests can
	// move time. Default time.Now.
	Now func() time.Time
	// Logger receives operational messages. Default slog.Default().
	Logger *slog.Logger
	// EventPoll is how often an SQLite store looks for events that other
	// processes committed to the same file (PostgreSQL uses LISTEN/NOTIFY,
	// and polls only as a fallback). Zero means 250ms; negative disables
	// polling.
	EventPoll time.Duration
	// ListenDSN is the PostgreSQL connection to LISTEN on, when the main one
	// cannot (a transaction-pooling PgBouncer); empty means the main DSN.
	ListenDSN string
	// Conns is the size of the SQLite read pool (besides its one writer), or
	// of the PostgreSQL pool. Zero means 4 on SQLite and 16 on PostgreSQL.
	// Tests use 1: a request that waits for a second connection while it
	// holds one then deadlocks at once, instead of only under load.
	Conns int
	// PendingPages is how many written pages the search index keeps beside
	// its lists before folding them in (see flushPostings). Zero means 64;
	// tests use a few, to fold often.
	PendingPages int
}

// DB is an open store.
type DB struct {
	engine   Engine
	conns    int
	w        *sql.DB // SQLite: the one writer connection; PostgreSQL: the pool
	r        *sql.DB // SQLite: the read pool; PostgreSQL: the same pool as w
	dsn      string
	schema   string // PostgreSQL: current_schema(), to tell our notifications from others'
	now      func() time.Time
	log      *slog.Logger
	instance string // tells this process's notifications from other replicas'
	broker   *broker

	// The event log's live delivery (see events.go).
	listenDSN string
	wake      chan struct{}      // the tailer should read the log
	kick      chan struct{}      // PostgreSQL: the stamper should stamp
	pollEvery chan time.Duration // PostgreSQL: the tailer's new poll interval

	pendingPages int                                      // see Options.PendingPages
	stems        atomic.Pointer[func(PageTexts) []string] // see DeriveStemsWith

	group     committer    // SQLite: writes that share a commit (see Update)
	rebinds   sync.Map     // query text → PostgreSQL form
	stmts     sync.Map     // stmtKey → *sql.Stmt
	nstmts    atomic.Int64 // entries in stmts
	preparing sync.Map     // stmtKey → true while prepareLater runs
	closing   atomic.Bool
	lastOK    atomic.Int64 // Unix µs of the last transaction that succeeded
	health    writeHealth  // whether writes commit (see unavailable.go)

	stop context.CancelFunc
	wg   sync.WaitGroup
}

// IsPostgresDSN reports whether dsn names a PostgreSQL database.
func IsPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the database named by dsn — a postgres:// URL, or the path of an
// SQLite file (created if missing) — and brings its schema up to date.
func Open(ctx context.Context, dsn string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.EventPoll == 0 {
		o.EventPoll = 250 * time.Millisecond
	}
	db := &DB{dsn: dsn, now: o.Now, log: o.Logger, instance: rand.Text(), broker: newBroker(o.Logger), pendingPages: cmp.Or(max(o.PendingPages, 0), 64),
		listenDSN: cmp.Or(o.ListenDSN, dsn), wake: make(chan struct{}, 1), kick: make(chan struct{}, 1), pollEvery: make(chan time.Duration, 1)}
	var err error
	if IsPostgresDSN(dsn) {
		err = db.openPostgres(ctx, cmp.Or(max(o.Conns, 0), 16))
	} else {
		err = db.openSQLite(ctx, cmp.Or(max(o.Conns, 0), 4))
	}
	if err != nil {
		db.closeConns()
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		db.closeConns()
		return nil, fmt.Errorf("migrate %s: %w", db.engine, err)
	}
	head, err := db.logHead(ctx)
	if err != nil {
		db.closeConns()
		return nil, err
	}
	db.broker.startAt(head)
	bg, stop := context.WithCancel(context.Background())
	db.stop = stop
	if db.engine == Postgres {
		db.wg.Go(func() { db.listen(bg) })
		db.wg.Go(func() { db.stamper(bg) })
		db.wg.Go(func() { db.tailPostgres(bg) })
		db.kickStamper() // what a replica that died left unstamped
	} else {
		db.wg.Go(func() { db.tail(bg, max(o.EventPoll, 0)) })
	}
	return db, nil
}

// pageSize is a new SQLite store's page size (see openSQLite).
const pageSize = 16 << 10

func (db *DB) openSQLite(ctx context.Context, readConns int) error {
	db.engine = SQLite
	db.conns = readConns
	p := strings.TrimPrefix(db.dsn, "sqlite:")
	if p == "" {
		return errors.New("sqlite: empty database path")
	}
	// FULL synchronous: a write the caller saw acknowledged survives power loss too.
	base := "file:" + (&url.URL{Path: p}).EscapedPath() + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)"
	var err error
	// The writer keeps its statement journals in memory (temp_store): each
	// statement of a transaction journals the pages it changes, and past 64
	// KiB — four 16 KiB pages — SQLite spills the journal to a temporary
	// file, written with a system call per page: a sixth of a task_create's
	// CPU. A statement of a write touches a few pages; migrations, whose
	// statements may rewrite a whole table, go back to files (migrate).
	if db.w, err = sql.Open("sqlite", base+"&_pragma=temp_store(2)&_txlock=immediate"); err != nil {
		return err
	}
	db.w.SetMaxOpenConns(1) // SQLite has one writer; queueing here beats SQLITE_BUSY
	db.w.SetMaxIdleConns(1)
	db.w.SetConnMaxLifetime(0)
	db.w.SetConnMaxIdleTime(0)
	// A new store's pages are 16 KiB: a page's row, its packed text, is 1–4
	// KiB, and at 4 KiB a page held one such row with a third of it unused,
	// while a list's row (up to postingRowBytes) spilled to overflow pages
	// that a search read one by one. The page size holds only if it is set
	// before the switch to WAL writes the header (an older store keeps its
	// own), so the switch is made here and not among the DSN's pragmas,
	// which the driver runs in alphabetical order. WAL is the store's for
	// good once set: the readers find it in the header.
	//
	// Two processes creating one database at once (a client that spawns
	// atrium mcp twice) race to switch it to WAL, which SQLite answers with
	// SQLITE_BUSY at once, without waiting out the busy timeout: try again
	// for as long as that timeout.
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, err = db.w.ExecContext(ctx, "PRAGMA page_size = "+strconv.Itoa(pageSize)+"; PRAGMA journal_mode = WAL")
		if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err != nil {
		return fmt.Errorf("open sqlite %s: %w", p, err)
	}
	if db.r, err = sql.Open("sqlite", base+"&_pragma=query_only(1)"); err != nil {
		return err
	}
	db.r.SetMaxOpenConns(readConns)
	db.r.SetMaxIdleConns(readConns)
	db.r.SetConnMaxIdleTime(0)
	return nil
}

func (db *DB) openPostgres(ctx context.Context, conns int) error {
	db.engine = Postgres
	db.conns = conns
	var err error
	if db.w, err = sql.Open("pgx", db.dsn); err != nil {
		return err
	}
	db.w.SetMaxOpenConns(conns)
	db.w.SetMaxIdleConns(conns)
	db.w.SetConnMaxIdleTime(5 * time.Minute)
	db.r = db.w
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.w.QueryRowContext(pctx, "SELECT current_schema()").Scan(&db.schema); err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	return nil
}

// Conns is how many connections read at once: SQLite's read pool, or the
// PostgreSQL pool.
func (db *DB) Conns() int { return db.conns }

// Engine reports which engine db runs on.
func (db *DB) Engine() Engine { return db.engine }

// Now reads the store's clock.
func (db *DB) Now() time.Time { return db.now() }

// Ping checks that the database answers. A query that succeeded in the last
// few seconds is answer enough: under load a ping would wait its turn for a
// connection behind the calls it is asked about, and a busy database would
// read as a dead one.
func (db *DB) Ping(ctx context.Context) error {
	if d := db.health.down.Load(); d != nil {
		return db.probe(ctx, d) // reads may work; writes did not
	}
	if time.Since(time.UnixMicro(db.lastOK.Load())) < recentlyOK {
		return nil
	}
	if err := db.r.PingContext(ctx); err != nil {
		return db.storeFailure(err)
	}
	db.answered()
	return nil
}

const recentlyOK = 5 * time.Second

// answered records that the database just answered.
func (db *DB) answered() { db.lastOK.Store(time.Now().UnixMicro()) }

// Close stops the event fan-out and closes every connection.
func (db *DB) Close() error {
	db.closing.Store(true)
	if db.stop != nil {
		db.stop()
	}
	db.wg.Wait()
	db.broker.close()
	return db.closeConns()
}

func (db *DB) closeConns() error {
	var errs []error
	db.stmts.Range(func(_, v any) bool {
		errs = append(errs, v.(*sql.Stmt).Close())
		return true
	})
	if db.r != nil && db.r != db.w {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	return errors.Join(errs...)
}

// Update runs fn in a write transaction and commits it if fn returns nil. The
// events fn emitted are published once the commit succeeded.
//
// On SQLite, calls that wait for the one writer at the same moment share a
// commit (group commit): each runs in a savepoint of one transaction, so
// each still happens entirely or not at all, and returns only once the
// commit that holds it is durable. A commit's fsync is most of a small
// write's time; eight writers then pay for one instead of eight.
//
// A store failure (a full disk, a read-only database, PostgreSQL gone) is
// returned as unavailable, with its cause in words (see unavailable.go).
func (db *DB) Update(ctx context.Context, fn func(*Tx) error) error {
	if db.engine == SQLite {
		return db.storeFailure(db.group.do(db, ctx, fn))
	}
	return db.storeFailure(db.update(ctx, fn))
}

func (db *DB) update(ctx context.Context, fn func(*Tx) error) (err error) {
	sqltx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return db.wrapBusy(fmt.Errorf("begin: %w", err))
	}
	tx := &Tx{db: db, tx: sqltx, pool: db.w, now: db.now(), write: true}
	done := false
	defer func() {
		if !done {
			_ = sqltx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.flushPostings(ctx); err != nil {
		return err
	}
	if err := sqltx.Commit(); err != nil {
		return db.wrapBusy(fmt.Errorf("commit: %w", err))
	}
	done = true
	db.answered()
	db.wrote()
	db.committed(tx.events)
	return nil
}

// View runs fn in a read transaction, which sees one consistent snapshot.
func (db *DB) View(ctx context.Context, fn func(*Tx) error) error {
	return db.storeFailure(db.view(ctx, fn))
}

func (db *DB) view(ctx context.Context, fn func(*Tx) error) error {
	var opts *sql.TxOptions
	if db.engine == Postgres {
		opts = &sql.TxOptions{ReadOnly: true}
	}
	sqltx, err := db.r.BeginTx(ctx, opts)
	if err != nil {
		return db.wrapBusy(fmt.Errorf("begin read: %w", err))
	}
	defer sqltx.Rollback()
	if err := fn(&Tx{db: db, tx: sqltx, pool: db.r, now: db.now()}); err != nil {
		return err
	}
	db.answered()
	return nil
}

// wrapBusy turns a database that stays locked past the busy timeout into an
// error the caller may retry.
func (db *DB) wrapBusy(err error) error {
	if s := err.Error(); strings.Contains(s, "SQLITE_BUSY") || strings.Contains(s, "database is locked") {
		db.log.Warn("database busy", "err", err)
		return atrium.Errorf(atrium.EUnavailable, "the database is busy; try again")
	}
	return err
}

// Read runs fn outside a transaction: each statement sees the latest commit on
// its own. It saves the round trips of BEGIN and COMMIT on hot paths whose
// reads are one statement (authentication); anything that reads twice and
// needs both to agree uses View.
func (db *DB) Read(ctx context.Context, fn func(*Tx) error) error {
	return db.storeFailure(fn(&Tx{db: db, pool: db.r, now: db.now()}))
}

// A Tx is one transaction (or, from Read, none). Its methods are the store's queries.
type Tx struct {
	db     *DB
	tx     *sql.Tx // nil from Read
	pool   *sql.DB // where tx runs, or where Read's statements do
	now    time.Time
	write  bool
	events []atrium.Event
	local  map[string]*sql.Stmt // SQLite write statements, prepared once per transaction
	// pending: the pages whose postings the transaction changed, written
	// at commit (see flushPostings).
	pending map[int64]*pendingPage
	// words: the search words this call has added (see addWords).
	words map[wordKey]bool
	// shared: the transaction is a shared commit's (see commitGroup), so a
	// statement must not stop when its caller gives up. SQLite answers a
	// statement interrupted inside a transaction by rolling back the whole
	// transaction, the other callers' writes with it.
	shared bool
}

// stmtCtx is the context tx's statements run under.
func (tx *Tx) stmtCtx(ctx context.Context) context.Context {
	if tx.shared {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// Now is the time of this transaction: every row it writes carries the same one.
func (tx *Tx) Now() time.Time { return tx.now }

// Engine reports the engine tx runs on.
func (tx *Tx) Engine() Engine { return tx.db.engine }

func (tx *Tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx = tx.stmtCtx(ctx)
	st, err := tx.stmt(ctx, q)
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		return st.ExecContext(ctx, args...)
	}
	return tx.plain().ExecContext(ctx, tx.db.rebind(q), args...)
}

func (tx *Tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx = tx.stmtCtx(ctx)
	st, err := tx.stmt(ctx, q)
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		return st.QueryContext(ctx, args...)
	}
	return tx.plain().QueryContext(ctx, tx.db.rebind(q), args...)
}

func (tx *Tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	ctx = tx.stmtCtx(ctx)
	if st, err := tx.stmt(ctx, q); err == nil && st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	// Unprepared, or the prepare failed: the driver reports the error from Scan.
	return tx.plain().QueryRowContext(ctx, tx.db.rebind(q), args...)
}

// scanner is one row to read: *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// queryAll runs q and reads every row it returns with scan.
func queryAll[T any](ctx context.Context, tx *Tx, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := tx.query(ctx, q, args...)
	return readAll(rows, err, scan)
}

// readAll reads every row of rows, the result of a query that failed with
// err or not, with scan.
func readAll[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (tx *Tx) plain() querier {
	if tx.tx != nil {
		return tx.tx
	}
	return tx.pool
}

// stmt returns q prepared, or nil where statements are not cached: SQLite's
// driver would otherwise parse and plan every query on every call — most of
// the cost of a small read — and database/sql keeps one prepared statement per
// connection; pgx caches statements itself.
//
// A transaction prepares only on its own connection, never by taking another
// from the pool: with every pooled connection held by a transaction that
// waits for one more, nothing would ever move (four parallel searches did
// exactly that). So a transaction uses the shared statement when it exists —
// database/sql re-prepares it on the transaction's connection — and otherwise
// prepares q for itself, and the shared statement is made in the background,
// by a goroutine that holds no connection while it waits for one.
func (tx *Tx) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if tx.db.engine != SQLite {
		return nil, nil
	}
	if tx.tx == nil {
		if tx.pool != tx.db.r {
			return nil, nil
		}
		// Outside a transaction the statement takes a connection as a
		// query would, holding none before.
		return tx.db.prepared(ctx, tx.pool, q)
	}
	if st := tx.local[q]; st != nil {
		return st, nil
	}
	// Both pools share statements: parsing is most of a small write's
	// cost too (the writer's one connection keeps them prepared).
	var st *sql.Stmt
	if shared := tx.db.cached(tx.pool, q); shared != nil {
		st = tx.tx.StmtContext(ctx, shared)
	} else {
		tx.db.prepareLater(tx.pool, q)
		// Closed by database/sql when the transaction ends.
		var err error
		if st, err = tx.tx.PrepareContext(ctx, tx.db.rebind(q)); err != nil {
			return nil, err
		}
	}
	if tx.local == nil {
		tx.local = map[string]*sql.Stmt{}
	}
	tx.local[q] = st
	return st, nil
}

type stmtKey struct {
	pool *sql.DB
	q    string
}

// maxStmts bounds the statement cache; queries are constants, so it only
// protects against a bug that builds unbounded query text.
const maxStmts = 1000

func (db *DB) cached(pool *sql.DB, q string) *sql.Stmt {
	if v, ok := db.stmts.Load(stmtKey{pool, q}); ok {
		return v.(*sql.Stmt)
	}
	return nil
}

// prepareLater caches q on pool in the background, once.
func (db *DB) prepareLater(pool *sql.DB, q string) {
	if db.closing.Load() || db.nstmts.Load() >= maxStmts {
		return
	}
	if _, busy := db.preparing.LoadOrStore(stmtKey{pool, q}, true); busy {
		return
	}
	db.wg.Go(func() {
		defer db.preparing.Delete(stmtKey{pool, q})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.prepared(ctx, pool, q); err != nil && !db.closing.Load() {
			db.log.Debug("prepare in the background", "err", err)
		}
	})
}

func (db *DB) prepared(ctx context.Context, pool *sql.DB, q string) (*sql.Stmt, error) {
	if st := db.cached(pool, q); st != nil {
		return st, nil
	}
	st, err := pool.PrepareContext(context.WithoutCancel(ctx), db.rebind(q))
	if err != nil {
		return nil, err
	}
	if db.nstmts.Add(1) > maxStmts {
		db.nstmts.Add(-1)
		db.log.Warn("statement cache full; not caching", "query", q)
		return st, nil // leaks one statement per call past the cap, on purpose visible in logs
	}
	if prev, loaded := db.stmts.LoadOrStore(stmtKey{pool, q}, st); loaded {
		st.Close()
		db.nstmts.Add(-1)
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// rebind turns the '?' placeholders every query is written with into
// PostgreSQL's $1, $2 …. Queries never hold a literal '?'.
func (db *DB) rebind(q string) string {
	if db.engine != Postgres {
		return q
	}
	if v, ok := db.rebinds.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	db.rebinds.Store(q, b.String())
	return b.String()
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// migrate applies the embedded migrations of db's engine that have not run yet,
// all in one transaction (PostgreSQL) or one write lock (SQLite), so that
// replicas starting together do not race.
func (db *DB) migrate(ctx context.Context) error {
	dir := path.Join("migrations", string(db.engine))
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if db.engine == SQLite {
		// A migration that changes a table's constraints builds the table
		// anew and drops the old one, which with foreign keys on would
		// delete the rows that refer to it (SQLite's own procedure for
		// such a change: foreign keys off, then checked before commit).
		// The pragma is a no-op inside a transaction, so it is set before.
		// Their statement journals go to files: a statement that rewrites
		// every page of a million would hold them all in memory.
		if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF; PRAGMA temp_store = FILE"); err != nil {
			return err
		}
		defer func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY"); err != nil {
				// Not to serve without its foreign keys: the pool opens
				// another connection, with them, in its place.
				conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}()
	}
	sqltx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer sqltx.Rollback()
	if db.engine == Postgres {
		if _, err := sqltx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext('atrium.migrate.' || current_schema()))"); err != nil {
			return err
		}
	}
	if _, err := sqltx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"); err != nil {
		return err
	}
	var current int
	if err := sqltx.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current); err != nil {
		return err
	}
	announced := current == 0 // a new store migrates in a blink
	var rebuilt []string      // tables that applied migrations dropped
	for _, name := range names {
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: name must start with a number", name)
		}
		if v <= current {
			continue
		}
		if !announced {
			// Some migrations rewrite an index of every page (0026: 10
			// minutes at a million pages): say why the start waits.
			db.log.Info("upgrading the store; a large one can take minutes", "engine", db.engine, "from_version", current, "to_version", len(names))
			announced = true
		}
		body, err := migrationFS.ReadFile(path.Join(dir, name))
		if err != nil {
			return err
		}
		if _, err := sqltx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := sqltx.ExecContext(ctx, db.rebind("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)"), v, name, micros(db.now())); err != nil {
			return err
		}
		db.log.Debug("applied migration", "engine", db.engine, "name", name)
		for _, m := range droppedTable.FindAllStringSubmatch(string(body), -1) {
			rebuilt = append(rebuilt, m[1])
		}
	}
	if db.engine == SQLite {
		if err := checkReferences(ctx, sqltx, rebuilt); err != nil {
			return err
		}
	}
	return sqltx.Commit()
}

var droppedTable = regexp.MustCompile(`(?i)\bDROP TABLE\s+(?:IF EXISTS\s+)?(\w+)`)

// checkReferences fails if a row of a table that refers to one of tables
// refers to nothing: migrations that dropped and built those tables anew,
// with foreign keys off, must have kept every row that others point at. Only
// the referring tables are checked: all of a large store's would take
// minutes.
func checkReferences(ctx context.Context, tx *sql.Tx, tables []string) error {
	for _, t := range tables {
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT m.name FROM sqlite_schema m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table' AND f."table" = ?`, t)
		referring, err := readAll(rows, err, scanString)
		if err != nil {
			return err
		}
		for _, r := range referring {
			var table string
			var parent sql.NullString
			var row, fk sql.NullInt64
			err := tx.QueryRowContext(ctx, "SELECT * FROM pragma_foreign_key_check(?)", r).Scan(&table, &row, &parent, &fk)
			switch {
			case err == nil:
				return fmt.Errorf("migrations left a row of %s (rowid %d) referring to a missing row of %s", table, row.Int64, parent.String)
			case !errors.Is(err, sql.ErrNoRows):
				return err
			}
		}
	}
	return nil
}

// SchemaVersion reports the newest migration applied.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.r.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v)
	return v, err
}
