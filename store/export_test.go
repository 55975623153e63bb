package store

import (
	"context"
	"slices"
)

// Hooks for the external tests, which watch the group commit at work.

// SetGroupHook has f told the size of each shared commit (SQLite) as it
// begins. Set it before the writes start.
func (db *DB) SetGroupHook(f func(size int)) { db.group.onGroup = f }

// QueuedWrites is how many calls of Update wait for a commit (SQLite).
func (db *DB) QueuedWrites() int { return db.group.queued() }

// Columns lists the tables of db's schema and their columns, sorted: from
// sqlite_master and table_info on SQLite, information_schema on PostgreSQL.
func (db *DB) Columns(ctx context.Context) (map[string][]string, error) {
	out := map[string][]string{}
	q := "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
	if db.engine == SQLite {
		q = "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'"
	}
	rows, err := db.r.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			return nil, err
		}
		out[table] = append(out[table], column)
	}
	for _, cols := range out {
		slices.Sort(cols)
	}
	return out, rows.Err()
}

// Strings runs q in tx and returns its rows' first column, as text.
func (tx *Tx) Strings(ctx context.Context, q string, args ...any) ([]string, error) {
	return queryAll(ctx, tx, func(sc scanner) (s string, err error) {
		err = sc.Scan(&s)
		return s, err
	}, q, args...)
}

// Exec runs q in tx.
func (tx *Tx) Exec(ctx context.Context, q string, args ...any) error {
	_, err := tx.exec(ctx, q, args...)
	return err
}

// FlushIndex writes what tx queued for the indexes, as its commit would.
func (tx *Tx) FlushIndex(ctx context.Context) error { return tx.flushPostings(ctx) }
