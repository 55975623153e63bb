package store

import (
	"context"
	"path/filepath"
	"testing"
)

// Migrations run with foreign keys off on SQLite (a table built anew would
// otherwise take the rows that refer to it along when the old one is
// dropped); the connection that ran them enforces them again afterwards and
// keeps its statement journals in memory again (migrations put them in
// files), and a new store has the page size openSQLite sets.
func TestTheWriterEnforcesForeignKeysAfterMigrating(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "atrium.db"), &Options{EventPoll: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var on, size int
	if err := db.w.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&on); err != nil || on != 1 {
		t.Fatalf("foreign_keys = %d, %v; want 1", on, err)
	}
	_, err = db.w.ExecContext(ctx, "INSERT INTO agent_deliveries (workspace_id, principal_id, inbox_id, task_id, kind, state, created_at, updated_at) VALUES (1, 1, 424242, 424242, 'question', 'pending', 0, 0)")
	if err == nil {
		t.Fatal("a delivery of no inbox item was taken")
	}
	var temp int
	if err := db.w.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&temp); err != nil || temp != 2 {
		t.Fatalf("temp_store = %d, %v; want 2 (memory)", temp, err)
	}
	if err := db.w.QueryRowContext(ctx, "PRAGMA page_size").Scan(&size); err != nil || size != pageSize {
		t.Fatalf("page_size = %d, %v; want %d", size, err, pageSize)
	}
}
