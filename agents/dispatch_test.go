package agents_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/tasks"
)

// recorder is an agent whose CLI takes stream-json on stdin and writes down
// every message it is given, one JSON line each.
func recorder(t *testing.T, v *env, handle string) (log string) {
	t.Helper()
	log = filepath.Join(t.TempDir(), handle+".jsonl")
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: handle, Command: "/bin/sh", Args: []string{"-c", `exec cat >> "$REC"`},
		Env: map[string]string{"REC": log}, Wake: agents.WakeStreamJSON}); err != nil {
		t.Fatal(err)
	}
	return log
}

// messages reads the messages a recorder was given, waiting until there are
// at least n.
func messages(t *testing.T, log string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var out []string
		if f, err := os.Open(log); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var m struct {
					Type    string `json:"type"`
					Message struct {
						Content []struct{ Text string } `json:"content"`
					} `json:"message"`
				}
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Type != "user" || len(m.Message.Content) != 1 {
					t.Fatalf("not a stream-json user turn: %q (%v)", sc.Text(), err)
				}
				out = append(out, m.Message.Content[0].Text)
			}
			f.Close()
		}
		if len(out) >= n {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent was given %d messages in 20 s, want %d: %q", len(out), n, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDelivery waits until the delivery id is in state, and returns it.
func waitDelivery(t *testing.T, v *env, id int64, state string) agents.Delivery {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		d, err := v.svc.Agents.Delivery(v.admin, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.State == state {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("delivery %d is %s (%s), want %s; history %+v", id, d.State, d.Reason, state, d.History)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func deliveriesOf(t *testing.T, v *env, agent string) []agents.Delivery {
	t.Helper()
	ds, err := v.svc.Agents.Deliveries(v.admin, agents.DeliveryQuery{Agent: agent, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// A question to an agent starts its session with the question in the first
// prompt, after its instructions; the next goes into that session as a
// message; reading the inbox acknowledges both, once.
func TestAQuestionWakesTheAgent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		log := recorder(t, v, "duc")
		task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Pick a database")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.svc.Tasks.Ask(v.admin, task.Number, "duc", "Which database should the plan use?"); err != nil {
			t.Fatal(err)
		}
		first := messages(t, log, 1)[0]
		for _, want := range []string{"You are @duc", "Atrium woke you for task #" + strconv.FormatInt(task.Number, 10), "@ada asked you a question", "Which database should the plan use?", "# Task #"} {
			if !strings.Contains(first, want) {
				t.Errorf("the first prompt lacks %q:\n%s", want, first)
			}
		}
		if strings.Index(first, "You are @duc") > strings.Index(first, "asked you a question") {
			t.Errorf("the first prompt says what woke the agent before who it is:\n%s", first)
		}
		ds := deliveriesOf(t, v, "duc")
		if len(ds) != 1 {
			t.Fatalf("deliveries %+v", ds)
		}
		d := waitDelivery(t, v, ds[0].ID, store.DeliveryDelivered)
		sessions, err := v.svc.Agents.Sessions(v.admin, 10)
		if err != nil || len(sessions) != 1 || d.Generation != sessions[0].Generation || d.Session != sessions[0].ID || d.Channel != agents.WakeStreamJSON {
			t.Fatalf("delivery %+v; sessions %+v, %v", d, sessions, err)
		}
		// The next one goes into the running session.
		if _, err := v.svc.Tasks.Comment(v.admin, tasks.CommentRequest{Number: task.Number, Body: "@duc PostgreSQL or SQLite, and why?"}); err != nil {
			t.Fatal(err)
		}
		second := messages(t, log, 2)[1]
		if !strings.Contains(second, "[Atrium] New for you, @duc") || !strings.Contains(second, sessions[0].ID) || !strings.Contains(second, "PostgreSQL or SQLite") {
			t.Errorf("the second message:\n%s", second)
		}
		if s, _ := v.svc.Agents.Sessions(v.admin, 10); len(s) != 1 {
			t.Errorf("a second session started: %+v", s)
		}
		// Reading the inbox acknowledges both, once.
		duc := atrium.NewContextWithActor(context.Background(), servicestest.Agent(t, v.svc, "duc", ""))
		if _, err := v.svc.Tasks.ReadInbox(duc, tasks.InboxRequest{}); err != nil {
			t.Fatal(err)
		}
		for _, d := range deliveriesOf(t, v, "duc") {
			d = waitDelivery(t, v, d.ID, store.DeliveryAcknowledged)
			var states []string
			for _, h := range d.History {
				states = append(states, h.State)
			}
			if got := strings.Join(states, " "); got != "waking delivered acknowledged" {
				t.Errorf("delivery %d went %s", d.ID, got)
			}
		}
		if _, err := v.svc.Tasks.ReadInbox(duc, tasks.InboxRequest{}); err != nil {
			t.Fatal(err)
		}
		for _, d := range deliveriesOf(t, v, "duc") {
			if d, _ := v.svc.Agents.Delivery(v.admin, d.ID); len(d.History) != 3 {
				t.Errorf("delivery %d acknowledged twice: %+v", d.ID, d.History)
			}
		}
		if n := len(messages(t, log, 2)); n != 2 {
			t.Errorf("the agent was given %d messages, want 2", n)
		}
	})
}

var deliveryRef = regexp.MustCompile(`\(delivery (\d+)\)`)

// A paused agent's deliveries queue; resumed, all of them reach it, in
// order, each once.
func TestAPausedAgentsDeliveriesDrainInOrder(t *testing.T) {
	v := newEnv(t, store.SQLite)
	log := recorder(t, v, "duc")
	if _, err := v.svc.Agents.Pause(v.admin, "duc", true); err != nil {
		t.Fatal(err)
	}
	task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Many notes")}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for i := range n {
		if _, err := v.svc.Tasks.Comment(v.admin, tasks.CommentRequest{Number: task.Number, Body: fmt.Sprintf("@duc note %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1500 * time.Millisecond) // the dispatcher polls every second
	if _, err := os.Stat(log); err == nil {
		t.Fatal("a paused agent was woken")
	}
	pending, err := v.svc.Agents.Deliveries(v.admin, agents.DeliveryQuery{Agent: "duc", State: store.DeliveryPending, Limit: 500})
	if err != nil || len(pending) != 500 {
		t.Fatalf("pending: %d, %v", len(pending), err)
	}
	resumed := time.Now()
	if _, err := v.svc.Agents.Pause(v.admin, "duc", false); err != nil {
		t.Fatal(err)
	}
	var seen []int64
	deadline := time.Now().Add(30 * time.Second)
	for len(seen) < n && time.Now().Before(deadline) {
		seen = seen[:0]
		for _, m := range messages(t, log, 1) {
			for _, ref := range deliveryRef.FindAllStringSubmatch(m, -1) {
				id, _ := strconv.ParseInt(ref[1], 10, 64)
				seen = append(seen, id)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(seen) != n {
		t.Fatalf("%d deliveries reached the agent, want %d", len(seen), n)
	}
	t.Logf("%d deliveries drained within %s of the resume (polled every 50 ms)", n, time.Since(resumed).Round(time.Millisecond))
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("delivery %d came after %d: out of order or twice", seen[i], seen[i-1])
		}
	}
	if s, _ := v.svc.Agents.Sessions(v.admin, 10); len(s) != 1 {
		t.Errorf("%d sessions for one agent and task", len(s))
	}
}

// A wake that fails is shown failed with why, retried with backoff, and an
// admin can retry it at once; a session that ends before its agent reads
// what it was given fails it too.
func TestAFailedWakeIsShownAndRetried(t *testing.T) {
	v := newEnv(t, store.SQLite)
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "ghost", Command: "/nonexistent/ghost-cli", Wake: agents.WakeStreamJSON}); err != nil {
		t.Fatal(err)
	}
	task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Haunted")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.svc.Tasks.Ask(v.admin, task.Number, "ghost", "Are you there?"); err != nil {
		t.Fatal(err)
	}
	d := waitDelivery(t, v, deliveriesOf(t, v, "ghost")[0].ID, store.DeliveryFailed)
	if !strings.Contains(d.Reason, "could not start") || !strings.Contains(d.Reason, "attempt 1 of 8") || d.NextAt.IsZero() {
		t.Errorf("failed delivery %+v", d)
	}
	// Mended, and retried by an admin without waiting for the backoff.
	log := recorder(t, v, "ghost")
	if _, err := v.svc.Agents.RetryDelivery(v.admin, d.ID); err != nil {
		t.Fatal(err)
	}
	waitDelivery(t, v, d.ID, store.DeliveryDelivered)
	if m := messages(t, log, 1); !strings.Contains(m[0], "Are you there?") {
		t.Errorf("the retried wake: %q", m)
	}
	if _, err := v.svc.Agents.RetryDelivery(v.admin, 999999); atrium.ErrorCode(err) != atrium.ENotFound {
		t.Errorf("retry of no delivery: %v", err)
	}

	// A CLI that exits at once.
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "quitter", Command: "/bin/sh", Args: []string{"-c", "exit 3"}, Wake: agents.WakeStreamJSON}); err != nil {
		t.Fatal(err)
	}
	if _, err := v.svc.Tasks.Ask(v.admin, task.Number, "quitter", "Will you stay?"); err != nil {
		t.Fatal(err)
	}
	d = waitDelivery(t, v, deliveriesOf(t, v, "quitter")[0].ID, store.DeliveryFailed)
	if !strings.Contains(d.Reason, "exit code 3") {
		t.Errorf("a CLI that exits at once: %+v", d)
	}
	if d, err = v.svc.Agents.CancelDelivery(v.admin, d.ID); err != nil || d.State != store.DeliveryCancelled {
		t.Fatalf("cancel: %+v, %v", d, err)
	}
	if _, err := v.svc.Agents.CancelDelivery(v.admin, d.ID); atrium.ErrorCode(err) != atrium.EConflict {
		t.Errorf("cancel twice: %v", err)
	}
	// Only admins see and steer deliveries.
	w := atrium.NewContextWithActor(context.Background(), servicestest.Agent(t, v.svc, "wendy", ""))
	if _, err := v.svc.Agents.Deliveries(w, agents.DeliveryQuery{}); atrium.ErrorCode(err) != atrium.EPermission {
		t.Errorf("a writer lists deliveries: %v", err)
	}
	if _, err := v.svc.Agents.Pause(w, "ghost", true); atrium.ErrorCode(err) != atrium.EPermission {
		t.Errorf("a writer pauses an agent: %v", err)
	}
}

// A delivery made while an agent's session ran is for that session; if the
// session ends before the agent reads it, it goes to the next session, which
// is told an earlier one did not read it.
func TestADeliveryOutlivesItsSession(t *testing.T) {
	v := newEnv(t, store.SQLite)
	log := recorder(t, v, "duc")
	task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Outlived")}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "duc", Task: task.Number})
	if err != nil {
		t.Fatal(err)
	}
	messages(t, log, 1) // its first prompt, read
	if _, err := v.svc.Agents.Pause(v.admin, "duc", true); err != nil {
		t.Fatal(err)
	}
	if _, err := v.svc.Tasks.Ask(v.admin, task.Number, "duc", "Still there?"); err != nil {
		t.Fatal(err)
	}
	d := deliveriesOf(t, v, "duc")[0]
	if d.Generation != a.Generation {
		t.Fatalf("delivery for generation %d, the running session is %d", d.Generation, a.Generation)
	}
	if _, err := v.svc.Agents.Stop(v.admin, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.svc.Agents.Pause(v.admin, "duc", false); err != nil {
		t.Fatal(err)
	}
	d = waitDelivery(t, v, d.ID, store.DeliveryDelivered)
	if d.Generation == a.Generation || d.Session == a.ID {
		t.Errorf("delivered into the session that had ended: %+v", d)
	}
	var notes []string
	for _, h := range d.History {
		notes = append(notes, h.Note)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "the session it was for has ended") {
		t.Errorf("history %q", notes)
	}
	m := messages(t, log, 2)
	if !strings.Contains(m[1], "Still there?") {
		t.Errorf("the next session's first prompt: %s", m[1])
	}
}

// A delivery is refused by a session generation it is not for: the store
// never records it delivered into another, even when asked to.
func TestADeliveryIsRefusedByAnotherGeneration(t *testing.T) {
	db := storetest.MustOpen(t, store.SQLite, &store.Options{Conns: 4})
	v := newEnvOver(t, db)
	recorder(t, v, "duc")
	if _, err := v.svc.Agents.Pause(v.admin, "duc", true); err != nil {
		t.Fatal(err)
	}
	var sessions []agents.Session
	for _, title := range []string{"Mine", "Other"} {
		task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new(title)}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "duc", Task: task.Number})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	if _, err := v.svc.Tasks.Ask(v.admin, sessions[0].Task, "duc", "For the first?"); err != nil {
		t.Fatal(err)
	}
	d := deliveriesOf(t, v, "duc")[0]
	if d.Generation != sessions[0].Generation {
		t.Fatalf("the delivery is for generation %d, want %d", d.Generation, sessions[0].Generation)
	}
	ctx := context.Background()
	err := db.Update(ctx, func(tx *store.Tx) error {
		ws, err := tx.WorkspaceByName(ctx, atrium.DefaultWorkspace)
		if err != nil {
			return err
		}
		ag, err := tx.AgentByHandle(ctx, ws.ID, "duc")
		if err != nil {
			return err
		}
		rows, err := tx.Deliveries(ctx, ws.ID, store.DeliveryFilter{Limit: 1})
		if err != nil {
			return err
		}
		claim, err := tx.ClaimDeliveries(ctx, store.DeliveryGroup{WorkspaceID: ws.ID, PrincipalID: ag.PrincipalID, TaskID: rows[0].TaskID}, "test-"+t.Name(), time.Minute, 10)
		if err != nil || len(claim.Deliveries) != 1 {
			return fmt.Errorf("claim %+v: %v", claim, err)
		}
		done, err := tx.MarkDelivered(ctx, []int64{d.ID}, "test-"+t.Name(), sessions[1].Generation, agents.WakeStreamJSON, "into the other session")
		if err != nil || len(done) != 0 {
			return fmt.Errorf("marked delivered into generation %d: %v, %v", sessions[1].Generation, done, err)
		}
		done, err = tx.MarkDelivered(ctx, []int64{d.ID}, "test-"+t.Name(), sessions[0].Generation, agents.WakeStreamJSON, "into its own session")
		if err != nil || len(done) != 1 {
			return fmt.Errorf("not marked delivered into its own generation: %v, %v", done, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Deliveries stay in their workspace: another workspace's admin can list,
// read, retry or cancel none of them, nor pause its agents.
func TestDeliveriesStayInTheirWorkspace(t *testing.T) {
	v := newEnv(t, store.SQLite)
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "ghost", Command: "/nonexistent/cli", Wake: agents.WakeStreamJSON}); err != nil {
		t.Fatal(err)
	}
	task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Private")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.svc.Tasks.Ask(v.admin, task.Number, "ghost", "Secret question?"); err != nil {
		t.Fatal(err)
	}
	d := deliveriesOf(t, v, "ghost")[0]
	if _, err := v.svc.Identity.CreateWorkspace(context.Background(), "beta", ""); err != nil {
		t.Fatal(err)
	}
	secret, _, err := v.svc.Identity.CreateToken(context.Background(), identity.TokenRequest{Principal: "bob", Workspace: "beta", Role: atrium.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	a, err := v.svc.Identity.Authenticate(context.Background(), secret, "beta")
	if err != nil {
		t.Fatal(err)
	}
	bob := atrium.NewContextWithActor(context.Background(), a)
	if list, err := v.svc.Agents.Deliveries(bob, agents.DeliveryQuery{}); err != nil || len(list) != 0 {
		t.Errorf("beta's admin lists %v, %v", list, err)
	}
	for name, call := range map[string]func() error{
		"read":   func() error { _, err := v.svc.Agents.Delivery(bob, d.ID); return err },
		"retry":  func() error { _, err := v.svc.Agents.RetryDelivery(bob, d.ID); return err },
		"cancel": func() error { _, err := v.svc.Agents.CancelDelivery(bob, d.ID); return err },
		"pause":  func() error { _, err := v.svc.Agents.Pause(bob, "ghost", true); return err },
	} {
		if err := call(); atrium.ErrorCode(err) != atrium.ENotFound {
			t.Errorf("beta's admin can %s alpha's: %v", name, err)
		}
	}
	if got, _ := v.svc.Agents.Delivery(v.admin, d.ID); got.State == store.DeliveryCancelled {
		t.Error("cancelled from another workspace")
	}
}

// Atrium's own ends — a crash, a restart — are no attempt of a delivery's:
// a delivery caught by ten of them is still on its first attempt, so its
// next ordinary failure is not its last. (Counted, ten restarts used up the
// eight attempts, and the next failure gave the wake up for good.)
func TestRestartsDoNotUseUpADeliverysAttempts(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := storetest.MustOpen(t, e, &store.Options{Conns: 4})
		v := newEnvOver(t, db)
		recorder(t, v, "duc")
		task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Through restarts")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.svc.Tasks.Ask(v.admin, task.Number, "duc", "Still with us?"); err != nil {
			t.Fatal(err)
		}
		id := deliveriesOf(t, v, "duc")[0].ID
		generation := waitDelivery(t, v, id, store.DeliveryDelivered).Generation
		for round := range 10 {
			if round%2 == 0 {
				// A crash: the next process finds the session open.
				if _, err := v.svc.Agents.Pause(v.admin, "duc", true); err != nil {
					t.Fatal(err)
				}
				next := newEnvOver(t, db)
				if d := waitDelivery(t, next, id, store.DeliveryFailed); d.Attempts != 0 || !strings.Contains(d.Reason, "ended with Atrium") {
					t.Fatalf("round %d: after a crash the delivery is %+v", round, d)
				}
				v.svc.Agents.Shutdown()
				v = next
				if _, err := v.svc.Agents.Pause(v.admin, "duc", false); err != nil {
					t.Fatal(err)
				}
			} else {
				// A clean stop, then a start.
				v.svc.Agents.Shutdown()
				if d, _ := v.svc.Agents.Delivery(v.admin, id); d.State != store.DeliveryFailed || d.Attempts != 0 || !strings.Contains(d.Reason, "ended with Atrium") {
					t.Fatalf("round %d: after a clean stop the delivery is %+v", round, d)
				}
				v = newEnvOver(t, db)
			}
			d := waitDelivery(t, v, id, store.DeliveryDelivered)
			if d.Generation == generation || d.Attempts != 1 {
				t.Fatalf("round %d: delivered into generation %d (the last was %d) on attempt %d", round, d.Generation, generation, d.Attempts)
			}
			generation = d.Generation
		}
	})
}

// Migration 0030 builds inbox_items anew on SQLite (a CHECK cannot change in
// place). Run again over a store with an agent's deliveries, it keeps every
// one: with foreign keys on while it ran, dropping the old table would have
// deleted them with it.
func TestTheInboxRebuiltKeepsItsDeliveries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		dsn := storetest.DSN(t, e)
		db, err := store.Open(ctx, dsn, &store.Options{Conns: 4})
		if err != nil {
			t.Fatal(err)
		}
		v := newEnvOver(t, db)
		recorder(t, v, "duc")
		task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Kept")}})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"One?", "Two?"} {
			if _, err := v.svc.Tasks.Ask(v.admin, task.Number, "duc", q); err != nil {
				t.Fatal(err)
			}
		}
		before := deliveriesOf(t, v, "duc")
		v.svc.Agents.Shutdown()
		db.Close()

		driver, rawDSN := "pgx", dsn
		if e == store.SQLite {
			// As another process would: the closing store's last
			// writes may still hold the lock a moment.
			driver, rawDSN = "sqlite", "file:"+dsn+"?_pragma=busy_timeout(10000)"
		}
		raw, err := sql.Open(driver, rawDSN)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec("DELETE FROM schema_migrations WHERE version = 30"); err != nil {
			t.Fatal(err)
		}
		raw.Close()
		db, err = store.Open(ctx, dsn, &store.Options{Conns: 4})
		if err != nil {
			t.Fatalf("migration 30 again: %v", err)
		}
		defer db.Close()
		v = newEnvOver(t, db)
		after := deliveriesOf(t, v, "duc")
		if len(before) != 2 || len(after) != len(before) {
			t.Fatalf("deliveries before the rebuild: %d, after: %d", len(before), len(after))
		}
		for i := range after {
			if after[i].ID != before[i].ID || after[i].Text != before[i].Text {
				t.Errorf("delivery %d: %+v after the rebuild, %+v before", i, after[i], before[i])
			}
		}
	})
}
