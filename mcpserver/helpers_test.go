package mcpserver_test

import (
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver/mcptest"
	"github.com/atrium-hq/atrium/mcptools"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
)

// mustActor is a local agent in the default workspace of a fresh SQLite store.
func mustActor(tb testing.TB) *atrium.Actor {
	tb.Helper()
	return servicestest.Agent(tb, servicestest.MustOpen(tb, store.SQLite, nil), "tester", "")
}

// connectInMemory opens a client session to server over in-memory transports.
var connectInMemory = mcptest.Connect

// all are every toolset, as the binary has them (without a gateway).
var all = mcptools.All(mcptools.Options{})
