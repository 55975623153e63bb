package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/atrium-hq/atrium"
)

// Backup writes a consistent copy of an SQLite store to path while the
// store stays in use, by this process and others (atrium serve): VACUUM
// INTO reads one snapshot of the database in a read transaction, so writers
// go on, and writes a compact database file with no WAL beside it. The copy
// is made under a temporary name in path's folder and renamed into place,
// so path is whole or absent. An existing path is refused, never replaced.
//
// PostgreSQL is backed up with its own tools (pg_dump): Backup says so.
func (db *DB) Backup(ctx context.Context, path string) error {
	if db.engine != SQLite {
		return atrium.Errorf(atrium.EInvalid, "atrium backup copies an SQLite store; this one is PostgreSQL: use pg_dump")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(abs); err == nil {
		return atrium.Errorf(atrium.EConflict, "%s already exists: a backup never replaces a file; name a new one", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".part-*")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name) // VACUUM INTO wants to create the file itself
	defer os.Remove(name)
	if _, err := db.w.ExecContext(ctx, "VACUUM INTO ?", name); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if f, err := os.Open(name); err == nil {
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("backup: %w", err)
		}
	}
	if err := os.Link(name, abs); err != nil { // not rename: never over a file made meanwhile
		return fmt.Errorf("backup: %w", err)
	}
	return nil
}
