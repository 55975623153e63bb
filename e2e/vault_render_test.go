package e2e

import (
	"testing"

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
