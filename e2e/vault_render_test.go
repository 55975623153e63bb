package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// mkdocsSite is a small documentation site laid out as mkdocs-material's
// docs/ is: relative links inside admonitions, content tabs and comments.
func mkdocsSite(ext, index string) map[string]string {
	return map[string]string{
		"docs/index.md":            "# Home\n",
		"docs/setup/extensions.md": "# Extensions\n\n## Admonition\n",
		"docs/reference/blocks.md": "# Blocks\n\n" +
			"!!! note \"Configuration\"\n\n    Enable [the extension](" + ext + "#admonition) first.\n\n" +
			"=== \"Material\"\n\n    Read [extensions](" + ext + ") and go [home](" + index + ").\n\n" +
			"=== \"Code\"\n\n    ``` md\n    [kept](../setup/extensions.md)\n    ```\n\n" +
			"<!-- [Extensions](" + ext + ") are listed there too -->\n",
	}
}

// Issue 23: a move keeps the links inside an mkdocs site's admonitions,
// content tabs and comments right, whichever side moves, and changes no
// other byte of the files (the export is the site, with only those
// destinations changed).
func TestMkDocsMoveRewritesLinksInBlocks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := newCLIDB(t, e)
		site := t.TempDir()
		writeFiles(t, site, mkdocsSite("../setup/extensions.md", "../index.md"))
		parseSummary(t, mustRun(t, db, "import", site)).want(t, "pages", "3 created")

		incoming := db.call(t, "get_page_links", "path=docs/setup/extensions.md")["incoming"].([]any)
		if len(incoming) != 3 {
			t.Errorf("backlinks of docs/setup/extensions.md: %d, want 3 (admonition, tab, comment): %v", len(incoming), incoming)
		}
		moved := db.call(t, "move_page", "source_path=docs/setup/extensions.md", "destination_path=docs/setup/markdown/extensions.md")
		if moved["links_rewritten"] != float64(3) {
			t.Errorf("move_page = %v, want 3 links rewritten", moved)
		}
		db.call(t, "move_page", "source_path=docs/reference/blocks.md", "destination_path=docs/reference/syntax/blocks.md")

		want := mkdocsSite("../../setup/markdown/extensions.md", "../../index.md")
		want["docs/setup/markdown/extensions.md"] = want["docs/setup/extensions.md"]
		want["docs/reference/syntax/blocks.md"] = want["docs/reference/blocks.md"]
		delete(want, "docs/setup/extensions.md")
		delete(want, "docs/reference/blocks.md")
		out := t.TempDir()
		mustRun(t, db, "export", out)
		if diff := cmp.Diff(want, pagesOf(readTree(t, out))); diff != "" {
			t.Errorf("the site after both moves (-want +got):\n%s", diff)
		}
	})
}

// Issue 23.9: the served page shows ![[Note#Section]] as that section,
// inline and marked, and ![[Note#^block]] as that block, through the real
// binary.
func TestObsidianEmbedsRender(t *testing.T) {
	t.Parallel()
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	for p, c := range map[string]string{
		"Plugins/Canvas.md": "Canvas lays cards on a board.\n\n## Add cards from web pages\n\nPaste a link. ^web-cards\n\n## Other\n\nNot embedded.\n",
		"Home.md":           "# Home\n\n![[Canvas#Add cards from web pages]]\n\n![[Canvas#^web-cards]]\n\n![[Nowhere#Part]]\n",
	} {
		if res := callTool(t, cs, "write_page", map[string]any{"path": p, "content": c}); res.IsError {
			t.Fatalf("write %s: %+v", p, res.Content)
		}
	}
	req, err := http.NewRequest("GET", srv.URL+"/pages/Home.md", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.AdminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	body := string(b)
	if res.StatusCode != 200 {
		t.Fatalf("GET /pages/Home.md: %d\n%s", res.StatusCode, body)
	}
	for _, want := range []string{
		`<div class="embed"><p class="embed-title"><a class="wikilink" href="/pages/Plugins/Canvas.md#add-cards-from-web-pages">Canvas &gt; Add cards from web pages</a></p>`,
		"<h2>Add cards from web pages</h2>",
		`href="/pages/Plugins/Canvas.md#^web-cards"`,
		"<p>Paste a link.</p>",
		`<p class="embed-note">No page is called “Nowhere” yet.</p>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "Not embedded.") || strings.Contains(body, "Canvas lays cards") {
		t.Errorf("the embed shows more than its section:\n%s", body)
	}
}

// An embedded section is another page's text: a quote of this page is
// highlighted in this page's own text even when the embed above it holds
// the same words, and text selected inside the embed offers no comment on
// this page (comments on it belong on its own page).
func TestBrowserEmbedsAreNotThePagesText(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "2025-11-25")
	agent := agentSession(t, srv, "claude")
	mustTool(t, cs, "write_page", map[string]any{"path": "Other.md", "content": "# Other\n\n## Part\n\nShared words here, in the other page.\n"})
	mustTool(t, cs, "write_page", map[string]any{"path": "Host.md", "content": "# Host\n\n![[Other#Part]]\n\nShared words here, in the host.\n"})
	res := mustTool(t, agent, "create_annotation", map[string]any{"doc_path": "Host.md", "quote": map[string]any{"exact": "Shared words here"}, "content": "About the host", "status": "submitted"})
	id := res["annotation"].(map[string]any)["id"].(string)

	b := newBrowserSized(t, 1400, 900)
	b.signIn(srv, "/pages/Host.md", "#hl-"+id)
	if n := read(b, "embed", chromedp.Text(chromedp.CSS(".markdown .embed p:not(.embed-title)"))); n != "Shared words here, in the other page." {
		t.Fatalf("the embed reads %q", n)
	}
	if in := read(b, "highlight place", chromedp.Evaluate[bool](`document.querySelector("#hl-`+id+`").closest(".embed") !== null`)); in {
		t.Fatal("the quote is highlighted in the embedded page's text")
	}
	b.do("select in the embed", selectText("in the other page"))
	b.still()
	if shown := read(b, "quote preview", chromedp.Evaluate[bool](`!document.querySelector("#new-comment .quote-preview").hidden`)); shown {
		t.Fatal("text selected in an embed became a quote of this page")
	}
}
