package markdown

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// Options say how RenderWith treats what a body links to and embeds. The
// zero value renders every wikilink unresolved and every embed of a page as
// a link to it.
type Options struct {
	// Path is the page the body is, named as Embed names pages ("" for text
	// that is no page: a task's body). An embed of a page in itself is
	// refused by it, and relative links in embedded pages are made relative
	// to the page shown.
	Path string
	// Resolve says where a wikilink goes; nil: nowhere.
	Resolve func(Link) Target
	// Embed returns the page an embed of a page (![[Note]],
	// ![[Note#Section]], ![[Note#^block]]) shows, or false when there is
	// none the reader may see. Nil: embeds of pages show as links. The
	// package reads nothing itself: the caller decides what a reader may
	// see, and reads it.
	Embed func(Link) (Embedded, bool)
}

// An Embedded is a page an embed shows.
type Embedded struct {
	Path    string  // the page, named the same way each time: loops are found by it
	Body    string  // its body, without frontmatter
	Options Options // how its own links and embeds render (their Path is Path)
}

// The bounds of embeds: how deep embeds in embedded pages go (past it, an
// embed is a link), how many one rendering shows inline (the rest are
// links), and how much of an embedded page's source shows (the rest is a
// link to it).
const (
	EmbedDepth = 3
	EmbedLimit = 20
	EmbedBytes = 64 << 10
)

// renderState is what one rendering and the embeds in it share.
type renderState struct {
	host   string // the page shown
	embeds int    // embeds shown so far
}

// A frame is an embed being shown: the page holding its link, and where
// the link is in that page's body.
type frame struct {
	path string
	link int
}

// embed returns the HTML block that shows what embed l (at base+l.Start in
// the page o.Path) embeds, or false when it shows as a plain link: not a
// page, too deep, too many.
func (st *renderState) embed(l Link, t Target, base int, o Options, stack []frame) (string, bool, error) {
	if o.Embed == nil || len(stack) >= EmbedDepth || st.embeds >= EmbedLimit {
		return "", false, nil
	}
	e, ok := o.Embed(l)
	if !ok {
		if t.Resolved { // a file, not a page: the link leads to it
			return "", false, nil
		}
		return unresolvedEmbed(l, t, "No page is called “"+l.Target+"” yet."), true, nil
	}
	st.embeds++
	name := l.Target
	if name == "" {
		name = strings.TrimSuffix(e.Path[strings.LastIndexByte(e.Path, '/')+1:], ".md")
	}
	start, end := 0, len(e.Body)
	switch {
	case l.Heading == "":
	case strings.HasPrefix(l.Heading, "^"):
		if start, end, ok = blockRange(e.Body, l.Heading[1:]); !ok {
			return unresolvedEmbed(l, t, name+" has no block "+l.Heading+"."), true, nil
		}
	default:
		if start, end, ok = sectionRange(e.Body, l.Heading); !ok {
			return unresolvedEmbed(l, t, name+" has no section “"+l.Heading+"”."), true, nil
		}
	}
	// A loop comes back to an embed being shown: the part to show holds
	// its link.
	stack = append(stack, frame{o.Path, base + l.Start})
	for _, f := range stack {
		if f.path != "" && strings.EqualFold(f.path, e.Path) && start <= f.link && f.link < end {
			return unresolvedEmbed(l, t, "Not shown: it would embed “"+name+"” in itself."), true, nil
		}
	}
	cut := false
	if end-start > EmbedBytes {
		end = start + EmbedBytes
		if nl := strings.LastIndexByte(e.Body[start:end], '\n'); nl > 0 {
			end = start + nl + 1
		}
		cut = true
	}
	eo := e.Options
	eo.Path = e.Path
	inner, err := st.render(e.Body[start:end], start, eo, stack)
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	b.WriteString(`<div class="embed">`)
	b.WriteString(embedTitle(l, t))
	b.WriteString("\n")
	b.WriteString(inner)
	if cut {
		if t.Href != "" {
			b.WriteString(`<p class="embed-note"><a href="` + html.EscapeString(t.Href) + `">The rest is on the page.</a></p>`)
		} else {
			b.WriteString(`<p class="embed-note">The rest is on the page.</p>`)
		}
	}
	b.WriteString("</div>\n")
	return b.String(), true, nil
}

// embedTitle is the line above an embed: a link to what it embeds.
func embedTitle(l Link, t Target) string {
	l.Embed = false // the title is a plain wikilink, not a card
	return `<p class="embed-title">` + wikiHTML(l, t) + `</p>`
}

// unresolvedEmbed is an embed that shows nothing, and why.
func unresolvedEmbed(l Link, t Target, why string) string {
	return `<div class="embed embed-unresolved">` + embedTitle(l, t) + `<p class="embed-note">` + html.EscapeString(why) + "</p></div>\n"
}

// sectionRange finds the section a heading reference names — a heading's
// text, or Obsidian's Note#Heading#Subheading path — and returns its
// extent: its heading, to the next heading of the same or a higher level.
// Of several matches, the first.
func sectionRange(body, heading string) (int, int, bool) {
	d := Parse(body)
	m := d.match(splitPath(strings.ReplaceAll(heading, "#", ">")))
	if len(m) == 0 {
		return 0, 0, false
	}
	h := d.Headings[m[0]]
	return h.Start, h.End, true
}

// blockRange finds the paragraph or list item text that ends in Obsidian's
// block id ^id, and returns its extent.
func blockRange(body, id string) (int, int, bool) {
	if !blockName.MatchString(id) || !strings.Contains(body, "^"+id) {
		return 0, 0, false
	}
	p := parse(body)
	if p.root == nil {
		return 0, 0, false
	}
	tail := []byte("^" + id)
	start, end := 0, 0
	_ = ast.Walk(p.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		para, ok := n.(*ast.Paragraph)
		if !entering || !ok || para.Lines().Len() == 0 {
			return ast.WalkContinue, nil
		}
		last := para.Lines().At(para.Lines().Len() - 1)
		line := bytes.TrimRight(last.Value(p.src), " \t\r\n")
		if !bytes.HasSuffix(line, tail) {
			return ast.WalkSkipChildren, nil
		}
		if k := len(line) - len(tail) - 1; k < 0 || line[k] != ' ' && line[k] != '\t' {
			return ast.WalkSkipChildren, nil
		}
		start, end = para.Lines().At(0).Start, last.Stop
		return ast.WalkStop, nil
	})
	return start, end, end > start
}

// blockName is what a block id may hold (blockID in vault.go).
var blockName = regexp.MustCompile(`^[A-Za-z0-9-]+$`)
