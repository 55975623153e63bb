package activity_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// workspace is a store whose clock a test moves, with a few members.
type workspace struct {
	docs  *pages.Service
	rev   *review.Service
	act   *activity.Service
	ids   *identity.Service
	clock atomic.Int64 // added to the real time
	seq   int          // makes every write new content
}

func newWorkspace(t *testing.T, e store.Engine) *workspace {
	t.Helper()
	w := &workspace{}
	db := storetest.MustOpen(t, e, &store.Options{Conns: 4, Now: func() time.Time { return time.Now().Add(time.Duration(w.clock.Load())) }})
	w.ids = identitytest.New(t, db)
	w.docs = pages.New(db, nil)
	w.rev = review.New(db, w.docs, nil)
	w.act = activity.New(db)
	return w
}

// as is a member of the default workspace with role, as services see them.
func (w *workspace) as(t *testing.T, handle string, role atrium.Role) context.Context {
	t.Helper()
	secret, _, err := w.ids.CreateToken(context.Background(), identity.TokenRequest{Principal: handle, Workspace: atrium.DefaultWorkspace, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	a, err := w.ids.Authenticate(context.Background(), secret, "")
	if err != nil {
		t.Fatal(err)
	}
	return atrium.NewContextWithActor(context.Background(), a)
}

func (w *workspace) later(d time.Duration) { w.clock.Add(int64(d)) }

func (w *workspace) write(t *testing.T, ctx context.Context, path string, n int) {
	t.Helper()
	for range n {
		w.seq++
		if _, err := w.docs.WritePage(ctx, pages.WriteRequest{Path: path, Content: fmt.Sprintf("# %s\n\nversion %d\n", path, w.seq), Overwrite: true}); err != nil {
			t.Fatal(err)
		}
	}
}

// shape is a row as the test compares it.
type shape struct {
	Actor, Kind, Origin string
	Count, Subjects     int
	Folder              string
}

func shapes(rows []activity.Row) []shape {
	var out []shape
	for _, r := range rows {
		out = append(out, shape{r.Actor, r.Kind, r.Origin, r.Count, r.Subjects, r.Folder})
	}
	return out
}

// The feed folds a run — the same actor doing the same kind of thing close
// together, or the page and file writes of one import — into a row that
// says how many; what it does not show (another's drafts, the kinds left
// out) breaks no run; and it pages back through all of it, no event lost or
// counted twice.
func TestFeedFoldsRuns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		w := newWorkspace(t, e)
		root := w.as(t, "root", atrium.RoleAdmin)
		wim := w.as(t, "wim", atrium.RoleWriter)
		olga := w.as(t, "olga", atrium.RoleWriter)

		imp := pages.WithOrigin(root, "import")
		for i := range 12 {
			w.write(t, imp, fmt.Sprintf("docs/guide/page%02d.md", i), 1)
		}
		for i := range 9 {
			if _, _, err := w.docs.AttachFile(imp, fmt.Sprintf("docs/assets/img%d.png", i), []byte{0x89, 'P', 'N', 'G', byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		w.later(time.Hour)
		w.write(t, wim, "docs/guide/page03.md", 1)
		// A token made and someone else's draft, between wim's edits:
		// neither is in wim's run as olga sees it, nor breaks it.
		w.as(t, "ci", atrium.RoleWriter)
		if _, _, err := w.rev.Create(w.as(t, "dora", atrium.RoleWriter), review.CreateRequest{DocPath: "docs/guide/page03.md", Content: "draft"}); err != nil {
			t.Fatal(err)
		}
		w.write(t, wim, "docs/guide/page03.md", 2)
		w.later(time.Minute)
		w.write(t, wim, "docs/guide/page04.md", 1)
		w.write(t, wim, "docs/other.md", 1)
		w.later(RunGapAndABit)
		w.write(t, wim, "docs/guide/page05.md", 1)

		kinds := map[string]bool{"page.created": true, "page.updated": true, "attachment.added": true, "annotation.created": true}
		f, err := w.act.Feed(olga, activity.FeedRequest{Kinds: kinds})
		if err != nil {
			t.Fatal(err)
		}
		want := []shape{
			{"wim", "page.updated", "", 1, 1, "docs/guide"},
			// Edits of three pages: one row. page.created of other.md
			// is another kind: its own row.
			{"wim", "page.created", "", 1, 1, "docs"},
			{"wim", "page.updated", "", 4, 2, "docs/guide"},
			{"root", "attachment.added", "import", 21, 21, "docs"},
		}
		if diff := cmp.Diff(want, shapes(f.Rows)); diff != "" {
			t.Fatalf("feed rows (-want +got):\n%s", diff)
		}
		if f.Next != 0 {
			t.Errorf("the whole log fits one page, yet Next = %d", f.Next)
		}
		if got := f.Rows[3].Kinds; got["page.created"] != 12 || got["attachment.added"] != 9 {
			t.Errorf("the import's row counts %v, want 12 pages and 9 files", got)
		}

		// Page by page, one row at a time: the same rows.
		var paged []activity.Row
		before := int64(0)
		for range 10 {
			f, err := w.act.Feed(olga, activity.FeedRequest{Before: before, Rows: 1, Kinds: kinds})
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, f.Rows...)
			if before = f.Next; before == 0 {
				break
			}
		}
		if diff := cmp.Diff(want, shapes(paged)); diff != "" {
			t.Fatalf("feed rows, one page each (-want +got):\n%s", diff)
		}

		// The draft's author sees their draft, which cuts wim's run.
		f, err = w.act.Feed(w.as(t, "dora", atrium.RoleWriter), activity.FeedRequest{Kinds: kinds})
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Rows) != 6 {
			t.Errorf("the draft's author sees %d rows, want 6 (their draft between wim's edits): %+v", len(f.Rows), shapes(f.Rows))
		}
	})
}

// RunGapAndABit is more than two events of a run may be apart.
const RunGapAndABit = activity.RunGap + time.Second

// Recently changed pages come from the log: newest first, each once, and
// not those deleted or moved away since.
func TestRecentPages(t *testing.T) {
	w := newWorkspace(t, store.SQLite)
	root := w.as(t, "root", atrium.RoleAdmin)
	for _, p := range []string{"A.md", "B.md", "C.md", "E.md"} {
		w.write(t, root, p, 1)
	}
	w.write(t, root, "A.md", 1)
	if _, err := w.docs.DeletePage(root, "B.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.docs.MovePage(root, "C.md", "dir/D.md"); err != nil {
		t.Fatal(err)
	}
	got, err := w.act.RecentPages(w.as(t, "rita", atrium.RoleReader), 10)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range got {
		paths = append(paths, p.Path)
	}
	if diff := cmp.Diff([]string{"dir/D.md", "A.md", "E.md"}, paths); diff != "" {
		t.Fatalf("recent pages (-want +got):\n%s", diff)
	}
	if got, _ := w.act.RecentPages(root, 2); len(got) != 2 {
		t.Fatalf("RecentPages(2) gives %d", len(got))
	}
}
