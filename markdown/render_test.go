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

// A bare line break is the one piece of raw HTML a page keeps (tables need
// it); with anything in it, it goes like the rest.
func TestRenderKeepsBareLineBreaks(t *testing.T) {
	body := "| a | b |\n|---|---|\n| `one.`<br />`two` | x<br>y<BR/>z |\n\n" +
		"p<br onmouseover=\"window.pwned=1\">q<br style=x>r <br\n/>s\n"
	out, err := markdown.Render(body, func(markdown.Link) markdown.Target { return markdown.Target{} })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<code>one.</code><br><code>two</code>", "x<br>y<br>z", "p<!-- raw HTML omitted -->q<!-- raw HTML omitted -->r <br>s"} {
		if !strings.Contains(out, want) {
			t.Errorf("the HTML lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "pwned") || strings.Contains(out, "style") {
		t.Errorf("an attribute came through:\n%s", out)
	}
}
