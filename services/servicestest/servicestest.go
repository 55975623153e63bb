// Package servicestest boots Atrium's services over a fresh store for tests:
// the same wiring the binary runs (services.New), on either engine.
package servicestest

import (
	"context"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// MustOpen returns the services over a fresh store on engine e (opts as
// storetest.MustOpen takes them), bootstrapped: the default workspace and
// its admin exist. Everything is closed when tb ends.
func MustOpen(tb testing.TB, e store.Engine, opts *store.Options) *services.Services {
	tb.Helper()
	return Over(tb, storetest.MustOpen(tb, e, opts))
}

// Over returns the services over db, an open store the test closes,
// bootstrapped.
func Over(tb testing.TB, db *store.DB) *services.Services {
	tb.Helper()
	s := services.New(db, nil)
	tb.Cleanup(func() {
		s.Calls.Close()
		s.Identity.Close()
	})
	if _, err := s.Identity.Bootstrap(context.Background(), false); err != nil {
		tb.Fatal(err)
	}
	return s
}

// Agent returns the local agent handle in workspace ("" for the default), a
// writer created on first use.
func Agent(tb testing.TB, s *services.Services, handle, workspace string) *atrium.Actor {
	tb.Helper()
	return identitytest.Agent(tb, s.Identity, handle, workspace)
}
