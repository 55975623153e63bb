package store_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

func TestMigrationsAreIdempotent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		dsn := storetest.DSN(t, e)
		for i := range 2 {
			db, err := store.Open(ctx, dsn, nil)
			if err != nil {
				t.Fatalf("open #%d: %v", i+1, err)
			}
			v, err := db.SchemaVersion(ctx)
			if err != nil || v < 1 {
				t.Fatalf("schema version = %d, %v; want >= 1", v, err)
			}
			if db.Engine() != e {
				t.Fatalf("engine = %s, want %s", db.Engine(), e)
			}
			db.Close()
		}
	})
}

// Replicas that start together on a new database migrate it once: each
// migration is applied by one of them (the others find it done), counted
// from the "applied migration" lines they log.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		dsn := storetest.DSN(t, e)
		var log syncBuffer
		logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				db, err := store.Open(context.Background(), dsn, &store.Options{Logger: logger, EventPoll: -1})
				if err == nil {
					db.Close()
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("concurrent open: %v", err)
			}
		}
		db, err := store.Open(context.Background(), dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		version, err := db.SchemaVersion(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// Versions are numbered 1, 2, …: the newest is how many there are.
		if applied := strings.Count(log.String(), `msg="applied migration"`); applied != version || version < 1 {
			t.Errorf("4 concurrent opens applied %d migrations, want each of the %d once:\n%s", applied, version, log.String())
		}
	})
}

// syncBuffer is a log that goroutines write together.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestUpdateCommitsEventsWithTheChange(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		db := storetest.MustOpen(t, e, nil)
		events, stop := db.Subscribe(16)
		defer stop()

		var ws atrium.Workspace
		err := db.Update(ctx, func(tx *store.Tx) error {
			var err error
			if ws, err = tx.CreateWorkspace(ctx, "alpha"); err != nil {
				return err
			}
			return tx.EmitJSON(ctx, ws.ID, 0, "workspace.created", ws.Name, map[string]string{"why": "test"})
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-events:
			if ev.Kind != "workspace.created" || ev.Subject != "alpha" || ev.WorkspaceID != ws.ID || string(ev.Payload) != `{"why":"test"}` {
				t.Fatalf("event = %+v", ev)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no event after commit")
		}

		// A failed transaction leaves neither its change nor its event.
		boom := errors.New("boom")
		err = db.Update(ctx, func(tx *store.Tx) error {
			ws2, err := tx.CreateWorkspace(ctx, "beta")
			if err != nil {
				return err
			}
			if err := tx.EmitJSON(ctx, ws2.ID, 0, "workspace.created", "beta", nil); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update = %v, want boom", err)
		}
		err = db.View(ctx, func(tx *store.Tx) error {
			if _, err := tx.WorkspaceByName(ctx, "beta"); atrium.ErrorCode(err) != atrium.ENotFound {
				t.Errorf("beta after rollback: err = %v, want not_found", err)
			}
			evs, err := tx.EventsAfter(ctx, 0, 0, 100)
			if err != nil {
				return err
			}
			if len(evs) != 1 || evs[0].Subject != "alpha" {
				t.Errorf("events after rollback = %+v, want only alpha's", evs)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-events:
			t.Fatalf("rolled-back event published: %+v", ev)
		case <-time.After(300 * time.Millisecond):
		}
	})
}

// Events written by another process (another replica, the CLI) reach this
// process's subscribers: by polling on SQLite, LISTEN/NOTIFY on PostgreSQL.
func TestEventsCrossProcesses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		dsn := storetest.DSN(t, e)
		opts := &store.Options{EventPoll: 20 * time.Millisecond}
		a, err := store.Open(ctx, dsn, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := store.Open(ctx, dsn, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		evA, stopA := a.Subscribe(16)
		defer stopA()
		// A's listener (PostgreSQL) connects in the background and misses
		// what comes before: B pings until A hears one, then the test begins.
		var ping int64
		err = b.Update(ctx, func(tx *store.Tx) error {
			ws, err := tx.CreateWorkspace(ctx, "ping")
			ping = ws.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for heard, deadline := false, time.Now().Add(30*time.Second); !heard; {
			if time.Now().After(deadline) {
				t.Fatal("no event of B's ever reached A")
			}
			if err := b.Update(ctx, func(tx *store.Tx) error { return tx.EmitJSON(ctx, ping, 0, "ping", "ping", nil) }); err != nil {
				t.Fatal(err)
			}
			select {
			case <-evA:
				heard = true
			case <-time.After(50 * time.Millisecond):
			}
		}
		// Pings still on their way are skipped below.
		next := func() (atrium.Event, bool) {
			for {
				select {
				case ev := <-evA:
					if ev.Kind != "ping" {
						return ev, true
					}
				case <-time.After(10 * time.Second):
					return atrium.Event{}, false
				}
			}
		}
		for i, name := range []string{"one", "two", "three"} {
			err := b.Update(ctx, func(tx *store.Tx) error {
				ws, err := tx.CreateWorkspace(ctx, name)
				if err != nil {
					return err
				}
				return tx.EmitJSON(ctx, ws.ID, 0, "workspace.created", name, map[string]int{"i": i})
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, want := range []string{"one", "two", "three"} {
			ev, ok := next()
			if !ok {
				t.Fatalf("event %q never reached the other process", want)
			}
			if ev.Subject != want {
				t.Fatalf("got event %q, want %q", ev.Subject, want)
			}
		}
		// The writer's own subscribers see each event once, not again from polling.
		evB, stopB := b.Subscribe(16)
		defer stopB()
		err = b.Update(ctx, func(tx *store.Tx) error {
			ws, err := tx.CreateWorkspace(ctx, "four")
			if err != nil {
				return err
			}
			return tx.EmitJSON(ctx, ws.ID, 0, "workspace.created", "four", nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		if ev := <-evB; ev.Subject != "four" {
			t.Fatalf("got %q, want four", ev.Subject)
		}
		select {
		case ev := <-evB:
			t.Fatalf("event delivered twice: %+v", ev)
		case <-time.After(200 * time.Millisecond):
		}
	})
}

func TestIdentityRows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		db := storetest.MustOpen(t, e, nil)
		err := db.Update(ctx, func(tx *store.Tx) error {
			if _, err := tx.CreateWorkspace(ctx, "w"); err != nil {
				return err
			}
			if _, err := tx.CreateWorkspace(ctx, "w"); atrium.ErrorCode(err) != atrium.EConflict {
				t.Errorf("duplicate workspace: %v, want conflict", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(ctx, func(tx *store.Tx) error {
			ws, err := tx.WorkspaceByName(ctx, "w")
			if err != nil {
				return err
			}
			p, err := tx.CreatePrincipal(ctx, atrium.Principal{Handle: "dede", Kind: atrium.KindHuman, DisplayName: "Dede"})
			if err != nil {
				return err
			}
			if _, err := tx.CreatePrincipal(ctx, atrium.Principal{Handle: "dede", Kind: atrium.KindAgent, DisplayName: "x"}); atrium.ErrorCode(err) != atrium.EConflict {
				t.Errorf("duplicate principal: %v, want conflict", err)
			}
			if err := tx.SetRole(ctx, ws.ID, p.ID, atrium.RoleReader); err != nil {
				return err
			}
			if err := tx.SetRole(ctx, ws.ID, p.ID, atrium.RoleWriter); err != nil {
				return err
			}
			role, err := tx.Role(ctx, ws.ID, p.ID)
			if err != nil || role != atrium.RoleWriter {
				t.Errorf("role = %q, %v; want writer", role, err)
			}
			tok, err := tx.CreateToken(ctx, atrium.Token{PrincipalID: p.ID, WorkspaceID: ws.ID, Name: "ci"}, "hash1")
			if err != nil {
				return err
			}
			got, err := tx.TokenByHash(ctx, "hash1")
			if err != nil {
				return err
			}
			if got.ID != tok.ID || got.Principal != "dede" || got.Workspace != "w" || got.RevokedAt != nil {
				t.Errorf("token = %+v", got)
			}
			if err := tx.RevokeToken(ctx, tok.ID); err != nil {
				return err
			}
			got, err = tx.TokenByID(ctx, tok.ID)
			if err != nil || got.RevokedAt == nil {
				t.Errorf("revoked token = %+v, %v", got, err)
			}
			if _, err := tx.TokenByHash(ctx, "nope"); atrium.ErrorCode(err) != atrium.ENotFound {
				t.Errorf("unknown hash: %v, want not_found", err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// Every read transaction holding a connection of the pool while it prepared
// its statements on another one: with as many of them as connections, none
// ever moved again (four parallel searches hung the server).
func TestReadTransactionsNeedNoSecondConnection(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := storetest.MustOpen(t, e, &store.Options{Conns: 2})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// Both connections are taken by transactions that each run a query
		// neither has run before, so that nothing is prepared yet.
		var (
			wg   sync.WaitGroup
			held sync.WaitGroup
			errs = make(chan error, 2)
		)
		held.Add(2)
		for range 2 {
			wg.Go(func() {
				errs <- db.View(ctx, func(tx *store.Tx) error {
					held.Done()
					held.Wait()
					_, err := tx.SearchStats(ctx, 1)
					return err
				})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("read transaction: %v (it waited for a connection while it held one)", err)
			}
		}
	})
}

// Under load a ping waits for a connection behind the very calls it is asked
// about; a database that is answering them is healthy.
func TestPingAnswersWhileEveryConnectionIsBusy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := storetest.MustOpen(t, e, &store.Options{Conns: 1})
		ctx := context.Background()
		if err := db.View(ctx, func(tx *store.Tx) error { _, err := tx.SearchStats(ctx, 1); return err }); err != nil {
			t.Fatal(err)
		}
		held, release := make(chan struct{}), make(chan struct{})
		go db.View(ctx, func(*store.Tx) error {
			close(held)
			<-release
			return nil
		})
		defer close(release)
		<-held
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := db.Ping(pctx); err != nil {
			t.Fatalf("ping while the only connection is busy: %v", err)
		}
	})
}
