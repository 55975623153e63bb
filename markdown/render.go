package markdown

import (
	"bytes"
	"html"
	"regexp"
	"strconv"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmrenderer "github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// renderer turns Markdown into HTML for browsers: CommonMark with GitHub's
// tables, strikethrough and task lists, heading IDs for #anchors, and what
// Obsidian and MkDocs vaults write (vault.go). Raw HTML
// in a page is never passed through (goldmark leaves a comment in its
// place), and links with javascript:, vbscript: or file: targets are
// emptied: a page is text someone else wrote.
var renderer = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
	goldmark.WithParserOptions(parser.WithAutoHeadingID(),
		parser.WithBlockParsers(util.Prioritized(admonitions{}, 550)),
		parser.WithASTTransformers(util.Prioritized(callouts{}, 100))),
	goldmark.WithRendererOptions(gmrenderer.WithNodeRenderers(util.Prioritized(lineBreaks{}, 100), util.Prioritized(vaultRenderer{}, 100))),
)

// lineBreaks lets through the one piece of raw HTML a page may hold, a bare
// line break (<br>, <br/>, <br />: Markdown tables have no other way to
// break a line in a cell), and drops the rest as goldmark does.
type lineBreaks struct{}

func (lineBreaks) RegisterFuncs(r gmrenderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindRawHTML, func(w util.BufWriter, source []byte, n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkSkipChildren, nil
		}
		var raw []byte
		segs := n.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			raw = append(raw, seg.Value(source)...)
		}
		if brTag.Match(raw) {
			_, _ = w.WriteString("<br>")
		} else {
			_, _ = w.WriteString("<!-- raw HTML omitted -->")
		}
		return ast.WalkSkipChildren, nil
	})
}

var brTag = regexp.MustCompile(`^(?i:<br\s*/?>)$`)

// A Target is where a wikilink goes in the browser.
type Target struct {
	Href     string // "" when the link resolves to nothing
	Resolved bool
}

// Render returns the HTML of a page body. Wikilinks ([[Page#Heading|alias]],
// ![[embed]]) become links to what resolve says, marked "unresolved" when it
// resolves to nothing; Markdown links stay as written.
func Render(body string, resolve func(Link) Target) (string, error) {
	p := parse(body)
	var src strings.Builder
	var wikis []Link
	last := 0
	for _, l := range p.doc.Links {
		if l.Kind != KindWiki {
			continue
		}
		// Each wikilink stands in the source as a private-use mark that
		// Markdown leaves alone, and becomes its link in the HTML.
		src.WriteString(body[last:l.Start])
		src.WriteString(mark(len(wikis)))
		wikis = append(wikis, l)
		last = l.End
	}
	src.WriteString(body[last:])
	var out bytes.Buffer
	if err := renderer.Convert([]byte(src.String()), &out); err != nil {
		return "", err
	}
	html := blockAnchors(out.Bytes())
	if len(wikis) == 0 {
		return string(html), nil
	}
	// One pass over the HTML puts each wikilink in place of its mark (the
	// first mark of each number, as a body could hold look-alikes).
	var b strings.Builder
	b.Grow(len(html) + len(wikis)*64)
	used := make([]bool, len(wikis))
	for {
		i := bytes.Index(html, markOpen)
		if i < 0 {
			break
		}
		j := bytes.Index(html[i+len(markOpen):], markClose)
		if j < 0 {
			break
		}
		n, err := strconv.Atoi(string(html[i+len(markOpen) : i+len(markOpen)+j]))
		end := i + len(markOpen) + j + len(markClose)
		if err != nil || n < 0 || n >= len(wikis) || used[n] {
			b.Write(html[:end]) // not one of ours: as it was
		} else {
			used[n] = true
			b.Write(html[:i])
			b.WriteString(wikiHTML(wikis[n], resolve(wikis[n])))
		}
		html = html[end:]
	}
	b.Write(html)
	return b.String(), nil
}

var markOpen, markClose = []byte("\uE000"), []byte("\uE001")

func mark(i int) string { return "\uE000" + strconv.Itoa(i) + "\uE001" }

func wikiHTML(l Link, t Target) string {
	text := l.Alias
	if text == "" {
		text = l.Target
		if l.Heading != "" {
			text = strings.TrimPrefix(text+" > "+l.Heading, " > ")
		}
	}
	class := "wikilink"
	if l.Embed {
		// ![[diagram.png]] shows the image; ![[Note#Section]] is a card
		// leading to what it embeds.
		if isImage(l.Target) && t.Href != "" {
			alt := l.Alias
			if alt == "" || strings.Trim(alt, "0123456789x") == "" { // |300, |300x200: a size in Obsidian
				alt = l.Target
			}
			return `<img class="embed" src="` + html.EscapeString(t.Href) + `" alt="` + html.EscapeString(alt) + `">`
		}
		class += " embed-link"
	}
	if !t.Resolved {
		class += " unresolved"
	}
	href := t.Href
	switch {
	case href == "" || l.Heading == "":
	case strings.HasPrefix(l.Heading, "^"): // a block id, anchored as written
		href += "#" + l.Heading
	default:
		href += "#" + headingID(l.Heading)
	}
	if href == "" {
		return `<a class="` + class + `" title="no page is called this yet">` + html.EscapeString(text) + `</a>`
	}
	return `<a class="` + class + `" href="` + html.EscapeString(href) + `">` + html.EscapeString(text) + `</a>`
}

// headingID is the ID goldmark gives a heading of this text.
func headingID(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ' || r == '-':
			b.WriteByte('-')
		case r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
