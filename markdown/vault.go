package markdown

import (
	"bytes"
	"html"
	"path"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	gmrenderer "github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// What real vaults write beyond CommonMark, rendered as their tools show
// it: Obsidian's callouts (> [!warning] Title, folded with [!note]-) and
// MkDocs' admonitions (!!! note "Title", folded with ???) as titled boxes,
// MkDocs' content tabs (=== "Tab") as labelled blocks. Without this they
// showed as plain quotes and, worse, as code blocks (their bodies are
// indented four spaces).

var kindCallout = ast.NewNodeKind("Callout")

// callout is a titled box: an Obsidian callout, an MkDocs admonition or
// content tab.
type callout struct {
	ast.BaseBlock
	kind, title string
	fold        byte // 0: not foldable; '-': folded; '+': open
	admonition  bool // MkDocs' (the class says so, for styles made for it)
	tab         bool
	// opening is an MkDocs block's opening line in the source (the text
	// it shows is its title).
	opening text.Segment
}

func (n *callout) Kind() ast.NodeKind { return kindCallout }

func (n *callout) Dump(src []byte, level int) { ast.DumpHelper(n, src, level, nil, nil) }

// calloutTitle is the title a box shows: its own, else its kind's name.
func calloutTitle(kind, title string) string {
	if title = strings.TrimSpace(title); title != "" {
		return title
	}
	return strings.ToUpper(kind[:1]) + kind[1:]
}

func renderCallout(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*callout)
	if !entering {
		if n.fold != 0 {
			_, _ = w.WriteString("</details>\n")
		} else {
			_, _ = w.WriteString("</div>\n")
		}
		return ast.WalkContinue, nil
	}
	title := html.EscapeString(n.title)
	if n.tab {
		_, _ = w.WriteString(`<div class="tabbed"><p class="tab-label">` + title + "</p>\n")
		return ast.WalkContinue, nil
	}
	class := "callout callout-" + n.kind
	if n.admonition {
		class = "admonition " + class
	}
	attrs := `class="` + class + `" data-callout="` + n.kind + `"`
	switch {
	case n.fold == '+':
		_, _ = w.WriteString(`<details ` + attrs + ` open><summary class="callout-title">` + title + "</summary>\n")
	case n.fold != 0:
		_, _ = w.WriteString(`<details ` + attrs + `><summary class="callout-title">` + title + "</summary>\n")
	case title == "":
		_, _ = w.WriteString(`<div ` + attrs + ">\n")
	default:
		_, _ = w.WriteString(`<div ` + attrs + `><p class="callout-title">` + title + "</p>\n")
	}
	return ast.WalkContinue, nil
}

// calloutLine is the first line of an Obsidian callout, inside its quote.
var calloutLine = regexp.MustCompile(`^\[!([A-Za-z][\w-]*)\]([+-]?)[ \t]*(.*)$`)

// callouts turns block quotes that open with [!kind] into callouts.
type callouts struct{}

func (callouts) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var quotes []*ast.Blockquote
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if q, ok := n.(*ast.Blockquote); ok && entering {
			quotes = append(quotes, q)
		}
		return ast.WalkContinue, nil
	})
	for _, q := range quotes {
		p, ok := q.FirstChild().(*ast.Paragraph)
		if !ok || p.Lines().Len() == 0 {
			continue
		}
		first := p.Lines().At(0)
		m := calloutLine.FindSubmatch(bytes.TrimRight(first.Value(src), "\r\n"))
		if m == nil {
			continue
		}
		c := &callout{kind: strings.ToLower(string(m[1])), title: calloutTitle(string(m[1]), string(m[3]))}
		if len(m[2]) > 0 {
			c.fold = m[2][0]
		}
		// The first line is the callout's kind and title, not its text.
		for n := p.FirstChild(); n != nil; {
			next := n.NextSibling()
			if s := firstTextStart(n); s >= first.Stop {
				break
			}
			p.RemoveChild(p, n)
			n = next
		}
		if p.ChildCount() == 0 {
			q.RemoveChild(q, p)
		}
		parent := q.Parent()
		parent.ReplaceChild(parent, q, c)
		for n := q.FirstChild(); n != nil; {
			next := n.NextSibling()
			c.AppendChild(c, n)
			n = next
		}
	}
}

// firstTextStart is where the first text under n starts in the source, -1
// when it holds none (it stays with what came before it).
func firstTextStart(n ast.Node) int {
	start := -1
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			start = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	return start
}

// admonitionLine opens an MkDocs admonition (!!! kind "Title", ??? folded,
// ???+ folded but open) or a content tab (=== "Tab").
var admonitionLine = regexp.MustCompile(`^(!!!|\?\?\?\+?|===\+?)[ \t]+(?:([A-Za-z][\w-]*)(?:[ \t]+[\w-]+)*)?[ \t]*(?:"([^"]*)")?[ \t]*$`)

// admonitions parses MkDocs' admonitions and content tabs: the opening
// line, then a body indented four spaces (blank lines inside it allowed).
type admonitions struct{}

func (admonitions) Trigger() []byte { return []byte{'!', '?', '='} }

func (admonitions) Open(_ ast.Node, reader text.Reader, _ parser.Context) (ast.Node, parser.State) {
	line, seg := reader.PeekLine()
	m := admonitionLine.FindSubmatch(bytes.TrimRight(line, "\r\n"))
	if m == nil {
		return nil, parser.NoChildren
	}
	c := &callout{admonition: true, opening: seg.TrimRightSpace(reader.Source())}
	switch marker := string(m[1]); {
	case strings.HasPrefix(marker, "==="):
		if len(m[3]) == 0 || len(m[2]) > 0 {
			return nil, parser.NoChildren
		}
		c.tab, c.title = true, string(m[3])
	case len(m[2]) == 0:
		return nil, parser.NoChildren
	default:
		c.kind = strings.ToLower(string(m[2]))
		c.title = string(m[3])
		if m[3] == nil { // no title given: the kind's name; "" given: none
			c.title = calloutTitle(c.kind, "")
		}
		switch marker {
		case "???":
			c.fold = '-'
		case "???+":
			c.fold = '+'
		}
	}
	reader.AdvanceToEOL()
	return c, parser.HasChildren
}

func (admonitions) Continue(_ ast.Node, reader text.Reader, _ parser.Context) parser.State {
	line, _ := reader.PeekLine()
	if util.IsBlank(line) {
		reader.AdvanceToEOL()
		return parser.Continue | parser.HasChildren
	}
	if indent, _ := util.IndentWidth(line, reader.LineOffset()); indent < 4 {
		return parser.Close
	}
	pos, padding := util.IndentPosition(line, reader.LineOffset(), 4)
	reader.AdvanceAndSetPadding(pos, padding)
	return parser.Continue | parser.HasChildren
}

func (admonitions) Close(ast.Node, text.Reader, parser.Context) {}
func (admonitions) CanInterruptParagraph() bool                 { return false }
func (admonitions) CanAcceptIndentedLine() bool                 { return false }

// vaultRenderer renders callouts.
type vaultRenderer struct{}

func (vaultRenderer) RegisterFuncs(r gmrenderer.NodeRendererFuncRegisterer) {
	r.Register(kindCallout, renderCallout)
}

// blockID is an Obsidian block id (^id) ending a paragraph or list item.
var blockID = regexp.MustCompile(`[ \t\n]\^([A-Za-z0-9-]+)[ \t]*</(p|li)>`)

// blockAnchors puts each block id's anchor where the id was written, so
// that [[Page#^id]] leads there; the id itself is not shown. Without
// anchors (an embedded page, whose ids are its own page's), the id just
// goes.
func blockAnchors(out []byte, anchors bool) []byte {
	if !bytes.Contains(out, []byte("^")) {
		return out
	}
	if !anchors {
		return blockID.ReplaceAll(out, []byte(`</$2>`))
	}
	return blockID.ReplaceAll(out, []byte(`<a class="block-id" id="^$1" aria-hidden="true"></a></$2>`))
}

// imageExts are the attachments an embed shows as an image.
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true, ".avif": true, ".bmp": true}

func isImage(target string) bool { return imageExts[strings.ToLower(path.Ext(target))] }
