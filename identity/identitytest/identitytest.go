// Package identitytest sets up the identities tests act as, over a real store.
package identitytest

import (
	"context"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/store"
)

// New returns the identity service over db, bootstrapped (the default
// workspace exists) and closed when tb ends.
func New(tb testing.TB, db *store.DB) *identity.Service {
	tb.Helper()
	ids := identity.New(db, nil)
	tb.Cleanup(ids.Close)
	if _, err := ids.Bootstrap(context.Background(), false); err != nil {
		tb.Fatal(err)
	}
	return ids
}

// Agent returns the local agent handle in workspace ("" for the default),
// a writer created on first use.
func Agent(tb testing.TB, ids *identity.Service, handle, workspace string) *atrium.Actor {
	tb.Helper()
	a, err := ids.LocalActor(context.Background(), handle, workspace, atrium.KindAgent)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}
