package activity_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Records queued by many callers at once are all written, by the caller's
// name, once Close returns; one recorded after Close is written at once.
func TestCallLogWritesEveryRecord(t *testing.T) {
	db := storetest.MustOpen(t, store.SQLite, &store.Options{Conns: 4})
	ids := identitytest.New(t, db)
	secret, _, err := ids.CreateToken(context.Background(), identity.TokenRequest{Principal: "dede", Workspace: atrium.DefaultWorkspace, Role: atrium.RoleReader})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ids.Authenticate(context.Background(), secret, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := atrium.NewContextWithActor(context.Background(), a)
	svc := activity.New(db)
	l := svc.NewCallLog(nil)
	const n = 3000 // more than the queue holds: senders wait for room
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				if err := l.Record(ctx, activity.UpstreamCall{Tool: fmt.Sprintf("up_%d", i), Server: "up", Upstream: "echo", Outcome: "ok"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	l.Close()
	if err := l.Record(ctx, activity.UpstreamCall{Tool: "after_close", Server: "up", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(context.Background(), activity.UpstreamCall{Tool: "nobody"}); atrium.ErrorCode(err) != atrium.EUnauthenticated {
		t.Errorf("a record with no caller: %v", err)
	}
	seen := map[string]bool{}
	for after := int64(0); ; {
		evs, err := svc.Since(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			if e.Kind == activity.EventGatewayCall {
				if e.ActorID != a.Principal.ID {
					t.Errorf("event %d by %d, want %d", e.ID, e.ActorID, a.Principal.ID)
				}
				seen[e.Subject] = true
			}
			after = e.ID
		}
	}
	if len(seen) != n+1 || !seen["after_close"] || !seen["up_0"] || !seen[fmt.Sprintf("up_%d", n-1)] {
		t.Errorf("%d records written, want %d", len(seen), n+1)
	}
}
