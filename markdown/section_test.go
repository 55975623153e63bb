package markdown_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/markdown"
)

const sectionsBody = `# Design
## Storage
Design storage text.
## Notes
first notes
## Notes
second notes
# Ops
## Storage
Ops storage text.
### Backups
## Runbook > Steps
## References [1]
` + "```" + `
# Inside code
` + "```" + `
# Storage
top-level storage
`

func TestSection(t *testing.T) {
	t.Parallel()
	d := markdown.Parse(sectionsBody)
	tests := []struct {
		path    string
		line    int      // of the heading found, when no error
		content string   // body[ContentStart:End], when checked
		code    string   // error code
		msg     []string // fragments of the error message
	}{
		{path: "Design > Storage", line: 2, content: "Design storage text.\n"},
		{path: "Ops > Storage", line: 9, content: "Ops storage text.\n### Backups\n"},
		{path: "  design >  STORAGE ", line: 2},
		{path: "Ops > Backups", line: 11, content: ""},
		{path: "Ops > Storage > Backups", line: 11},
		{path: "Backups", line: 11},
		{path: "Design > Backups", code: markdown.ENotFound, msg: []string{`section "Design > Backups" not found`, "Ops > Storage > Backups (line 11)"}},
		{path: "Storage", code: markdown.EAmbiguous, msg: []string{
			`section "Storage" is ambiguous: 3 headings match`,
			"[1] Design > Storage (line 2)", "[2] Ops > Storage (line 9)", "[3] Storage (line 17)",
			`like "Storage[2]"`, `like "Design > Storage"`,
		}},
		{path: "Storage[2]", line: 9},
		{path: "Storage [3]", line: 17, content: "top-level storage\n"},
		{path: "Notes", code: markdown.EAmbiguous, msg: []string{"[1] Design > Notes (line 4)", "[2] Design > Notes (line 6)", `like "Notes[2]"`}},
		{path: "Notes[2]", line: 6, content: "second notes\n"},
		{path: "Design > Notes[1]", line: 4, content: "first notes\n"},
		{path: "Notes[3]", code: markdown.ENotFound, msg: []string{"only 2 headings match \"Notes\"", "[2] Design > Notes (line 6)"}},
		{path: "Runbook > Steps", line: 12},
		{path: "Ops > Runbook > Steps", line: 12},
		{path: "References [1]", line: 13},
		{path: "Inside code", code: markdown.ENotFound, msg: []string{"Headings in this page:", "  Design (line 1)", "  Ops > References [1] (line 13)"}},
		{path: "", code: markdown.EInvalid, msg: []string{"Design > Storage"}},
		{path: "  ", code: markdown.EInvalid},
		{path: "Design >> Storage", code: markdown.ENotFound, msg: []string{"Headings in this page:"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			h, err := d.Section(tt.path)
			if tt.code != "" {
				var e *markdown.Error
				if !errors.As(err, &e) || e.Code != tt.code {
					t.Fatalf("Section(%q) = %+v, %v; want an error with code %q", tt.path, h, err, tt.code)
				}
				for _, m := range tt.msg {
					if !strings.Contains(e.Message, m) {
						t.Errorf("message %q lacks %q", e.Message, m)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Section(%q): %v", tt.path, err)
			}
			if h.Line != tt.line {
				t.Errorf("Section(%q) found line %d (%q), want line %d", tt.path, h.Line, h.Path, tt.line)
			}
			if tt.content != "" || strings.Contains(tt.path, "Backups") {
				if got := sectionsBody[h.ContentStart:h.End]; got != tt.content {
					t.Errorf("section content %q, want %q", got, tt.content)
				}
			}
		})
	}
}

func TestSectionSameFullPathsSuggestsNumberOnly(t *testing.T) {
	t.Parallel()
	_, err := markdown.Parse(sectionsBody).Section("Design > Notes")
	var e *markdown.Error
	if !errors.As(err, &e) || e.Code != markdown.EAmbiguous {
		t.Fatalf("got %v, want ambiguous", err)
	}
	if strings.Contains(e.Message, "more of its path") {
		t.Errorf("suggests a longer path that cannot help: %q", e.Message)
	}
}

func TestSectionNotFoundListsAtMost20(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 25 {
		fmt.Fprintf(&b, "## H%d\n", i)
	}
	_, err := markdown.Parse(b.String()).Section("Nope")
	var e *markdown.Error
	if !errors.As(err, &e) || e.Code != markdown.ENotFound {
		t.Fatalf("got %v, want not_found", err)
	}
	if !strings.Contains(e.Message, "H19 (line 20)") || strings.Contains(e.Message, "H20") || !strings.Contains(e.Message, "and 5 more") {
		t.Errorf("message %q should list H0..H19 and say 5 more", e.Message)
	}
	_, err = markdown.Parse("no headings").Section("Nope")
	if !errors.As(err, &e) || !strings.Contains(e.Message, "no headings") {
		t.Errorf("got %v, want a not_found saying the page has no headings", err)
	}
}
