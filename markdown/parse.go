package markdown

import (
	"bytes"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// A Heading is a section title of the page. Only headings at the top level of
// the body count: one inside a block quote or list item cannot head a section,
// because its section would cut through the quote or list.
type Heading struct {
	Level        int
	Text         string   // plain text: markup stripped, code and emoji kept, spaces collapsed
	Path         []string // texts of the enclosing headings, then this one
	Line         int      // 1-based line of the heading
	Start        int      // byte offset of the heading's first line
	ContentStart int      // byte offset just after the heading's last line
	End          int      // where the section ends: the next heading of level <= Level, or len(body)
}

// Link kinds.
const (
	KindWiki     = "wiki"
	KindMarkdown = "markdown"
)

// A Link is a [[wikilink]] or a Markdown link or image to something that may be
// a page or an attachment. Markdown links to URLs with a scheme, to
// "//host/..." and to a fragment of the same page are left out.
type Link struct {
	Kind string // KindWiki or KindMarkdown
	// Target is, for a wikilink, the target as written without #heading and
	// |alias, trimmed ("" in [[#Heading]]); for a Markdown link, the
	// destination without #fragment, with escapes resolved (so "Sub%20Folder/C.md"
	// is "Sub Folder/C.md").
	Target  string
	Heading string // the #heading or #fragment, if any
	Alias   string // a wikilink's |alias, or a Markdown link's text (an image's alt text), cut to 512 bytes
	Embed   bool   // ![[...]] or an image
	Line    int    // 1-based line of Start
	// Start and End delimit the whole link syntax. TargetStart and TargetEnd
	// delimit the target as written, which is what a rename replaces; for a
	// reference-style link ([text][ref]) that is the destination in its
	// definition ([ref]: dest), which other links may share.
	Start, End             int
	TargetStart, TargetEnd int
}

// A Doc is the structure of a page body.
type Doc struct {
	Headings []Heading
	Links    []Link // in order of Start
}

// A goldmark parser keeps no state between calls (each has its own
// context), so one serves every goroutine; the race detector agrees in the
// parallel tests. It reads MkDocs' admonitions and content tabs as the
// renderer does (vault.go): their indented bodies are Markdown, so the
// links there are links (indexed, and rewritten on a move), not code.
var mdParser = goldmark.New(goldmark.WithParserOptions(
	parser.WithBlockParsers(util.Prioritized(admonitions{}, 550)))).Parser()

// parseMarkdown returns the goldmark tree of src, or nil if goldmark panics:
// it is third-party code fed with whatever a client sends, and a bug in it
// must not take the server down. (This package's own code is not shielded
// that way, so that the fuzz tests see its panics.)
func parseMarkdown(src []byte) (root ast.Node) {
	defer func() {
		if recover() != nil {
			root = nil
		}
	}()
	return mdParser.Parse(text.NewReader(src))
}

type span struct{ start, end int }

// page is a parsed body with what the passes over it need.
type page struct {
	src        []byte
	root       ast.Node
	lineStarts []int
	opaque     []span              // code, HTML and autolinks: no wikilinks there
	spans      map[ast.Node]span   // extents of code spans, raw HTML, autolinks and links
	defs       map[string]span     // link reference label -> destination
	linkTexts  map[ast.Node]string // text of the links read so far
	headings   []*ast.Heading      // top-level headings
	links      []ast.Node          // links and images, inner before outer
	wikilinks  []Link              // found before the Markdown links and headings
	defLinks   []Link              // every link reference definition, as a link of its own
	comments   []span              // the insides of HTML comments (none in a comment's own parse)
	inComment  bool                // this is the parse of a comment's inside
	doc        Doc
}

// Parse reads the structure of a page body: headings (ATX and setext) and
// links. Goldmark decides what is code, HTML, a heading or a link; wikilinks,
// which are not CommonMark, are then found in the text outside code and HTML.
// Parse never panics: should the Markdown parser itself fail, the Doc is empty.
func Parse(body string) *Doc {
	d := parse(body).doc
	return &d
}

// ParsePage reads a whole page: it splits off the frontmatter and parses the
// body, with every line number (of headings, links, and the heading lists of
// section errors) counted in the whole file, as a reader of the file and
// read_page see it. Byte offsets stay offsets in body.
func ParsePage(content string) (fm, body string, d *Doc) {
	fm, body, _ = Split(content)
	d = Parse(body)
	if n := LinesBefore(content, body); n > 0 {
		for i := range d.Headings {
			d.Headings[i].Line += n
		}
		for i := range d.Links {
			d.Links[i].Line += n
		}
	}
	return fm, body, d
}

// LinesBefore is the number of lines of content before body, its tail (as
// Split returns it): the frontmatter and its delimiters.
func LinesBefore(content, body string) int {
	if len(body) > len(content) || content[len(content)-len(body):] != body {
		return 0
	}
	return strings.Count(content[:len(content)-len(body)], "\n")
}

func parse(body string) *page { return parseText(body, false) }

// parseText parses body; inComment when it is the inside of an HTML
// comment, whose own comments (an unclosed "<!--" at most) are not read.
func parseText(body string, inComment bool) (p *page) {
	p = &page{
		inComment: inComment,
		src:       []byte(body),
		spans:     map[ast.Node]span{},
		defs:      map[string]span{},
		linkTexts: map[ast.Node]string{},
	}
	p.lineStarts = append(p.lineStarts, 0)
	for i, c := range p.src {
		if c == '\n' {
			p.lineStarts = append(p.lineStarts, i+1)
		}
	}
	if p.root = parseMarkdown(p.src); p.root == nil {
		return p
	}
	p.collect()
	type found struct {
		node ast.Node
		link Link
	}
	var md []found
	for _, n := range p.links {
		if l, ok := p.markdownLink(n); ok {
			md = append(md, found{n, l})
		}
	}
	// Link destinations have joined the opaque spans: "[[" in a URL is no wikilink.
	slices.SortFunc(p.opaque, func(a, b span) int { return a.start - b.start })
	p.wikilinks = p.findWikilinks()
	p.doc.Links = append(p.doc.Links, p.wikilinks...)
	for _, f := range md {
		// The link text may hold wikilinks, so it is read after them; inner
		// links come first, and an outer link reuses their text.
		f.link.Alias = truncate(p.inlineText(f.node), maxAlias)
		p.linkTexts[f.node] = f.link.Alias
		p.doc.Links = append(p.doc.Links, f.link)
	}
	// A definition no link uses (its uses sit where the parser saw code or
	// HTML: an MkDocs admonition's body, a comment) still names a page that
	// a move must find and rewrite: it is a link of its own.
	used := map[int]bool{}
	for _, f := range md {
		used[f.link.TargetStart] = true
	}
	for _, l := range p.defLinks {
		if !used[l.TargetStart] {
			p.doc.Links = append(p.doc.Links, l)
		}
	}
	p.doc.Links = append(p.doc.Links, p.commentLinks()...)
	slices.SortStableFunc(p.doc.Links, func(a, b Link) int { return a.Start - b.Start })
	p.doc.Headings = p.sections()
	return p
}

// collect walks the tree once, noting what the later passes need.
func (p *page) collect() {
	_ = ast.Walk(p.root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			switch n.(type) {
			case *ast.Link, *ast.Image:
				p.links = append(p.links, n)
			}
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			if n.Parent() == p.root {
				p.headings = append(p.headings, n)
			}
		case *ast.CodeSpan:
			p.addOpaque(n, span{n.Pos(), p.codeSpanEnd(n)})
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			if n.Segments.Len() > 0 {
				s := span{n.Segments.At(0).Start, n.Segments.At(n.Segments.Len() - 1).Stop}
				p.addOpaque(n, s)
				p.addComments(s)
			}
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			end := bytes.IndexByte(p.src[max(n.Pos(), 0):], '>')
			if n.Pos() >= 0 && end >= 0 {
				p.addOpaque(n, span{n.Pos(), n.Pos() + end + 1})
			}
			return ast.WalkSkipChildren, nil
		case *ast.FencedCodeBlock, *ast.CodeBlock, *ast.HTMLBlock:
			s := p.blockSpan(n)
			p.addOpaque(n, s)
			if h, ok := n.(*ast.HTMLBlock); ok && h.HTMLBlockType == ast.HTMLBlockType2 {
				p.addComments(s)
			}
			p.definitionsIn(n)
			return ast.WalkSkipChildren, nil
		case *ast.LinkReferenceDefinition:
			if dest, ok := p.definitionTarget(n); ok {
				p.opaque = append(p.opaque, dest)
				// The first definition of a label wins, as in CommonMark.
				if key := util.ToLinkReference(n.Label); !p.hasDef(key) {
					p.defs[key] = dest
				}
				if l, ok := p.definitionLink(n.Lines().At(0).Start, dest); ok {
					p.defLinks = append(p.defLinks, l)
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
}

func (p *page) hasDef(key string) bool {
	_, ok := p.defs[key]
	return ok
}

func (p *page) addOpaque(n ast.Node, s span) {
	if s.start < 0 || s.end < s.start || s.end > len(p.src) {
		return
	}
	p.spans[n] = s
	p.opaque = append(p.opaque, s)
}

// codeSpanEnd finds the end of the closing backtick run of a code span:
// the first later run of exactly as many backticks as the opening one.
func (p *page) codeSpanEnd(n *ast.CodeSpan) int {
	src, start := p.src, n.Pos()
	if start < 0 || start >= len(src) || src[start] != '`' {
		return -1
	}
	width := backticks(src, start)
	for i := start + width; i < len(src); {
		if src[i] != '`' {
			i++
			continue
		}
		run := backticks(src, i)
		if run == width {
			return i + run
		}
		i += run
	}
	return -1
}

func backticks(src []byte, i int) int {
	n := 0
	for i+n < len(src) && src[i+n] == '`' {
		n++
	}
	return n
}

// blockSpan covers a code or HTML block from the start of its first line
// (an opening fence has no segment of its own) to the end of its last.
// A closing fence holds no text, so it is left out.
func (p *page) blockSpan(n ast.Node) span {
	lines := n.Lines()
	start := n.Pos()
	if start < 0 && lines.Len() > 0 {
		start = lines.At(0).Start
	}
	if start < 0 || start > len(p.src) {
		return span{-1, -1}
	}
	end := p.lineEnd(start)
	if lines.Len() > 0 {
		end = max(end, lines.At(lines.Len()-1).Stop)
	}
	if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
		end = max(end, h.ClosureLine.Stop)
	}
	return span{p.lineStarts[p.lineIndex(start)], end}
}

// lineEnd returns the offset of the line break ending the line that holds off,
// or len(src).
func (p *page) lineEnd(off int) int {
	if i := bytes.IndexByte(p.src[off:], '\n'); i >= 0 {
		return off + i
	}
	return len(p.src)
}

// lineIndex returns the 0-based line holding offset off.
func (p *page) lineIndex(off int) int {
	return sort.Search(len(p.lineStarts), func(i int) bool { return p.lineStarts[i] > off }) - 1
}

// inOpaque reports whether [start, end) touches code, HTML or an autolink.
func (p *page) inOpaque(start, end int) bool {
	i := sort.Search(len(p.opaque), func(i int) bool { return p.opaque[i].end > start })
	for ; i < len(p.opaque) && p.opaque[i].start < end; i++ {
		if p.opaque[i].end > start {
			return true
		}
	}
	return false
}

// escaped reports whether the byte at i follows an odd number of backslashes.
func escaped(src []byte, i int) bool {
	n := 0
	for i-n-1 >= 0 && src[i-n-1] == '\\' {
		n++
	}
	return n%2 == 1
}

// findWikilinks scans the source for [[...]] outside opaque spans.
func (p *page) findWikilinks() []Link {
	var links []Link
	for i := 0; i < len(p.src); {
		j := bytes.Index(p.src[i:], []byte("[["))
		if j < 0 {
			break
		}
		i += j
		if l, ok := p.wikilinkAt(i); ok {
			links = append(links, l)
			i = l.End
			continue
		}
		i++
	}
	return links
}

// wikilinkAt reads a wikilink whose "[[" is at i: [[Target#Heading|Alias]],
// each part optional but one of Target and Heading, on one line, without
// brackets inside. In tables the pipe is written "\|", so that form is
// accepted too.
func (p *page) wikilinkAt(i int) (Link, bool) {
	src := p.src
	if escaped(src, i) {
		return Link{}, false
	}
	k := i + 2
	for ; k < len(src); k++ {
		if c := src[k]; c == '\n' || c == '\r' || c == '[' || c == ']' {
			break
		}
	}
	if k+1 >= len(src) || src[k] != ']' || src[k+1] != ']' {
		return Link{}, false
	}
	l := Link{Kind: KindWiki, Start: i, End: k + 2}
	if i > 0 && src[i-1] == '!' && !escaped(src, i-1) {
		l.Start, l.Embed = i-1, true
	}
	if p.inOpaque(l.Start, l.End) {
		return Link{}, false
	}
	end := k // of target and heading
	if bar := bytes.IndexByte(src[i+2:k], '|'); bar >= 0 {
		end = i + 2 + bar
		l.Alias = string(bytes.TrimSpace(src[end+1 : k]))
		if end > i+2 && src[end-1] == '\\' {
			end--
		}
	}
	hash := end
	if h := bytes.IndexByte(src[i+2:end], '#'); h >= 0 {
		hash = i + 2 + h
		l.Heading = string(bytes.TrimSpace(src[hash+1 : end]))
	}
	l.TargetStart, l.TargetEnd = trimSpan(src, i+2, hash)
	l.Target = string(src[l.TargetStart:l.TargetEnd])
	if l.Target == "" && l.Heading == "" {
		return Link{}, false
	}
	l.Line = p.lineIndex(l.Start) + 1
	return l, true
}

// trimSpan narrows [start, end) to exclude surrounding white space; an empty
// result sits at start.
func trimSpan(src []byte, start, end int) (int, int) {
	s, e := start, end
	for s < e && isSpace(src[s]) {
		s++
	}
	for e > s && isSpace(src[e-1]) {
		e--
	}
	if s == e {
		return start, start
	}
	return s, e
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// markdownLink reads a link or image node back against the source. Goldmark
// gives where it starts and its destination; the label, destination and title
// are found here by the CommonMark rules and checked against goldmark's
// destination, so a disagreement drops the link rather than give offsets a
// rename would corrupt the page with.
func (p *page) markdownLink(n ast.Node) (Link, bool) {
	var dest []byte
	var ref *ast.ReferenceLink
	l := Link{Kind: KindMarkdown, Start: n.Pos()}
	open := l.Start
	switch n := n.(type) {
	case *ast.Link:
		dest, ref = n.Destination, n.Reference
	case *ast.Image:
		dest, ref = n.Destination, n.Reference
		l.Embed = true
		open++
	}
	src := p.src
	if l.Start < 0 || open >= len(src) || src[open] != '[' {
		return Link{}, false
	}
	closer := p.labelEnd(n, open)
	if closer < 0 {
		return Link{}, false
	}
	var target span
	if ref != nil {
		l.End = closer + 1
		if ref.Type != ast.ReferenceLinkShortcut {
			l.End = rawLabelEnd(src, closer+1) + 1
			if l.End == 0 {
				return Link{}, false
			}
		}
		var ok bool
		if target, ok = p.defs[util.ToLinkReference(ref.Value)]; !ok {
			return Link{}, false
		}
	} else {
		i := closer + 1
		if i >= len(src) || src[i] != '(' {
			return Link{}, false
		}
		var ok bool
		if target, i, ok = destinationAt(src, skipSpace(src, i+1), dest); !ok {
			return Link{}, false
		}
		if i = skipSpace(src, i); i < len(src) && src[i] != ')' {
			i = skipSpace(src, titleEnd(src, i))
		}
		if i >= len(src) || src[i] != ')' {
			return Link{}, false
		}
		l.End = i + 1
		p.opaque = append(p.opaque, span{closer + 1, l.End})
	}
	p.spans[n] = span{l.Start, l.End}
	raw := src[target.start:target.end]
	path, frag, hasFrag := bytes.Cut(raw, []byte("#"))
	if len(path) == 0 || isURL(path) {
		return Link{}, false
	}
	l.TargetStart, l.TargetEnd = target.start, target.start+len(path)
	l.Target = unescapeDestination(path)
	if hasFrag {
		l.Heading = unescapeDestination(frag)
	}
	l.Line = p.lineIndex(l.Start) + 1
	return l, true
}

// labelEnd finds the "]" closing the link text that opens at open. Brackets
// nest; escaped ones, and those inside code spans, raw HTML, autolinks and
// inner links, do not count.
func (p *page) labelEnd(n ast.Node, open int) int {
	var skips []span
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if s, ok := p.spans[c]; ok && entering && c != n {
			skips = append(skips, s)
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	slices.SortFunc(skips, func(a, b span) int { return a.start - b.start })
	depth, k := 0, 0
	for i := open; i < len(p.src); i++ {
		for k < len(skips) && skips[k].end <= i {
			k++
		}
		if k < len(skips) && skips[k].start <= i {
			i = skips[k].end - 1
			continue
		}
		switch p.src[i] {
		case '\\':
			if i+1 < len(p.src) && util.IsPunct(p.src[i+1]) {
				i++
			}
		case '[':
			depth++
		case ']':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// rawLabelEnd returns the "]" closing a link label that opens with "[" at i
// (a reference label: no nesting, no inline markup), or -1.
func rawLabelEnd(src []byte, i int) int {
	if i >= len(src) || src[i] != '[' {
		return -1
	}
	for i++; i < len(src); i++ {
		switch src[i] {
		case '\\':
			if i+1 < len(src) && util.IsPunct(src[i+1]) {
				i++
			}
		case '[':
			return -1
		case ']':
			return i
		}
	}
	return -1
}

// skipSpace skips blanks and line breaks, and after a line break the block
// quote markers that continue a paragraph inside a quote. (A continuation
// line cannot itself start with ">" without opening a quote, so a destination
// never does.)
func skipSpace(src []byte, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\r':
			i++
		case '\n':
			i++
			for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '>') {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// destinationAt matches the link destination dest (as goldmark read it) at i,
// either as <dest> or bare, and returns its span and the offset after it.
func destinationAt(src []byte, i int, dest []byte) (span, int, bool) {
	if len(dest) == 0 {
		return span{}, 0, false
	}
	if i < len(src) && src[i] == '<' && bytes.HasPrefix(src[i+1:], dest) {
		if j := i + 1 + len(dest); j < len(src) && src[j] == '>' {
			return span{i + 1, j}, j + 1, true
		}
	}
	if bytes.HasPrefix(src[i:], dest) {
		return span{i, i + len(dest)}, i + len(dest), true
	}
	return span{}, 0, false
}

// titleEnd returns the offset after a link title that starts at i, or i when
// there is none.
func titleEnd(src []byte, i int) int {
	if i >= len(src) {
		return i
	}
	closer := src[i]
	switch closer {
	case '"', '\'':
	case '(':
		closer = ')'
	default:
		return i
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case closer:
			return j + 1
		}
	}
	return i
}

// definitionTarget finds the destination of a link reference definition
// "[label]: dest".
func (p *page) definitionTarget(n *ast.LinkReferenceDefinition) (span, bool) {
	if n.Lines().Len() == 0 {
		return span{}, false
	}
	src := p.src
	i := rawLabelEnd(src, n.Lines().At(0).Start)
	if i < 0 || i+1 >= len(src) || src[i+1] != ':' {
		return span{}, false
	}
	s, _, ok := destinationAt(src, skipSpace(src, i+2), n.Destination)
	return s, ok
}

// isURL reports whether a destination has a scheme ("https:", "mailto:") or
// is network-path relative ("//host/x"): not a page in the workspace.
func isURL(dest []byte) bool {
	if bytes.HasPrefix(dest, []byte("//")) {
		return true
	}
	for i, c := range dest {
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':':
			return i > 0
		default:
			return false
		}
	}
	return false
}

// unescapeDestination resolves backslash escapes, entities and
// percent-escapes, as a browser would see the destination.
func unescapeDestination(b []byte) string {
	s := string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(b))))
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// maxAlias bounds a Markdown link's text. Labels nest (an image in an image
// in a link...), and each level's text holds the levels inside it, so an
// unbounded one costs quadratic time and memory on a hostile page.
const maxAlias = 512

// truncate cuts s to at most n bytes on a character boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// definitionLink makes the link of a definition whose label opens at start
// and whose destination (inside any angle brackets) is dest.
func (p *page) definitionLink(start int, dest span) (Link, bool) {
	src := p.src
	end := dest.end
	if dest.start > 0 && src[dest.start-1] == '<' && end < len(src) && src[end] == '>' {
		end++
	}
	raw := src[dest.start:dest.end]
	path, frag, hasFrag := bytes.Cut(raw, []byte("#"))
	if len(path) == 0 || isURL(path) {
		return Link{}, false
	}
	label := rawLabelEnd(src, start)
	if label < 0 {
		return Link{}, false
	}
	l := Link{Kind: KindMarkdown, Start: start, End: end, TargetStart: dest.start, TargetEnd: dest.start + len(path)}
	l.Alias = truncate(string(src[start+1:label]), maxAlias)
	l.Target = unescapeDestination(path)
	if hasFrag {
		l.Heading = unescapeDestination(frag)
	}
	l.Line = p.lineIndex(start) + 1
	return l, true
}

// mkdocsBlock matches the line that opens an MkDocs block whose indented
// body is Markdown: an admonition (!!! note), a collapsible one (??? note,
// ???+ note) or a content tab (=== "Tab").
var mkdocsBlock = regexp.MustCompile(`^[ \t]*(!!!|\?\?\?\+?|===)([ \t]|$)`)

// definitionsIn finds the link reference definitions in an indented code
// block right after a line that looks like an MkDocs block's opening but
// did not open one (it continues a paragraph: "Para.\n!!! note"), where
// MkDocs may still read Markdown. Fenced code inside stays code, and so
// does every other code block. (An admonition that opens is parsed as
// Markdown, and an HTML comment's inside is parsed apart: commentLinks.)
func (p *page) definitionsIn(n ast.Node) {
	lines := n.Lines()
	if lines.Len() == 0 {
		return
	}
	if _, ok := n.(*ast.CodeBlock); !ok {
		return
	}
	first := p.lineIndex(lines.At(0).Start)
	prev := first - 1
	for prev >= 0 && len(bytes.TrimSpace(p.line(prev))) == 0 {
		prev--
	}
	if prev < 0 || !mkdocsBlock.Match(p.line(prev)) {
		return
	}
	var fence []byte // the open fence inside the block, if any
	for i := range lines.Len() {
		seg := lines.At(i)
		if seg.Start < 0 || seg.Stop > len(p.src) || seg.Start >= seg.Stop {
			continue
		}
		line := p.src[seg.Start:seg.Stop]
		start := seg.Start + len(line) - len(bytes.TrimLeft(line, " \t"))
		rest := bytes.TrimLeft(line, " \t")
		if fence != nil {
			if bytes.HasPrefix(rest, fence) && len(bytes.TrimSpace(bytes.TrimLeft(rest, string(fence[:1])))) == 0 {
				fence = nil
			}
			continue
		}
		if f := fenceOpen(rest); f != nil {
			fence = f
			continue
		}
		if start < seg.Stop && p.src[start] == '[' {
			if l, ok := p.lineDefinition(start, seg.Stop); ok {
				p.defLinks = append(p.defLinks, l)
			}
		}
	}
}

// addComments notes the insides of the HTML comments in s (a block or
// inline HTML): each from after its "<!--" to its "-->" (or to the end of
// s, when it does not close there).
func (p *page) addComments(s span) {
	if p.inComment || s.start < 0 || s.end > len(p.src) {
		return
	}
	for i := s.start; i < s.end; {
		open := bytes.Index(p.src[i:s.end], []byte("<!--"))
		if open < 0 {
			return
		}
		in := i + open + len("<!--")
		out := s.end
		if close := bytes.Index(p.src[in:s.end], []byte("-->")); close >= 0 {
			out = in + close
		}
		p.comments = append(p.comments, span{in, out})
		i = out + len("-->")
	}
}

// commentLinks are the Markdown links (inline ones and definitions) inside
// HTML comments: a commented-out link still names a page, and a move must
// keep it right. The inside is parsed as Markdown of its own, so its links
// are read by the same rules as the page's; a reference there to a
// definition outside the comment stays unread (the definition counts
// itself). Wikilinks in comments stay out, as before.
func (p *page) commentLinks() []Link {
	var out []Link
	for _, c := range p.comments {
		if c.start >= c.end || !bytes.ContainsAny(p.src[c.start:c.end], "[") {
			continue
		}
		lines := p.lineIndex(c.start)
		for _, l := range parseText(string(p.src[c.start:c.end]), true).doc.Links {
			if l.Kind != KindMarkdown {
				continue
			}
			l.Start, l.End = l.Start+c.start, l.End+c.start
			l.TargetStart, l.TargetEnd = l.TargetStart+c.start, l.TargetEnd+c.start
			l.Line += lines
			out = append(out, l)
		}
	}
	return out
}

// fenceOpen returns the fence (``` or ~~~, as long as written) a line opens,
// or nil.
func fenceOpen(line []byte) []byte {
	if len(line) < 3 || line[0] != '`' && line[0] != '~' {
		return nil
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	if n < 3 || line[0] == '`' && bytes.IndexByte(line[n:], '`') >= 0 {
		return nil
	}
	return line[:n]
}

// lineDefinition reads "[label]: dest" starting at start, on the line that
// ends at stop.
func (p *page) lineDefinition(start, stop int) (Link, bool) {
	src := p.src[:stop]
	i := rawLabelEnd(src, start)
	if i <= start+1 || i+1 >= len(src) || src[i+1] != ':' {
		return Link{}, false
	}
	j := i + 2
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	var dest span
	switch {
	case j < len(src) && src[j] == '<':
		k := bytes.IndexByte(src[j+1:], '>')
		if k < 0 {
			return Link{}, false
		}
		dest = span{j + 1, j + 1 + k}
	default:
		k := j
		for k < len(src) && !isSpace(src[k]) {
			k++
		}
		dest = span{j, k}
	}
	if dest.start >= dest.end || bytes.ContainsAny(src[dest.start:dest.end], "\n\r") {
		return Link{}, false
	}
	return p.definitionLink(start, dest)
}

// line returns line i (0-based) of the source without its line break.
func (p *page) line(i int) []byte {
	start := p.lineStarts[i]
	return bytes.TrimRight(p.src[start:p.lineEnd(start)], "\r")
}
