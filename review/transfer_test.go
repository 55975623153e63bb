package review_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Threads come back with their ids, authors, states and times; importing
// again changes nothing. In a second workspace of the same store, whose ids
// are taken, they get ids of their own, found again by the next import.
func TestImportKeepsThreadsAndTheirIDs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		root := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: "Why not both?",
			Quote: &atrium.Quote{Exact: "PostgreSQL to scale"}, Status: atrium.StatusSubmitted})
		v.clock.Advance(1e9)
		v.create(v.clay, review.CreateRequest{ParentID: root.UID, Content: "Both, then."})
		if _, err := v.rev.Resolve(v.dan, root.UID); err != nil {
			t.Fatal(err)
		}
		v.create(v.clay, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Search", Content: "A draft of clay's."})
		if _, err := v.rev.Export(v.dan); atrium.ErrorCode(err) != atrium.EPermission {
			t.Errorf("a writer's export: %v, want permission_denied", err)
		}
		recs, err := v.rev.Export(v.admin)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs.Threads) != 2 || len(recs.Threads[0].Replies) != 1 || recs.Threads[1].Annotation.Status != atrium.StatusDraft {
			t.Fatalf("exported %+v", recs)
		}

		// Into the same workspace: everything is there already.
		if rep, err := v.rev.Import(v.admin, recs); err != nil || rep != (review.ImportReport{Unchanged: 3}) {
			t.Errorf("import over itself = %+v, %v; want 3 unchanged", rep, err)
		}

		// An edit in a later export comes in over the thread.
		later := recs
		later.Threads = slices.Clone(recs.Threads)
		later.Threads[0].Annotation.Content, later.Threads[0].Annotation.UpdatedAt = "Why not both? (edited)", v.clock.Now()
		if rep, err := v.rev.Import(v.admin, later); err != nil || rep != (review.ImportReport{Updated: 1, Unchanged: 2}) {
			t.Errorf("import of an edit = %+v, %v; want 1 updated", rep, err)
		}
		if th, err := v.rev.Get(v.admin, root.UID); err != nil || th.Annotation.Content != "Why not both? (edited)" || th.Annotation.Status != atrium.StatusResolved {
			t.Errorf("the thread after the edit's import = %+v, %v", th.Annotation, err)
		}
		if _, err := v.rev.Import(v.admin, recs); err != nil {
			t.Fatal(err)
		}

		// Into another workspace of the store: the page first, as atrium
		// import does; the ids are the default workspace's, so new ones.
		ctx := context.Background()
		if _, err := v.ids.CreateWorkspace(ctx, "copy", ""); err != nil {
			t.Fatal(err)
		}
		secret, _, err := v.ids.CreateToken(ctx, identity.TokenRequest{Principal: "boss", Role: atrium.RoleAdmin, Workspace: "copy"})
		if err != nil {
			t.Fatal(err)
		}
		boss, err := v.ids.Authenticate(ctx, secret, "copy")
		if err != nil {
			t.Fatal(err)
		}
		admin := atrium.NewContextWithActor(ctx, boss)
		if _, err := v.docs.WritePage(admin, pages.WriteRequest{Path: "Docs/Design.md", Content: design}); err != nil {
			t.Fatal(err)
		}
		rep, err := v.rev.Import(admin, recs)
		if err != nil || rep != (review.ImportReport{Created: 3, NewIDs: 3}) {
			t.Fatalf("import into a second workspace = %+v, %v; want 3 created with new ids", rep, err)
		}
		if rep, err := v.rev.Import(admin, recs); err != nil || rep != (review.ImportReport{Unchanged: 3}) {
			t.Errorf("importing again = %+v, %v; want 3 unchanged", rep, err)
		}
		copied, err := v.rev.Export(admin)
		if err != nil {
			t.Fatal(err)
		}
		got, want := copied.Threads[0], recs.Threads[0]
		if got.Annotation.UID == want.Annotation.UID || got.Replies[0].ParentUID != got.Annotation.UID {
			t.Errorf("ids in the copy: root %s (the original's %s), reply's parent %s", got.Annotation.UID, want.Annotation.UID, got.Replies[0].ParentUID)
		}
		for _, pair := range [][2]atrium.Annotation{{got.Annotation, want.Annotation}, {got.Replies[0], want.Replies[0]}} {
			g, w := pair[0], pair[1]
			if diff := cmp.Diff([]any{w.Author, w.AuthorType, w.Status, w.Section, w.Quote, w.Content, w.CreatedAt, w.UpdatedAt},
				[]any{g.Author, g.AuthorType, g.Status, g.Section, g.Quote, g.Content, g.CreatedAt, g.UpdatedAt}); diff != "" {
				t.Errorf("%s in the copy (-original +copy):\n%s", w.UID, diff)
			}
		}
	})
}
