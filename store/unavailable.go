package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/atrium-hq/atrium"
)

// Store failures that are not the caller's fault and pass by themselves once
// an operator acts (a disk freed, a file system made writable again, the
// database server back): the caller gets unavailable — retryable, with the
// cause in words — not an internal error; and /healthz reports them (Ping)
// until a write commits again, so that a load balancer routes around the node.

// failure is one kind of store failure.
type failure struct {
	kind string // in Details: disk_full, read_only, io_error, database_unreachable
	text string // the cause in words
}

var (
	failDiskFull    = failure{"disk_full", "the disk is full: nothing can be saved until space is freed on the database's disk; try again later"}
	failReadOnly    = failure{"read_only", "the database is read-only: nothing can be saved until its file (or file system) is writable again; try again later"}
	failIO          = failure{"io_error", "the database's disk cannot be written (an I/O error): nothing can be saved until it is fixed; try again later"}
	failUnreachable = failure{"database_unreachable", "the database server cannot be reached: nothing can be read or saved until it is back; try again in a moment"}
)

// classify tells a store failure from other errors: for one it returns its
// kind, for anything else (an *atrium.Error of a service, a bug, a caller who
// gave up) ok is false.
func classify(err error) (f failure, ok bool) {
	if err == nil {
		return failure{}, false
	}
	var ae *atrium.Error
	if errors.As(err, &ae) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return failure{}, false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "53100": // disk_full
			return failDiskFull, true
		case pe.Code == "25006": // read_only_sql_transaction (a standby, default_transaction_read_only)
			return failReadOnly, true
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"): // connection exception; admin/crash shutdown, cannot connect now
			return failUnreachable, true
		case pe.Code == "58030": // io_error
			return failIO, true
		}
		return failure{}, false
	}
	s := err.Error()
	switch {
	case strings.Contains(s, "SQLITE_FULL"), strings.Contains(s, "database or disk is full"), strings.Contains(s, "no space left on device"):
		return failDiskFull, true
	case strings.Contains(s, "SQLITE_READONLY"), strings.Contains(s, "readonly database"), strings.Contains(s, "read-only file system"):
		return failReadOnly, true
	case strings.Contains(s, "SQLITE_IOERR"), strings.Contains(s, "disk I/O error"):
		return failIO, true
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) ||
		pgconn.SafeToRetry(err) || strings.Contains(s, "conn closed") || strings.Contains(s, "connection refused") ||
		strings.Contains(s, "failed to connect") || strings.Contains(s, "unexpected EOF") {
		return failUnreachable, true
	}
	return failure{}, false
}

// unavailable is the error a caller gets for f.
func (f failure) unavailable() *atrium.Error {
	return atrium.Errorf(atrium.EUnavailable, "%s", f.text).WithDetails(map[string]any{"cause": f.kind, "retryable": true})
}

// down is the store's state while writes cannot commit.
type down struct {
	err    *atrium.Error
	probed time.Time // the last probe (see Ping)
}

// writeHealth remembers the last store failure until a write commits.
type writeHealth struct {
	down atomic.Pointer[down]
}

// storeFailure maps err, when it is a store failure, to unavailable and
// remembers that writes cannot commit; other errors pass unchanged. The
// original error is logged: it names the file, the errno or the server.
func (db *DB) storeFailure(err error) error {
	f, ok := classify(err)
	if !ok {
		return err
	}
	e := f.unavailable()
	if db.health.down.Swap(&down{err: e, probed: time.Now()}) == nil {
		db.log.Error("the store cannot save: answering unavailable until a write commits again", "cause", f.kind, "err", err)
	} else {
		db.log.Debug("store failure", "cause", f.kind, "err", err)
	}
	return e
}

// wrote records a commit: writes work (again).
func (db *DB) wrote() {
	if db.health.down.Load() != nil && db.health.down.Swap(nil) != nil {
		db.log.Info("the store saves again")
	}
}

// probeEvery bounds how often a health check of a failing store writes to it.
const probeEvery = time.Second

// probe tries a small write while the store is down: /healthz is then back
// to 200 on its own once writes commit, even if no one else writes.
func (db *DB) probe(ctx context.Context, d *down) error {
	if time.Since(d.probed) < probeEvery {
		return d.err
	}
	d2 := *d
	d2.probed = time.Now()
	db.health.down.CompareAndSwap(d, &d2)
	err := db.Update(ctx, func(tx *Tx) error {
		return tx.SetMeta(ctx, "health.probe", time.Now().UTC().Format(time.RFC3339Nano))
	})
	if err == nil {
		return nil
	}
	if atrium.ErrorCode(err) == atrium.EUnavailable {
		return err
	}
	return d.err
}
