package e2e

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// obsidianVault is a small vault laid out as Obsidian keeps one: images in
// Attachments/, notes nested in folders, links by file name with aliases,
// headings, block references and embeds, and Markdown links to images.
var obsidianVault = map[string]string{
	"Home.md":                          "# Home\n\nStart with [[Canvas]] or [[Canvas#Add cards from web pages|web cards]].\n\n![[logo.png]]\n",
	"Plugins/Canvas.md":                "Canvas lays cards on a board.\n\n![[canvas-board.png|300]]\n\n## Add cards from web pages\n\nPaste a link. ^web-cards\n",
	"Plugins/Graph view.md":            "See [[Canvas]] for boards and ![[Canvas#^web-cards]].\n\n![graph](../Attachments/graph.png)\n",
	"Guides/Getting started/Basics.md": "---\naliases: [Start]\n---\nOpen [[canvas]], embed ![[Canvas]], and read [[Plugins/Canvas]].\n\n![[Attachments/Sub/diagram.svg]]\n",
	"Guides/Tips.md":                   "Use [[Canvas.md]] and [[Graph view]].\n",
}

var obsidianFiles = map[string]string{
	"Attachments/logo.png":         pngBytes,
	"Attachments/canvas-board.png": pngBytes + "board",
	"Attachments/graph.png":        pngBytes + "graph",
	"Attachments/Sub/diagram.svg":  "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
	"Plugins/canvas.canvas":        "{\"nodes\":[]}",
}

// An Obsidian vault goes in whole: attachments wherever it keeps them, every
// link resolved, the export byte for byte the vault, and a move rewrites
// every form of link to the moved page.
func TestObsidianVaultRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := newCLIDB(t, e)
		vault := t.TempDir()
		writeFiles(t, vault, obsidianVault)
		writeFiles(t, vault, obsidianFiles)
		want := readTree(t, vault)

		sum := parseSummary(t, mustRun(t, db, "import", vault))
		sum.want(t, "pages", "5 created")
		sum.want(t, "attachments", "5 added")
		sum.want(t, "skipped", "0 files")

		for p := range obsidianVault {
			links := db.call(t, "get_page_links", "path="+p)
			for _, l := range links["outgoing"].([]any) {
				if m, _ := asMap(l); m["resolved"] != true {
					t.Errorf("%s: link %v unresolved", p, m)
				}
			}
		}
		got := map[string]string{}
		for _, l := range db.call(t, "get_page_links", "path=Home.md")["outgoing"].([]any) {
			m, _ := asMap(l)
			got[m["target"].(string)] = m["path"].(string)
		}
		if diff := cmp.Diff(map[string]string{"Canvas": "Plugins/Canvas.md", "logo.png": "Attachments/logo.png"}, got); diff != "" {
			t.Errorf("Home.md links resolve to (-want +got):\n%s", diff)
		}

		out := t.TempDir()
		mustRun(t, db, "export", out)
		if diff := cmp.Diff(want, pagesOf(readTree(t, out))); diff != "" {
			t.Fatalf("export differs from the vault (-vault +export):\n%s", diff)
		}

		moved := db.call(t, "move_page", "source_path=Plugins/Canvas.md", "destination_path=Views/Canvas board.md")
		if moved["links_rewritten"] != float64(8) || moved["pages_changed"] != float64(4) || moved["attachments_moved"] != float64(0) {
			t.Errorf("move_page = %v, want 8 links in 4 pages, no attachment moved", moved)
		}
		after := map[string]string{
			"Home.md":                          "# Home\n\nStart with [[Canvas board]] or [[Canvas board#Add cards from web pages|web cards]].\n\n![[logo.png]]\n",
			"Plugins/Graph view.md":            "See [[Canvas board]] for boards and ![[Canvas board#^web-cards]].\n\n![graph](../Attachments/graph.png)\n",
			"Guides/Getting started/Basics.md": "---\naliases: [Start]\n---\nOpen [[Canvas board]], embed ![[Canvas board]], and read [[Views/Canvas board]].\n\n![[Attachments/Sub/diagram.svg]]\n",
			"Guides/Tips.md":                   "Use [[Canvas board.md]] and [[Graph view]].\n",
			"Views/Canvas board.md":            obsidianVault["Plugins/Canvas.md"],
		}
		for p, content := range after {
			if diff := cmp.Diff(content, db.call(t, "read_page", "path="+p)["content"]); diff != "" {
				t.Errorf("%s after the move (-want +got):\n%s", p, diff)
			}
		}
		incoming := db.call(t, "get_page_links", "path=Views/Canvas board.md")["incoming"].([]any)
		if len(incoming) != 8 {
			t.Errorf("incoming links after the move: %d, want 8: %v", len(incoming), incoming)
		}
		// The files stayed where the vault keeps them.
		out2 := t.TempDir()
		mustRun(t, db, "export", out2)
		tree := readTree(t, out2)
		for p, data := range obsidianFiles {
			if tree[p] != data {
				t.Errorf("%s after the move = %q", p, tree[p])
			}
		}
	})
}

// Other Markdown flavours go in when named, as .md pages.
func TestImportOtherExtensions(t *testing.T) {
	t.Parallel()
	db := newCLIDB(t, store.SQLite)
	vault := t.TempDir()
	writeFiles(t, vault, map[string]string{"docs/intro.mdx": "# Intro\n\n<Note>hi</Note>\n", "docs/guide.markdown": "# Guide\n"})
	sum := parseSummary(t, mustRun(t, db, "import", vault))
	sum.wantList(t, "skipped", "docs/guide.markdown: a Markdown page of another flavour (.markdown)", "docs/intro.mdx: a Markdown page of another flavour (.mdx)")
	sum = parseSummary(t, mustRun(t, db, "import", "--ext", ".mdx,markdown", vault))
	sum.want(t, "pages", "2 created")
	sum.wantList(t, "as .md", "docs/guide.markdown: stored as docs/guide.md", "docs/intro.mdx: stored as docs/intro.md")
	if c := db.call(t, "read_page", "path=docs/intro.md")["content"]; c != "# Intro\n\n<Note>hi</Note>\n" {
		t.Errorf("docs/intro.md = %q", c)
	}
}
