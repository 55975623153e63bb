package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Migration 0026 rebuilds SQLite's full-text index without positions from
// the index itself: every page keeps exactly the tokens it had, word and
// prefix queries find the same pages, and deletions still work.
func TestMigrationDropsFTSPositionsKeepingTokens(t *testing.T) {
	ctx := context.Background()
	raw, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "old.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1) // the migration's temp table lives on its connection
	// The index as migrations 0005–0025 left it.
	old, err := migrationFS.ReadFile("migrations/sqlite/0005_search_tokens.sql")
	if err != nil {
		t.Fatal(err)
	}
	create := ""
	for line := range strings.Lines(string(old)) {
		if strings.HasPrefix(line, "CREATE VIRTUAL TABLE page_fts") {
			create = line
		}
	}
	if create == "" || strings.Contains(create, "detail=") {
		t.Fatalf("0005 creates no page_fts with positions: %q", create)
	}
	pages := map[int64]string{
		1: "w1_alpha w1_beta w1_alphabet",
		2: "w1_beta w1_gamma",
		3: "w2_alpha w2_delta",
		7: "w1_delta w1_alpine",
	}
	if _, err := raw.ExecContext(ctx, create); err != nil {
		t.Fatal(err)
	}
	for id, toks := range pages {
		if _, err := raw.ExecContext(ctx, "INSERT INTO page_fts (rowid, tokens) VALUES (?, ?)", id, toks); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.ExecContext(ctx, "DELETE FROM page_fts WHERE rowid = 2"); err != nil {
		t.Fatal(err)
	}
	body, err := migrationFS.ReadFile("migrations/sqlite/0026_fts_without_positions.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, string(body)); err != nil {
		t.Fatalf("migration 0026: %v", err)
	}

	var schema string
	if err := raw.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE name = 'page_fts'").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(schema, "detail=none") || !strings.Contains(schema, "contentless_delete=1") {
		t.Errorf("page_fts after 0026: %s", schema)
	}
	match := func(expr string) []int64 {
		t.Helper()
		rows, err := raw.QueryContext(ctx, "SELECT rowid FROM page_fts WHERE page_fts MATCH ? ORDER BY rowid", expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		defer rows.Close()
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	for expr, want := range map[string][]int64{
		`"w1_alpha"`:                  {1},
		`"w1_alp"*`:                   {1, 7},
		`"w1_beta"`:                   {1}, // 2 was deleted before
		`"w1_gamma"`:                  nil,
		`"w2_alpha"`:                  {3},
		`("w1_delta" OR "w1_beta")`:   {1, 7},
		`("w1_alp"*) NOT "w1_alpine"`: {1},
	} {
		if got := match(expr); !slices.Equal(got, want) {
			t.Errorf("MATCH %s = %v, want %v", expr, got, want)
		}
	}
	// The slim index takes writes as the old one did.
	if _, err := raw.ExecContext(ctx, "DELETE FROM page_fts WHERE rowid = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, "INSERT INTO page_fts (rowid, tokens) VALUES (8, 'w1_alpha')"); err != nil {
		t.Fatal(err)
	}
	if got := match(`"w1_alp"*`); !slices.Equal(got, []int64{7, 8}) {
		t.Errorf("after a delete and an insert, MATCH w1_alp* = %v, want [7 8]", got)
	}
}
