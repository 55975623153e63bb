package review_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// Threads answers what List and a Get per thread would, page by page, with
// other people's drafts (and replies to them) left out.
func TestThreadsMatchGetPerThread(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		var roots []atrium.Annotation
		for i := range 5 {
			v.clock.Advance(time.Second)
			r := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: fmt.Sprintf("thread %d", i), Status: atrium.StatusSubmitted})
			for j := range i {
				v.clock.Advance(time.Second)
				v.create(v.clay, review.CreateRequest{ParentID: r.UID, Content: fmt.Sprintf("reply %d.%d", i, j)})
			}
			roots = append(roots, r)
		}
		if _, err := v.rev.Resolve(v.dan, roots[1].UID); err != nil {
			t.Fatal(err)
		}
		draft := v.create(v.clay, review.CreateRequest{DocPath: "Docs/Design.md", Content: "clay's draft"})
		v.create(v.clay, review.CreateRequest{ParentID: draft.UID, Content: "clay's draft reply"})
		v.create(v.dan, review.CreateRequest{ParentID: roots[0].UID, Content: "a late reply"})

		summary := func(ts []review.Thread) []string {
			var out []string
			for _, th := range ts {
				out = append(out, th.Annotation.Content)
				for _, r := range th.Replies {
					out = append(out, "  "+r.Content)
				}
			}
			return out
		}
		var want []review.Thread
		for _, r := range roots {
			th, err := v.rev.Get(v.dan, r.UID)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, th)
		}
		var got []review.Thread
		cursor, pages := "", 0
		for {
			res, err := v.rev.Threads(v.dan, review.ThreadsRequest{DocPath: "/Docs/Design.md", Cursor: cursor, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			got, pages = append(got, res.Threads...), pages+1
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		if diff := cmp.Diff(summary(want), summary(got)); diff != "" || pages != 3 {
			t.Errorf("dan's threads in %d pages (-want +got):\n%s", pages, diff)
		}
		for i := range want {
			if diff := cmp.Diff(want[i], got[i]); diff != "" {
				t.Errorf("thread %d differs from Get (-get +threads):\n%s", i, diff)
			}
		}

		res, err := v.rev.Threads(v.clay, review.ThreadsRequest{DocPath: "Docs/Design.md"})
		if err != nil || len(res.Threads) != 6 || len(res.Threads[5].Replies) != 1 {
			t.Fatalf("clay sees his own draft with its reply: %d threads, %v", len(res.Threads), err)
		}
		res, err = v.rev.Threads(v.admin, review.ThreadsRequest{Status: atrium.StatusResolved})
		if err != nil || len(res.Threads) != 1 || res.Threads[0].Annotation.UID != roots[1].UID || len(res.Threads[0].Replies) != 1 {
			t.Fatalf("resolved threads everywhere: %+v, %v", res.Threads, err)
		}
		res, err = v.rev.Threads(v.dan, review.ThreadsRequest{DocPath: "Docs/Gone.md"})
		if err != nil || len(res.Threads) != 0 {
			t.Fatalf("threads of a missing page: %+v, %v", res, err)
		}
		_, err = v.rev.Threads(v.dan, review.ThreadsRequest{Status: "lost"})
		wantCode(t, err, atrium.EInvalid)
		_, err = v.rev.Threads(v.dan, review.ThreadsRequest{Cursor: "!!"})
		wantCode(t, err, atrium.EInvalid)
	})
}
