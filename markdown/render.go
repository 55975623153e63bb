package markdown

import (
	"bytes"
	"cmp"
	"html"
	"path"
	"regexp"
	"slices"
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
// emptied: a page is text someone else wrote. embedRenderer is the same but
// for heading IDs: an embedded section's headings must not take the
// anchors of the page's own.
var renderer, embedRenderer = newRenderer(true), newRenderer(false)

func newRenderer(headingIDs bool) goldmark.Markdown {
	opts := []parser.Option{
		parser.WithBlockParsers(util.Prioritized(admonitions{}, 550)),
		parser.WithASTTransformers(util.Prioritized(callouts{}, 100)),
	}
	if headingIDs {
		opts = append(opts, parser.WithAutoHeadingID())
	}
	return goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
		goldmark.WithParserOptions(opts...),
		goldmark.WithRendererOptions(gmrenderer.WithNodeRenderers(util.Prioritized(lineBreaks{}, 100), util.Prioritized(vaultRenderer{}, 100))),
	)
}

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
// resolves to nothing; Markdown links stay as written. Embeds of pages show
// as links; RenderWith shows them inline.
func Render(body string, resolve func(Link) Target) (string, error) {
	return RenderWith(body, Options{Resolve: resolve})
}

// RenderWith returns the HTML of a page body, its wikilinks resolved and
// its embeds shown as o says (embed.go).
func RenderWith(body string, o Options) (string, error) {
	st := &renderState{host: o.Path}
	return st.render(body, 0, o, nil)
}

// render renders body, which is body[base:] of the page at o.Path; stack
// holds the embeds being shown around it, outermost first.
func (st *renderState) render(body string, base int, o Options, stack []frame) (string, error) {
	p := parse(body)
	embedded := len(stack) > 0
	var src strings.Builder
	var wikis []Link
	last := 0
	for _, e := range st.edits(p, o.Path, embedded) {
		// Each wikilink stands in the source as a private-use mark that
		// Markdown leaves alone, and becomes its link in the HTML; in an
		// embedded page, a relative Markdown link is made relative to the
		// page shown.
		src.WriteString(body[last:e.Start])
		if e.link >= 0 {
			src.WriteString(mark(len(wikis)))
			wikis = append(wikis, p.doc.Links[e.link])
		} else {
			src.WriteString(e.Text)
		}
		last = e.End
	}
	src.WriteString(body[last:])
	var buf bytes.Buffer
	r := renderer
	if embedded {
		r = embedRenderer
	}
	if err := r.Convert([]byte(src.String()), &buf); err != nil {
		return "", err
	}
	out := blockAnchors(buf.Bytes(), !embedded)
	if len(wikis) == 0 {
		return string(out), nil
	}
	resolve := o.Resolve
	if resolve == nil {
		resolve = func(Link) Target { return Target{} }
	}
	// One pass over the HTML puts each wikilink in place of its mark (the
	// first mark of each number, as a body could hold look-alikes).
	var b strings.Builder
	b.Grow(len(out) + len(wikis)*64)
	used := make([]bool, len(wikis))
	tag := false // the HTML written so far ends inside a tag
	for {
		i := bytes.Index(out, markOpen)
		if i < 0 {
			break
		}
		j := bytes.Index(out[i+len(markOpen):], markClose)
		if j < 0 {
			break
		}
		n, err := strconv.Atoi(string(out[i+len(markOpen) : i+len(markOpen)+j]))
		end := i + len(markOpen) + j + len(markClose)
		if err != nil || n < 0 || n >= len(wikis) || used[n] {
			b.Write(out[:end]) // not one of ours: as it was
			tag = inTag(tag, out[:end])
			out = out[end:]
			continue
		}
		used[n] = true
		l := wikis[n]
		if tag = inTag(tag, out[:i]); tag {
			// In an attribute (an image's alt text holding a wikilink):
			// the link's text, as text.
			b.Write(out[:i])
			b.WriteString(html.EscapeString(linkText(l)))
			out = out[end:]
			continue
		}
		t := resolve(l)
		block, ok := "", false
		if l.Embed && !isImage(l.Target) {
			if block, ok, err = st.embed(l, t, base, o, stack); err != nil {
				return "", err
			}
		}
		tag = false // a link or a block, whole
		if !ok {
			b.Write(out[:i])
			b.WriteString(wikiHTML(l, t))
			out = out[end:]
			continue
		}
		// An embed is a block: the paragraph holding only it goes.
		before, after := out[:i], out[end:]
		if bytes.HasSuffix(before, []byte("<p>")) && bytes.HasPrefix(after, []byte("</p>")) {
			before, after = before[:len(before)-len("<p>")], after[len("</p>"):]
			if len(after) > 0 && after[0] == '\n' {
				after = after[1:]
			}
		}
		b.Write(before)
		b.WriteString(block)
		out = after
	}
	b.Write(out)
	return b.String(), nil
}

// A bodyEdit is a wikilink to mark (link: its index in the page's links)
// or a Markdown link destination to rewrite (link -1).
type bodyEdit struct {
	Edit
	link int
}

// edits are the changes render makes to a body before it goes to goldmark,
// in order: every wikilink, and in an embedded page (from, not the page
// shown), each relative Markdown link made relative to the page shown, so
// that it leads where it leads on its own page.
func (st *renderState) edits(p *page, from string, embedded bool) []bodyEdit {
	var out []bodyEdit
	relink := embedded && st.host != "" && from != "" && path.Dir(from) != path.Dir(st.host)
	for i, l := range p.doc.Links {
		switch {
		case l.Kind == KindWiki:
			out = append(out, bodyEdit{Edit{l.Start, l.End, ""}, i})
		case relink:
			to, ok := ResolveMarkdown(from, l.Target)
			if !ok {
				continue
			}
			out = append(out, bodyEdit{Edit{l.TargetStart, l.TargetEnd, RelativeLink(st.host, to)}, -1})
		}
	}
	// Links that share a definition share its destination; a wikilink and
	// a destination never overlap (a destination is opaque to wikilinks),
	// but an edit that would is dropped rather than garble the text.
	slices.SortStableFunc(out, func(a, b bodyEdit) int { return cmp.Or(a.Start-b.Start, a.End-b.End) })
	kept := out[:0]
	end := 0
	for _, e := range out {
		if e.Start < end {
			continue
		}
		kept = append(kept, e)
		end = e.End
	}
	return kept
}

var markOpen, markClose = []byte("\uE000"), []byte("\uE001")

func mark(i int) string { return "\uE000" + strconv.Itoa(i) + "\uE001" }

// inTag reports whether HTML stops inside a tag after more of it, when it
// did (open) before: goldmark escapes every "<" of text, so a "<" after the
// last ">" opens one.
func inTag(open bool, more []byte) bool {
	lt, gt := bytes.LastIndexByte(more, '<'), bytes.LastIndexByte(more, '>')
	if lt < 0 && gt < 0 {
		return open
	}
	return lt > gt
}

// linkText is what a wikilink shows: its alias, else its target and heading.
func linkText(l Link) string {
	text := l.Alias
	if text == "" {
		text = l.Target
		if l.Heading != "" {
			text = strings.TrimPrefix(text+" > "+l.Heading, " > ")
		}
	}
	return text
}

func wikiHTML(l Link, t Target) string {
	text := linkText(l)
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
