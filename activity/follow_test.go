package activity_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// A server follows its workspace while another process (a stdio agent, the
// CLI) writes to the same SQLite file and the server writes too: the
// follower gets every page the other process wrote, not only those that
// happened to come after the server's own latest write.
func TestFollowersGetOtherProcessesEventsWhileTheServerWrites(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.DSN(t, store.SQLite)
	opts := &store.Options{Conns: 4, EventPoll: 50 * time.Millisecond}
	server, err := store.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	agent, err := store.Open(ctx, dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	me := identitytest.Agent(t, identitytest.New(t, server), "follower", "")
	them := atrium.NewContextWithActor(ctx, identitytest.Agent(t, identitytest.New(t, agent), "agent", ""))
	mine := atrium.NewContextWithActor(ctx, me)
	act := activity.New(server)
	start, err := act.Latest(mine)
	if err != nil {
		t.Fatal(err)
	}
	const n = 30
	got := map[string]bool{}
	var mu sync.Mutex
	all := make(chan struct{})
	fctx, cancel := context.WithCancel(mine)
	defer cancel()
	go func() {
		_ = act.Follow(fctx, activity.FollowRequest{After: start}, func(e atrium.Event) bool {
			mu.Lock()
			defer mu.Unlock()
			if e.Kind == pages.EventPageCreated && len(e.Subject) > 6 && e.Subject[:6] == "Agent/" {
				got[e.Subject] = true
				if len(got) == n {
					close(all)
				}
			}
			return true
		})
	}()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the server's own writes, every few milliseconds
		srv := pages.New(server, nil)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if _, err := srv.WritePage(mine, pages.WriteRequest{Path: fmt.Sprintf("Server/%d.md", i), Content: "x"}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	other := pages.New(agent, nil)
	for i := range n {
		if _, err := other.WritePage(them, pages.WriteRequest{Path: fmt.Sprintf("Agent/%d.md", i), Content: "y"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // an agent's pace, interleaved with the server's
	}
	select {
	case <-all:
	case <-time.After(10 * time.Second):
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Errorf("the follower got %d of the other process's %d pages", len(got), n)
	}
}
