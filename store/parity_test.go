package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// The two engines' migrations are written apart: after them both, the same
// tables have the same columns, but for what each engine's search and
// keys need of their own.
func TestMigrationsGiveBothEnginesTheSameTables(t *testing.T) {
	ctx := context.Background()
	// What only one engine has, and why.
	own := map[store.Engine]map[string][]string{
		store.SQLite: {
			"sqlite_sequence": nil, // AUTOINCREMENT's counters
		},
	}
	schemas := map[store.Engine]map[string][]string{}
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		cols, err := storetest.MustOpen(t, e, nil).Columns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for table, only := range own[e] {
			if only == nil {
				if _, ok := cols[table]; !ok {
					t.Errorf("%s has no table %s: update the list of what is its own", e, table)
				}
				delete(cols, table)
				continue
			}
			for _, c := range only {
				if !slices.Contains(cols[table], c) {
					t.Errorf("%s has no column %s.%s: update the list of what is its own", e, table, c)
				}
			}
			cols[table] = slices.DeleteFunc(cols[table], func(c string) bool { return slices.Contains(only, c) })
		}
		schemas[e] = cols
	})
	if len(schemas) < 2 {
		return // PostgreSQL's case skipped (not in CI, where it is required)
	}
	if diff := cmp.Diff(schemas[store.SQLite], schemas[store.Postgres]); diff != "" {
		t.Errorf("tables and columns differ between the engines (-sqlite +postgres):\n%s", diff)
	}
}
