// Command atrium is the shared workspace where people and AI agents work on the
// same documents, review threads and tasks. This package is the only place that
// wires concrete parts together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/services"
)

func main() {
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd(os.Stdin, os.Stdout, os.Stderr).ExecuteContext(ctx)
	stop()
	if err != nil {
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		fmt.Fprintln(os.Stderr, "atrium:", err)
		os.Exit(1)
	}
}

// tuneGC collects garbage half as often as Go's default unless GOGC says
// otherwise. The MCP SDK decodes every JSON-RPC message with fresh 32 KiB
// buffers, several times per message, so one tool call allocates about half a
// megabyte that dies at once. Against Atrium's few megabytes of live heap,
// GOGC=100 then runs a collection every few calls and costs a quarter of the
// CPU of a call; at 200 it costs a few megabytes of heap and gives back a
// quarter of the calls per second (whoami over HTTP: 11.5k -> 14.6k in 12 s).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
}

// exitError ends the process with code, its message already printed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// globals are the flags every command shares.
type globals struct {
	dataDir        string
	db             string
	dbListen       string
	logLevel       string
	trashRetention time.Duration
	stdin          io.Reader
	stdout         io.Writer
	stderr         io.Writer
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdin: stdin, stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "atrium",
		Short: "The shared workspace where people and AI agents work on the same documents, reviews and tasks",
		Long: `Atrium is one self-hosted binary: a workspace of documents, review threads and tasks that
people use from a browser and agents use over MCP (stdio and Streamable HTTP).

Start it with 'atrium serve'; connect an agent with 'atrium mcp'.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       atrium.Version,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringVar(&g.dataDir, "data-dir", env("ATRIUM_DATA_DIR", defaultDataDir()), "folder for the SQLite database and local state (env ATRIUM_DATA_DIR)")
	pf.StringVar(&g.db, "db", os.Getenv("ATRIUM_DB"), "database: postgres://… URL or SQLite file path; default DATA_DIR/atrium.db (env ATRIUM_DB)")
	pf.StringVar(&g.dbListen, "db-listen", os.Getenv("ATRIUM_DB_LISTEN"), "PostgreSQL: a direct connection to LISTEN for other replicas' events on, when --db goes through a transaction-pooling PgBouncer (env ATRIUM_DB_LISTEN)")
	pf.StringVar(&g.logLevel, "log-level", env("ATRIUM_LOG_LEVEL", "info"), "debug, info, warn or error (env ATRIUM_LOG_LEVEL)")
	retention := pages.DefaultTrashRetention
	if v, err := time.ParseDuration(os.Getenv("ATRIUM_TRASH_RETENTION")); err == nil {
		retention = v
	}
	pf.DurationVar(&g.trashRetention, "trash-retention", retention, "how long deleted pages stay restorable in the trash; 0 keeps them until purged (env ATRIUM_TRASH_RETENTION)")
	root.AddCommand(
		newServeCmd(g), newMCPCmd(g), newCallCmd(g), newToolsCmd(g),
		newTokenCmd(g), newWorkspaceCmd(g), newMigrateCmd(g), newVersionCmd(g),
		newImportCmd(g), newExportCmd(g), newSkillCmd(g), newDevCmd(g), newTrashCmd(g), newSessionCmd(g), newHandoffCmd(g), newAgentCmd(g), newBackupCmd(g), newTrackerCmd(g), newGatewayCmd(g),
	)
	return root
}

func env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// defaultDataDir is $XDG_DATA_HOME/atrium, or ~/.local/share/atrium.
func defaultDataDir() string {
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "atrium")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "atrium")
	}
	return "atrium-data"
}

// localHandle is the principal of local callers: ATRIUM_AGENT, else the OS
// user name made into a valid handle.
func localHandle() string {
	if h := os.Getenv("ATRIUM_AGENT"); h != "" {
		return h
	}
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	name = strings.ToLower(name)
	var b strings.Builder
	for _, c := range name {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteRune(c)
		}
	}
	h := strings.TrimLeft(b.String(), "._-")
	if h == "" {
		h = "agent"
	}
	if len(h) > 63 {
		h = h[:63]
	}
	return h
}

func (g *globals) logger() *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
}

// dsn is the database the flags name.
func (g *globals) dsn() (string, error) {
	if g.db != "" {
		return g.db, nil
	}
	if err := os.MkdirAll(g.dataDir, 0o700); err != nil {
		return "", fmt.Errorf("create data folder: %w", err)
	}
	return filepath.Join(g.dataDir, "atrium.db"), nil
}

// app is the wired application: the services over the store.
type app struct{ *services.Services }

// open opens the store (migrating it) and the services, and makes sure the
// default workspace exists.
func (g *globals) open(ctx context.Context) (*app, error) {
	dsn, err := g.dsn()
	if err != nil {
		return nil, err
	}
	s, err := services.Open(ctx, services.Options{
		DSN: dsn, ListenDSN: g.dbListen, DataDir: g.dataDir, Logger: g.logger(), TrashRetention: g.trashRetention,
		// Where people open the UI, for the url of a task; serve knows its own.
		PublicURL: os.Getenv("ATRIUM_PUBLIC_URL"),
	})
	if err != nil {
		return nil, err
	}
	return &app{s}, nil
}

// openLocal opens the store for a local command, with its caller.
func (g *globals) openLocal(ctx context.Context) (*app, *atrium.Actor, error) {
	a, err := g.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	actor, err := a.localActor(ctx)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, actor, nil
}

// localActor is the caller of local commands: ATRIUM_AGENT in ATRIUM_WORKSPACE.
func (a *app) localActor(ctx context.Context) (*atrium.Actor, error) {
	return a.localActorIn(ctx, os.Getenv("ATRIUM_WORKSPACE"))
}

// localActorIn is the local principal (see localHandle) in workspace ("":
// the default), created on first use as localKind says.
func (a *app) localActorIn(ctx context.Context, workspace string) (*atrium.Actor, error) {
	return a.Identity.LocalActor(ctx, localHandle(), workspace, localKind())
}

// localKind is what the local principal is: the agent ATRIUM_AGENT names, or
// else the person at the keyboard, whose imports and folder edits the feed
// then shows as a person's.
func localKind() atrium.PrincipalKind {
	if os.Getenv("ATRIUM_AGENT") != "" {
		return atrium.KindAgent
	}
	return atrium.KindHuman
}

// envBool is the boolean environment variable key ("1", "true", "0",
// "false" …), or def when it is unset or unreadable.
func envBool(key string, def bool) bool {
	if v, err := strconv.ParseBool(os.Getenv(key)); err == nil {
		return v
	}
	return def
}
