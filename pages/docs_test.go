package pages_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

const alpha = `---
title: Alpha
icon: 🚀
tags: [infra, db]
owner: dede # kept as written
---
# Alpha

Project details.
`

func TestWriteCreatesAndReadReturnsContentAndFrontmatter(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		r, err := v.svc.WritePage(v.ctx, pages.WriteRequest{Path: "Projects/Alpha.md", Content: alpha})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Created || !r.Changed || r.Page.Revision != 1 || !strings.HasPrefix(r.Page.UID, "pg_") {
			t.Fatalf("write = %+v", r)
		}
		got := v.read(t, "Projects/Alpha.md")
		if got.Content != alpha {
			t.Errorf("content = %q, want it as written", got.Content)
		}
		want := map[string]any{"title": "Alpha", "icon": "🚀", "tags": []any{"infra", "db"}, "owner": "dede"}
		if diff := cmp.Diff(want, got.Frontmatter); diff != "" {
			t.Errorf("frontmatter (-want +got):\n%s", diff)
		}
		p := got.Page
		if p.Title != "Alpha" || p.Icon != "🚀" || p.Access != atrium.AccessPrivate || !cmp.Equal(p.Tags, []string{"infra", "db"}) || p.UpdatedBy != "writer" {
			t.Errorf("page = %+v", p)
		}
		// Paths are found in any case, and normalized.
		if got := v.read(t, "./projects//alpha.md"); got.Page.Path != "Projects/Alpha.md" {
			t.Errorf("read by other spelling gave %s", got.Page.Path)
		}
	})
}

func TestReadMissingPageSaysWhere(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		_, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Projects/Nonexistent.md"})
		wantCode(t, err, atrium.ENotFound)
		if atrium.ErrorMessage(err) != "Page not found at path: Projects/Nonexistent.md" {
			t.Errorf("message = %q", atrium.ErrorMessage(err))
		}
	})
}

func TestTitleFallsBackToHeadingThenFileName(t *testing.T) {
	v := mustEnv(t, store.SQLite)
	if p := v.write(t, "A.md", "# From Heading\n\ntext").Page; p.Title != "From Heading" {
		t.Errorf("title = %q", p.Title)
	}
	if p := v.write(t, "Folder/From File.md", "no heading").Page; p.Title != "From File" {
		t.Errorf("title = %q", p.Title)
	}
}

func TestWriteNeverOverwritesSilently(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Notes.md", "one")
		// Without base_revision or overwrite: conflict, and nothing changes.
		_, err := v.svc.WritePage(v.ctx, pages.WriteRequest{Path: "Notes.md", Content: "two"})
		wantCode(t, err, atrium.EConflict)
		if d := atrium.ErrorDetails(err); d["current_revision"] != int64(1) {
			t.Errorf("details = %v", d)
		}
		// With the revision read: replaced.
		r, err := v.svc.WritePage(v.ctx, pages.WriteRequest{Path: "Notes.md", Content: "two", BaseRevision: 1})
		if err != nil || r.Page.Revision != 2 || r.Created {
			t.Fatalf("write with base: %+v, %v", r, err)
		}
		// A stale revision names both.
		_, err = v.svc.WritePage(v.ctx, pages.WriteRequest{Path: "Notes.md", Content: "three", BaseRevision: 1})
		wantCode(t, err, atrium.EConflict)
		if msg := atrium.ErrorMessage(err); !strings.Contains(msg, "revision 2") || !strings.Contains(msg, "revision 1") {
			t.Errorf("conflict message %q should name both revisions", msg)
		}
		if got := v.read(t, "Notes.md"); got.Content != "two" {
			t.Errorf("content after refused write = %q", got.Content)
		}
		// The same content again is no new revision.
		r, err = v.svc.WritePage(v.ctx, pages.WriteRequest{Path: "Notes.md", Content: "two", BaseRevision: 2})
		if err != nil || r.Changed || r.Page.Revision != 2 || r.Page.Content != "two" {
			t.Fatalf("identical write: %+v, %v", r, err)
		}
		// base_revision for a page that does not exist is a mistake worth telling.
		_, err = v.svc.WritePage(v.ctx, pages.WriteRequest{Path: "Other.md", Content: "x", BaseRevision: 3})
		wantCode(t, err, atrium.ENotFound)
	})
}

// Two writers from the same revision: exactly one wins, the other gets a
// conflict, and the page holds the winner's content.
func TestConcurrentWritersFromOneRevision(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Race.md", "base")
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				_, errs[i] = v.svc.WritePage(v.ctx, pages.WriteRequest{Path: "Race.md", Content: "writer " + string(rune('A'+i)), BaseRevision: 1})
			})
		}
		wg.Wait()
		won := ""
		for i, err := range errs {
			switch atrium.ErrorCode(err) {
			case "":
				if won != "" {
					t.Fatalf("two writers won: %s and %c", won, 'A'+i)
				}
				won = "writer " + string(rune('A'+i))
			case atrium.EConflict:
			default:
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		if won == "" {
			t.Fatal("no writer won")
		}
		if got := v.read(t, "Race.md"); got.Content != won || got.Page.Revision != 2 {
			t.Fatalf("page = %q rev %d, want %q rev 2", got.Content, got.Page.Revision, won)
		}
	})
}

func TestBadInputChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		cases := []struct {
			path, content, code string
		}{
			{"../etc/passwd.md", "x", atrium.EInvalid},
			{"/abs.md", "x", atrium.EInvalid},
			{"notes.txt", "x", atrium.EInvalid},
			{"a/\x01b.md", "x", atrium.EInvalid},
			{"a/.hidden.md", "x", atrium.EInvalid},
			{"a/b?.md", "x", atrium.EInvalid},
			{"Bad.md", "---\ntitle: [unclosed\n---\nbody", atrium.EInvalid},
			{"Bad.md", "---\naccess: secret\n---\nbody", atrium.EInvalid},
			{"Big.md", strings.Repeat("x", 3<<20), atrium.ETooLarge},
		}
		for _, c := range cases {
			_, err := v.svc.WritePage(v.ctx, pages.WriteRequest{Path: c.path, Content: c.content})
			wantCode(t, err, c.code)
			if atrium.ErrorMessage(err) == "" {
				t.Errorf("%s: empty message", c.path)
			}
		}
		res, err := v.svc.ListPages(v.ctx, pages.ListRequest{Depth: 10, IncludePrivate: true})
		if err != nil || len(res.Entries) != 0 {
			t.Fatalf("after refused writes: %+v, %v", res.Entries, err)
		}
	})
}

func TestReadersCannotWriteAndAnonymousSeePublicOnly(t *testing.T) {
	v := mustEnv(t, store.SQLite)
	v.write(t, "Private.md", "secret")
	v.write(t, "Public.md", "---\naccess: public\n---\nhello")
	_, err := v.svc.WritePage(v.anon, pages.WriteRequest{Path: "X.md", Content: "x"})
	wantCode(t, err, atrium.EUnauthenticated)
	_, err = v.svc.WritePage(v.withRole(t, "rita", atrium.RoleReader), pages.WriteRequest{Path: "X.md", Content: "x"})
	wantCode(t, err, atrium.EPermission)
	if _, err := v.svc.ReadPage(v.anon, pages.ReadRequest{Path: "Public.md"}); err != nil {
		t.Fatal(err)
	}
	_, err = v.svc.ReadPage(v.anon, pages.ReadRequest{Path: "Private.md"})
	wantCode(t, err, atrium.ENotFound)
	res, err := v.svc.ListPages(v.anon, pages.ListRequest{IncludePrivate: true})
	if err != nil || len(res.Entries) != 1 || res.Entries[0].Path != "Public.md" {
		t.Fatalf("anonymous listing = %+v, %v", res.Entries, err)
	}
	hits, err := v.svc.Search(v.anon, pages.SearchRequest{Query: "secret hello"})
	if err != nil || hits.Total != 1 || hits.Hits[0].Path != "Public.md" {
		t.Fatalf("anonymous search = %+v, %v", hits, err)
	}
}

func TestCreatePageDerivesPathAndFrontmatter(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		r, err := v.svc.CreatePage(v.ctx, pages.CreateRequest{Title: "Beta: the plan", ParentPath: "Projects", Content: "# Beta\n\nNew project...", Icon: "📦"})
		if err != nil {
			t.Fatal(err)
		}
		if r.Page.Path != "Projects/Beta- the plan.md" || r.Page.Title != "Beta: the plan" || r.Page.Icon != "📦" {
			t.Fatalf("created %+v", r.Page)
		}
		got := v.read(t, r.Page.Path)
		if got.Frontmatter["title"] != "Beta: the plan" || !strings.Contains(got.Content, "New project...") {
			t.Fatalf("content %q", got.Content)
		}
		_, err = v.svc.CreatePage(v.ctx, pages.CreateRequest{Title: "Beta: the plan", ParentPath: "Projects/_index.md"})
		wantCode(t, err, atrium.EConflict)
		_, err = v.svc.CreatePage(v.ctx, pages.CreateRequest{Title: "  "})
		wantCode(t, err, atrium.EInvalid)
	})
}

func TestListPagesDepthFoldersAndPrivacy(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		pub := "---\naccess: public\n---\n"
		v.write(t, "Welcome.md", pub+"# Welcome")
		v.write(t, "Projects/_index.md", pub+"# Projects")
		v.write(t, "Projects/Alpha.md", pub+"# Alpha")
		v.write(t, "Projects/Alpha/Spec.md", pub+"# Spec")
		v.write(t, "Archive/Old.md", "# Old")
		list := func(r pages.ListRequest) []string {
			t.Helper()
			res, err := v.svc.ListPages(v.ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range res.Entries {
				s := e.Path
				if e.HasChildren {
					s += " +"
				}
				out = append(out, s)
			}
			return out
		}
		if diff := cmp.Diff([]string{"Archive/ +", "Projects/_index.md +", "Welcome.md"}, list(pages.ListRequest{IncludePrivate: true})); diff != "" {
			t.Errorf("root depth 1 (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"Projects/_index.md +", "Projects/Alpha.md +", "Projects/Alpha/ +", "Projects/Alpha/Spec.md", "Welcome.md"}, list(pages.ListRequest{Depth: 3})); diff != "" {
			t.Errorf("root depth 3, public only (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"Projects/Alpha.md +", "Projects/Alpha/ +"}, list(pages.ListRequest{Path: "Projects", IncludePrivate: true})[1:]); diff != "" {
			t.Errorf("Projects (-want +got):\n%s", diff)
		}
		res, err := v.svc.ListPages(v.ctx, pages.ListRequest{})
		if err != nil || res.HiddenPrivate != 1 {
			t.Errorf("hidden private = %d, %v", res.HiddenPrivate, err)
		}
		_, err = v.svc.ListPages(v.ctx, pages.ListRequest{Path: "Nope"})
		wantCode(t, err, atrium.ENotFound)
		// Pagination visits everything once.
		var seen []string
		cursor := ""
		for {
			res, err := v.svc.ListPages(v.ctx, pages.ListRequest{Depth: 5, IncludePrivate: true, Limit: 2, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range res.Entries {
				seen = append(seen, e.Path)
			}
			if cursor = res.NextCursor; cursor == "" {
				break
			}
		}
		want := []string{"Archive/", "Archive/Old.md", "Projects/_index.md", "Projects/Alpha.md", "Projects/Alpha/", "Projects/Alpha/Spec.md", "Welcome.md"}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("paged listing (-want +got):\n%s", diff)
		}
	})
}

func TestTreeIsNestedAndPaginated(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		for _, p := range []string{"Projects/_index.md", "Projects/Alpha.md", "Projects/Alpha/Spec.md", "Welcome.md"} {
			v.write(t, p, "# "+p)
		}
		res, err := v.svc.Tree(v.ctx, pages.TreeRequest{IncludeMetadata: true})
		if err != nil {
			t.Fatal(err)
		}
		var show func(ns []*pages.TreeNode, indent string) string
		show = func(ns []*pages.TreeNode, indent string) string {
			var b strings.Builder
			for _, n := range ns {
				b.WriteString(indent + n.Path)
				if n.Page != nil {
					b.WriteString(" [" + n.Page.Title + "]")
				}
				b.WriteString("\n" + show(n.Children, indent+"  "))
			}
			return b.String()
		}
		want := "Projects/ [Projects/_index.md]\n  Projects/Alpha.md [Projects/Alpha.md]\n  Projects/Alpha/\n    Projects/Alpha/Spec.md [Projects/Alpha/Spec.md]\nWelcome.md [Welcome.md]\n"
		if got := show(res.Root, ""); got != want {
			t.Errorf("tree:\n%s\nwant:\n%s", got, want)
		}
		page1, err := v.svc.Tree(v.ctx, pages.TreeRequest{Limit: 3})
		if err != nil || page1.Pages != 3 || page1.NextCursor == "" {
			t.Fatalf("first window: %d pages, cursor %q, %v", page1.Pages, page1.NextCursor, err)
		}
		page2, err := v.svc.Tree(v.ctx, pages.TreeRequest{Limit: 3, Cursor: page1.NextCursor})
		if err != nil || page2.Pages != 1 || page2.NextCursor != "" || page2.Root[0].Path != "Welcome.md" {
			t.Fatalf("second window: %+v, %v", page2, err)
		}
	})
}

func TestDeletePageTakesAttachmentsAndLeavesLinksUnresolved(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Gone.md", "# Gone")
		v.write(t, "Stays.md", "see [[Gone]]")
		if _, err := v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Gone.md", FileName: "a.txt", Data: []byte("hello")}); err != nil {
			t.Fatal(err)
		}
		r, err := v.svc.DeletePage(v.ctx, "Gone.md")
		if err != nil || r.Attachments != 1 || r.Page.Path != "Gone.md" {
			t.Fatalf("delete = %+v, %v", r, err)
		}
		_, err = v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Gone.md"})
		wantCode(t, err, atrium.ENotFound)
		_, _, err = v.svc.Attachment(v.ctx, "assets/a.txt")
		wantCode(t, err, atrium.ENotFound)
		links, err := v.svc.Links(v.ctx, "Stays.md")
		if err != nil || len(links.Outgoing) != 1 || links.Outgoing[0].Resolved {
			t.Fatalf("links after delete = %+v, %v", links.Outgoing, err)
		}
		_, err = v.svc.DeletePage(v.ctx, "Gone.md")
		wantCode(t, err, atrium.ENotFound)
	})
}

// A link's target reads back as written, whether or not it is written as
// its key is (the store keeps such a target once).
func TestLinksReadBackAsWritten(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "note-a.md", "# A")
		v.write(t, "Src.md", "[[note-a]] and [[Note-A|A again]] and [c](sub/c.md) and [[note-a#top]]")
		links, err := v.svc.Links(v.ctx, "Src.md")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range links.Outgoing {
			got = append(got, fmt.Sprintf("%s→%s %v", l.Target, l.Key, l.Resolved))
		}
		want := []string{"note-a→note-a true", "Note-A→note-a true", "sub/c.md→sub/c false", "note-a→note-a true"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("outgoing links (-want +got):\n%s", diff)
		}
		in, err := v.svc.Links(v.ctx, "note-a.md")
		if err != nil || len(in.Incoming) != 3 {
			t.Fatalf("incoming = %+v, %v", in.Incoming, err)
		}
	})
}

func TestRevisionsAndRestore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "H.md", "one")
		v.write(t, "H.md", "two")
		v.write(t, "H.md", "three")
		revs, err := v.svc.Revisions(v.ctx, "H.md", "", 2)
		if err != nil || len(revs.Revisions) != 2 || revs.Revisions[0].Revision != 3 || revs.NextCursor == "" {
			t.Fatalf("revisions = %+v, %v", revs, err)
		}
		more, err := v.svc.Revisions(v.ctx, "H.md", revs.NextCursor, 2)
		if err != nil || len(more.Revisions) != 1 || more.Revisions[0].Revision != 1 || more.NextCursor != "" {
			t.Fatalf("more revisions = %+v, %v", more, err)
		}
		// Each revision reads as it was written: the newest from the page
		// itself, those it replaced from the text moved into their rows.
		for rev, want := range map[int64]string{1: "one", 2: "two", 3: "three"} {
			old, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "H.md", Revision: rev})
			if err != nil || old.Content != want || old.Page.Revision != rev {
				t.Fatalf("read revision %d = %+v, %v", rev, old, err)
			}
		}
		for _, r := range append(revs.Revisions, more.Revisions...) {
			if want := map[int64]int{1: 3, 2: 3, 3: 5}[r.Revision]; r.Size != want {
				t.Errorf("revision %d lists size %d, want %d", r.Revision, r.Size, want)
			}
		}
		_, err = v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "H.md", Revision: 9})
		wantCode(t, err, atrium.ENotFound)
		_, err = v.svc.RestoreRevision(v.ctx, "H.md", 1, 2)
		wantCode(t, err, atrium.EConflict)
		r, err := v.svc.RestoreRevision(v.ctx, "H.md", 1, 3)
		if err != nil || r.Page.Revision != 4 || v.read(t, "H.md").Content != "one" {
			t.Fatalf("restore = %+v, %v", r, err)
		}
		if three, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "H.md", Revision: 3}); err != nil || three.Content != "three" {
			t.Fatalf("revision 3 once it is no longer the newest = %+v, %v", three, err)
		}
	})
}

func TestAttachments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Projects/Alpha.md", "# Alpha")
		png := []byte("\x89PNG\r\n\x1a\n....")
		r, err := v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Projects/Alpha.md", FileName: "image.png", Data: png})
		if err != nil {
			t.Fatal(err)
		}
		if r.RelativePath != "./assets/image.png" || r.MarkdownSyntax != "![image.png](./assets/image.png)" || r.Attachment.Path != "Projects/assets/image.png" || r.Attachment.MIMEType != "image/png" {
			t.Fatalf("attach = %+v", r)
		}
		again, err := v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Projects/Alpha.md", FileName: "image.png", Data: png})
		if err != nil || !again.Existing || again.RelativePath != r.RelativePath {
			t.Fatalf("same file again = %+v, %v", again, err)
		}
		other, err := v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Projects/Alpha.md", FileName: "image.png", Data: []byte("other")})
		if err != nil || other.RelativePath != "./assets/image-2.png" {
			t.Fatalf("another file, same name = %+v, %v", other, err)
		}
		att, data, err := v.svc.Attachment(v.ctx, "Projects/assets/image.png")
		if err != nil || string(data) != string(png) || att.Size != int64(len(png)) {
			t.Fatalf("download = %+v %q %v", att, data, err)
		}
		for _, bad := range []pages.AttachRequest{
			{PagePath: "Projects/Alpha.md", FileName: "", Data: png},
			{PagePath: "Projects/Alpha.md", FileName: "note.md", Data: png},
			{PagePath: "Projects/Alpha.md", FileName: ".hidden", Data: png},
		} {
			_, err := v.svc.AddAttachment(v.ctx, bad)
			wantCode(t, err, atrium.EInvalid)
		}
		_, err = v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Missing.md", FileName: "x.txt", Data: png})
		wantCode(t, err, atrium.ENotFound)
		v.svc.MaxAttachmentBytes = 10
		_, err = v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Projects/Alpha.md", FileName: "big.bin", Data: make([]byte, 11)})
		wantCode(t, err, atrium.ETooLarge)
	})
}

// K.md/Child.md beside K.md: the mirror would need a file and a folder of one
// name, and REST could not address the child. Every way of making such a
// path is refused, saying why; nothing is written.
func TestNoPageInAFolderNamedLikeAPage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "K.md", "# K")
		v.write(t, "Other.md", "# Other")
		_, err := v.svc.WritePage(v.ctx, pages.WriteRequest{Path: "K.md/Child.md", Content: "# Child"})
		wantCode(t, err, atrium.EInvalid)
		if !strings.Contains(atrium.ErrorMessage(err), `folder "K.md" ends in .md`) {
			t.Errorf("message %q does not say what is wrong", atrium.ErrorMessage(err))
		}
		_, err = v.svc.WritePage(v.ctx, pages.WriteRequest{Path: "x/New.MD/Child.md", Content: "# Child"})
		wantCode(t, err, atrium.EInvalid)
		_, err = v.svc.MovePage(v.ctx, "Other.md", "K.md/Other.md")
		wantCode(t, err, atrium.EInvalid)
		_, err = v.svc.CreatePage(v.ctx, pages.CreateRequest{Title: "Child", ParentPath: "K.md/"})
		wantCode(t, err, atrium.EInvalid)
		res, err := v.svc.Import(v.ctx, slices.Values([]pages.File{{Path: "K.md/Imported.md", Content: "# I"}}), pages.ImportOptions{})
		if err != nil || len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Error, "ends in .md") {
			t.Fatalf("import = %+v, %v", res, err)
		}
		list, err := v.svc.ListPages(v.ctx, pages.ListRequest{Depth: 5, IncludePrivate: true})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, p := range list.Entries {
			paths = append(paths, p.Path)
		}
		if diff := cmp.Diff([]string{"K.md", "Other.md"}, paths); diff != "" {
			t.Fatalf("pages after refused writes (-want +got):\n%s", diff)
		}
		// A page's children go in the folder of its name without .md.
		if _, err := v.svc.CreatePage(v.ctx, pages.CreateRequest{Title: "Child", ParentPath: "K.md"}); err != nil {
			t.Fatalf("a child of K.md in folder K: %v", err)
		}
	})
}

// A page made public later keeps its private past: a reader outside the
// workspace sees only the revisions that were public, and never who wrote
// them.
func TestAnonymousReadersSeeOnlyPublicRevisions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Plan.md", "# Plan\n\nthe private draft\n")
		v.write(t, "Plan.md", "---\naccess: public\n---\n# Plan\n\nthe public plan\n")
		v.write(t, "Plan.md", "---\naccess: public\n---\n# Plan\n\nthe public plan, v2\n")

		_, err := v.svc.ReadPage(v.anon, pages.ReadRequest{Path: "Plan.md", Revision: 1})
		wantCode(t, err, atrium.ENotFound)
		if strings.Contains(atrium.ErrorMessage(err), "draft") {
			t.Fatalf("the error shows the private revision: %v", err)
		}
		old, err := v.svc.ReadPage(v.anon, pages.ReadRequest{Path: "Plan.md", Revision: 2})
		if err != nil || !strings.Contains(old.Content, "the public plan") || old.Page.UpdatedBy != "" || old.Page.CreatedBy != "" {
			t.Fatalf("anonymous read of public revision 2 = %+v, %v", old, err)
		}

		// Listed one at a time, so that the cursor walks past the hidden one.
		var got []int64
		cursor := ""
		for range 5 {
			revs, err := v.svc.Revisions(v.anon, "Plan.md", cursor, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range revs.Revisions {
				if r.Author != "" {
					t.Errorf("revision %d shows its author %q to an anonymous reader", r.Revision, r.Author)
				}
				got = append(got, r.Revision)
			}
			if cursor = revs.NextCursor; cursor == "" {
				break
			}
		}
		if diff := cmp.Diff([]int64{3, 2}, got); diff != "" {
			t.Errorf("anonymous revision list (-want +got):\n%s", diff)
		}

		all, err := v.svc.Revisions(v.ctx, "Plan.md", "", 10)
		if err != nil || len(all.Revisions) != 3 || all.Revisions[2].Author != "writer" {
			t.Fatalf("a member's revision list = %+v, %v", all.Revisions, err)
		}
		if r, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Plan.md", Revision: 1}); err != nil || !strings.Contains(r.Content, "draft") {
			t.Fatalf("a member's read of revision 1 = %+v, %v", r, err)
		}
	})
}

// An import cuts its batches by text as well as by count: big pages do not
// come two thousand to a transaction. Every page still goes in, once.
func TestImportBatchesByBytes(t *testing.T) {
	v := mustEnv(t, store.SQLite)
	var files []pages.File
	for i := range 40 {
		files = append(files, pages.File{Path: fmt.Sprintf("Big/P%02d.md", i), Content: fmt.Sprintf("# P%02d\n\n%s zanzibar\n", i, strings.Repeat("word ", 200))})
	}
	var progress []int
	res, err := v.svc.Import(v.ctx, slices.Values(files), pages.ImportOptions{BatchBytes: 3000, Progress: func(done int) { progress = append(progress, done) }})
	if err != nil || res.Created != 40 || len(res.Failed) != 0 {
		t.Fatalf("import = %+v, %v", res, err)
	}
	// ~1 KB a page: three to a batch, so about thirteen batches.
	if len(progress) < 10 || progress[len(progress)-1] != 40 {
		t.Errorf("progress after each batch: %v", progress)
	}
	found, err := v.svc.Search(v.ctx, pages.SearchRequest{Query: "zanzibar", Limit: 50})
	if err != nil || found.Total != 40 {
		t.Errorf("search after the import: %d results, %v", found.Total, err)
	}
}

// An import into a large workspace writes bigger batches, with the heap
// they need; the workspace's size counts its private pages.
func TestImportBatchesGrowWithTheWorkspace(t *testing.T) {
	small, smallHeap := pages.ImportOptionsFor(pages.LargeImport - 1)
	large, largeHeap := pages.ImportOptionsFor(pages.LargeImport)
	if small.BatchSize != 2000 || small.BatchBytes != 6<<20 || smallHeap != 224<<20 {
		t.Errorf("below %d pages: %+v, heap %d MiB; want the defaults, 224 MiB", pages.LargeImport, small, smallHeap>>20)
	}
	if large.BatchSize <= small.BatchSize || large.BatchBytes <= small.BatchBytes {
		t.Errorf("from %d pages: %+v, no bigger than %+v", pages.LargeImport, large, small)
	}
	// The heap grows with the batch's text, by at least as much.
	if largeHeap*int64(small.BatchBytes) < smallHeap*int64(large.BatchBytes) {
		t.Errorf("heap %d MiB for %d MB batches against %d MiB for %d MB", largeHeap>>20, large.BatchBytes>>20, smallHeap>>20, small.BatchBytes>>20)
	}

	v := mustEnv(t, store.SQLite)
	files := []pages.File{{Path: "A.md", Content: "# A\n"}, {Path: "B.md", Content: "---\naccess: public\n---\n# B\n"}}
	if _, err := v.svc.Import(v.ctx, slices.Values(files), large); err != nil {
		t.Fatal(err)
	}
	if n, err := v.svc.PageCount(v.ctx); err != nil || n != 2 {
		t.Errorf("PageCount = %d, %v; want 2, the private page too", n, err)
	}
	if _, err := v.svc.PageCount(v.withRole(t, "rita", atrium.RoleReader)); atrium.ErrorCode(err) != atrium.EPermission {
		t.Errorf("a reader's PageCount: %v; want permission_denied", err)
	}
}
