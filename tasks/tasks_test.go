package tasks_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/tasks"
)

type env struct {
	t     testing.TB
	db    *store.DB
	ids   *identity.Service
	docs  *pages.Service
	tasks *tasks.Service
}

func newEnv(t testing.TB, e store.Engine, opts *store.Options) *env {
	t.Helper()
	db := storetest.MustOpen(t, e, opts)
	return &env{t: t, db: db, ids: identitytest.New(t, db), docs: pages.New(db, nil), tasks: tasks.New(db, nil)}
}

// as is a caller with role in workspace ws ("" for the default).
func (v *env) as(handle string, kind atrium.PrincipalKind, role atrium.Role, ws string) context.Context {
	v.t.Helper()
	ctx := context.Background()
	secret, _, err := v.ids.CreateToken(ctx, identity.TokenRequest{Principal: handle, Kind: kind, Role: role, Workspace: ws})
	if err != nil {
		v.t.Fatal(err)
	}
	a, err := v.ids.Authenticate(ctx, secret, ws)
	if err != nil {
		v.t.Fatal(err)
	}
	return atrium.NewContextWithActor(ctx, a)
}

func (v *env) agent(handle string) context.Context {
	return v.as(handle, atrium.KindAgent, atrium.RoleWriter, "")
}

func (v *env) create(ctx context.Context, title string, f tasks.Fields) atrium.Task {
	v.t.Helper()
	f.Title = &title
	t, err := v.tasks.Create(ctx, tasks.CreateRequest{Fields: f})
	if err != nil {
		v.t.Fatalf("create %q: %v", title, err)
	}
	return t
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := atrium.ErrorCode(err); got != code {
		t.Fatalf("error %v (code %q), want %q", err, got, code)
	}
}

func ptr[T any](v T) *T { return &v }

// The example agent flow of 002, step by step, with its exact formats.
func TestExampleAgentFlow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		baron, dede, duc := v.agent("baron"), v.agent("dede"), v.agent("duc")
		if _, err := v.docs.WritePage(baron, pages.WriteRequest{Path: "Plans/123/specs/backend.md", Content: "# Backend spec\n\nJWT authentication.\n"}); err != nil {
			t.Fatal(err)
		}
		task := v.create(baron, "Add user authentication", tasks.Fields{Body: ptr("Users sign in."), Labels: &[]string{"status:specs-ready"},
			Phase: ptr("PHASE_3_PLANS"), Specs: &[]string{"Plans/123/specs/backend.md"}, Plans: &[]string{"Plans/123/backend.md"}, Assignee: ptr("dede")})
		if task.Number != 1 || task.Status != atrium.TaskOpen || task.Creator != "baron" || task.Assignee != "dede" {
			t.Fatalf("created %+v", task)
		}
		if err := v.tasks.SetHandoffRule(v.as("root", atrium.KindHuman, atrium.RoleAdmin, ""), atrium.HandoffRule{MatchKind: "phase", MatchValue: "PHASE_3_PLANS", Next: "baron", NextPhase: "PHASE_4_IMPLEMENT"}); err != nil {
			t.Fatal(err)
		}

		c, err := v.tasks.GetContext(dede, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Specs) != 1 || c.Specs[0].Content != "# Backend spec\n\nJWT authentication.\n" || len(c.Plans) != 1 || !c.Plans[0].Missing {
			t.Fatalf("context specs %+v plans %+v", c.Specs, c.Plans)
		}
		st, err := v.tasks.UpdateStatus(dede, 1, "Analyzing backend spec...", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Comment.Shown(); got != "📍 Status: Analyzing backend spec..." {
			t.Fatalf("status comment %q", got)
		}
		q, err := v.tasks.Ask(dede, 1, "duc", "Should auth service use REST or GraphQL?")
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Comment.Shown(); got != "❓ @duc Question: Should auth service use REST or GraphQL?" || q.WaitingFor != "duc" {
			t.Fatalf("question %q waiting for %q", got, q.WaitingFor)
		}
		in, err := v.tasks.ReadInbox(duc, tasks.InboxRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if in.Unread != 1 || len(in.Items) != 1 || in.Items[0].Kind != atrium.InboxQuestion || in.Items[0].From != "dede" || in.Items[0].Text != q.Comment.Shown() {
			t.Fatalf("duc's inbox %+v", in)
		}
		ans, err := v.tasks.Answer(duc, 1, "dede", "GraphQL. Aligns with our BFF pattern.", 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := ans.Comment.Shown(); got != "💬 @dede Answer: GraphQL. Aligns with our BFF pattern." || ans.Comment.Answers != q.Comment.ID {
			t.Fatalf("answer %q answers %d", got, ans.Comment.Answers)
		}
		if c, _ := v.tasks.GetContext(dede, 1); len(c.Waiting) != 0 {
			t.Fatalf("still waiting after the answer: %+v", c.Waiting)
		}
		// Reading with the cursor marks read: nothing nags twice.
		in, _ = v.tasks.ReadInbox(duc, tasks.InboxRequest{Ack: in.AckCursor})
		if in.Acked != 1 || in.Unread != 0 || len(in.Items) != 0 {
			t.Fatalf("after ack %+v", in)
		}
		din, _ := v.tasks.ReadInbox(dede, tasks.InboxRequest{})
		if len(din.Items) != 2 || din.Items[0].Kind != atrium.InboxAssigned || din.Items[1].Kind != atrium.InboxAnswer {
			t.Fatalf("dede's inbox %+v", din.Items)
		}

		bl, err := v.tasks.Blocked(dede, 1, "Missing database schema for users table", "duc")
		if err != nil {
			t.Fatal(err)
		}
		if got := bl.Comment.Shown(); got != "🚫 Blocked: Missing database schema for users table.\n\nWaiting on @duc." || bl.LabelAdded != "blocked:agent" {
			t.Fatalf("blocked %q label %q", got, bl.LabelAdded)
		}
		if tk, _ := v.tasks.Get(dede, 1); tk.Status != atrium.TaskBlocked || !tk.HasLabel("blocked:agent") {
			t.Fatalf("blocked task %+v", tk)
		}
		if _, err := v.tasks.Answer(duc, 1, "dede", "Schema is in db/users.sql now.", 0); err != nil {
			t.Fatal(err)
		}
		if tk, _ := v.tasks.Get(dede, 1); tk.Status != atrium.TaskInProgress || tk.HasLabel("blocked:agent") {
			t.Fatalf("after duc answered the block: %+v", tk)
		}

		done, err := v.tasks.Complete(dede, 1, ".plans/123/backend.md", "Backend plan complete. See `.plans/123/backend.md`.")
		if err != nil {
			t.Fatal(err)
		}
		if got := done.Comment.Shown(); got != "✅ Backend plan complete. See `.plans/123/backend.md`.\n\n@baron Ready for next phase." || done.NextAgent != "baron" {
			t.Fatalf("completion %q next %q", got, done.NextAgent)
		}
		tk, _ := v.tasks.Get(dede, 1)
		if tk.Phase != "PHASE_4_IMPLEMENT" || tk.Assignee != "baron" || tk.Status != atrium.TaskOpen {
			t.Fatalf("after hand-off %+v", tk)
		}
		bin, _ := v.tasks.ReadInbox(baron, tasks.InboxRequest{})
		if len(bin.Items) != 1 || bin.Items[0].Kind != atrium.InboxHandoff {
			t.Fatalf("baron's inbox %+v", bin.Items)
		}
		// from_agent picks duc's answers, as 002's agents check for them.
		page, err := v.tasks.Comments(dede, tasks.CommentsRequest{Number: 1, FromAgent: "duc"})
		if err != nil {
			t.Fatal(err)
		}
		got := page.Comments
		if len(got) != 2 || got[0].Type != atrium.CommentAnswer || got[0].Author != "duc" {
			t.Fatalf("duc's comments %+v", got)
		}
		// Completing without a rule hands back to the creator and closes.
		two := v.create(baron, "Write docs", tasks.Fields{})
		done, err = v.tasks.Complete(dede, two.Number, "", "Docs written")
		if err != nil {
			t.Fatal(err)
		}
		if done.NextAgent != "baron" || done.Task.Status != atrium.TaskDone || done.Comment.Body != "Docs written\n\n@baron Ready for next phase." {
			t.Fatalf("default hand-off %+v", done)
		}
	})
}

func TestCommentsRefuseBadInputAndChangeNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		dede := v.agent("dede")
		v.agent("duc")
		task := v.create(dede, "One", tasks.Fields{})
		for _, c := range []struct {
			name string
			call func() error
			code string
		}{
			{"unknown mention", func() error {
				_, err := v.tasks.Comment(dede, tasks.CommentRequest{Number: 1, Body: "cc @duc @ghost and @nobody."})
				return err
			}, atrium.EInvalid},
			{"unknown target", func() error { _, err := v.tasks.Ask(dede, 1, "ghost", "?"); return err }, atrium.EInvalid},
			{"bad type", func() error {
				_, err := v.tasks.Comment(dede, tasks.CommentRequest{Number: 1, Type: "rant", Body: "x"})
				return err
			}, atrium.EInvalid},
			{"empty", func() error { _, err := v.tasks.Comment(dede, tasks.CommentRequest{Number: 1, Body: "  "}); return err }, atrium.EInvalid},
			{"missing task", func() error { _, err := v.tasks.UpdateStatus(dede, 99, "x", nil); return err }, atrium.ENotFound},
			{"bad progress", func() error { _, err := v.tasks.UpdateStatus(dede, 1, "x", ptr(101)); return err }, atrium.EInvalid},
			{"answers a non-question", func() error { _, err := v.tasks.Answer(dede, 1, "duc", "x", 12345); return err }, atrium.ENotFound},
		} {
			t.Run(c.name, func(t *testing.T) { wantCode(t, c.call(), c.code) })
		}
		_, err := v.tasks.Comment(dede, tasks.CommentRequest{Number: 1, Body: "cc @duc @ghost and @nobody."})
		if d := atrium.ErrorDetails(err); !cmp.Equal(d["unknown"], []string{"@ghost", "@nobody"}) {
			t.Fatalf("unknown mentions named %v (%v)", d["unknown"], err)
		}
		cs, _ := v.tasks.Comments(dede, tasks.CommentsRequest{Number: 1})
		now, _ := v.tasks.Get(dede, 1)
		if len(cs.Comments) != 0 || now.Revision != task.Revision {
			t.Fatalf("a refused comment changed something: %d comments, revision %d→%d", len(cs.Comments), task.Revision, now.Revision)
		}
	})
}

func TestHandles(t *testing.T) {
	got := tasks.Handles("❓ @duc Question: mail me at a@b.com; cc @dede.\n\nWaiting on @duc. `@code` @Upper @x_y-")
	if want := []string{"duc", "dede", "x_y"}; !cmp.Equal(got, want) {
		t.Fatalf("Handles = %q, want %q", got, want)
	}
}

func TestBlockersReadyAndCycles(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		dede := v.agent("dede")
		a := v.create(dede, "A", tasks.Fields{})
		b := v.create(dede, "B", tasks.Fields{BlockedBy: &[]int64{a.Number}})
		c := v.create(dede, "C", tasks.Fields{BlockedBy: &[]int64{b.Number}})
		v.create(dede, "D", tasks.Fields{Assignee: ptr("dede")})
		ready := func() []int64 {
			res, err := v.tasks.Ready(dede, tasks.ListRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var ns []int64
			for _, t := range res.Tasks {
				ns = append(ns, t.Number)
			}
			return ns
		}
		if got := ready(); !cmp.Equal(got, []int64{1}) {
			t.Fatalf("ready = %v, want [1]", got)
		}
		// A → C would close the loop C → B → A.
		_, err := v.tasks.Update(dede, tasks.UpdateRequest{Number: a.Number, Fields: tasks.Fields{BlockedBy: &[]int64{c.Number}}})
		wantCode(t, err, atrium.EInvalid)
		_, err = v.tasks.Update(dede, tasks.UpdateRequest{Number: a.Number, Fields: tasks.Fields{BlockedBy: &[]int64{a.Number}}})
		wantCode(t, err, atrium.EInvalid)
		_, err = v.tasks.Update(dede, tasks.UpdateRequest{Number: a.Number, Fields: tasks.Fields{BlockedBy: &[]int64{77}}})
		wantCode(t, err, atrium.ENotFound)
		_, err = v.tasks.Claim(dede, b.Number)
		wantCode(t, err, atrium.EConflict)
		if _, err := v.tasks.Update(dede, tasks.UpdateRequest{Number: a.Number, Fields: tasks.Fields{Status: ptr(atrium.TaskDone)}}); err != nil {
			t.Fatal(err)
		}
		if got := ready(); !cmp.Equal(got, []int64{2}) {
			t.Fatalf("ready after A is done = %v, want [2]", got)
		}
	})
}

func TestListFiltersAndPages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		dede, duc := v.agent("dede"), v.agent("duc")
		for i := 1; i <= 7; i++ {
			f := tasks.Fields{Labels: &[]string{fmt.Sprintf("n%d", i%2)}}
			if i%3 == 0 {
				f.Assignee = ptr("duc")
			}
			v.create(dede, fmt.Sprintf("Task %d about %s", i, map[bool]string{true: "Search", false: "storage"}[i%2 == 0]), f)
		}
		var seen []int64
		cursor := ""
		for {
			res, err := v.tasks.List(duc, tasks.ListRequest{Limit: 3, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range res.Tasks {
				seen = append(seen, tk.Number)
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if !cmp.Equal(seen, []int64{7, 6, 5, 4, 3, 2, 1}) {
			t.Fatalf("paged list = %v", seen)
		}
		count := func(r tasks.ListRequest) int {
			res, err := v.tasks.List(duc, r)
			if err != nil {
				t.Fatal(err)
			}
			return len(res.Tasks)
		}
		if n := count(tasks.ListRequest{Assignee: "me"}); n != 2 {
			t.Fatalf("assigned to me: %d", n)
		}
		if n := count(tasks.ListRequest{Label: "n0"}); n != 3 {
			t.Fatalf("label n0: %d", n)
		}
		if n := count(tasks.ListRequest{Text: "search"}); n != 3 {
			t.Fatalf("text search: %d", n)
		}
		if n := count(tasks.ListRequest{Text: "100%"}); n != 0 {
			t.Fatalf("a LIKE wildcard matched: %d", n)
		}
		_, err := v.tasks.List(duc, tasks.ListRequest{Cursor: "garbage"})
		wantCode(t, err, atrium.EInvalid)
		_, err = v.tasks.List(duc, tasks.ListRequest{Statuses: []atrium.TaskStatus{"later"}})
		wantCode(t, err, atrium.EInvalid)
	})
}

// Of 32 agents claiming one task at once, exactly one wins; the others are
// told who holds it. The store gets 8 connections so that PostgreSQL runs the
// claims side by side.
func TestClaimRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, &store.Options{Conns: 8})
		first := v.agent("boss")
		v.create(first, "Contended", tasks.Fields{})
		ctxs := make([]context.Context, 32)
		for i := range ctxs {
			ctxs[i] = v.agent(fmt.Sprintf("claimer%02d", i))
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []string
			held    int
		)
		for _, ctx := range ctxs {
			wg.Go(func() {
				tk, err := v.tasks.Claim(ctx, 1)
				mu.Lock()
				defer mu.Unlock()
				switch atrium.ErrorCode(err) {
				case "":
					winners = append(winners, tk.Assignee)
				case atrium.EConflict:
					held++
				default:
					t.Errorf("claim: %v", err)
				}
			})
		}
		wg.Wait()
		if len(winners) != 1 || held != 31 {
			t.Fatalf("winners %v, refused %d", winners, held)
		}
		tk, _ := v.tasks.Get(first, 1)
		if tk.Assignee != winners[0] || tk.Status != atrium.TaskInProgress {
			t.Fatalf("stored %+v, winner %s", tk, winners[0])
		}
		_, err := v.tasks.Claim(first, 1)
		if err == nil || atrium.ErrorDetails(err)["assignee"] != winners[0] {
			t.Fatalf("a late claim: %v", err)
		}
	})
}

// Two updates made from the same revision: one wins, the other is a conflict.
func TestConcurrentUpdatesFromOneRevision(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, &store.Options{Conns: 8})
		dede := v.agent("dede")
		task := v.create(dede, "Shared", tasks.Fields{})
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = v.tasks.Update(dede, tasks.UpdateRequest{Number: 1, BaseRevision: task.Revision, Fields: tasks.Fields{StatusText: ptr(fmt.Sprint("writer ", i))}})
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch atrium.ErrorCode(err) {
			case "":
				ok++
			case atrium.EConflict:
			default:
				t.Fatalf("update: %v", err)
			}
		}
		if ok != 1 {
			t.Fatalf("%d of 8 updates from one revision won", ok)
		}
		if tk, _ := v.tasks.Get(dede, 1); tk.Revision != task.Revision+1 {
			t.Fatalf("revision %d after one winning update from %d", tk.Revision, task.Revision)
		}
	})
}

func TestWorkspacesAndRoles(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		dede := v.agent("dede")
		v.create(dede, "Ours", tasks.Fields{})
		if _, err := v.ids.CreateWorkspace(context.Background(), "other", ""); err != nil {
			t.Fatal(err)
		}
		other := v.as("eve", atrium.KindHuman, atrium.RoleAdmin, "other")
		_, err := v.tasks.Get(other, 1)
		wantCode(t, err, atrium.ENotFound)
		if res, _ := v.tasks.List(other, tasks.ListRequest{}); len(res.Tasks) != 0 {
			t.Fatalf("another workspace lists %d tasks", len(res.Tasks))
		}
		// Numbers are per workspace.
		if tk := v.create(other, "Theirs", tasks.Fields{}); tk.Number != 1 {
			t.Fatalf("first task of another workspace is #%d", tk.Number)
		}
		_, err = v.tasks.Comment(other, tasks.CommentRequest{Number: 1, Body: "@dede hi"})
		wantCode(t, err, atrium.EInvalid) // dede is not a member there
		rd := v.as("rita", atrium.KindHuman, atrium.RoleReader, "")
		_, err = v.tasks.Claim(rd, 1)
		wantCode(t, err, atrium.EPermission)
		_, err = v.tasks.Create(rd, tasks.CreateRequest{Fields: tasks.Fields{Title: ptr("x")}})
		wantCode(t, err, atrium.EPermission)
		if _, err := v.tasks.ReadInbox(rd, tasks.InboxRequest{}); err != nil {
			t.Fatalf("a reader reads their inbox: %v", err)
		}
	})
}

func TestNumbersAreNeverReused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		dede := v.agent("dede")
		v.create(dede, "One", tasks.Fields{})
		// A failed create (bad blocker) must not burn or reuse a number.
		_, err := v.tasks.Create(dede, tasks.CreateRequest{Fields: tasks.Fields{Title: ptr("Bad"), BlockedBy: &[]int64{9}}})
		wantCode(t, err, atrium.ENotFound)
		two := v.create(dede, "Two", tasks.Fields{})
		if _, err := v.tasks.Update(dede, tasks.UpdateRequest{Number: 2, BaseRevision: two.Revision, Fields: tasks.Fields{Status: ptr(atrium.TaskArchived)}}); err != nil {
			t.Fatal(err)
		}
		if three := v.create(dede, "Three", tasks.Fields{}); three.Number != 3 {
			t.Fatalf("after archiving #2 the next task is #%d", three.Number)
		}
	})
}
