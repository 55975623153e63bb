package markdown_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/atrium-hq/atrium/markdown"
)

var fuzzBodies = []string{
	"",
	"# A\n## B\ntext [[B#x|y]] ![[c.png]]\n",
	"Setext\n===\n\n- [a](b.md \"t\") [r][x]\n\n[x]: <y z.md>\n",
	"> [a](\n> b.md)\n```\n[[no]]\n```\n`[[no]]` \\[[no]]",
	"<div>\n[[x]]\n</div>\n\n[![i](i.png)](p.md) [a [b] `]`](c.md)",
	"# A\r\n[[x\\|y]]\r\n    code\r\n",
	"[a](&amp;.md) [b]( b.md\t'x' ) [c](c\\).md) [[a]][[b]]![[c]]![[d]] [[e\\]]",
	"> [r]: x.md\n> 'title'\n>\n> [t][r]\n\n- [u][v]\n\n  [v]:\n  <y.md>\n",
	"| [a](a.md) | [[b\\|c]] |\n|---|---|\n| ![i](i.png) | [r] |\n\n[r]: <r r.md> (t)\n",
	"[a\n](b.md)\n[![x](y.png)\n](z.md) ![a ![b](c.png)](d.png)",
	"!!! note \"T\"\n\n    [a](a.md) [[w]]\n\n=== \"Tab\"\n\t??? tip\n\t    [b](\n\t    b.md)\n    [r]: r.md\n",
	"x <!-- [a](a.md) --> y\n\n<!--\n[b](<b b.md>) [r]: no\n[r]: r.md-->\n\n<!-- [c](c.md)",
}

func FuzzParse(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body string) {
		d := markdown.Parse(body)
		checkDoc(t, body, d)
		text := markdown.PlainText(body)
		if g, w := strings.Count(text, "\n"), strings.Count(body, "\n"); g != w {
			t.Fatalf("PlainText has %d line breaks, body %d", g, w)
		}
		_ = markdown.HeadingTexts(d)
		checkRename(t, body, d)
	})
}

// checkRename replaces every link target with a new name, as a rename does,
// and checks that the page then has the same links, all to the new name.
// Only offsets that are exact survive this.
func checkRename(t *testing.T, body string, d *markdown.Doc) {
	t.Helper()
	const wikiName, mdName = "Zz", "zz.md"
	var edits []markdown.Edit
	for _, l := range d.Links {
		text := wikiName
		if l.Kind == markdown.KindMarkdown {
			text = mdName
		}
		edits = append(edits, markdown.Edit{Start: l.TargetStart, End: l.TargetEnd, Text: text})
	}
	out, err := markdown.Rewrite(body, edits)
	if err != nil {
		t.Fatalf("rename edits do not apply: %v", err)
	}
	after := markdown.Parse(out).Links
	if len(after) != len(d.Links) {
		t.Fatalf("%d links before the rename, %d after; renamed page %q", len(d.Links), len(after), out)
	}
	for i, l := range after {
		want := wikiName
		if l.Kind == markdown.KindMarkdown {
			want = mdName
		}
		if l.Kind != d.Links[i].Kind || l.Target != want || l.Heading != d.Links[i].Heading {
			t.Fatalf("link %d after the rename: %+v, before: %+v; renamed page %q", i, l, d.Links[i], out)
		}
	}
}

func checkDoc(t *testing.T, body string, d *markdown.Doc) {
	t.Helper()
	n := len(body)
	for i, h := range d.Headings {
		if !(0 <= h.Start && h.Start <= h.ContentStart && h.ContentStart <= h.End && h.End <= n) {
			t.Fatalf("heading %d offsets out of order: %+v (len %d)", i, h, n)
		}
		if h.Start > 0 && body[h.Start-1] != '\n' {
			t.Fatalf("heading %d does not start a line: %+v", i, h)
		}
		if h.Line != strings.Count(body[:h.Start], "\n")+1 {
			t.Fatalf("heading %d on line %d, starts on line %d", i, h.Line, strings.Count(body[:h.Start], "\n")+1)
		}
		if len(h.Path) == 0 || h.Path[len(h.Path)-1] != h.Text || h.Level < 1 || h.Level > 6 {
			t.Fatalf("heading %d: %+v", i, h)
		}
		if i > 0 && d.Headings[i-1].ContentStart > h.Start {
			t.Fatalf("heading %d overlaps the one before: %+v, %+v", i, d.Headings[i-1], h)
		}
	}
	for i, l := range d.Links {
		if !(0 <= l.Start && l.Start < l.End && l.End <= n && 0 <= l.TargetStart && l.TargetStart <= l.TargetEnd && l.TargetEnd <= n) {
			t.Fatalf("link %d offsets out of range: %+v (len %d)", i, l, n)
		}
		if i > 0 && d.Links[i-1].Start > l.Start {
			t.Fatalf("links out of order: %+v, %+v", d.Links[i-1], l)
		}
		if l.Line != strings.Count(body[:l.Start], "\n")+1 {
			t.Fatalf("link %d on line %d, starts on line %d", i, l.Line, strings.Count(body[:l.Start], "\n")+1)
		}
		switch l.Kind {
		case markdown.KindWiki:
			whole := body[l.Start:l.End]
			if !(l.Start <= l.TargetStart && l.TargetEnd <= l.End) || body[l.TargetStart:l.TargetEnd] != l.Target ||
				!strings.HasSuffix(whole, "]]") || !strings.HasPrefix(strings.TrimPrefix(whole, "!"), "[[") {
				t.Fatalf("wikilink %d: %+v covers %q", i, l, whole)
			}
		case markdown.KindMarkdown:
			if c := body[l.Start]; c != '[' && c != '!' || l.TargetStart == l.TargetEnd {
				t.Fatalf("markdown link %d: %+v covers %q", i, l, body[l.Start:l.End])
			}
		default:
			t.Fatalf("link %d has kind %q", i, l.Kind)
		}
	}
}

func FuzzSection(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add(b, "A > B")
	}
	f.Add(sectionsBody, "Storage[2]")
	f.Add("# a\n## b\n# A\n## B\n", "a > b")
	f.Fuzz(func(t *testing.T, body, path string) {
		d := markdown.Parse(body)
		if h, err := d.Section(path); err != nil {
			checkError(t, err, markdown.EInvalid, markdown.ENotFound, markdown.EAmbiguous)
		} else if !slices.ContainsFunc(d.Headings, func(x markdown.Heading) bool { return reflect.DeepEqual(x, h) }) {
			t.Fatalf("Section(%q) returned a heading not in the page: %+v", path, h)
		}
		// Every heading can be reached by its full path, numbered if need be.
		for i, h := range d.Headings {
			// A heading without text has no name to add "[n]" to.
			full := strings.Join(h.Path, " > ")
			if h.Text == "" || strings.ContainsAny(full, "[]") {
				continue
			}
			found := false
			for k := 1; k <= len(d.Headings) && !found; k++ {
				p := full
				if k > 1 {
					p = fmt.Sprintf("%s[%d]", full, k)
				}
				got, err := d.Section(p)
				if err != nil {
					var e *markdown.Error
					if k == 1 && errors.As(err, &e) && e.Code == markdown.EAmbiguous {
						got, err = d.Section(full + "[1]")
					}
					if err != nil {
						continue
					}
				}
				found = got.Start == h.Start
			}
			if !found {
				t.Fatalf("heading %d (%q) cannot be reached by its path %q", i, h.Text, full)
			}
		}
	})
}

func checkError(t *testing.T, err error, codes ...string) {
	t.Helper()
	var e *markdown.Error
	if !errors.As(err, &e) || !slices.Contains(codes, e.Code) || e.Message == "" {
		t.Fatalf("error %#v is not an *Error with one of the codes %q", err, codes)
	}
}

func FuzzSplitFrontmatter(f *testing.F) {
	for _, s := range []string{"---\ntitle: A\n---\nbody", "---\r\na: 1\r\n...\r\n", "---\n---\n", "\ufeff---\nx\n---", "# no"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		fm, body, ok := markdown.Split(content)
		if !ok {
			if fm != "" || body != content {
				t.Fatalf("Split without frontmatter = %q, %q", fm, body)
			}
			return
		}
		if !strings.HasSuffix(content, body) || len(fm)+len(body) >= len(content) || fm != "" && !strings.HasSuffix(fm, "\n") {
			t.Fatalf("Split(%q) = %q, %q", content, fm, body)
		}
		if fm == "" {
			return
		}
		joined := markdown.Join(fm, body)
		if fm2, body2, ok2 := markdown.Split(joined); fm2 != fm || body2 != body || !ok2 {
			t.Fatalf("Split(Join(%q, %q)) = %q, %q, %v", fm, body, fm2, body2, ok2)
		}
		if !strings.Contains(fm, "\r\n") && content == "---\n"+fm+"---\n"+body && joined != content {
			t.Fatalf("Join(Split(%q)) = %q", content, joined)
		}
		if _, err := markdown.ParseFrontmatter(fm); err != nil {
			checkError(t, err, markdown.EInvalid)
		}
	})
}

func FuzzSetFrontmatter(f *testing.F) {
	f.Add("title: A\n# c\ntags: [a]\n", "title", "B", false)
	f.Add("a: 1\nb:\n  - x\n", "b", "", true)
	f.Add("", "icon", "🚀", false)
	f.Add("{x: 1}", "access", "public", false)
	f.Add("k: v\r\n", "new key", "multi\nline", false)
	f.Fuzz(func(t *testing.T, fm, key, value string, del bool) {
		before, beforeErr := markdown.ParseFrontmatter(fm)
		set := map[string]any{key: value}
		if del {
			set[key] = nil
		}
		out, err := markdown.SetFrontmatter(fm, set)
		if err != nil {
			checkError(t, err, markdown.EInvalid)
			return
		}
		after, err := markdown.ParseFrontmatter(out)
		if err != nil {
			t.Fatalf("SetFrontmatter(%q, %q) = %q, which does not parse: %v", fm, set, out, err)
		}
		if !utf8.ValidString(value) || beforeErr != nil {
			return
		}
		// The key changed as asked and everything else kept its value and order.
		wantKeys := slices.DeleteFunc(slices.Clone(before.Keys), func(k string) bool { return k == key })
		if !del {
			if i := slices.Index(before.Keys, key); i >= 0 {
				wantKeys = before.Keys
			} else {
				wantKeys = append(wantKeys, key)
			}
		}
		if !slices.Equal(after.Keys, wantKeys) {
			t.Fatalf("keys %q after setting %q in %q, want %q (output %q)", after.Keys, key, fm, wantKeys, out)
		}
		old, err := values(fm)
		if err != nil {
			return // YAML the package accepts but yaml.v3 cannot decode to a map: outside what this checks
		}
		now, err := values(out)
		if err != nil {
			t.Fatalf("SetFrontmatter(%q, %q) = %q, which no longer decodes to a map: %v", fm, set, out, err)
		}
		if !del && now[key] != value {
			t.Fatalf("%q is %#v after setting it to %q (output %q)", key, now[key], value, out)
		}
		delete(old, key)
		delete(now, key)
		if !reflect.DeepEqual(old, now) {
			t.Fatalf("other keys changed: %v -> %v (output %q)", old, now, out)
		}
	})
}

func values(fm string) (map[string]any, error) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(fm), &m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// FuzzRenderEmbeds renders a page whose every embed is of itself (or of a
// section or block of itself): rendering ends, and what it shows is bounded.
func FuzzRenderEmbeds(f *testing.F) {
	for _, b := range fuzzBodies {
		f.Add(b)
	}
	f.Add("# A\n\n![[P#B]]\n\n## B\n\n![[P#A]] ![[P]] ^x\n\n![[P#^x]]\n\n- ![[#B]]\n\n![a ![[P#B]]](i.png)\n")
	f.Fuzz(func(t *testing.T, body string) {
		var opts func() markdown.Options
		opts = func() markdown.Options {
			return markdown.Options{
				Path:    "P.md",
				Resolve: func(markdown.Link) markdown.Target { return markdown.Target{Href: "/pages/P.md", Resolved: true} },
				Embed: func(markdown.Link) (markdown.Embedded, bool) {
					return markdown.Embedded{Path: "P.md", Body: body, Options: opts()}, true
				},
			}
		}
		out, err := markdown.RenderWith(body, opts())
		if err != nil {
			t.Fatal(err)
		}
		if limit := (markdown.EmbedLimit + 1) * (64*len(body) + 4096); len(out) > limit {
			t.Fatalf("%d bytes of HTML from %d of Markdown", len(out), len(body))
		}
	})
}
