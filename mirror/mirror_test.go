package mirror_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/mirror"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

type env struct {
	t     testing.TB
	db    *store.DB
	svc   *services.Services
	docs  *pages.Service
	ids   *identity.Service
	ctx   context.Context // an agent writing through the service
	dir   string
	m     *mirror.Mirror
	debnc time.Duration
	now   func() time.Time // the mirror's clock; nil: the real one
}

func newEnv(t testing.TB, e store.Engine) *env {
	t.Helper()
	db := storetest.MustOpen(t, e, &store.Options{EventPoll: 20 * time.Millisecond})
	svc := servicestest.Over(t, db)
	agent := servicestest.Agent(t, svc, "agent", "")
	return &env{t: t, db: db, svc: svc, docs: svc.Pages, ids: svc.Identity, ctx: atrium.NewContextWithActor(context.Background(), agent), dir: t.TempDir(), debnc: 50 * time.Millisecond}
}

func (v *env) start() {
	v.t.Helper()
	actor, err := v.ids.LocalActor(context.Background(), "mirror", "", atrium.KindAgent)
	if err != nil {
		v.t.Fatal(err)
	}
	m, err := mirror.Start(context.Background(), mirror.Config{Dir: v.dir, Services: v.svc, Actor: actor, Debounce: v.debnc, Now: v.now})
	if err != nil {
		v.t.Fatal(err)
	}
	v.m = m
	v.t.Cleanup(func() { m.Close() })
}

func (v *env) stop() {
	v.m.Close()
}

func (v *env) file(rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(v.dir, filepath.FromSlash(rel)))
	return string(b), err == nil
}

func (v *env) writeFile(rel, content string) {
	v.t.Helper()
	p := filepath.Join(v.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		v.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		v.t.Fatal(err)
	}
}

func (v *env) write(path, content string) pages.WriteResult {
	v.t.Helper()
	r, err := v.docs.WritePage(v.ctx, pages.WriteRequest{Path: path, Content: content, Overwrite: true})
	if err != nil {
		v.t.Fatal(err)
	}
	return r
}

func (v *env) page(path string) (atrium.Page, bool) {
	r, err := v.docs.ReadPage(v.ctx, pages.ReadRequest{Path: path})
	if err != nil {
		return atrium.Page{}, false
	}
	return r.Page, true
}

// eventually waits for cond; the mirror works in the background. The bound
// is only against a hang: on a loaded machine a flush and its write back
// have taken more than 5 s.
func (v *env) eventually(what string, cond func() bool) {
	v.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			v.t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settle returns once the mirror has dealt with everything that happened
// before it was called, both ways: a file written after it becomes a page
// (the folder's changes are flushed together and in order), then a page
// written after that lands as a file (the store's events come in order).
// A negative check made after it has seen every event that came earlier.
func (v *env) settle() {
	v.t.Helper()
	n := time.Now().UnixNano()
	folder, store := fmt.Sprintf("zz-settle-folder-%d.md", n), fmt.Sprintf("zz-settle-store-%d.md", n)
	v.writeFile(folder, "settle")
	v.eventually("the folder's marker in the store", func() bool { _, ok := v.page(folder); return ok })
	v.write(store, "settle")
	v.eventually("the store's marker in the folder", func() bool { _, ok := v.file(store); return ok })
}

func TestStoreWritesLandInTheFolder(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.start()
		v.write("Projects/Alpha.md", "# Alpha\n\nfirst")
		v.eventually("new page written", func() bool { c, ok := v.file("Projects/Alpha.md"); return ok && c == "# Alpha\n\nfirst" })
		v.write("Projects/Alpha.md", "# Alpha\n\nsecond")
		v.eventually("edit written", func() bool { c, _ := v.file("Projects/Alpha.md"); return c == "# Alpha\n\nsecond" })
		if _, err := v.docs.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Projects/Alpha.md", FileName: "pic.png", Data: []byte("png-bytes")}); err != nil {
			t.Fatal(err)
		}
		v.eventually("attachment written", func() bool { c, _ := v.file("Projects/assets/pic.png"); return c == "png-bytes" })
		if _, err := v.docs.MovePage(v.ctx, "Projects/Alpha.md", "Archive/Alpha.md"); err != nil {
			t.Fatal(err)
		}
		v.eventually("move written", func() bool {
			_, old := v.file("Projects/Alpha.md")
			c, ok := v.file("Archive/Alpha.md")
			_, att := v.file("Archive/assets/pic.png")
			return !old && ok && c == "# Alpha\n\nsecond" && att
		})
		if _, err := v.docs.DeletePage(v.ctx, "Archive/Alpha.md"); err != nil {
			t.Fatal(err)
		}
		v.eventually("delete removed the file and its attachment", func() bool {
			_, ok := v.file("Archive/Alpha.md")
			_, att := v.file("Archive/assets/pic.png")
			return !ok && !att
		})
		if len(v.m.Conflicts()) != 0 {
			t.Errorf("conflicts: %+v", v.m.Conflicts())
		}
		// No temporary file is left behind.
		filepath.WalkDir(v.dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".atrium-") {
				t.Errorf("leftover temporary file %s", p)
			}
			return nil
		})
	})
}

func TestFolderEditsReachTheStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.start()
		v.writeFile("Notes/Idea.md", "# Idea\n\nzebra crossing")
		v.eventually("new file becomes a page", func() bool { p, ok := v.page("Notes/Idea.md"); return ok && p.UpdatedBy == "mirror" })
		v.eventually("and is searchable", func() bool {
			r, err := v.docs.Search(v.ctx, pages.SearchRequest{Query: "zebra"})
			return err == nil && r.Total == 1
		})
		v.writeFile("Notes/Idea.md", "# Idea\n\nquokka habitat")
		v.eventually("file edit reaches the page", func() bool {
			p, _ := v.page("Notes/Idea.md")
			return p.Revision == 2 && strings.Contains(p.Content, "quokka")
		})
		r, err := v.docs.Search(v.ctx, pages.SearchRequest{Query: "quokka"})
		if err != nil || r.Total != 1 {
			t.Fatalf("search after file edit: %+v %v", r, err)
		}
		// A move in the folder is a page move: links follow.
		v.write("Links.md", "see [[Notes/Idea]]")
		v.eventually("linking page written", func() bool { _, ok := v.file("Links.md"); return ok })
		if err := os.MkdirAll(filepath.Join(v.dir, "Moved"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(v.dir, "Notes", "Idea.md"), filepath.Join(v.dir, "Moved", "Idea.md")); err != nil {
			t.Fatal(err)
		}
		v.eventually("folder move becomes a page move", func() bool {
			_, old := v.page("Notes/Idea.md")
			p, moved := v.page("Moved/Idea.md")
			return !old && moved && p.Revision == 3
		})
		v.eventually("the linking file is rewritten too", func() bool { c, _ := v.file("Links.md"); return c == "see [[Moved/Idea]]" })
		// An asset dropped in the folder becomes an attachment.
		v.writeFile("Moved/assets/scan.pdf", "%PDF-1")
		v.eventually("asset becomes an attachment", func() bool {
			_, data, err := v.docs.Attachment(v.ctx, "Moved/assets/scan.pdf")
			return err == nil && string(data) == "%PDF-1"
		})
		if err := os.Remove(filepath.Join(v.dir, "Moved", "Idea.md")); err != nil {
			t.Fatal(err)
		}
		v.eventually("deleting the file deletes the page", func() bool { _, ok := v.page("Moved/Idea.md"); return !ok })
		// A file with bad frontmatter is reported, not imported, and the mirror goes on.
		v.writeFile("Bad.md", "---\ntitle: [oops\n---\n")
		v.writeFile("Good.md", "fine")
		v.eventually("good file still imported", func() bool { _, ok := v.page("Good.md"); return ok })
		if _, ok := v.page("Bad.md"); ok {
			t.Error("a page with invalid frontmatter was imported")
		}
	})
}

// A file edited from an older revision than the store's is a conflict: the
// store's version stays, the file's is kept beside it, nothing is lost.
func TestConcurrentEditsKeepBothVersions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.debnc = 500 * time.Millisecond // the file edit waits while the store edit lands
		v.start()
		v.write("Doc.md", "base")
		v.eventually("synced", func() bool { c, _ := v.file("Doc.md"); return c == "base" })
		v.writeFile("Doc.md", "edited in the folder")
		v.write("Doc.md", "edited in the store")
		v.eventually("conflict kept", func() bool { return len(v.m.Conflicts()) == 1 })
		c := v.m.Conflicts()[0]
		if kept, _ := v.file(c.Kept); kept != "edited in the folder" {
			t.Errorf("conflict copy %s = %q", c.Kept, kept)
		}
		v.eventually("store version in the file", func() bool { f, _ := v.file("Doc.md"); return f == "edited in the store" })
		v.settle() // the folder edit must not come back
		if p, _ := v.page("Doc.md"); p.Content != "edited in the store" {
			t.Fatalf("page = %q", p.Content)
		}
		if _, ok := v.page(c.Kept); ok {
			t.Error("the conflict copy became a page")
		}
	})
}

func TestStartReconcilesBothWays(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.start()
		v.write("Store.md", "s1")
		v.write("File.md", "f1")
		v.write("Both.md", "b1")
		v.write("Gone.md", "g1")
		v.eventually("synced", func() bool {
			_, a := v.file("Store.md")
			_, b := v.file("Gone.md")
			return a && b
		})
		v.stop()
		// While the mirror is away:
		v.write("Store.md", "s2")                                 // the store changes
		v.writeFile("File.md", "f2")                              // the file changes
		v.write("Both.md", "b2-store")                            // both change
		v.writeFile("Both.md", "b2-file")                         //
		os.Remove(filepath.Join(v.dir, "Gone.md"))                // a file disappears
		v.writeFile("New.md", "brand new")                        // a file appears
		v.writeFile("Hidden/.secret.md", "hidden files stay out") //
		v.start()
		checks := map[string]string{"Store.md": "s2", "File.md": "f2", "Both.md": "b2-store", "New.md": "brand new"}
		for path, want := range checks {
			if c, _ := v.file(path); c != want {
				t.Errorf("file %s = %q, want %q", path, c, want)
			}
			if p, ok := v.page(path); !ok || p.Content != want {
				t.Errorf("page %s = %q, want %q", path, p.Content, want)
			}
		}
		// A file the mirror wrote that is gone deletes its page, as while running.
		if _, ok := v.page("Gone.md"); ok {
			t.Error("a file deleted while the mirror was away left its page")
		}
		if _, ok := v.file("Gone.md"); ok {
			t.Error("a file deleted while the mirror was away was written back")
		}
		if len(v.m.Conflicts()) != 1 || v.m.Conflicts()[0].Path != "Both.md" {
			t.Fatalf("conflicts = %+v", v.m.Conflicts())
		}
		if kept, _ := v.file(v.m.Conflicts()[0].Kept); kept != "b2-file" {
			t.Errorf("kept %q", kept)
		}
		if _, ok := v.page("Hidden/.secret.md"); ok {
			t.Error("a hidden file became a page")
		}
	})
}

func TestSymlinksNeverLeadOut(t *testing.T) {
	v := newEnv(t, store.SQLite)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "Secret.md"), []byte("outside the mirror"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(v.dir, "Escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "Secret.md"), filepath.Join(v.dir, "Link.md")); err != nil {
		t.Fatal(err)
	}
	v.start()
	if _, ok := v.page("Escape/Secret.md"); ok {
		t.Error("followed a symlinked folder out of the mirror")
	}
	if _, ok := v.page("Link.md"); ok {
		t.Error("followed a symlinked file out of the mirror")
	}
	v.write("Escape/Planted.md", "must not land outside")
	v.write("Marker.md", "written after")
	v.eventually("later page written", func() bool { _, ok := v.file("Marker.md"); return ok })
	if _, err := os.Stat(filepath.Join(outside, "Planted.md")); err == nil {
		t.Fatal("the mirror wrote through a symlink, outside its folder")
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Fatalf("outside folder now holds %d files", len(entries))
	}
}

// Saving a file again while the mirror's previous write is still echoing back
// from the store is no conflict: the store never had anything the folder had
// not seen.
func TestRapidSavesAreNoConflict(t *testing.T) {
	v := newEnv(t, store.SQLite)
	v.debnc = 30 * time.Millisecond
	v.start()
	for i := range 30 {
		v.writeFile("Draft.md", fmt.Sprintf("draft %d", i))
		time.Sleep(time.Duration(10+i%4*15) * time.Millisecond)
	}
	v.eventually("last save in the store", func() bool { p, _ := v.page("Draft.md"); return p.Content == "draft 29" })
	v.settle() // the echoes of the saves are all back
	if c := v.m.Conflicts(); len(c) != 0 {
		t.Fatalf("rapid saves produced conflicts: %+v", c)
	}
	if f, _ := v.file("Draft.md"); f != "draft 29" {
		t.Fatalf("file = %q", f)
	}
}

// A conflict copy never replaces another, even two in the same second.
func TestConflictCopiesNeverReplaceEachOther(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.debnc = 300 * time.Millisecond // the store's write lands while the file's waits
		v.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
		v.start()
		v.write("Doc.md", "base")
		v.eventually("synced", func() bool { c, _ := v.file("Doc.md"); return c == "base" })
		for i := range 3 {
			v.writeFile("Doc.md", fmt.Sprintf("folder %d", i))
			v.write("Doc.md", fmt.Sprintf("store %d", i))
			v.eventually("conflict kept", func() bool { return len(v.m.Conflicts()) == i+1 })
			v.eventually("store version in the file", func() bool { c, _ := v.file("Doc.md"); return c == fmt.Sprintf("store %d", i) })
		}
		kept := map[string]string{}
		for _, c := range v.m.Conflicts() {
			b, _ := v.file(c.Kept)
			kept[c.Kept] = b
		}
		want := map[string]string{
			"Doc.conflict-20260102T030405Z.md":   "folder 0",
			"Doc.conflict-20260102T030405Z-2.md": "folder 1",
			"Doc.conflict-20260102T030405Z-3.md": "folder 2",
		}
		if diff := cmp.Diff(want, kept); diff != "" {
			t.Errorf("conflict copies (-want +got):\n%s", diff)
		}
	})
}

// An editor that still holds the text from before the store's newer
// revision was written to the file saves a conflict, not a silent revert of
// the newer revision. Saving that same text again is taken as meant; an
// editor that read the newer text saves a revision.
func TestStaleBufferSaveIsAConflict(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.start()
		v.writeFile("Plan.md", "# Plan\n\nship it\n")
		v.eventually("file becomes a page", func() bool { _, ok := v.page("Plan.md"); return ok })
		v.write("Plan.md", "# Plan\n\nship it on Friday\n") // an agent
		v.eventually("agent's edit in the file", func() bool { c, _ := v.file("Plan.md"); return strings.Contains(c, "Friday") })
		stale := "# Plan\n\nship it\n\n- [ ] tell the team\n" // from the buffer opened before
		v.writeFile("Plan.md", stale)
		v.eventually("stale save kept as a conflict", func() bool { return len(v.m.Conflicts()) == 1 })
		if kept, _ := v.file(v.m.Conflicts()[0].Kept); kept != stale {
			t.Errorf("conflict copy = %q", kept)
		}
		v.eventually("the agent's edit back in the file", func() bool { c, _ := v.file("Plan.md"); return strings.Contains(c, "Friday") })
		if p, _ := v.page("Plan.md"); p.Revision != 2 || !strings.Contains(p.Content, "Friday") {
			t.Fatalf("page after a stale save: revision %d %q", p.Revision, p.Content)
		}
		// The same text saved again, after the conflict: meant.
		v.writeFile("Plan.md", stale)
		v.eventually("saved again: a revision", func() bool { p, _ := v.page("Plan.md"); return p.Content == stale })
		// An editor that read the file first keeps the agent's change.
		v.write("Plan.md", stale+"- [ ] book the room\n")
		v.eventually("agent's edit in the file", func() bool { c, _ := v.file("Plan.md"); return strings.Contains(c, "room") })
		fresh := stale + "- [ ] book the room\n- [ ] order cake\n"
		v.writeFile("Plan.md", fresh)
		v.eventually("fresh save: a revision", func() bool { p, _ := v.page("Plan.md"); return p.Content == fresh })
		if n := len(v.m.Conflicts()); n != 1 {
			t.Errorf("%d conflicts, want 1: %+v", n, v.m.Conflicts())
		}
	})
}

// A git checkout of an older branch rewrites files to older content: over
// another writer's later revision that is a conflict (kept), never a silent
// revert; over the folder's own revisions it is an undo.
func TestOlderContentBackIsAConflict(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.start()
		for _, f := range []string{"A.md", "B.md", "C.md"} {
			v.writeFile(f, f+" one\n")
		}
		v.eventually("files become pages", func() bool {
			_, a := v.page("A.md")
			_, b := v.page("B.md")
			_, c := v.page("C.md")
			return a && b && c
		})
		v.write("A.md", "A.md two, by the agent\n")
		v.write("C.md", "C.md two, by the agent\n")
		v.eventually("agent's edits in the files", func() bool {
			a, _ := v.file("A.md")
			c, _ := v.file("C.md")
			return strings.Contains(a, "agent") && strings.Contains(c, "agent")
		})
		v.writeFile("A.md", "A.md two, by the agent\nand the user\n") // the user builds on it
		v.writeFile("B.md", "B.md two\n")                             // only the folder writes B
		v.eventually("user's edits are revisions", func() bool {
			a, _ := v.page("A.md")
			b, _ := v.page("B.md")
			return a.Revision == 3 && b.Revision == 2
		})
		// git checkout old-branch:
		for _, f := range []string{"A.md", "B.md", "C.md"} {
			v.writeFile(f, f+" one\n")
		}
		v.eventually("B's undo is a revision", func() bool { p, _ := v.page("B.md"); return p.Revision == 3 && p.Content == "B.md one\n" })
		v.eventually("A and C conflict", func() bool { return len(v.m.Conflicts()) == 2 })
		for _, f := range []string{"A.md", "C.md"} {
			if p, _ := v.page(f); !strings.Contains(p.Content, "agent") {
				t.Errorf("%s reverted to %q", f, p.Content)
			}
		}
		for _, c := range v.m.Conflicts() {
			if kept, _ := v.file(c.Kept); kept != c.Path+" one\n" {
				t.Errorf("conflict copy of %s = %q", c.Path, kept)
			}
		}
	})
}

// A page the mirror never wrote to a folder is written there, never taken
// for deleted: a new folder, or one that holds none of its files any more
// (unmounted, swapped).
func TestNewFolderGetsEveryPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.write("One.md", "one")
		v.write("Two/Three.md", "three")
		v.start()
		v.eventually("written", func() bool { _, ok := v.file("Two/Three.md"); return ok })
		v.stop()
		os.RemoveAll(v.dir)
		os.Mkdir(v.dir, 0o755)
		v.start()
		for p, want := range map[string]string{"One.md": "one", "Two/Three.md": "three"} {
			if c, _ := v.file(p); c != want {
				t.Errorf("file %s = %q", p, c)
			}
			if _, ok := v.page(p); !ok {
				t.Errorf("page %s was deleted", p)
			}
		}
	})
}

// A plain mv in the folder is a page move: the store rewrites the moved
// page's relative links and writes them back to the file, which still holds
// the text the mirror synced, so no conflict copy is left (issue 23.5).
func TestFolderMoveWithRelativeLinksIsNoConflict(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.start()
		v.writeFile("Home.md", "# Home\n")
		v.writeFile("Ref/Target.md", "# Target\n\nBack [home](../Home.md).\n")
		v.writeFile("Guide.md", "# Guide\n\nSee [the target](Ref/Target.md).\n")
		v.eventually("files become pages", func() bool {
			_, a := v.page("Ref/Target.md")
			_, b := v.page("Guide.md")
			_, c := v.page("Home.md")
			return a && b && c
		})
		if err := os.MkdirAll(filepath.Join(v.dir, "Deep"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(v.dir, "Guide.md"), filepath.Join(v.dir, "Deep", "Guide.md")); err != nil {
			t.Fatal(err)
		}
		want := "# Guide\n\nSee [the target](../Ref/Target.md).\n"
		v.eventually("the move is a page move with its link rewritten", func() bool {
			_, old := v.page("Guide.md")
			p, ok := v.page("Deep/Guide.md")
			return !old && ok && p.Content == want
		})
		v.eventually("the rewritten page is in the file", func() bool { c, _ := v.file("Deep/Guide.md"); return c == want })
		// A whole folder moved: each page in it moves, links in and out follow.
		if err := os.MkdirAll(filepath.Join(v.dir, "Archive"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(v.dir, "Ref"), filepath.Join(v.dir, "Archive", "Ref")); err != nil {
			t.Fatal(err)
		}
		wantTarget := "# Target\n\nBack [home](../../Home.md).\n"
		wantGuide := "# Guide\n\nSee [the target](../Archive/Ref/Target.md).\n"
		v.eventually("the folder move reaches the store and comes back rewritten", func() bool {
			tf, _ := v.file("Archive/Ref/Target.md")
			gf, _ := v.file("Deep/Guide.md")
			tp, _ := v.page("Archive/Ref/Target.md")
			return tf == wantTarget && gf == wantGuide && tp.Content == wantTarget
		})
		if c := v.m.Conflicts(); len(c) != 0 {
			t.Errorf("a move in the folder left conflicts: %+v", c)
		}
		filepath.WalkDir(v.dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".conflict-") {
				t.Errorf("conflict copy left: %s", p)
			}
			return nil
		})
	})
}

// A store write replaces the file in one step: an editor or a watcher never
// finds the path missing, as it did while the old file was moved aside and
// the new one linked in (issue 23.7).
func TestStoreWritesNeverLeaveThePathMissing(t *testing.T) {
	v := newEnv(t, store.SQLite)
	v.start()
	v.write("Watched.md", "version 0")
	v.eventually("first version in the file", func() bool { c, _ := v.file("Watched.md"); return c == "version 0" })
	target := filepath.Join(v.dir, "Watched.md")
	stop := make(chan struct{})
	missing := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				missing <- n
				return
			default:
			}
			if _, err := os.Lstat(target); err != nil {
				n++
			}
		}
	}()
	for i := 1; i <= 40; i++ {
		want := fmt.Sprintf("version %d", i)
		v.write("Watched.md", want)
		v.eventually(want+" in the file", func() bool { c, _ := v.file("Watched.md"); return c == want })
	}
	close(stop)
	if n := <-missing; n > 0 {
		t.Errorf("the file was missing %d times while the store wrote it", n)
	}
	if c := v.m.Conflicts(); len(c) != 0 {
		t.Errorf("conflicts: %+v", c)
	}
}

// Files the mirror leaves alone are put in the event log with why, where the
// feed and the browser's "needs attention" list show them, as they show a
// conflict (issue 23.8).
func TestSkippedFilesAreEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.writeFile("Early/.draft.md", "hidden before the start")
		v.writeFile(".atrium/desks.md", "an export's records, there before the start")
		v.start()
		v.writeFile("what?.md", "a name a page cannot have")
		v.writeFile(".later.md", "hidden while running")
		v.writeFile("Big.md", strings.Repeat("x", 3<<20))
		v.writeFile(".git/config.md", "inside a hidden folder: none of anyone's business")
		// An export's records, written into the folder: the same.
		v.writeFile(".atrium/tasks.json", `{"format": "atrium-export/1"}`)
		v.writeFile(".atrium/notes.md", "a page-like name in the records' folder")
		events := func() map[string]string {
			recent, err := v.svc.Activity.Recent(v.ctx, 200)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, ev := range recent {
				if ev.Kind == pages.EventMirrorSkipped || ev.Kind == pages.EventMirrorConflict {
					out[ev.Subject] = ev.Kind
				}
			}
			return out
		}
		want := map[string]string{"Early/.draft.md": pages.EventMirrorSkipped, "what?.md": pages.EventMirrorSkipped, ".later.md": pages.EventMirrorSkipped, "Big.md": pages.EventMirrorSkipped}
		v.eventually("every skipped file is an event", func() bool { return len(events()) >= len(want) })
		if diff := cmp.Diff(want, events()); diff != "" {
			t.Errorf("mirror events (-want +got):\n%s", diff)
		}
		for _, p := range []string{".atrium/desks.md", ".atrium/notes.md", ".git/config.md"} {
			if _, ok := v.page(p); ok {
				t.Errorf("%s, in a hidden folder, became a page", p)
			}
		}
	})
}

// An editor that saves in place empties the file, then writes it: one
// descheduled in between (here, for four debounces) leaves the file empty
// past the debounce. The mirror waits for the write: the save is one
// revision with the whole text, not an empty page, nor, over the agent's
// newer revision, a conflict copy that takes the user's text away.
func TestAnInPlaceSaveIsReadWhole(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		v.start()
		v.writeFile("A.md", "one\n")
		v.eventually("the file becomes a page", func() bool { p, _ := v.page("A.md"); return p.Content == "one\n" })
		v.write("A.md", "one\ntwo, by the agent\n")
		v.eventually("the agent's edit in the file", func() bool { a, _ := v.file("A.md"); return strings.Contains(a, "agent") })

		f, err := os.OpenFile(filepath.Join(v.dir, "A.md"), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(4 * v.debnc)
		want := "one\ntwo, by the agent\nthree, by the user\n"
		if _, err := f.WriteString(want); err != nil {
			t.Fatal(err)
		}
		f.Close()
		v.eventually("the save is a revision", func() bool { p, _ := v.page("A.md"); return p.Revision == 3 })
		if p, _ := v.page("A.md"); p.Content != want {
			t.Errorf("page = %q, want %q", p.Content, want)
		}
		if c := v.m.Conflicts(); len(c) != 0 {
			t.Errorf("conflicts %+v", c)
		}
		time.Sleep(4 * v.debnc)
		if p, _ := v.page("A.md"); p.Revision != 3 {
			t.Errorf("revision %d after the save settled, want 3", p.Revision)
		}

		// A new file, made and then written the same way, is one revision.
		f, err = os.OpenFile(filepath.Join(v.dir, "B.md"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(4 * v.debnc)
		if _, err := f.WriteString("B, new\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
		v.eventually("the new file is a page", func() bool { p, _ := v.page("B.md"); return p.Content == "B, new\n" })
		if p, _ := v.page("B.md"); p.Revision != 1 {
			t.Errorf("the new file's page is at revision %d, want 1 (an empty page first?)", p.Revision)
		}
	})
}
