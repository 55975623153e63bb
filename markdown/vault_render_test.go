package markdown_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/markdown"
)

// Issue 23.9: what Obsidian and MkDocs vaults write renders as those tools
// show it: embeds, block ids, callouts, admonitions and content tabs.
func TestRenderVaultSyntax(t *testing.T) {
	body := strings.Join([]string{
		"# Vault",
		"",
		"![[diagram.png]]",
		"",
		"![[Setup#Install]]",
		"",
		"A paragraph to link to. ^para-1",
		"",
		"> [!warning] Back up your data",
		"> Before you **upgrade**.",
		"",
		"> [!note]- Folded",
		"> Hidden until opened.",
		"",
		"> [!tip]",
		"> No title.",
		"",
		"> A plain quote.",
		"",
		"!!! note \"Read this\"",
		"    The body of the note,",
		"    on two lines.",
		"",
		"??? danger",
		"    Folded danger.",
		"",
		"=== \"First tab\"",
		"",
		"    In the first tab.",
		"",
		"=== \"Second tab\"",
		"",
		"    In the second tab.",
		"",
		"After.",
		"",
	}, "\n")
	out, err := markdown.Render(body, func(l markdown.Link) markdown.Target {
		return markdown.Target{Href: "/pages/" + l.Target, Resolved: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<img class="embed" src="/pages/diagram.png" alt="diagram.png"`,
		`class="wikilink embed-link" href="/pages/Setup#install"`,
		`id="^para-1"`,
		`<div class="callout callout-warning" data-callout="warning"><p class="callout-title">Back up your data</p>`,
		`Before you <strong>upgrade</strong>.`,
		`<details class="callout callout-note" data-callout="note"><summary class="callout-title">Folded</summary>`,
		`<p class="callout-title">Tip</p>`,
		"<blockquote>\n<p>A plain quote.</p>",
		`<div class="admonition callout callout-note" data-callout="note"><p class="callout-title">Read this</p>`,
		"<p>The body of the note,\non two lines.</p>",
		`<details class="admonition callout callout-danger" data-callout="danger"><summary class="callout-title">Danger</summary>`,
		`<div class="tabbed"><p class="tab-label">First tab</p>`,
		`<p>In the second tab.</p>`,
		"<p>After.</p>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the HTML lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"<pre><code>The body", "[!warning]", "^para-1</p>", "!!! note", "=== "} {
		if strings.Contains(out, bad) {
			t.Errorf("the HTML still has %q:\n%s", bad, out)
		}
	}
}
