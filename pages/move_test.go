package pages_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

func (v *env) body(t testing.TB, path string) string {
	t.Helper()
	return v.read(t, path).Content
}

// unresolved lists a page's links that resolve to nothing.
func (v *env) unresolved(t testing.TB, path string) []string {
	t.Helper()
	l, err := v.svc.Links(v.ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range l.Outgoing {
		if !o.Resolved {
			out = append(out, o.Target)
		}
	}
	return out
}

func TestMoveRewritesEveryLinkToThePage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Projects/Alpha.md", "---\ntitle: Project Alpha\n---\nSee [Beta](Beta.md) and [home](../Home.md) and ![d](./assets/d.png).\n")
		if _, err := v.svc.AddAttachment(v.ctx, pages.AttachRequest{PagePath: "Projects/Alpha.md", FileName: "d.png", Data: []byte("png")}); err != nil {
			t.Fatal(err)
		}
		v.write(t, "Projects/Beta.md", "Back to [[Alpha]], [[Projects/Alpha|the project]], [[Project Alpha]] and [Alpha](Alpha.md#goals).\n")
		v.write(t, "Home.md", "Start at [[Projects/Alpha.md#Goals]] or [alpha](Projects/Alpha.md).\n`[[Alpha]]` in code stays.\n")
		v.write(t, "Unrelated.md", "Nothing here.")

		r, err := v.svc.MovePage(v.ctx, "Projects/Alpha.md", "Archive/2026/Alpha Old.md")
		if err != nil {
			t.Fatal(err)
		}
		if r.NewPath != "Archive/2026/Alpha Old.md" || r.PagesChanged != 3 || r.Attachments != 1 {
			t.Fatalf("move = %+v", r)
		}
		want := map[string]string{
			"Archive/2026/Alpha Old.md": "---\ntitle: Project Alpha\n---\nSee [Beta](../../Projects/Beta.md) and [home](../../Home.md) and ![d](./assets/d.png).\n",
			"Projects/Beta.md":          "Back to [[Alpha Old]], [[Archive/2026/Alpha Old|the project]], [[Project Alpha]] and [Alpha](../Archive/2026/Alpha%20Old.md#goals).\n",
			"Home.md":                   "Start at [[Archive/2026/Alpha Old.md#Goals]] or [alpha](Archive/2026/Alpha%20Old.md).\n`[[Alpha]]` in code stays.\n",
		}
		for path, body := range want {
			if diff := cmp.Diff(body, v.body(t, path)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
			if u := v.unresolved(t, path); len(u) != 0 {
				t.Errorf("%s has unresolved links after the move: %v", path, u)
			}
		}
		if v.read(t, "Unrelated.md").Page.Revision != 1 {
			t.Error("a page without links to the moved one was rewritten")
		}
		if _, _, err := v.svc.Attachment(v.ctx, "Archive/2026/assets/d.png"); err != nil {
			t.Errorf("attachment did not move with its page: %v", err)
		}
		links, err := v.svc.Links(v.ctx, "Archive/2026/Alpha Old.md")
		if err != nil || len(links.Incoming) != 6 {
			t.Errorf("incoming after move = %+v, %v", links.Incoming, err)
		}
		_, err = v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Projects/Alpha.md"})
		wantCode(t, err, atrium.ENotFound)
	})
}

func TestMoveFolderKeepsLinksInsideAndOutside(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Old/_index.md", "# Old\n\n[[Old/Sub/Deep]] and [deep](Sub/Deep.md)")
		v.write(t, "Old/Sub/Deep.md", "up: [index](../_index.md), out: [x](../../Outside.md)")
		v.write(t, "Outside.md", "into [[Old/Sub/Deep]] and [deep](Old/Sub/Deep.md)")
		r, err := v.svc.MovePage(v.ctx, "Old", "New/Place")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]pages.MovedPage{{From: "Old/_index.md", To: "New/Place/_index.md"}, {From: "Old/Sub/Deep.md", To: "New/Place/Sub/Deep.md"}}, r.Moved); diff != "" {
			t.Errorf("moved (-want +got):\n%s", diff)
		}
		for path, body := range map[string]string{
			"New/Place/_index.md":   "# Old\n\n[[New/Place/Sub/Deep]] and [deep](Sub/Deep.md)",
			"New/Place/Sub/Deep.md": "up: [index](../_index.md), out: [x](../../../Outside.md)",
			"Outside.md":            "into [[New/Place/Sub/Deep]] and [deep](New/Place/Sub/Deep.md)",
		} {
			if diff := cmp.Diff(body, v.body(t, path)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
			if u := v.unresolved(t, path); len(u) != 0 {
				t.Errorf("%s: unresolved %v", path, u)
			}
		}
		res, err := v.svc.ListPages(v.ctx, pages.ListRequest{Depth: 5, IncludePrivate: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Entries {
			if e.Path == "Old/" {
				t.Error("the old folder is still listed")
			}
		}
		_, err = v.svc.MovePage(v.ctx, "New", "New/Place/Inner")
		wantCode(t, err, atrium.EInvalid)
	})
}

func TestMoveRefusesTakenPathsAndChangesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "A.md", "links [[B]]")
		v.write(t, "B.md", "b")
		_, err := v.svc.MovePage(v.ctx, "B.md", "A.md")
		wantCode(t, err, atrium.EConflict)
		_, err = v.svc.MovePage(v.ctx, "Missing.md", "C.md")
		wantCode(t, err, atrium.ENotFound)
		_, err = v.svc.MovePage(v.ctx, "B.md", "../C.md")
		wantCode(t, err, atrium.EInvalid)
		if v.body(t, "A.md") != "links [[B]]" || v.read(t, "B.md").Page.Revision != 1 {
			t.Fatal("a refused move changed something")
		}
		// Promotion to a folder page, and a move into a folder by name.
		r, err := v.svc.MovePage(v.ctx, "B.md", "B/_index.md")
		if err != nil || r.NewPath != "B/_index.md" {
			t.Fatalf("promote: %+v %v", r, err)
		}
		r, err = v.svc.MovePage(v.ctx, "A.md", "Shelf/")
		if err != nil || r.NewPath != "Shelf/A.md" {
			t.Fatalf("into folder: %+v %v", r, err)
		}
		if u := v.unresolved(t, "Shelf/A.md"); len(u) != 0 {
			t.Errorf("unresolved after promotion: %v (body %q)", u, v.body(t, "Shelf/A.md"))
		}
	})
}

// Links by file name follow a move in every form Obsidian writes them, short
// where the short form still means the page alone; links by an explicit
// title stay as they are.
func TestMoveRewritesLinksByFileName(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Plugins/Canvas.md", "Canvas is a plugin.\n\n## Add cards from web pages\n\nPaste a URL. ^cards\n")
		v.write(t, "Plugins/Graph.md", "---\ntitle: Graph view\n---\nThe graph.\n")
		v.write(t, "Other/Graph.md", "Another graph.\n")
		v.write(t, "Home.md", "Try [[Canvas]] and [[Canvas#Add cards from web pages]].\n")
		v.write(t, "Guide/Start.md", "See [[Canvas|the canvas]], ![[Canvas#^cards]], [[canvas.md]] and [[Plugins/Canvas]].\n")
		v.write(t, "Guide/More.md", "Also [[Canvas]]; the [[Graph view]] and [[Plugins/Graph|graph]].\n")
		v.write(t, "Guide/Last.md", "Finally ![[Canvas]].\n")

		r, err := v.svc.MovePage(v.ctx, "Plugins/Canvas.md", "Views/Canvas board.md")
		if err != nil {
			t.Fatal(err)
		}
		if r.PagesChanged != 4 || r.LinksRewritten != 8 {
			t.Errorf("move = %+v, want 4 pages and 8 links rewritten", r)
		}
		// Graph.md moves beside nothing of its name, but Other/Graph.md sorts
		// first: its short name would mean the other page, so links by file
		// name take its path. Its title link stays.
		if _, err := v.svc.MovePage(v.ctx, "Plugins/Graph.md", "Views/Graph.md"); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			"Home.md":        "Try [[Canvas board]] and [[Canvas board#Add cards from web pages]].\n",
			"Guide/Start.md": "See [[Canvas board|the canvas]], ![[Canvas board#^cards]], [[Canvas board.md]] and [[Views/Canvas board]].\n",
			"Guide/More.md":  "Also [[Canvas board]]; the [[Graph view]] and [[Views/Graph|graph]].\n",
			"Guide/Last.md":  "Finally ![[Canvas board]].\n",
		}
		for path, body := range want {
			if diff := cmp.Diff(body, v.body(t, path)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", path, diff)
			}
			if u := v.unresolved(t, path); len(u) != 0 {
				t.Errorf("%s has unresolved links after the move: %v", path, u)
			}
		}
		links, err := v.svc.Links(v.ctx, "Views/Canvas board.md")
		if err != nil || len(links.Incoming) != 8 {
			t.Errorf("incoming after move = %+v, %v", links.Incoming, err)
		}

		// A short link whose new name another page nearer the root holds.
		v.write(t, "Board.md", "The root board.\n")
		v.write(t, "Deep/Notes/Card.md", "A card.\n")
		v.write(t, "Uses.md", "[[Card]] and [[Card#Top|top]]\n")
		if _, err := v.svc.MovePage(v.ctx, "Deep/Notes/Card.md", "Deep/Board.md"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("[[Deep/Board]] and [[Deep/Board#Top|top]]\n", v.body(t, "Uses.md")); diff != "" {
			t.Errorf("Uses.md (-want +got):\n%s", diff)
		}
	})
}

// A link reference definition whose only use the parser reads as code (an
// MkDocs admonition's indented body) or HTML (a comment), or which sits in
// such a body itself, is indexed and rewritten on a move like any link
// (issue 23.6: 3 of 17 links broke in mkdocs-material's docs).
func TestMoveRewritesDefinitionsInAdmonitionsAndComments(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "setup/Blog.md", "# Blog\n")
		v.write(t, "reference/Guide.md", "# Guide\n\n"+
			"!!! tip \"Using the blog\"\n\n    See the [blog plugin][blog].\n\n"+
			"<!-- [Blog][blog-hidden] is not listed yet -->\n\n"+
			"!!! note\n\n    Read [the post][post].\n\n    [post]: ../setup/Blog.md#posts\n\n"+
			"  [blog]: ../setup/Blog.md\n"+
			"  [blog-hidden]: ../setup/Blog.md\n")
		l, err := v.svc.Links(v.ctx, "setup/Blog.md")
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Incoming) != 3 {
			t.Errorf("backlinks of setup/Blog.md = %+v, want the 3 definitions", l.Incoming)
		}
		if _, err := v.svc.MovePage(v.ctx, "setup/Blog.md", "plugins/blog/Index.md"); err != nil {
			t.Fatal(err)
		}
		want := "# Guide\n\n" +
			"!!! tip \"Using the blog\"\n\n    See the [blog plugin][blog].\n\n" +
			"<!-- [Blog][blog-hidden] is not listed yet -->\n\n" +
			"!!! note\n\n    Read [the post][post].\n\n    [post]: ../plugins/blog/Index.md#posts\n\n" +
			"  [blog]: ../plugins/blog/Index.md\n" +
			"  [blog-hidden]: ../plugins/blog/Index.md\n"
		if diff := cmp.Diff(want, v.body(t, "reference/Guide.md")); diff != "" {
			t.Errorf("reference/Guide.md after the move (-want +got):\n%s", diff)
		}
		if u := v.unresolved(t, "reference/Guide.md"); len(u) != 0 {
			t.Errorf("unresolved links after the move: %v", u)
		}
	})
}

// Inline links inside MkDocs blocks (an admonition's indented body, a
// content tab's) and inside HTML comments are links: indexed as backlinks,
// and rewritten on a move both ways — when the page they lead to moves, and
// when the page holding them moves (issue 23, after item 6: before, those
// bodies were code to the parser and their links dangled). Only the
// destinations change; every other byte stays, and code stays code.
func TestMoveRewritesInlineLinksInAdmonitionsAndTabs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "index.md", "# Home\n")
		v.write(t, "setup/extensions.md", "# Extensions\n\n## Admonition\n")
		page := func(ext, home string) string {
			return "# Admonitions\n\n" +
				"!!! note \"Configuration\"\n\n    See [the extensions](" + ext + "#admonition) first.\n\n" +
				"=== \"Material\"\n\n    Read [extensions](" + ext + ") and [home](" + home + ").\n\n" +
				"    ??? tip\n\t    Nested: ![](" + ext + " \"t\")\n\n" +
				"=== \"Code\"\n\n    ```\n    [code](../setup/extensions.md)\n    ```\n\n" +
				"<!-- Hidden: [extensions](" + ext + ") -->\n"
		}
		v.write(t, "reference/admonitions.md", page("../setup/extensions.md", "../index.md"))
		l, err := v.svc.Links(v.ctx, "setup/extensions.md")
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Incoming) != 4 {
			t.Errorf("backlinks of setup/extensions.md = %+v, want the 4 links outside code", l.Incoming)
		}

		// The target moves.
		r, err := v.svc.MovePage(v.ctx, "setup/extensions.md", "setup/markdown/extensions.md")
		if err != nil {
			t.Fatal(err)
		}
		if r.LinksRewritten != 4 {
			t.Errorf("move rewrote %d links, want 4", r.LinksRewritten)
		}
		if diff := cmp.Diff(page("../setup/markdown/extensions.md", "../index.md"), v.body(t, "reference/admonitions.md")); diff != "" {
			t.Errorf("reference/admonitions.md after its target moved (-want +got):\n%s", diff)
		}
		if u := v.unresolved(t, "reference/admonitions.md"); len(u) != 0 {
			t.Errorf("unresolved links after the move: %v", u)
		}

		// The page itself moves: its relative links follow.
		if _, err := v.svc.MovePage(v.ctx, "reference/admonitions.md", "reference/blocks/admonitions.md"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(page("../../setup/markdown/extensions.md", "../../index.md"), v.body(t, "reference/blocks/admonitions.md")); diff != "" {
			t.Errorf("the moved page (-want +got):\n%s", diff)
		}
		if u := v.unresolved(t, "reference/blocks/admonitions.md"); len(u) != 0 {
			t.Errorf("unresolved links after the page moved: %v", u)
		}
		if l, err := v.svc.Links(v.ctx, "index.md"); err != nil || len(l.Incoming) != 1 {
			t.Errorf("backlinks of index.md = %+v, %v", l, err)
		}
	})
}
