package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// A read-only database (a file opened read-only, as on a file system gone
// read-only) refuses writes with SQLITE_READONLY: that is unavailable, in words.
func TestReadOnlyDatabaseIsAStoreFailure(t *testing.T) {
	p := filepath.Join(t.TempDir(), "atrium.db")
	db, err := Open(context.Background(), p, &Options{Conns: 1})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := sql.Open("sqlite", "file:"+p+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, werr := ro.Exec("INSERT INTO meta (key, value) VALUES ('a', 'b')")
	if werr == nil {
		t.Fatal("a read-only database took a write")
	}
	f, ok := classify(werr)
	if !ok || f != failReadOnly {
		t.Fatalf("classify(%v) = %v, %v; want read_only", werr, f, ok)
	}
	if e := f.unavailable(); e.Message == "" || e.Details["cause"] != "read_only" {
		t.Errorf("unavailable = %+v", e)
	}
}
