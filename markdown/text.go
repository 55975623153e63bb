package markdown

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/util"
)

// A piece is a bit of readable text and where it comes from: a range of the
// source, or a literal (a wikilink's display text) placed at an offset.
type piece struct {
	start, end int
	text       string
	literal    bool
	escapes    bool // resolve backslash escapes and entities (Markdown text, not code)
}

func (p *page) pieceText(pc piece) string {
	if pc.literal {
		return pc.text
	}
	b := p.src[pc.start:pc.end]
	if pc.escapes {
		b = util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(b)))
	}
	return strings.TrimRight(string(b), "\r\n")
}

// htmlTag matches a tag, or the start of one that continues on the next line.
var htmlTag = regexp.MustCompile(`<[^>]*>?`)

// pieces returns the readable text under root, markup removed, in source
// order, with wikilinks replaced by what they display. With cached, a link
// inside whose text is already known (links are read inner first) counts as
// that text, so that nested images cost linear, not quadratic, time.
func (p *page) pieces(root ast.Node, cached bool) []piece {
	var out []piece
	lines := func(n ast.Node) {
		for i := range n.Lines().Len() {
			s := n.Lines().At(i)
			out = append(out, piece{start: s.Start, end: s.Stop})
		}
	}
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if t, ok := p.linkTexts[n]; ok && cached && n != root {
			out = append(out, piece{start: n.Pos(), end: n.Pos(), text: t, literal: true})
			return ast.WalkSkipChildren, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			out = append(out, piece{start: n.Segment.Start, end: n.Segment.Stop, escapes: true})
		case *ast.CodeSpan:
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					out = append(out, piece{start: t.Segment.Start, end: t.Segment.Stop})
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			out = append(out, piece{start: n.Pos(), end: n.Pos(), text: string(n.Label(p.src)), literal: true})
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			lines(n)
			return ast.WalkSkipChildren, nil
		case *ast.HTMLBlock:
			if n.HTMLBlockType == ast.HTMLBlockType2 {
				return ast.WalkSkipChildren, nil // a comment is not page text
			}
			segs := n.Lines().Sliced(0, n.Lines().Len())
			if n.HasClosure() {
				segs = append(segs, n.ClosureLine)
			}
			for _, s := range segs {
				t := htmlTag.ReplaceAllString(string(s.Value(p.src)), " ")
				out = append(out, piece{start: s.Start, end: s.Start, text: strings.TrimSpace(t), literal: true})
			}
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML, *ast.LinkReferenceDefinition:
			return ast.WalkSkipChildren, nil
		case *callout:
			// An MkDocs block shows its title where its opening line was.
			if n.title != "" && n.opening.Stop > n.opening.Start {
				out = append(out, piece{start: n.opening.Start, end: n.opening.Stop, text: n.title, literal: true})
			}
		}
		return ast.WalkContinue, nil
	})
	return p.replaceWikilinks(out)
}

// replaceWikilinks cuts wikilinks out of the source ranges and puts their
// display text in their place.
func (p *page) replaceWikilinks(in []piece) []piece {
	wl := p.wikilinks
	if len(wl) == 0 {
		return in
	}
	out := make([]piece, 0, len(in))
	shown := make([]bool, len(wl))
	for _, pc := range in {
		if pc.literal {
			out = append(out, pc)
			continue
		}
		s := pc.start
		i := sort.Search(len(wl), func(i int) bool { return wl[i].End > s })
		for ; i < len(wl) && wl[i].Start < pc.end; i++ {
			l := wl[i]
			if l.Start > s {
				out = append(out, piece{start: s, end: l.Start, escapes: pc.escapes})
			}
			if !shown[i] {
				shown[i] = true
				out = append(out, piece{start: l.Start, end: l.End, text: display(l), literal: true})
			}
			s = max(s, l.End)
		}
		if s < pc.end {
			out = append(out, piece{start: s, end: pc.end, escapes: pc.escapes})
		}
	}
	slices.SortStableFunc(out, func(a, b piece) int { return a.start - b.start })
	return out
}

// display is what a reader sees of a wikilink.
func display(l Link) string {
	switch {
	case l.Alias != "":
		return l.Alias
	case l.Target == "":
		return l.Heading
	case l.Heading != "":
		return l.Target + "#" + l.Heading
	}
	return l.Target
}

// inlineText is the text of n's content on one line, white space collapsed:
// a heading's text, a link's label. Pieces on one line join as they are
// ("**bold**text" stays one word); a line break becomes a space.
func (p *page) inlineText(n ast.Node) string {
	var b strings.Builder
	line := -1
	for _, pc := range p.pieces(n, true) {
		if l := p.lineIndex(pc.start); l != line {
			b.WriteByte(' ')
			line = l
		}
		b.WriteString(p.pieceText(pc))
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// PlainText returns the readable text of a body for search indexing: markup
// removed, code kept as text, wikilinks as what they display. The result has
// exactly as many lines as body, each holding the text of the same line, so
// a match's line number is the line in the page.
func PlainText(body string) string {
	p := parse(body)
	if p.root == nil {
		return body
	}
	lines := make([][]string, len(p.lineStarts))
	for _, pc := range p.pieces(p.root, false) {
		i := p.lineIndex(pc.start)
		for k, part := range strings.Split(p.pieceText(pc), "\n") {
			if i+k < len(lines) {
				lines[i+k] = append(lines[i+k], part)
			}
		}
	}
	out := make([]string, len(lines))
	for i, parts := range lines {
		out[i] = strings.Join(parts, "")
	}
	return strings.Join(out, "\n")
}

// HeadingTexts returns the text of every heading, one per line, for search.
func HeadingTexts(d *Doc) string {
	texts := make([]string, len(d.Headings))
	for i, h := range d.Headings {
		texts[i] = h.Text
	}
	return strings.Join(texts, "\n")
}
