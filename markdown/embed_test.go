package markdown_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/markdown"
)

// vault is a set of pages (path → body) that options resolve wikilinks and
// embeds against, as the browser does from the store: a wikilink's target
// is a page's path without ".md", or its file name.
type vault map[string]string

func (v vault) find(target string) (string, bool) {
	for p := range v {
		name := strings.TrimSuffix(p, ".md")
		if strings.EqualFold(target, name) || strings.EqualFold(target, name[strings.LastIndexByte(name, '/')+1:]) {
			return p, true
		}
	}
	return "", false
}

// options are how the page at from renders, its embeds read from v.
func (v vault) options(from string) markdown.Options {
	return markdown.Options{
		Path: from,
		Resolve: func(l markdown.Link) markdown.Target {
			if p, ok := v.find(l.Target); ok {
				return markdown.Target{Href: "/pages/" + p, Resolved: true}
			}
			return markdown.Target{}
		},
		Embed: func(l markdown.Link) (markdown.Embedded, bool) {
			p, ok := v.find(l.Target)
			if l.Target == "" {
				p, ok = from, from != ""
			}
			if !ok {
				return markdown.Embedded{}, false
			}
			return markdown.Embedded{Path: p, Body: v[p], Options: v.options(p)}, true
		},
	}
}

func (v vault) render(t *testing.T, path string) string {
	t.Helper()
	out, err := markdown.RenderWith(v[path], v.options(path))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wantHTML(t *testing.T, out string, want, bad []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the HTML lacks %q:\n%s", w, out)
		}
	}
	for _, b := range bad {
		if strings.Contains(out, b) {
			t.Errorf("the HTML has %q:\n%s", b, out)
		}
	}
}

// Issue 23.9: ![[Note#Section]] shows the section inline — from its heading
// to the next heading of the same or a higher level — in a marked block that
// links to it; ![[Note]] the whole note and ![[Note#^id]] the block with
// that id. What the embedded page links to resolves from that page.
func TestRenderEmbedsSections(t *testing.T) {
	v := vault{
		"Guides/Setup.md": "# Setup\n\nIntro.\n\n## Install\n\nRun **make**; see [[Notes]] and [the ref](sub/ref.md#top).\n\n" +
			"### Details\n\nDeep.\n\nA block to embed. ^blk\n\n## Use\n\nAfter.\n",
		"Notes.md":      "# Notes\n",
		"Host/Page.md":  "# Host\n\n![[Setup#Install]]\n\nBetween.\n\n- ![[Setup#^blk]]\n\n![[Setup]]\n\n![[Setup#Details|the details]]\n\n## Install\n\nThe host's own.\n",
		"Host/Other.md": "Text ![[Setup#Use]] inline.\n",
	}
	out := v.render(t, "Host/Page.md")
	sections := strings.Split(out, `<div class="embed"`)
	if len(sections) != 5 {
		t.Fatalf("%d embeds, want 4:\n%s", len(sections)-1, out)
	}
	// The section: its heading (without an id: the host's own "Install"
	// keeps #install), its text and its subsections, and no more.
	wantHTML(t, sections[1], []string{
		`<p class="embed-title"><a class="wikilink" href="/pages/Guides/Setup.md#install">Setup &gt; Install</a></p>`,
		"<h2>Install</h2>",
		"<strong>make</strong>",
		`<a class="wikilink" href="/pages/Notes.md">Notes</a>`,
		`<a href="../Guides/sub/ref.md#top">the ref</a>`, // relative to the host page, which the browser shows
		"<h3>Details</h3>", "Deep.",
	}, []string{"Intro.", "After.", `id="`, "^blk"})
	if !strings.HasSuffix(sections[0], "<h1 id=\"host\">Host</h1>\n") {
		t.Errorf("the embed is not a block of its own (the paragraph holding it is gone):\n%s", out)
	}
	wantHTML(t, sections[2], []string{`href="/pages/Guides/Setup.md#^blk"`, "<p>A block to embed.</p>"}, []string{"Deep.", "Install"})
	wantHTML(t, sections[3], []string{`href="/pages/Guides/Setup.md">Setup</a>`, "Intro.", "Deep.", "After."}, []string{"<h1 id="})
	wantHTML(t, sections[4], []string{`>the details</a>`, "Deep.", "A block to embed."}, []string{"After.", "Run "})
	wantHTML(t, out, []string{`<h2 id="install">Install</h2>`, "<li><div class=\"embed\""}, []string{"<p><div", "</div></p>"})

	// Within a paragraph, the embed still shows.
	wantHTML(t, v.render(t, "Host/Other.md"), []string{"Text ", `<div class="embed"`, "After.", " inline."}, nil)
}

// A missing page, section or block shows as an unresolved embed that says
// so; a resolved embed that is no page (a PDF) stays a link to it.
func TestRenderUnresolvedEmbeds(t *testing.T) {
	v := vault{
		"Setup.md": "# Setup\n\n## Install\n\nx\n",
		"Host.md":  "![[Nowhere#Install]]\n\n![[Setup#Uninstall]]\n\n![[Setup#^nope]]\n\n![[manual.pdf]]\n",
	}
	opts := v.options("Host.md")
	resolve := opts.Resolve
	opts.Resolve = func(l markdown.Link) markdown.Target {
		if l.Target == "manual.pdf" {
			return markdown.Target{Href: "/files/manual.pdf", Resolved: true}
		}
		return resolve(l)
	}
	out, err := markdown.RenderWith(v["Host.md"], opts)
	if err != nil {
		t.Fatal(err)
	}
	wantHTML(t, out, []string{
		`<div class="embed embed-unresolved"><p class="embed-title"><a class="wikilink unresolved" title="no page is called this yet">Nowhere &gt; Install</a></p><p class="embed-note">No page is called “Nowhere” yet.</p></div>`,
		`<a class="wikilink" href="/pages/Setup.md#uninstall">Setup &gt; Uninstall</a></p><p class="embed-note">Setup has no section “Uninstall”.</p>`,
		`<p class="embed-note">Setup has no block ^nope.</p>`,
		`<a class="wikilink embed-link" href="/files/manual.pdf">manual.pdf</a>`,
	}, nil)
}

// A page embedding itself, two pages embedding each other, or a chain
// deeper than EmbedDepth end: the loop shows where it would start again,
// the chain as a link past its last level. A page may embed another
// section of itself.
func TestRenderEmbedLoopsAndDepth(t *testing.T) {
	v := vault{
		"Self.md":   "# Self\n\n## One\n\nFirst.\n\n![[Self#Two]]\n\n## Two\n\nSecond.\n\n![[Self]]\n",
		"A.md":      "# A\n\nIn A.\n\n![[B]]\n",
		"B.md":      "# B\n\nIn B.\n\n![[A]]\n",
		"Level1.md": "L1\n\n![[Level2]]\n",
		"Level2.md": "L2\n\n![[Level3]]\n",
		"Level3.md": "L3\n\n![[Level4]]\n",
		"Level4.md": "L4\n\n![[Level5]]\n",
		"Level5.md": "L5\n",
	}
	self := v.render(t, "Self.md")
	wantHTML(t, self, []string{"<p>Second.</p>", "Not shown: it would embed “Self” in itself."}, nil)
	if n := strings.Count(self, "Second."); n != 2 {
		t.Errorf("Self#Two shows %d times, want 2 (its own, its embed):\n%s", n, self)
	}
	a := v.render(t, "A.md")
	wantHTML(t, a, []string{"In B.", "Not shown: it would embed “A” in itself."}, nil)
	if n := strings.Count(a, "In A."); n != 1 {
		t.Errorf("A's text shows %d times:\n%s", n, a)
	}
	chain := v.render(t, "Level1.md")
	if markdown.EmbedDepth != 3 {
		t.Fatalf("EmbedDepth = %d; the chain below expects 3", markdown.EmbedDepth)
	}
	wantHTML(t, chain, []string{"L2", "L3", "L4", `<a class="wikilink embed-link" href="/pages/Level5.md">Level5</a>`}, []string{"L5"})
}

// An embed is rendered by the page's rules (raw HTML dropped, script links
// emptied), cut at EmbedBytes with a link to the rest, and a page shows at
// most EmbedLimit embeds inline.
func TestRenderEmbedLimits(t *testing.T) {
	big := "# Big\n\n" + strings.Repeat("A line of text in a long page.\n", markdown.EmbedBytes/20) + "\nThe end.\n"
	var many strings.Builder
	for i := range markdown.EmbedLimit + 5 {
		fmt.Fprintf(&many, "![[Small]] %d\n\n", i)
	}
	v := vault{
		"Evil.md":  "# Evil\n\n<script>window.pwned=1</script>\n\n[x](javascript:window.pwned=1) <img src=x onerror=\"window.pwned=1\">\n",
		"Big.md":   big,
		"Small.md": "Small.\n",
		"Host.md":  "![[Evil]]\n\n![[Big]]\n",
		"Many.md":  many.String(),
	}
	out := v.render(t, "Host.md")
	wantHTML(t, out, []string{`<p class="embed-note"><a href="/pages/Big.md">The rest is on the page.</a></p>`}, []string{"<script", "onerror", "javascript:", "The end."})
	if len(out) > 2*markdown.EmbedBytes {
		t.Errorf("the HTML is %d bytes", len(out))
	}
	m := v.render(t, "Many.md")
	if n := strings.Count(m, `<div class="embed"`); n != markdown.EmbedLimit {
		t.Errorf("%d embeds shown, want %d", n, markdown.EmbedLimit)
	}
	if n := strings.Count(m, `class="wikilink embed-link"`); n != 5 {
		t.Errorf("%d embeds past the limit shown as links, want 5", n)
	}
}

// A wikilink or an embed in an attribute (an image's alt text) is its text
// there, escaped: no markup inside a tag.
func TestRenderWikilinksInAttributesAreText(t *testing.T) {
	v := vault{"Y.md": "# Y\n\n## S\n\n\"onerror=alert(1) text\n", "H.md": "![alt [[Y]] and ![[Y#S]] \"q\"](i.png) after [[Y]]\n"}
	out := v.render(t, "H.md")
	want := `<p><img src="i.png" alt="alt Y and Y &gt; S &quot;q&quot;"> after <a class="wikilink" href="/pages/Y.md">Y</a></p>`
	if !strings.Contains(out, want) {
		t.Errorf("the HTML lacks %s:\n%s", want, out)
	}
}
