package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/tasks"
)

// mustActor is a local agent in the default workspace of a fresh SQLite store.
func mustActor(tb testing.TB) *atrium.Actor {
	tb.Helper()
	return identitytest.Agent(tb, identitytest.New(tb, storetest.MustOpen(tb, store.SQLite, nil)), "tester", "")
}

// connectInMemory opens a client session to server over in-memory transports.
func connectInMemory(tb testing.TB, server *mcp.Server) *mcp.ClientSession {
	tb.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// newTasks is the tasks service with desks kept in d.
func newTasks(db *store.DB, d *pages.Service) *tasks.Service {
	t := tasks.New(db, nil)
	t.Pages = d
	return t
}
