package review

import (
	"sort"
	"strings"
	"sync"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/search"
)

// Anchoring: an annotation points at a section of a page by heading path, and
// optionally at a quote in it. Quotes are found again after edits by their
// exact text first (the occurrence whose surroundings and position match
// best), then by the closest match within the section.

// contextLen is how much text before and after a quote is kept to tell its
// occurrences apart.
const contextLen = 32

// minSimilarity is how much of a quote's words a stretch of the section must
// share to stand for it after an edit.
const minSimilarity = 0.6

// anchor is where an annotation sits in a page body.
type anchor struct {
	section  string // full heading path, "" for the whole page
	quote    *atrium.Quote
	offset   int // of the quote in the body, -1 without one
	orphaned bool
}

// sectionPath is the canonical form of a heading's path.
func sectionPath(h markdown.Heading) string { return strings.Join(h.Path, " > ") }

// page is a parsed page body with its headings indexed by canonical path, so
// that anchoring many threads costs a map lookup each, not a scan.
type page struct {
	body    string
	doc     *markdown.Doc
	byPath  map[string]markdown.Heading
	visible func() *markdown.Visible // read once, when a quote is not in the source
}

// newPage parses a page's content; its line numbers (in section errors) are
// file lines, its offsets the body's.
func newPage(content string) *page {
	_, body, doc := markdown.ParsePage(content)
	p := &page{body: body, doc: doc, byPath: map[string]markdown.Heading{}}
	p.visible = sync.OnceValue(func() *markdown.Visible { return markdown.NewVisible(body) })
	dups := map[string]bool{}
	for _, h := range p.doc.Headings {
		k := sectionPath(h)
		if _, seen := p.byPath[k]; seen {
			dups[k] = true
		}
		p.byPath[k] = h
	}
	for k := range dups {
		delete(p.byPath, k) // an ambiguous path goes through Section, which says so
	}
	return p
}

// section finds a heading by path: a unique canonical path directly, any
// other form the way Doc.Section does.
func (p *page) section(path string) (markdown.Heading, error) {
	if h, ok := p.byPath[path]; ok {
		return h, nil
	}
	return p.doc.Section(path)
}

// sectionAt is the innermost section holding byte offset off, "" when it
// comes before every heading.
func (p *page) sectionAt(off int) string {
	hs := p.doc.Headings
	// Headings are in document order: the innermost section holding off is
	// the last heading starting at or before it whose section reaches past it.
	i := sort.Search(len(hs), func(i int) bool { return hs[i].Start > off })
	for i--; i >= 0; i-- {
		if off < hs[i].End {
			return sectionPath(hs[i])
		}
	}
	return ""
}

// span is the byte range of a section ("" the whole body).
func (p *page) span(section string) (start, end int, err error) {
	if section == "" {
		return 0, len(p.body), nil
	}
	h, err := p.section(section)
	if err != nil {
		return 0, 0, err
	}
	return h.Start, h.End, nil
}

// quoteAt builds the quote of body[start:end] with its surroundings.
func quoteAt(body string, start, end int) *atrium.Quote {
	ps := max(0, start-contextLen)
	for ps > 0 && !runeStart(body, ps) {
		ps--
	}
	se := min(len(body), end+contextLen)
	for se < len(body) && !runeStart(body, se) {
		se++
	}
	return &atrium.Quote{Exact: body[start:end], Prefix: body[ps:start], Suffix: body[end:se]}
}

func runeStart(s string, i int) bool { return i >= len(s) || s[i]&0xC0 != 0x80 }

// findExact returns the offset of the occurrence of q.Exact in body[start:end]
// whose surroundings match q best, nearest to hint on ties; -1 if none.
func findExact(body string, start, end int, q *atrium.Quote, hint int) int {
	best, bestScore, bestDist := -1, -1, 0
	region := body[start:end]
	for i := 0; ; {
		j := strings.Index(region[i:], q.Exact)
		if j < 0 {
			break
		}
		off := start + i + j
		score := commonSuffix(body[:off], q.Prefix) + commonPrefix(body[off+len(q.Exact):], q.Suffix)
		dist := off - hint
		if dist < 0 {
			dist = -dist
		}
		if score > bestScore || score == bestScore && dist < bestDist {
			best, bestScore, bestDist = off, score, dist
		}
		i += j + max(1, len(q.Exact))
		if i >= len(region) {
			break
		}
	}
	return best
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

// findClosest finds the stretch of body[start:end] most like q.Exact, word
// for word, when its exact text is gone: the quote was edited. It returns the
// byte range, or ok false when nothing shares enough of its words.
func findClosest(body string, start, end int, q *atrium.Quote) (int, int, bool) {
	want := search.Tokenize(q.Exact)
	if len(want) == 0 {
		return 0, 0, false
	}
	need := map[string]int{}
	for _, t := range want {
		need[t]++
	}
	type tok struct {
		text       string
		start, end int
	}
	var toks []tok
	search.TokenizeFunc(body[start:end], func(t string, s, e int) { toks = append(toks, tok{t, start + s, start + e}) })
	bestScore, bs, be := 0.0, 0, 0
	for _, width := range []int{len(want), len(want) - 1, len(want) + 1, len(want) - 2, len(want) + 2} {
		if width <= 0 || width > len(toks) {
			continue
		}
		for i := 0; i+width <= len(toks); i++ {
			have := map[string]int{}
			shared := 0
			for _, t := range toks[i : i+width] {
				have[t.text]++
				if have[t.text] <= need[t.text] {
					shared++
				}
			}
			score := float64(shared) / float64(max(width, len(want)))
			// Ties go to the narrower stretch: a wider one that scores the
			// same only adds words that are not the quote's.
			if score > bestScore || score == bestScore && toks[i+width-1].end-toks[i].start < be-bs {
				first, last := i, i+width-1
				// Words at the edges the quote never had are its
				// neighbours, not part of it.
				for first < last && need[toks[first].text] == 0 {
					first++
				}
				for last > first && need[toks[last].text] == 0 {
					last--
				}
				bestScore, bs, be = score, toks[first].start, toks[last].end
			}
		}
	}
	if bestScore < minSimilarity {
		return 0, 0, false
	}
	return bs, be, true
}

// findBetween finds a quote edited inside: its old prefix and suffix still
// stand, close together, around text that shares enough of its words. That
// text, whatever its new length, is the quote now. The nearest such stretch
// to hint wins.
func findBetween(body string, start, end int, q *atrium.Quote, hint int) (int, int, bool) {
	if q.Prefix == "" || q.Suffix == "" {
		return 0, 0, false
	}
	want := search.Tokenize(q.Exact)
	if len(want) == 0 {
		return 0, 0, false
	}
	// An edit may double a quote's length and some: further apart, the two
	// surroundings are unlikely to be the quote's.
	maxGap := 2*len(q.Exact) + contextLen
	region := body[start:end]
	best, bestEnd, bestDist := -1, 0, 0
	for i, n := 0, 0; n < 1000; n++ {
		j := strings.Index(region[i:], q.Prefix)
		if j < 0 {
			break
		}
		s := start + i + j + len(q.Prefix)
		window := body[s:min(end, s+maxGap+len(q.Suffix))]
		if k := strings.Index(window, q.Suffix); k > 0 {
			e := s + k
			if similarity(want, body[s:e]) >= minSimilarity {
				dist := s - hint
				if dist < 0 {
					dist = -dist
				}
				if best < 0 || dist < bestDist {
					best, bestEnd, bestDist = s, e, dist
				}
			}
		}
		i += j + 1
		if i >= len(region) {
			break
		}
	}
	return best, bestEnd, best >= 0
}

// similarity is the share of words that a text and a quote's words have in
// common, over the longer of the two.
func similarity(want []string, text string) float64 {
	have := search.Tokenize(text)
	need := map[string]int{}
	for _, t := range want {
		need[t]++
	}
	shared := 0
	for _, t := range have {
		if need[t] > 0 {
			need[t]--
			shared++
		}
	}
	return float64(shared) / float64(max(len(have), len(want)))
}

// locate anchors a new annotation: the section must exist, and so must the
// quote in it. A quote without a section takes the section it is in.
func locate(p *page, section string, q *atrium.Quote) (anchor, error) {
	a := anchor{offset: -1}
	body := p.body
	start, end, err := p.span(section)
	if err != nil {
		return a, err
	}
	if section != "" {
		h, _ := p.section(section)
		a.section = sectionPath(h)
	}
	if q == nil || q.Exact == "" {
		return a, nil
	}
	off, qend := findExact(body, start, end, q, start), 0
	if off >= 0 {
		qend = off + len(q.Exact)
	} else if s, e, ok := p.visible().Find(body, q.Exact, q.Prefix, q.Suffix, start, end); ok {
		// The quote as the page shows it (a selection across bold, a
		// link, code): anchored to the source it is shown from.
		off, qend = s, e
	} else {
		where := "the page"
		if a.section != "" {
			where = "section " + a.section
		}
		return a, atrium.Errorf(atrium.EInvalid, "quote not found in %s: %q (quote the text as the page shows it, or as its Markdown has it)", where, clip(q.Exact))
	}
	a.offset = off
	a.quote = quoteAt(body, off, qend)
	if a.section == "" {
		a.section = p.sectionAt(off)
	}
	return a, nil
}

// relocate anchors an existing annotation again in a changed page.
func relocate(p *page, ann atrium.Annotation) anchor {
	body := p.body
	a := anchor{section: ann.Section, quote: ann.Quote, offset: ann.QuoteOffset}
	if ann.Quote == nil || ann.Quote.Exact == "" {
		if ann.Section == "" {
			return a
		}
		if h, err := p.section(ann.Section); err == nil {
			a.section = sectionPath(h)
			return a
		}
		a.orphaned = true
		return a
	}
	hint := max(ann.QuoteOffset, 0)
	// The exact text, preferably still in its section, else anywhere.
	if start, end, err := p.span(ann.Section); err == nil {
		section := ""
		if ann.Section != "" {
			h, _ := p.section(ann.Section)
			section = sectionPath(h)
		}
		if off := findExact(body, start, end, ann.Quote, hint); off >= 0 {
			return anchor{section: section, quote: quoteAt(body, off, off+len(ann.Quote.Exact)), offset: off}
		}
		// Edited in place: what now lies between its old surroundings, else
		// the closest stretch of the section.
		if s, e, ok := findBetween(body, start, end, ann.Quote, hint); ok {
			return anchor{section: section, quote: quoteAt(body, s, e), offset: s}
		}
		if s, e, ok := findClosest(body, start, end, ann.Quote); ok {
			return anchor{section: section, quote: quoteAt(body, s, e), offset: s}
		}
	}
	if off := findExact(body, 0, len(body), ann.Quote, hint); off >= 0 {
		return anchor{section: p.sectionAt(off), quote: quoteAt(body, off, off+len(ann.Quote.Exact)), offset: off}
	}
	a.orphaned = true
	return a
}

func clip(s string) string {
	if len(s) <= 60 {
		return s
	}
	i := 57
	for i > 0 && !runeStart(s, i) {
		i--
	}
	return s[:i] + "..."
}
