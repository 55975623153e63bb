package markdown_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/markdown"
)

// link is a Link as a test reads it: offsets shown as the text they cover.
type link struct {
	Kind    string
	Target  string
	Heading string
	Alias   string
	Embed   bool
	Line    int
	Whole   string // body[Start:End]
	Written string // body[TargetStart:TargetEnd]
}

func links(tb testing.TB, body string) []link {
	tb.Helper()
	var out []link
	for _, l := range markdown.Parse(body).Links {
		out = append(out, link{l.Kind, l.Target, l.Heading, l.Alias, l.Embed, l.Line, body[l.Start:l.End], body[l.TargetStart:l.TargetEnd]})
	}
	return out
}

func wiki(target, heading, alias string, line int, whole, written string) link {
	return link{markdown.KindWiki, target, heading, alias, strings.HasPrefix(whole, "!"), line, whole, written}
}

func md(target, heading, alias string, line int, whole, written string) link {
	return link{markdown.KindMarkdown, target, heading, alias, strings.HasPrefix(whole, "!"), line, whole, written}
}

func TestWikilinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []link
	}{
		{"title", "See [[Alpha]] now.", []link{wiki("Alpha", "", "", 1, "[[Alpha]]", "Alpha")}},
		{"path and alias", "[[Projects/Alpha|the alpha]]", []link{wiki("Projects/Alpha", "", "the alpha", 1, "[[Projects/Alpha|the alpha]]", "Projects/Alpha")}},
		{"heading", "[[Alpha#Design]]", []link{wiki("Alpha", "Design", "", 1, "[[Alpha#Design]]", "Alpha")}},
		{"heading and alias", "[[Alpha.md#Design > Storage|see]]", []link{wiki("Alpha.md", "Design > Storage", "see", 1, "[[Alpha.md#Design > Storage|see]]", "Alpha.md")}},
		{"own heading", "[[#Local part]]", []link{wiki("", "Local part", "", 1, "[[#Local part]]", "")}},
		{"embed", "![[diagram.png]]", []link{wiki("diagram.png", "", "", 1, "![[diagram.png]]", "diagram.png")}},
		{"embed with alias", "x ![[Alpha#Intro|intro]]", []link{wiki("Alpha", "Intro", "intro", 1, "![[Alpha#Intro|intro]]", "Alpha")}},
		{"spaces trimmed", "[[ Alpha.md | spaced ]]", []link{wiki("Alpha.md", "", "spaced", 1, "[[ Alpha.md | spaced ]]", "Alpha.md")}},
		{"escaped", `\[[Alpha]]`, nil},
		{"escaped backslash", `\\[[Alpha]]`, []link{wiki("Alpha", "", "", 1, "[[Alpha]]", "Alpha")}},
		{"escaped bang is no embed", `\![[Alpha]]`, []link{wiki("Alpha", "", "", 1, "[[Alpha]]", "Alpha")}},
		{"table pipe", "| a | [[Alpha\\|A]] |\n|---|---|", []link{wiki("Alpha", "", "A", 1, `[[Alpha\|A]]`, "Alpha")}},
		{"code span", "Use `[[Alpha]]` or ``x [[Beta]] ``.", nil},
		{"fenced code", "```\n[[Alpha]]\n```\n~~~md [[Info]]\n[[Beta]]\n~~~\n", nil},
		{"indented code", "Text\n\n    [[Alpha]]\n", nil},
		{"HTML block", "<div>\n[[Alpha]]\n</div>\n\n<!--\n[[Beta]]\n-->\n", nil},
		{"inline HTML keeps text", "<span>[[Alpha]]</span>", []link{wiki("Alpha", "", "", 1, "[[Alpha]]", "Alpha")}},
		{"not links", "[[]] [[ ]] [[ | x]] [[a\nb]] [[a]b]] [[a", nil},
		{"triple brackets", "[[[Alpha]]]", []link{wiki("Alpha", "", "", 1, "[[Alpha]]", "Alpha")}},
		{"lines", "a [[X]] b [[Y|y]]\n\n- [[Z]]\n> [[W]]", []link{
			wiki("X", "", "", 1, "[[X]]", "X"),
			wiki("Y", "", "y", 1, "[[Y|y]]", "Y"),
			wiki("Z", "", "", 3, "[[Z]]", "Z"),
			wiki("W", "", "", 4, "[[W]]", "W"),
		}},
		{"CRLF", "x\r\n\r\n[[A]]\r\n", []link{wiki("A", "", "", 3, "[[A]]", "A")}},
		{"in heading", "# About [[Alpha|A]]", []link{wiki("Alpha", "", "A", 1, "[[Alpha|A]]", "Alpha")}},
		{"emoji", "[[🚀 Launch]]", []link{wiki("🚀 Launch", "", "", 1, "[[🚀 Launch]]", "🚀 Launch")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, links(t, tt.body)); diff != "" {
				t.Errorf("links of %q (-want +got):\n%s", tt.body, diff)
			}
		})
	}
}

func TestMarkdownLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []link
	}{
		{"inline", "See [Beta](Beta.md).", []link{md("Beta.md", "", "Beta", 1, "[Beta](Beta.md)", "Beta.md")}},
		{"title", `[B](../B.md "The title")`, []link{md("../B.md", "", "B", 1, `[B](../B.md "The title")`, "../B.md")}},
		{"title in parentheses", "[B](B.md (t))", []link{md("B.md", "", "B", 1, "[B](B.md (t))", "B.md")}},
		{"angle brackets", "[C](<Sub Folder/C.md> 'x')", []link{md("Sub Folder/C.md", "", "C", 1, "[C](<Sub Folder/C.md> 'x')", "Sub Folder/C.md")}},
		{"escapes and fragment", "[C *d*](Sub%20Folder/C.md#Some%20Part)", []link{md("Sub Folder/C.md", "Some Part", "C d", 1, "[C *d*](Sub%20Folder/C.md#Some%20Part)", "Sub%20Folder/C.md")}},
		{"backslash escapes", `[a](b\(c\).md)`, []link{md("b(c).md", "", "a", 1, `[a](b\(c\).md)`, `b\(c\).md`)}},
		{"balanced parentheses", "[a](b(c).md)", []link{md("b(c).md", "", "a", 1, "[a](b(c).md)", "b(c).md")}},
		{"image", "![A diagram](./assets/d.png \"d\")", []link{md("./assets/d.png", "", "A diagram", 1, `![A diagram](./assets/d.png "d")`, "./assets/d.png")}},
		{"image in link", "[![logo](logo.png)](Home.md)", []link{
			md("Home.md", "", "logo", 1, "[![logo](logo.png)](Home.md)", "Home.md"),
			md("logo.png", "", "logo", 1, "![logo](logo.png)", "logo.png"),
		}},
		{"brackets and code in text", "[a [b] `]` \\] c](d.md)", []link{md("d.md", "", "a [b] ] ] c", 1, "[a [b] `]` \\] c](d.md)", "d.md")}},
		{"absolute path kept", "[x](/x.md)", []link{md("/x.md", "", "x", 1, "[x](/x.md)", "/x.md")}},
		{"URLs and fragments ignored", "[x](https://example.com/a.md) [m](mailto:a@b.c) [h](//host/x.md) [f](#frag) [e]() <https://auto.link> [C](C:/x)", nil},
		{"code ignored", "`[a](b.md)`\n\n```\n[c](d.md)\n```", nil},
		{"reference styles", "[text][Ref] and [ref][] and [ref].\n\n[ref]: Gamma.md \"t\"\n[ref]: Ignored.md\n", []link{
			md("Gamma.md", "", "text", 1, "[text][Ref]", "Gamma.md"),
			md("Gamma.md", "", "ref", 1, "[ref][]", "Gamma.md"),
			md("Gamma.md", "", "ref", 1, "[ref]", "Gamma.md"),
			md("Ignored.md", "", "ref", 4, "[ref]: Ignored.md", "Ignored.md"), // unused, but a link to a page all the same
		}},
		// Every definition counts, used or not, wherever a renderer may read
		// it: MkDocs reads an admonition's indented body as Markdown, and a
		// commented-out definition still names a page.
		// An admonition's body is Markdown, as MkDocs reads it: a reference
		// there is a link like one at the top level.
		{"definition used only inside an admonition", "!!! note\n\n    See the [guide][g].\n\n  [g]: ../Guide.md\n", []link{
			md("../Guide.md", "", "guide", 3, "[guide][g]", "../Guide.md"),
		}},
		{"definition inside an admonition", "!!! tip \"Tip\"\n\n    Read [it][x].\n\n    [x]: Other.md#part\n\n=== \"Tab\"\n\n    !!! note\n\n        [y]: <Sub Dir/Y.md>\n", []link{
			md("Other.md", "part", "it", 3, "[it][x]", "Other.md"),
			md("Sub Dir/Y.md", "", "y", 11, "[y]: <Sub Dir/Y.md>", "Sub Dir/Y.md"),
		}},
		{"definition in an HTML comment", "Text.\n\n<!--\n[c]: Hidden.md\n-->\n\n<!-- [d]: D.md -->\n", []link{
			md("Hidden.md", "", "c", 4, "[c]: Hidden.md", "Hidden.md"),
			md("D.md", "", "d", 7, "[d]: D.md", "D.md"),
		}},
		// Issue 23, after item 6: inline links in those bodies are links too
		// (indexed, and rewritten on a move), however deep the blocks nest.
		{"inline links in admonitions and tabs", "# Page\n\n!!! note \"Setup\"\n\n    See [the guide](../Guide.md#setup) and [[Wiki]].\n\n" +
			"=== \"Tab\"\n\n    Open [the tab](<Tab Page.md>).\n\n    ???+ tip\n        ![shot](img/shot.png \"t\")\n        and [deep](\n        deep.md)\n\n" +
			"  - In a list:\n\n    !!! info\n\n        [listed](listed.md)\n", []link{
			md("../Guide.md", "setup", "the guide", 5, "[the guide](../Guide.md#setup)", "../Guide.md"),
			wiki("Wiki", "", "", 5, "[[Wiki]]", "Wiki"),
			md("Tab Page.md", "", "the tab", 9, "[the tab](<Tab Page.md>)", "Tab Page.md"),
			md("img/shot.png", "", "shot", 12, "![shot](img/shot.png \"t\")", "img/shot.png"),
			md("deep.md", "", "deep", 13, "[deep](\n        deep.md)", "deep.md"),
			md("listed.md", "", "listed", 20, "[listed](listed.md)", "listed.md"),
		}},
		{"tab body with tabs for indentation", "=== \"A\"\n\n\t[a](a.md)\n", []link{
			md("a.md", "", "a", 3, "[a](a.md)", "a.md"),
		}},
		{"inline links in HTML comments", "Text <!-- see [old](Old.md) --> on.\n\n<!--\nMoved: [multi](<Multi Line.md#part> \"t\") and [[Wiki]]\n-->\n\n<!-- [glued](Glued.md)-->\n", []link{
			md("Old.md", "", "old", 1, "[old](Old.md)", "Old.md"),
			md("Multi Line.md", "part", "multi", 4, "[multi](<Multi Line.md#part> \"t\")", "Multi Line.md"),
			md("Glued.md", "", "glued", 7, "[glued](Glued.md)", "Glued.md"),
		}},
		{"not an admonition", "Para.\n!!! note\n\n    [code](code.md)\n\n!!!note\n\n    [code](code2.md)\n", nil},
		{"code stays code", "!!! example\n\n    ```\n    [e]: Example.md\n    ```\n\n```\n[f]: F.md\n```\n\nPara.\n\n    [g]: G.md\n\n<div>\n[h]: H.md\n</div>\n", nil},
		{"reference in angle brackets", "![pic][p]\n\n[p]:\n  <assets/a b.png#x>\n", []link{md("assets/a b.png", "x", "pic", 1, "![pic][p]", "assets/a b.png")}},
		{"unknown reference", "[a][nope] [nope]", nil},
		{"block quote across lines", "> quote [a](\n> b.md\n> \"t\")", []link{md("b.md", "", "a", 1, "[a](\n> b.md\n> \"t\")", "b.md")}},
		{"list item", "- one\n- two [B](B.md)\n  [C](C.md)", []link{
			md("B.md", "", "B", 2, "[B](B.md)", "B.md"),
			md("C.md", "", "C", 3, "[C](C.md)", "C.md"),
		}},
		{"in heading", "## See [Beta](Beta.md)", []link{md("Beta.md", "", "Beta", 1, "[Beta](Beta.md)", "Beta.md")}},
		{"wikilink-like destinations", "[x](<[[a]]>) [y](https://h/[[b]] \"[[c]]\")\n\n[r]: [[d]]\n", []link{
			md("[[a]]", "", "x", 1, "[x](<[[a]]>)", "[[a]]"),
			md("[[d]]", "", "r", 3, "[r]: [[d]]", "[[d]]"),
		}},
		{"wikilink in link text", "[see [[A|a]]](b.md)", []link{
			md("b.md", "", "see a", 1, "[see [[A|a]]](b.md)", "b.md"),
			wiki("A", "", "a", 1, "[[A|a]]", "A"),
		}},
		{"mixed with wikilink", "[[A]] [b](B.md) [[C|c]]", []link{
			wiki("A", "", "", 1, "[[A]]", "A"),
			md("B.md", "", "b", 1, "[b](B.md)", "B.md"),
			wiki("C", "", "c", 1, "[[C|c]]", "C"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, links(t, tt.body)); diff != "" {
				t.Errorf("links of %q (-want +got):\n%s", tt.body, diff)
			}
		})
	}
}

// TestRenameRewritesTargets moves Projects/Alpha.md to Archive/Alpha.md the
// way a move_page would: every link that reaches it gets a new target, and
// nothing else in the page changes.
func TestRenameRewritesTargets(t *testing.T) {
	t.Parallel()
	const from, oldPath, newPath = "Projects/Beta.md", "Projects/Alpha.md", "Archive/Alpha.md"
	body := "# Beta\n\n" +
		"By title [[Alpha]], by path [[Projects/Alpha#Design|design]], embedded ![[Alpha]].\n" +
		"Relative [the alpha](Alpha.md), [again](./Alpha.md#Storage \"t\") and <not a link> [x](<Alpha.md>).\n" +
		"Unrelated [[Gamma]] and [g](Gamma.md) and `[[Alpha]]`.\n" +
		"Reference [one][a] and [two][a].\n\n" +
		"```\n[[Alpha]] [a](Alpha.md)\n```\n\n" +
		"[a]: ../Projects/Alpha.md\n"
	want := "# Beta\n\n" +
		"By title [[Archive/Alpha]], by path [[Archive/Alpha#Design|design]], embedded ![[Archive/Alpha]].\n" +
		"Relative [the alpha](../Archive/Alpha.md), [again](../Archive/Alpha.md#Storage \"t\") and <not a link> [x](<../Archive/Alpha.md>).\n" +
		"Unrelated [[Gamma]] and [g](Gamma.md) and `[[Alpha]]`.\n" +
		"Reference [one][a] and [two][a].\n\n" +
		"```\n[[Alpha]] [a](Alpha.md)\n```\n\n" +
		"[a]: ../Archive/Alpha.md\n"

	var edits []markdown.Edit
	for _, l := range markdown.Parse(body).Links {
		switch {
		case l.Kind == markdown.KindWiki && (l.Target == "Alpha" || l.Target == "Projects/Alpha"):
			edits = append(edits, markdown.Edit{Start: l.TargetStart, End: l.TargetEnd, Text: "Archive/Alpha"})
		case l.Kind == markdown.KindMarkdown:
			if p, ok := markdown.ResolveMarkdown(from, body[l.TargetStart:l.TargetEnd]); ok && p == oldPath {
				edits = append(edits, markdown.Edit{Start: l.TargetStart, End: l.TargetEnd, Text: markdown.RelativeLink(from, newPath)})
			}
		}
	}
	got, err := markdown.Rewrite(body, edits)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("rewritten page (-want +got):\n%s", diff)
	}
	for _, l := range markdown.Parse(got).Links {
		if l.Kind != markdown.KindMarkdown || l.Target == "Gamma.md" {
			continue
		}
		if p, ok := markdown.ResolveMarkdown(from, l.Target); !ok || p != newPath {
			t.Errorf("after the move, %q resolves to %q, %v; want %q", l.Target, p, ok, newPath)
		}
	}
}

func TestHeadings(t *testing.T) {
	t.Parallel()
	body := "Intro text.\n" + // 1
		"\n" +
		"# Design 🚀\n" + // 3
		"Some text.\n" +
		"## Storage with `sqlite` and *style*\n" + // 5
		"### Notes\n" + // 6
		"## [Links](x.md) and [[Wiki|wiki]] ##\n" + // 7
		"Setext Title\n" + // 8
		"============\n" +
		"\n" +
		"Sub *setext*\n" + // 11
		"on two lines\n" +
		"---\n" +
		"```go\n" +
		"# not a heading\n" +
		"```\n" +
		"\n" +
		"    # indented code\n" +
		"\n" +
		"> # quoted, not a section\n" +
		"\n" +
		"<div>\n" +
		"# HTML, not a heading\n" +
		"</div>\n" +
		"\n" +
		"#no-space\n" +
		"####### seven\n" +
		"   ### Indented \\# escaped &amp; closed ###   \n" + // 28
		"#\n" // 29
	type heading struct {
		Level  int
		Text   string
		Path   []string
		Line   int
		Source string // body[Start:ContentStart]
	}
	want := []heading{
		{1, "Design 🚀", []string{"Design 🚀"}, 3, "# Design 🚀\n"},
		{2, "Storage with sqlite and style", []string{"Design 🚀", "Storage with sqlite and style"}, 5, "## Storage with `sqlite` and *style*\n"},
		{3, "Notes", []string{"Design 🚀", "Storage with sqlite and style", "Notes"}, 6, "### Notes\n"},
		{2, "Links and wiki", []string{"Design 🚀", "Links and wiki"}, 7, "## [Links](x.md) and [[Wiki|wiki]] ##\n"},
		{1, "Setext Title", []string{"Setext Title"}, 8, "Setext Title\n============\n"},
		{2, "Sub setext on two lines", []string{"Setext Title", "Sub setext on two lines"}, 11, "Sub *setext*\non two lines\n---\n"},
		{3, "Indented # escaped & closed", []string{"Setext Title", "Sub setext on two lines", "Indented # escaped & closed"}, 28, "   ### Indented \\# escaped &amp; closed ###   \n"},
		{1, "", []string{""}, 29, "#\n"},
	}
	d := markdown.Parse(body)
	var got []heading
	for _, h := range d.Headings {
		got = append(got, heading{h.Level, h.Text, h.Path, h.Line, body[h.Start:h.ContentStart]})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("headings (-want +got):\n%s", diff)
	}
	// Each section ends where the next heading of its level or above starts.
	ends := []int{4, 3, 3, 4, 7, 7, 7, -1}
	for i, h := range d.Headings {
		want := len(body)
		if ends[i] >= 0 {
			want = d.Headings[ends[i]].Start
		}
		if h.End != want {
			t.Errorf("heading %q ends at %d, want %d", h.Text, h.End, want)
		}
	}
	if got, want := markdown.HeadingTexts(d), "Design 🚀\nStorage with sqlite and style\nNotes\nLinks and wiki\nSetext Title\nSub setext on two lines\nIndented # escaped & closed\n"; got != want {
		t.Errorf("HeadingTexts = %q, want %q", got, want)
	}
}

func TestHeadingOffsetsCRLF(t *testing.T) {
	t.Parallel()
	body := "# One\r\ntext\r\n\r\nTwo\r\n---\r\nmore\r\n"
	d := markdown.Parse(body)
	if len(d.Headings) != 2 {
		t.Fatalf("got %d headings, want 2", len(d.Headings))
	}
	one, two := d.Headings[0], d.Headings[1]
	if got := body[one.Start:one.ContentStart]; got != "# One\r\n" {
		t.Errorf("first heading source %q", got)
	}
	if got := body[two.Start:two.ContentStart]; got != "Two\r\n---\r\n" {
		t.Errorf("second heading source %q", got)
	}
	if got := body[two.ContentStart:two.End]; got != "more\r\n" {
		t.Errorf("second section %q", got)
	}
	if one.End != len(body) || two.Line != 4 {
		t.Errorf("first ends at %d (want %d); second on line %d (want 4)", one.End, len(body), two.Line)
	}
}
