package review_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

func (v *env) get(id string) atrium.Annotation {
	v.t.Helper()
	th, err := v.rev.Get(v.admin, id)
	if err != nil {
		v.t.Fatalf("get %s: %v", id, err)
	}
	return th.Annotation
}

func (v *env) rewrite(path, content string) {
	v.t.Helper()
	if _, err := v.docs.WritePage(v.dan, pages.WriteRequest{Path: path, Content: content, Overwrite: true}); err != nil {
		v.t.Fatal(err)
	}
}

func TestReanchoringAfterEdits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		quoted := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: "why both?", Quote: &atrium.Quote{Exact: "PostgreSQL to scale"}, Status: atrium.StatusSubmitted})
		sectioned := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Search", Content: "more detail", Status: atrium.StatusSubmitted})
		edited := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: "nice", Quote: &atrium.Quote{Exact: "We use SQLite for the embedded store"}, Status: atrium.StatusSubmitted})
		reply := v.create(v.clay, review.CreateRequest{ParentID: quoted.UID, Content: "Because scale."})

		// Text inserted before the quote: it is found again, offset moved.
		v.rewrite("Docs/Design.md", strings.Replace(design, "## Storage\n\n", "## Storage\n\nA new first paragraph.\n\n", 1))
		a := v.get(quoted.UID)
		if a.Orphaned || a.Section != "Design > Storage" || a.Quote.Exact != "PostgreSQL to scale" {
			t.Fatalf("after insert: %+v", a)
		}

		// The heading renamed and the quote moved to another section: the
		// quote wins, the section follows it.
		moved := strings.Replace(design, "## Storage", "## Persistence", 1)
		moved = strings.Replace(moved, " and PostgreSQL to scale.", ".", 1)
		moved = strings.Replace(moved, "Ranking is BM25.", "Ranking is BM25. We add PostgreSQL to scale later.", 1)
		v.rewrite("Docs/Design.md", moved)
		a = v.get(quoted.UID)
		if a.Orphaned || a.Section != "Design > Search" {
			t.Fatalf("after the quote moved: %+v", a)
		}
		if r := v.get(reply.UID); r.Section != a.Section || r.Orphaned {
			t.Errorf("the reply did not follow its thread: %+v", r)
		}
		// The quote edited in place: the closest match in its section.
		b := v.get(edited.UID)
		if b.Orphaned {
			t.Fatalf("edited quote lost its section rename: %+v", b)
		}
		v.rewrite("Docs/Design.md", strings.Replace(moved, "We use SQLite for the embedded store", "We use SQLite for the small embedded store", 1))
		b = v.get(edited.UID)
		if b.Orphaned || !strings.Contains(b.Quote.Exact, "small embedded") {
			t.Fatalf("closest match: %+v", b.Quote)
		}
		// The quote gone: orphaned, still listed.
		v.rewrite("Docs/Design.md", "---\ntitle: Design\n---\n# Design\n\n## Search\n\nNothing else.\n")
		if a := v.get(quoted.UID); !a.Orphaned {
			t.Fatalf("the quote is gone but the annotation is not orphaned: %+v", a)
		}
		if b := v.get(edited.UID); !b.Orphaned {
			t.Fatalf("edited's section is gone: %+v", b)
		}
		if s := v.get(sectioned.UID); s.Orphaned {
			t.Fatalf("its section still exists: %+v", s)
		}
		list, err := v.rev.List(v.dan, review.ListRequest{DocPath: "Docs/Design.md"})
		if err != nil || len(list.Annotations) != 4 {
			t.Fatalf("orphans must stay listed: %d, %v", len(list.Annotations), err)
		}
		// The text comes back: so does the anchor.
		v.rewrite("Docs/Design.md", design)
		if a := v.get(quoted.UID); a.Orphaned || a.Section != "Design > Storage" {
			t.Fatalf("back again: %+v", a)
		}
	})
}

func TestThreadsFollowTheirPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		a := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: "c", Status: atrium.StatusSubmitted})
		sub := v.create(v.dan, review.CreateRequest{DocPath: "Docs/Design.md", Content: "d"})
		rv, err := v.rev.Submit(v.dan, review.SubmitRequest{DocPath: "Docs/Design.md"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.docs.MovePage(v.dan, "Docs/Design.md", "Archive/Design 2026.md"); err != nil {
			t.Fatal(err)
		}
		if got := v.get(a.UID); got.DocPath != "Archive/Design 2026.md" || got.Orphaned {
			t.Fatalf("after move: %+v", got)
		}
		if got := v.get(sub.UID); got.DocPath != "Archive/Design 2026.md" {
			t.Fatalf("after move: %+v", got)
		}
		rvs, err := v.rev.ListReviews(v.dan, "Archive/Design 2026.md", "", "", 0)
		if err != nil || len(rvs.Reviews) != 1 || rvs.Reviews[0].UID != rv.Review.UID {
			t.Fatalf("reviews did not move: %+v %v", rvs, err)
		}
		// Deleted: the threads go to the trash with the page, and a new
		// page at its path starts without them; restored, they are back.
		del, err := v.docs.DeletePage(v.dan, "Archive/Design 2026.md")
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.rev.Get(v.dan, a.UID)
		wantCode(t, err, atrium.ENotFound)
		v.rewrite("Archive/Design 2026.md", design)
		list, err := v.rev.List(v.dan, review.ListRequest{DocPath: "Archive/Design 2026.md"})
		if err != nil || len(list.Annotations) != 0 {
			t.Fatalf("a new page at a deleted page's path has its threads: %+v %v", list, err)
		}
		if all, err := v.rev.List(v.admin, review.ListRequest{}); err != nil || len(all.Annotations) != 0 {
			t.Fatalf("threads of a trashed page are listed: %+v %v", all, err)
		}
		if rvs, err := v.rev.ListReviews(v.dan, "", "", "", 0); err != nil || len(rvs.Reviews) != 0 {
			t.Fatalf("reviews of a trashed page are listed: %+v %v", rvs, err)
		}
		if _, err := v.docs.RestorePage(v.dan, pages.RestoreRequest{PageID: del.Page.UID, To: "Archive/Design restored.md"}); err != nil {
			t.Fatal(err)
		}
		if got := v.get(a.UID); got.DocPath != "Archive/Design restored.md" {
			t.Fatalf("after restore: %+v", got)
		}
		if rvs, err := v.rev.ListReviews(v.dan, "Archive/Design restored.md", "", "", 0); err != nil || len(rvs.Reviews) != 1 {
			t.Fatalf("reviews after restore: %+v %v", rvs, err)
		}
		if got := v.get(a.UID); got.Orphaned {
			t.Fatalf("page back, still orphaned: %+v", got)
		}
	})
}

// An edit inside a quote keeps the quote's new extent: the words between its
// old surroundings, not a stretch of the old length that takes in markup.
func TestReanchoringKeepsTheEditedExtent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		page := "# Settings\n\n## Templates\n\nSet the folder in **Template file location** under Options.\nFormats are listed after it.\n"
		v.rewrite("Settings.md", page)
		for _, tc := range []struct{ quote, find, replace, want string }{
			{"Template file location", "Template file location", "Template location", "Template location"},
			{"Template location", "Template location", "Template folder location", "Template folder location"},
			{"Template folder location", "Template folder", "Pattern folder", "Pattern folder location"},
		} {
			a := v.create(v.dan, review.CreateRequest{DocPath: "Settings.md", Content: "which one?", Quote: &atrium.Quote{Exact: tc.quote}, Status: atrium.StatusSubmitted})
			if _, err := v.docs.EditPage(v.dan, pages.EditRequest{Path: "Settings.md", Ops: []pages.EditOp{{Op: pages.OpFindReplace, Find: tc.find, Replace: tc.replace}}}); err != nil {
				t.Fatal(err)
			}
			got := v.get(a.UID)
			if got.Orphaned || got.Quote == nil || got.Quote.Exact != tc.want {
				t.Errorf("after %q -> %q the quote is %+v, want %q", tc.find, tc.replace, got.Quote, tc.want)
			}
			if got.Section != "Settings > Templates" {
				t.Errorf("section = %q", got.Section)
			}
		}
	})
}

// Issue 23.1: a quote is what people see. Selected across bold, a link and
// code, it is found in the rendered text and anchored to its source range;
// the quote with its markup works as before, and both stay anchored when
// the page changes.
func TestQuotesMatchTheRenderedText(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		const ops = "# Ops\n\n## Backups\n\nBackups run **nightly** with a [simple copy](https://example.com/copy) of the `atrium.db` file.\n"
		if _, err := v.docs.WritePage(v.dan, pages.WriteRequest{Path: "Ops.md", Content: ops}); err != nil {
			t.Fatal(err)
		}
		shown := v.create(v.clay, review.CreateRequest{DocPath: "Ops.md", Content: "How long do they take?", Quote: &atrium.Quote{Exact: "Backups run nightly"}})
		if shown.Quote == nil || shown.Quote.Exact != "Backups run **nightly**" || shown.Section != "Ops > Backups" || shown.QuoteOffset != strings.Index(ops, "Backups run") {
			t.Fatalf("rendered quote anchored as %+v %+v", shown, shown.Quote)
		}
		across := v.create(v.dan, review.CreateRequest{DocPath: "Ops.md", Section: "Backups", Content: "Which file?", Quote: &atrium.Quote{Exact: "simple copy of the atrium.db file", Prefix: "nightly with a "}})
		if across.Quote.Exact != "[simple copy](https://example.com/copy) of the `atrium.db` file" {
			t.Fatalf("quote across a link and code anchored as %q", across.Quote.Exact)
		}
		marked := v.create(v.dan, review.CreateRequest{DocPath: "Ops.md", Content: "Markup kept", Quote: &atrium.Quote{Exact: "Backups run **nightly**"}})
		if marked.Quote.Exact != "Backups run **nightly**" {
			t.Fatalf("the quote with markup anchored as %q", marked.Quote.Exact)
		}
		_, _, err := v.rev.Create(v.dan, review.CreateRequest{DocPath: "Ops.md", Content: "x", Quote: &atrium.Quote{Exact: "Backups run weekly"}})
		wantCode(t, err, atrium.EInvalid)
		v.rewrite("Ops.md", strings.Replace(ops, "## Backups\n\n", "## Backups\n\nA new first line.\n\n", 1))
		for _, id := range []string{shown.UID, across.UID} {
			if a := v.get(id); a.Orphaned || a.Section != "Ops > Backups" {
				t.Fatalf("after an edit above: %+v", a)
			}
		}
	})
}
