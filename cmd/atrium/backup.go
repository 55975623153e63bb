package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium/store"
)

// pgDumpHelp is what a PostgreSQL store is backed up and restored with.
const pgDumpHelp = `atrium backup copies an SQLite store; this one is PostgreSQL, which backs itself up:
  pg_dump --format=custom --no-owner --no-privileges --file=atrium.dump "$ATRIUM_DB"
(consistent while Atrium runs: pg_dump reads one snapshot). To restore, stop every
atrium serve, then:
  pg_restore --clean --if-exists --no-owner --no-privileges --dbname="$ATRIUM_DB" atrium.dump`

func newBackupCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "Copy the SQLite store to FILE, consistently, while Atrium runs",
		Long: `Write a consistent copy of the SQLite store (DATA_DIR/atrium.db, or --db) to FILE, a new
file: safe while atrium serve and other processes use the store and write to it (the copy
is one snapshot, taken without stopping them). FILE must not exist.

To restore: stop atrium serve; remove DATA_DIR/atrium.db-wal and atrium.db-shm if they
are there; copy FILE as DATA_DIR/atrium.db; start atrium serve.

A PostgreSQL store (--db postgres://…) is backed up with pg_dump; the command says how.`,
		Example: `  atrium backup ~/backups/atrium-$(date +%F).db
  # restore: stop serve, then
  rm -f ~/.local/share/atrium/atrium.db-wal ~/.local/share/atrium/atrium.db-shm
  cp ~/backups/atrium-2026-11-27.db ~/.local/share/atrium/atrium.db`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dsn, err := g.dsn()
			if err != nil {
				return err
			}
			if store.IsPostgresDSN(dsn) {
				return fmt.Errorf("%s", pgDumpHelp)
			}
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			if err := a.Backup(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(g.stderr, "Backed up %s to %s\n", dsn, args[0])
			return nil
		},
	}
}
