package pages_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

func TestNormalizePath(t *testing.T) {
	good := map[string]string{
		"Projects/Alpha.md":      "Projects/Alpha.md",
		"./Projects//Alpha.md":   "Projects/Alpha.md",
		`Projects\Alpha.md`:      "Projects/Alpha.md",
		" Notes/Idée 🚀.md ":      "Notes/Idée 🚀.md",
		"a/./b.MD":               "a/b.MD",
		"Folder/_index.md":       "Folder/_index.md",
		"Deep/a/b/c/d/e/Page.md": "Deep/a/b/c/d/e/Page.md",
	}
	for in, want := range good {
		got, err := pages.NormalizePath(in)
		if err != nil || got != want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                                 "empty",
		"../x.md":                          "'..'",
		"a/../../x.md":                     "'..'",
		"/etc/passwd.md":                   "relative",
		`C:\x.md`:                          "relative",
		"notes.txt":                        ".md",
		".md":                              ".md",
		"a/.md":                            ".md",
		"a/.hidden.md":                     "start with '.'",
		"a\x00b.md":                        "control",
		"a\nb.md":                          "control",
		`a:b.md`:                           `< > :`,
		"a/b?.md":                          `< > :`,
		"a /b.md":                          "end with a space",
		strings.Repeat("x", 300) + ".md":   "255 bytes",
		strings.Repeat("d/", 600) + "x.md": "1024 bytes",
		"\xff.md":                          "UTF-8",
	}
	for in, why := range bad {
		_, err := pages.NormalizePath(in)
		if atrium.ErrorCode(err) != atrium.EInvalid || !strings.Contains(atrium.ErrorMessage(err), why) {
			t.Errorf("NormalizePath(%q) = %v; want invalid_argument saying %q", in, err, why)
		}
	}
}

// Whatever a caller sends, a path either is refused or comes out relative,
// clean and inside the workspace — never a way out of the mirror folder.
func FuzzNormalizePath(f *testing.F) {
	for _, s := range []string{"Projects/Alpha.md", "../x.md", "a//b/./c.md", `a\..\b.md`, "/abs.md", "\x00.md", "é/ü.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := pages.NormalizePath(in)
		if err != nil {
			if atrium.ErrorCode(err) != atrium.EInvalid || atrium.ErrorMessage(err) == "" {
				t.Fatalf("error %v is not a clear invalid_argument", err)
			}
			return
		}
		again, err := pages.NormalizePath(out)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, out, again, err)
		}
		if !utf8.ValidString(out) || strings.HasPrefix(out, "/") || strings.Contains(out, `\`) || !strings.HasSuffix(strings.ToLower(out), ".md") {
			t.Fatalf("%q -> %q", in, out)
		}
		for _, seg := range strings.Split(out, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
				t.Fatalf("%q -> %q has segment %q", in, out, seg)
			}
		}
	})
}
