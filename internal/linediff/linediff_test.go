package linediff_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/internal/linediff"
)

func render(ls []linediff.Line) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString([]string{" ", "-", "+"}[l.Op] + l.Text + "\n")
	}
	return b.String()
}

func TestLines(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"a\nb\nc\n", "a\nb\nc\n", " a\n b\n c\n"},
		{"a\nb\nc\n", "a\nx\nc\n", " a\n-b\n+x\n c\n"},
		{"", "new\n", "+new\n"},
		{"old\n", "", "-old\n"},
		{"# T\n\none\ntwo\nthree\n", "# T\n\ntwo\nthree\nfour\n", " # T\n \n-one\n two\n three\n+four\n"},
	} {
		got, ok := linediff.Lines(c.a, c.b)
		if !ok || render(got) != c.want {
			t.Errorf("Lines(%q, %q) =\n%s(ok %v), want\n%s", c.a, c.b, render(got), ok, c.want)
		}
	}
}

// Whatever the texts, the diff keeps every line of both, in order.
func FuzzLinesKeepsBothTexts(f *testing.F) {
	f.Add("a\nb\nc", "a\nc\nd")
	f.Fuzz(func(t *testing.T, a, b string) {
		ls, ok := linediff.Lines(a, b)
		if !ok {
			return
		}
		var x, y []string
		for _, l := range ls {
			if l.Op != linediff.Added {
				x = append(x, l.Text)
			}
			if l.Op != linediff.Removed {
				y = append(y, l.Text)
			}
		}
		norm := func(s string) string { return strings.TrimSuffix(s, "\n") }
		if strings.Join(x, "\n") != norm(a) && !(a == "" && len(x) == 0) || strings.Join(y, "\n") != norm(b) && !(b == "" && len(y) == 0) {
			t.Fatalf("diff of %q and %q loses lines:\n%s", a, b, render(ls))
		}
	})
}
