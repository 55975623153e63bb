package markdown_test

import (
	"errors"
	"testing"

	"github.com/atrium-hq/atrium/markdown"
)

func TestResolveMarkdown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from, dest, want string
		ok               bool
	}{
		{"Projects/Alpha.md", "../B.md", "B.md", true},
		{"Projects/Alpha.md", "./assets/x.png", "Projects/assets/x.png", true},
		{"Projects/Alpha.md", "Sub%20Folder/C.md", "Projects/Sub Folder/C.md", true},
		{"Alpha.md", "Sub%20Folder/C.md", "Sub Folder/C.md", true},
		{"Projects/Alpha.md", "Beta.md#Design", "Projects/Beta.md", true},
		{"Projects/Alpha.md", "Beta.md?x=1", "Projects/Beta.md", true},
		{"Projects/Deep/Alpha.md", "../../Archive/./Old/../Alpha.md", "Archive/Alpha.md", true},
		{"Projects/Alpha.md", "100%.md", "Projects/100%.md", true}, // not a valid escape: kept as written
		{"Projects/Alpha.md", "../../Escape.md", "", false},
		{"Alpha.md", "../Escape.md", "", false},
		{"Alpha.md", "..", "", false},
		{"Alpha.md", "./", "", false},
		{"Alpha.md", "/abs/B.md", "", false},
		{"Alpha.md", "%2Fabs.md", "", false},
		{"Alpha.md", "//host/B.md", "", false},
		{"Alpha.md", "https://example.com/B.md", "", false},
		{"Alpha.md", "mailto:ann@example.com", "", false},
		{"Alpha.md", "#Design", "", false},
		{"Alpha.md", "", "", false},
	}
	for _, tt := range tests {
		got, ok := markdown.ResolveMarkdown(tt.from, tt.dest)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ResolveMarkdown(%q, %q) = %q, %v; want %q, %v", tt.from, tt.dest, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRelativeLink(t *testing.T) {
	t.Parallel()
	tests := []struct{ from, to, want string }{
		{"Projects/Alpha.md", "Archive/Alpha.md", "../Archive/Alpha.md"},
		{"Projects/Alpha.md", "Projects/Beta.md", "Beta.md"},
		{"Projects/Alpha.md", "Projects/assets/x.png", "assets/x.png"},
		{"Alpha.md", "Projects/Beta.md", "Projects/Beta.md"},
		{"Projects/Deep/Alpha.md", "Beta.md", "../../Beta.md"},
		{"Projects/Alpha.md", "Projects/Alpha.md", "Alpha.md"},
		{"A/B/C.md", "A/D/E.md", "../D/E.md"},
		{"Alpha.md", "Sub Folder/C (draft) #1?.md", "Sub%20Folder/C%20%28draft%29%20%231%3F.md"},
		{"Alpha.md", "Café/Ünïcode.md", "Café/Ünïcode.md"},
		{"Alpha.md", "a:b.md", "./a:b.md"},
		{"Alpha.md", "100%|<x>.md", "100%25%7C%3Cx%3E.md"},
	}
	for _, tt := range tests {
		got := markdown.RelativeLink(tt.from, tt.to)
		if got != tt.want {
			t.Errorf("RelativeLink(%q, %q) = %q, want %q", tt.from, tt.to, got, tt.want)
		}
		// What RelativeLink writes, ResolveMarkdown reads back, in a link too.
		if back, ok := markdown.ResolveMarkdown(tt.from, got); !ok || back != tt.to {
			t.Errorf("ResolveMarkdown(%q, %q) = %q, %v; want %q", tt.from, got, back, ok, tt.to)
		}
		body := "[x](" + got + ")"
		if l := markdown.Parse(body).Links; len(l) != 1 || body[l[0].TargetStart:l[0].TargetEnd] != got {
			t.Errorf("%q does not parse as one link with destination %q: %+v", body, got, l)
		}
	}
}

func edit(start, end int, text string) markdown.Edit {
	return markdown.Edit{Start: start, End: end, Text: text}
}

func TestRewrite(t *testing.T) {
	t.Parallel()
	const body = "0123456789"
	tests := []struct {
		name  string
		edits []markdown.Edit
		want  string
		err   bool
	}{
		{"none", nil, body, false},
		{"any order", []markdown.Edit{edit(8, 10, "X"), edit(0, 1, "AB"), edit(4, 4, "+")}, "AB123+4567X", false},
		{"adjacent", []markdown.Edit{edit(2, 4, "a"), edit(4, 6, "b")}, "01ab6789", false},
		{"insert before a replacement", []markdown.Edit{edit(3, 5, "R"), edit(3, 3, "I")}, "012IR56789", false},
		{"identical edits count once", []markdown.Edit{edit(1, 2, "x"), edit(1, 2, "x")}, "0x23456789", false},
		{"delete all", []markdown.Edit{edit(0, 10, "")}, "", false},
		{"overlap", []markdown.Edit{edit(1, 4, "a"), edit(3, 5, "b")}, "", true},
		{"same range, different text", []markdown.Edit{edit(1, 2, "a"), edit(1, 2, "b")}, "", true},
		{"two inserts at one offset", []markdown.Edit{edit(1, 1, "a"), edit(1, 1, "b")}, "", true},
		{"out of range", []markdown.Edit{edit(8, 11, "a")}, "", true},
		{"negative", []markdown.Edit{edit(-1, 0, "a")}, "", true},
		{"reversed", []markdown.Edit{edit(5, 4, "a")}, "", true},
	}
	for _, tt := range tests {
		got, err := markdown.Rewrite(body, tt.edits)
		var e *markdown.Error
		switch {
		case tt.err && (!errors.As(err, &e) || e.Code != markdown.EInvalid):
			t.Errorf("%s: Rewrite = %q, %v; want an invalid error", tt.name, got, err)
		case !tt.err && (err != nil || got != tt.want):
			t.Errorf("%s: Rewrite = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}
