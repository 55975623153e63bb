package review_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// clock is the store's injectable time: tests move it, never sleep.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type env struct {
	t     testing.TB
	clock *clock
	docs  *pages.Service
	rev   *review.Service
	ids   *identity.Service
	dan   context.Context // a human writer
	clay  context.Context // an agent writer
	admin context.Context
}

const design = `---
title: Design
---
# Design

Intro text.

## Storage

We use SQLite for the embedded store and PostgreSQL to scale.

## Search

Ranking is BM25.
`

func newEnv(t testing.TB, e store.Engine) *env {
	t.Helper()
	c := &clock{t: time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC)}
	db := storetest.MustOpen(t, e, &store.Options{Now: c.Now})
	ids := identitytest.New(t, db)
	d := pages.New(db, nil)
	v := &env{t: t, clock: c, docs: d, rev: review.New(db, d, nil), ids: ids}
	ctx := context.Background()
	as := func(handle string, kind atrium.PrincipalKind, role atrium.Role) context.Context {
		secret, _, err := ids.CreateToken(ctx, identity.TokenRequest{Principal: handle, Kind: kind, Role: role})
		if err != nil {
			t.Fatal(err)
		}
		a, err := ids.Authenticate(ctx, secret, "")
		if err != nil {
			t.Fatal(err)
		}
		return atrium.NewContextWithActor(ctx, a)
	}
	v.dan, v.clay, v.admin = as("dan", atrium.KindHuman, atrium.RoleWriter), as("clay", atrium.KindAgent, atrium.RoleWriter), as("boss", atrium.KindHuman, atrium.RoleAdmin)
	if _, err := d.WritePage(v.dan, pages.WriteRequest{Path: "Docs/Design.md", Content: design}); err != nil {
		t.Fatal(err)
	}
	return v
}

func (v *env) create(ctx context.Context, r review.CreateRequest) atrium.Annotation {
	v.t.Helper()
	a, _, err := v.rev.Create(ctx, r)
	if err != nil {
		v.t.Fatalf("create %+v: %v", r, err)
	}
	return a
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := atrium.ErrorCode(err); got != code {
		t.Fatalf("error %v (code %q), want %q", err, got, code)
	}
}

func TestCreateAnchorsAndChecks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		a := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: "Why not both?", Quote: &atrium.Quote{Exact: "PostgreSQL to scale"}})
		if a.Section != "Design > Storage" || a.Quote.Exact != "PostgreSQL to scale" || a.Quote.Prefix == "" || a.Status != atrium.StatusDraft ||
			a.Author != "dan" || a.AuthorType != atrium.AuthorHuman || a.Orphaned || !strings.HasPrefix(a.UID, "ann_") {
			t.Fatalf("created %+v", a)
		}
		b := v.create(v.clay, review.CreateRequest{DocPath: "/docs/design.md", Content: "A page-level note.", Status: atrium.StatusSubmitted})
		if b.DocPath != "Docs/Design.md" || b.Section != "" || b.AuthorType != atrium.AuthorAI || b.Status != atrium.StatusSubmitted {
			t.Fatalf("page-level annotation %+v", b)
		}
		// A quote alone finds its section.
		q := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "BM25?", Quote: &atrium.Quote{Exact: "BM25"}})
		if q.Section != "Design > Search" {
			t.Fatalf("section from quote = %q", q.Section)
		}
		for _, c := range []struct {
			r    review.CreateRequest
			code string
		}{
			{review.CreateRequest{DocPath: "Docs/Missing.md", Content: "x"}, atrium.ENotFound},
			{review.CreateRequest{DocPath: "Docs/Design.md", Section: "Deployment", Content: "x"}, atrium.ENotFound},
			{review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: "x", Quote: &atrium.Quote{Exact: "MySQL"}}, atrium.EInvalid},
			{review.CreateRequest{DocPath: "Docs/Design.md", Content: "  "}, atrium.EInvalid},
			{review.CreateRequest{Content: "no doc"}, atrium.EInvalid},
			{review.CreateRequest{DocPath: "Docs/Design.md", Content: "x", Status: atrium.StatusResolved}, atrium.EInvalid},
			{review.CreateRequest{ParentID: "ann_nope", Content: "x"}, atrium.ENotFound},
		} {
			_, _, err := v.rev.Create(v.dan, c.r)
			wantCode(t, err, c.code)
		}
	})
}

// BUG-4: an identical create by the same author within 30 s returns the first.
func TestDuplicateCreatesWithinTheWindow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		r := review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: "Same words."}
		first, created, err := v.rev.Create(v.dan, r)
		if err != nil || !created {
			t.Fatal(err)
		}
		v.clock.Advance(29 * time.Second)
		again, created, err := v.rev.Create(v.dan, r)
		if err != nil || created || again.UID != first.UID {
			t.Fatalf("within the window: %+v created=%v %v", again, created, err)
		}
		other, created, _ := v.rev.Create(v.clay, r)
		if !created || other.UID == first.UID {
			t.Fatal("another author's identical comment was merged")
		}
		v.clock.Advance(2 * time.Second) // 31 s after the first
		later, created, err := v.rev.Create(v.dan, r)
		if err != nil || !created || later.UID == first.UID {
			t.Fatalf("outside the window: %+v created=%v %v", later, created, err)
		}
		// Replies are deduplicated per parent.
		reply := review.CreateRequest{ParentID: first.UID, Content: "ok"}
		r1, _, _ := v.rev.Create(v.dan, reply)
		r2, created, _ := v.rev.Create(v.dan, reply)
		if created || r1.UID != r2.UID {
			t.Fatal("duplicate reply created")
		}
	})
}

// BUG-6: replies inherit the review of their thread, and its anchor.
func TestRepliesInheritTheirThread(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		root := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Search", Content: "Explain BM25.", Quote: &atrium.Quote{Exact: "BM25"}})
		sub, err := v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md", Summary: "first pass"})
		if err != nil {
			t.Fatal(err)
		}
		reply := v.create(v.clay, review.CreateRequest{ParentID: root.UID, Content: "Okapi BM25, with field weights."})
		if reply.ReviewUID != sub.Review.UID || reply.DocPath != root.DocPath || reply.Section != "Design > Search" || reply.Status != atrium.StatusSubmitted || reply.ParentUID != root.UID {
			t.Fatalf("reply %+v, review %s", reply, sub.Review.UID)
		}
		// A reply to a reply threads under the root.
		nested := v.create(v.dan, review.CreateRequest{ParentID: reply.UID, Content: "Thanks."})
		if nested.ParentUID != root.UID || nested.ReviewUID != sub.Review.UID {
			t.Fatalf("nested reply %+v", nested)
		}
		_, _, err = v.rev.Create(v.clay, review.CreateRequest{ParentID: root.UID, DocPath: "Other.md", Content: "moved?"})
		wantCode(t, err, atrium.EInvalid)
	})
}

func TestGetWithAndWithoutRepliesInOrder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		root := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "Thread", Status: atrium.StatusSubmitted})
		lonely := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "Alone", Status: atrium.StatusSubmitted})
		var want []string
		for i := range 4 {
			v.clock.Advance(time.Second)
			r := v.create(v.clay, review.CreateRequest{ParentID: root.UID, Content: fmt.Sprintf("reply %d", i)})
			want = append(want, r.Content)
		}
		th, err := v.rev.Get(v.dan, root.UID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range th.Replies {
			got = append(got, r.Content)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("replies oldest first (-want +got):\n%s", diff)
		}
		th, err = v.rev.Get(v.dan, lonely.UID)
		if err != nil || len(th.Replies) != 0 || th.Annotation.Content != "Alone" {
			t.Fatalf("get without replies: %+v %v", th, err)
		}
		_, err = v.rev.Get(v.dan, "ann_missing")
		wantCode(t, err, atrium.ENotFound)
	})
}

func TestDeleteCascadesAndCleansUpReviews(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		// Single delete.
		single := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "typo"})
		res, err := v.rev.Delete(v.dan, single.UID)
		if err != nil || res.Replies != 0 || res.ReviewDeleted {
			t.Fatalf("single delete %+v %v", res, err)
		}
		_, err = v.rev.Get(v.dan, single.UID)
		wantCode(t, err, atrium.ENotFound)
		// Cascade, and the review left empty goes too.
		root := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "thread"})
		sub, err := v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			v.create(v.clay, review.CreateRequest{ParentID: root.UID, Content: fmt.Sprintf("r%d", i)})
		}
		// Only the author or an admin may delete.
		_, err = v.rev.Delete(v.clay, root.UID)
		wantCode(t, err, atrium.EPermission)
		res, err = v.rev.Delete(v.dan, root.UID)
		if err != nil || res.Replies != 3 || !res.ReviewDeleted {
			t.Fatalf("cascade delete %+v %v", res, err)
		}
		_, err = v.rev.GetReview(v.dan, sub.Review.UID)
		wantCode(t, err, atrium.ENotFound)
		list, err := v.rev.List(v.dan, review.ListRequest{DocPath: "Docs/Design.md"})
		if err != nil || len(list.Annotations) != 0 {
			t.Fatalf("left after cascade: %+v %v", list.Annotations, err)
		}
		// A review that still has other annotations stays.
		a1 := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "one"})
		v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "two"})
		sub, _ = v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md"})
		res, err = v.rev.Delete(v.admin, a1.UID)
		if err != nil || res.ReviewDeleted {
			t.Fatalf("delete one of two %+v %v", res, err)
		}
		if got, err := v.rev.GetReview(v.dan, sub.Review.UID); err != nil || len(got.Annotations) != 1 {
			t.Fatalf("review after partial delete %+v %v", got, err)
		}
		_, err = v.rev.Delete(v.dan, "ann_missing")
		wantCode(t, err, atrium.ENotFound)
	})
}

func TestEditResolveReopen(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		a := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "teh"})
		v.clock.Advance(time.Minute)
		edited, err := v.rev.Edit(v.dan, a.UID, "the")
		if err != nil || edited.Content != "the" || !edited.UpdatedAt.After(a.UpdatedAt) || !edited.CreatedAt.Equal(a.CreatedAt) {
			t.Fatalf("edit %+v %v", edited, err)
		}
		_, err = v.rev.Edit(v.clay, a.UID, "hijack")
		wantCode(t, err, atrium.ENotFound) // clay cannot even see dan's draft
		_, err = v.rev.Edit(v.dan, "ann_missing", "x")
		wantCode(t, err, atrium.ENotFound)
		// A draft must be submitted before it can be resolved.
		_, err = v.rev.Resolve(v.dan, a.UID)
		wantCode(t, err, atrium.EInvalid)
		if _, err := v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md"}); err != nil {
			t.Fatal(err)
		}
		_, err = v.rev.Edit(v.clay, a.UID, "hijack")
		wantCode(t, err, atrium.EPermission)
		resolved, err := v.rev.Resolve(v.clay, a.UID)
		if err != nil || resolved.Status != atrium.StatusResolved {
			t.Fatalf("resolve %+v %v", resolved, err)
		}
		reply := v.create(v.clay, review.CreateRequest{ParentID: a.UID, Content: "done"})
		_, err = v.rev.Resolve(v.clay, reply.UID)
		wantCode(t, err, atrium.EInvalid)
		reopened, err := v.rev.Reopen(v.dan, a.UID)
		if err != nil || reopened.Status != atrium.StatusSubmitted {
			t.Fatalf("reopen %+v %v", reopened, err)
		}
		_, err = v.rev.Reopen(v.dan, "ann_missing")
		wantCode(t, err, atrium.ENotFound)
	})
}

func TestListFilters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		if _, err := v.docs.WritePage(v.dan, pages.WriteRequest{Path: "Docs/Other.md", Content: "# Other\n\n## Storage\n\nx"}); err != nil {
			t.Fatal(err)
		}
		s1 := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: "storage 1"})
		v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Search", Content: "search 1"})
		sub, _ := v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md"})
		v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: "storage 2 (draft)"})
		v.create(v.dan, review.CreateRequest{DocPath: "Docs/Other.md", Section: "Storage", Content: "other doc", Status: atrium.StatusSubmitted})
		if _, err := v.rev.Resolve(v.clay, s1.UID); err != nil {
			t.Fatal(err)
		}
		contents := func(ctx context.Context, r review.ListRequest) []string {
			t.Helper()
			res, err := v.rev.List(ctx, r)
			if err != nil {
				t.Fatalf("list %+v: %v", r, err)
			}
			var out []string
			for _, a := range res.Annotations {
				out = append(out, a.Content)
			}
			return out
		}
		cases := []struct {
			name string
			ctx  context.Context
			r    review.ListRequest
			want []string
		}{
			{"doc", v.dan, review.ListRequest{DocPath: "Docs/Design.md"}, []string{"storage 1", "search 1", "storage 2 (draft)"}},
			{"doc, others' drafts hidden", v.clay, review.ListRequest{DocPath: "Docs/Design.md"}, []string{"storage 1", "search 1"}},
			{"section", v.dan, review.ListRequest{DocPath: "Docs/Design.md", Section: "Storage"}, []string{"storage 1", "storage 2 (draft)"}},
			{"status", v.dan, review.ListRequest{Status: atrium.StatusSubmitted}, []string{"search 1", "other doc"}},
			{"review", v.dan, review.ListRequest{ReviewID: sub.Review.UID}, []string{"storage 1", "search 1"}},
			{"doc+review+status", v.dan, review.ListRequest{DocPath: "Docs/Design.md", ReviewID: sub.Review.UID, Status: atrium.StatusResolved}, []string{"storage 1"}},
			{"doc+section+status", v.dan, review.ListRequest{DocPath: "Docs/Design.md", Section: "Storage", Status: atrium.StatusDraft}, []string{"storage 2 (draft)"}},
			{"other doc", v.dan, review.ListRequest{DocPath: "Docs/Other.md"}, []string{"other doc"}},
		}
		for _, c := range cases {
			if diff := cmp.Diff(c.want, contents(c.ctx, c.r)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", c.name, diff)
			}
		}
		_, err := v.rev.List(v.dan, review.ListRequest{Status: "open"})
		wantCode(t, err, atrium.EInvalid)
		_, err = v.rev.List(v.dan, review.ListRequest{ReviewID: "rev_missing"})
		wantCode(t, err, atrium.ENotFound)
		// Pages of results visit every annotation once.
		var seen []string
		cursor := ""
		for {
			res, err := v.rev.List(v.dan, review.ListRequest{Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range res.Annotations {
				seen = append(seen, a.Content)
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if len(seen) != 4 {
			t.Errorf("paged listing saw %v", seen)
		}
	})
}

func TestReviews(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		_, err := v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md"})
		wantCode(t, err, atrium.EInvalid) // nothing to submit
		a := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "one"})
		b := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "two"})
		_, err = v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md", AnnotationIDs: []string{"ann_nope"}})
		wantCode(t, err, atrium.EInvalid)
		first, err := v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md", AnnotationIDs: []string{a.UID}, Summary: "part one"})
		if err != nil || first.Review.Status != atrium.ReviewSubmitted || len(first.Annotations) != 1 || first.Annotations[0].Status != atrium.StatusSubmitted {
			t.Fatalf("submit one %+v %v", first, err)
		}
		second, err := v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md"})
		if err != nil || len(second.Annotations) != 1 || second.Annotations[0].UID != b.UID {
			t.Fatalf("submit the rest %+v %v", second, err)
		}
		done, err := v.rev.Complete(v.clay, first.Review.UID, nil)
		if err != nil || done.Review.Status != atrium.ReviewCompleted {
			t.Fatalf("complete %+v %v", done, err)
		}
		_, err = v.rev.Complete(v.clay, first.Review.UID, nil)
		if err != nil {
			t.Fatalf("completing twice is a no-op: %v", err)
		}
		_, err = v.rev.Update(v.clay, review.UpdateRequest{ID: first.Review.UID, Status: atrium.ReviewDraft})
		wantCode(t, err, atrium.EInvalid)
		list := func(status atrium.ReviewStatus) int {
			r, err := v.rev.ListReviews(v.clay, "Docs/Design.md", status, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			return len(r.Reviews)
		}
		if list("") != 2 || list(atrium.ReviewCompleted) != 1 || list(atrium.ReviewSubmitted) != 1 || list(atrium.ReviewDraft) != 0 {
			t.Errorf("list_reviews filters: all %d completed %d submitted %d", list(""), list(atrium.ReviewCompleted), list(atrium.ReviewSubmitted))
		}
		got, err := v.rev.GetReview(v.clay, second.Review.UID)
		if err != nil || len(got.Annotations) != 1 || got.Review.Author != "dan" {
			t.Fatalf("get_review %+v %v", got, err)
		}
		_, err = v.rev.GetReview(v.clay, "rev_missing")
		wantCode(t, err, atrium.ENotFound)
		// The browser's flow: open a draft review, comment, submit it.
		draft, err := v.rev.CreateDraft(v.dan, "Docs/Design.md", "")
		if err != nil || draft.Status != atrium.ReviewDraft {
			t.Fatal(err)
		}
		if _, err := v.rev.GetReview(v.clay, draft.UID); atrium.ErrorCode(err) != atrium.ENotFound {
			t.Errorf("another's draft review is visible: %v", err)
		}
		v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "three"})
		sub, err := v.rev.Update(v.dan, review.UpdateRequest{ID: draft.UID, Status: atrium.ReviewSubmitted})
		if err != nil || sub.Review.Status != atrium.ReviewSubmitted || len(sub.Annotations) != 1 {
			t.Fatalf("submit draft review %+v %v", sub, err)
		}
	})
}

// Concurrent replies to one thread all land.
func TestConcurrentRepliesLoseNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		root := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "busy thread", Status: atrium.StatusSubmitted})
		const n = 20
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				_, _, err := v.rev.Create(v.clay, review.CreateRequest{ParentID: root.UID, Content: fmt.Sprintf("reply %d", i)})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		th, err := v.rev.Get(v.dan, root.UID)
		if err != nil || len(th.Replies) != n {
			t.Fatalf("%d replies, want %d (%v)", len(th.Replies), n, err)
		}
	})
}
