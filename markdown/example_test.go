package markdown_test

import (
	"fmt"

	"github.com/atrium-hq/atrium/markdown"
)

func ExampleParse() {
	body := "# Alpha\nSee [[Beta#Plan|the plan]] and [notes](Notes/Beta%20notes.md).\n"
	for _, l := range markdown.Parse(body).Links {
		fmt.Printf("%s %q heading=%q alias=%q written=%q\n", l.Kind, l.Target, l.Heading, l.Alias, body[l.TargetStart:l.TargetEnd])
	}
	// Output:
	// wiki "Beta" heading="Plan" alias="the plan" written="Beta"
	// markdown "Notes/Beta notes.md" heading="" alias="notes" written="Notes/Beta%20notes.md"
}

func ExampleRewrite() {
	body := "Links: [[Beta]], [b](Beta.md), `[[Beta]]` in code.\n"
	var edits []markdown.Edit
	for _, l := range markdown.Parse(body).Links {
		text := "Archive/Beta"
		if l.Kind == markdown.KindMarkdown {
			text = markdown.RelativeLink("Alpha.md", "Archive/Beta.md")
		}
		edits = append(edits, markdown.Edit{Start: l.TargetStart, End: l.TargetEnd, Text: text})
	}
	out, err := markdown.Rewrite(body, edits)
	fmt.Print(out, err)
	// Output:
	// Links: [[Archive/Beta]], [b](Archive/Beta.md), `[[Beta]]` in code.
	// <nil>
}

func ExampleDoc_Section() {
	body := "# Design\n## Storage\nSQLite.\n# Ops\n## Storage\nBackups.\n"
	d := markdown.Parse(body)
	h, _ := d.Section("Ops > Storage")
	fmt.Printf("%q\n", body[h.ContentStart:h.End])
	_, err := d.Section("Storage")
	fmt.Println(err)
	// Output:
	// "Backups.\n"
	// section "Storage" is ambiguous: 2 headings match:
	//   [1] Design > Storage (line 2)
	//   [2] Ops > Storage (line 5)
	// Add the number of the one you mean, like "Storage[2]", or give more of its path, like "Design > Storage".
}

func ExampleSetFrontmatter() {
	page := "---\ntitle: Alpha # shown in the tree\n\n# review\nreviewers: [ann]\n---\n# Alpha\n"
	fm, body, _ := markdown.Split(page)
	fm, err := markdown.SetFrontmatter(fm, map[string]any{"title": "Alpha 2", "icon": "🚀", "draft": nil})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(markdown.Join(fm, body))
	// Output:
	// ---
	// title: Alpha 2 # shown in the tree
	//
	// # review
	// reviewers: [ann]
	// icon: "🚀"
	// ---
	// # Alpha
}
