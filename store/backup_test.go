package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Backup copies an SQLite store into a new file that opens as the same
// store; it never replaces a file; PostgreSQL is pg_dump's.
func TestBackup(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := storetest.MustOpen(t, e, nil)
		ctx := context.Background()
		file := filepath.Join(t.TempDir(), "copy.db")
		err := db.Backup(ctx, file)
		if e == store.Postgres {
			if atrium.ErrorCode(err) != atrium.EInvalid {
				t.Fatalf("backup of PostgreSQL: %v, want invalid_argument pointing to pg_dump", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Backup(ctx, file); atrium.ErrorCode(err) != atrium.EConflict {
			t.Fatalf("backup over a file: %v, want conflict", err)
		}
		want, err := db.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := store.Open(ctx, file, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cp.Close()
		if got, err := cp.SchemaVersion(ctx); err != nil || got != want {
			t.Fatalf("the copy's schema: %d %v, want %d", got, err, want)
		}
	})
}
