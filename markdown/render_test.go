package markdown_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/markdown"
)

func TestRenderMakesWikilinksAndRunsNoHTML(t *testing.T) {
	body := "# Title\n\nSee [[Alpha|the plan]] and [[Missing]] and [[Alpha#Storage]].\n\n" +
		"<script>window.pwned=1</script>\n\n<img src=x onerror=\"window.pwned=1\">\n\n" +
		"[click](javascript:window.pwned=1) `[[Not a link]]`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
	out, err := markdown.Render(body, func(l markdown.Link) markdown.Target {
		if l.Target == "Alpha" {
			return markdown.Target{Href: "/pages/Alpha.md", Resolved: true}
		}
		return markdown.Target{}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<a class="wikilink" href="/pages/Alpha.md">the plan</a>`,
		`<a class="wikilink unresolved" title="no page is called this yet">Missing</a>`,
		`<a class="wikilink" href="/pages/Alpha.md#storage">Alpha &gt; Storage</a>`,
		`<code>[[Not a link]]</code>`,
		`<h1 id="title">Title</h1>`,
		`<table>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in\n%s", want, out)
		}
	}
	for _, bad := range []string{"<script", "onerror", "javascript:"} {
		if strings.Contains(out, bad) {
			t.Errorf("the HTML keeps %q:\n%s", bad, out)
		}
	}
}
