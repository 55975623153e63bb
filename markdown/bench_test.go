package markdown_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/markdown"
)

// benchPage is a page of about 5 KB in the shape pages take: nested sections,
// prose with wikilinks and Markdown links, lists, code, a table and a quote.
var benchPage = func() string {
	var b strings.Builder
	b.WriteString("# Alpha\n\nAlpha is the project that [[Projects/Beta|Beta]] depends on; see [the plan](../Plans/Alpha%20Plan.md#Goals).\n\n")
	for i := 1; b.Len() < 5000; i++ {
		fmt.Fprintf(&b, "## Part %d: *design* and `code`\n\n", i)
		fmt.Fprintf(&b, "Some prose about part %d, with **bold** text, a link to [[Notes/Part %d#Details|its notes]] and an ![[diagram-%d.png]].\n", i, i, i)
		fmt.Fprintf(&b, "It also refers to [the spec](./specs/part-%d.md \"Spec\") and to [an outside page](https://example.com/%d).\n\n", i, i)
		b.WriteString("- first item with [[Alpha]]\n- second item\n  - nested [ref][r]\n\n")
		b.WriteString("```go\nfunc main() { fmt.Println(\"[[not a link]]\") }\n```\n\n")
		b.WriteString("| a | b |\n|---|---|\n| [[One]] | two |\n\n> A quote with [a link](../Quote.md).\n\n")
		fmt.Fprintf(&b, "### Storage %d\n\nDetails.\n\n", i)
	}
	b.WriteString("[r]: Reference.md\n")
	return b.String()
}()

func BenchmarkParse(b *testing.B) {
	b.SetBytes(int64(len(benchPage)))
	b.ReportAllocs()
	for b.Loop() {
		markdown.Parse(benchPage)
	}
}

func BenchmarkPlainText(b *testing.B) {
	b.SetBytes(int64(len(benchPage)))
	b.ReportAllocs()
	for b.Loop() {
		markdown.PlainText(benchPage)
	}
}

func BenchmarkSection(b *testing.B) {
	d := markdown.Parse(benchPage)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Section("Part 3: design and code > Storage 3"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSetFrontmatter(b *testing.B) {
	fm := "title: Alpha\nicon: 🚀\n# owners\nowners: [ann, bob]\ntags:\n  - project\n  - active\naccess: private\n"
	set := map[string]any{"tags": []string{"project", "done"}, "reviewed": true}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := markdown.SetFrontmatter(fm, set); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBenchPage(t *testing.T) {
	d := markdown.Parse(benchPage)
	if len(benchPage) < 4500 || len(benchPage) > 6000 || len(d.Headings) < 8 || len(d.Links) < 20 {
		t.Fatalf("bench page: %d bytes, %d headings, %d links", len(benchPage), len(d.Headings), len(d.Links))
	}
}
