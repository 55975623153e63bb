package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible is the text a browser shows of a body — bold, links and code
// stripped of their markup, wikilinks as what they display — with white
// space collapsed to single spaces, and for each of its bytes the range of
// the body it comes from. A person selects rendered text, and agents quote
// what they read rendered: Visible finds such a quote in the source, and
// says what a range of the source looks like on screen.
type Visible struct {
	Text       string
	start, end []int // Text[i] comes from body[start[i]:end[i]]
	bodyLen    int
}

// NewVisible reads body's visible text.
func NewVisible(body string) *Visible {
	v := &Visible{bodyLen: len(body)}
	p := parse(body)
	if p.root == nil {
		v.add(body, 0, len(body), true)
		return v
	}
	last := -1 // the source end of the previous piece
	for _, pc := range p.pieces(p.root, false) {
		text := p.pieceText(pc)
		if text == "" {
			continue
		}
		// Pieces on different lines, or apart with white space between
		// them in the source (table cells), read as separate words.
		if last >= 0 && (p.lineIndex(last) != p.lineIndex(pc.start) || strings.ContainsAny(body[min(last, pc.start):max(last, pc.start)], " \t\n")) {
			v.add(" ", last, last, false)
		}
		end := max(pc.end, pc.start)
		v.add(text, pc.start, end, !pc.literal && len(text) == pc.end-pc.start)
		last = end
	}
	v.collapse()
	return v
}

// add appends text from body[start:end]; exact says it is that range byte
// for byte, else every byte stands for the whole range.
func (v *Visible) add(text string, start, end int, exact bool) {
	for i := range len(text) {
		if exact {
			v.start, v.end = append(v.start, start+i), append(v.end, start+i+1)
		} else {
			v.start, v.end = append(v.start, start), append(v.end, end)
		}
	}
	v.Text += text
}

// collapse turns every run of white space into one space, as a browser
// shows it, and trims the ends.
func (v *Visible) collapse() {
	var b strings.Builder
	var starts, ends []int
	space := true // at the start: leading space goes
	for i, r := range v.Text {
		n := utf8.RuneLen(r)
		if r == utf8.RuneError {
			n = 1
		}
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
				starts, ends = append(starts, v.start[i]), append(ends, v.end[i])
				space = true
			}
			continue
		}
		space = false
		b.WriteString(v.Text[i : i+n])
		starts, ends = append(starts, v.start[i:i+n]...), append(ends, v.end[i:i+n]...)
	}
	text := b.String()
	if strings.HasSuffix(text, " ") {
		text, starts, ends = text[:len(text)-1], starts[:len(starts)-1], ends[:len(ends)-1]
	}
	v.Text, v.start, v.end = text, starts, ends
}

// normalize collapses white space as the visible text has it.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

// Find returns the body range of the occurrence of exact in the visible
// text whose surroundings match prefix and suffix best (the text shown
// before and after it), the first on ties; ok false when it is not there.
// Only occurrences within body[from:to] count (a section).
// The range takes in the emphasis marks and code ticks that close around
// it, so that "run nightly" of "run **nightly**" is "run **nightly**".
func (v *Visible) Find(body, exact, prefix, suffix string, from, to int) (start, end int, ok bool) {
	q := normalize(exact)
	if q == "" || len(body) != v.bodyLen {
		return 0, 0, false
	}
	prefix, suffix = normalize(prefix), normalize(suffix)
	best, bestScore := -1, -1
	for i := 0; i+len(q) <= len(v.Text); {
		j := strings.Index(v.Text[i:], q)
		if j < 0 {
			break
		}
		at := i + j
		i = at + 1
		if v.start[at] < from || v.end[at+len(q)-1] > to {
			continue
		}
		score := commonSuffixLen(strings.TrimRight(v.Text[:at], " "), prefix) + commonPrefixLen(strings.TrimLeft(v.Text[at+len(q):], " "), suffix)
		if score > bestScore {
			best, bestScore = at, score
		}
	}
	if best < 0 {
		return 0, 0, false
	}
	start, end = v.start[best], v.end[best+len(q)-1]
	// Markup that opens just before the first byte and closes just after
	// the last belongs to the quote: "**nightly**", not "**nightly".
	// A link's text takes its brackets and destination along.
	for {
		switch {
		case start > 0 && strings.IndexByte("*_~`[", body[start-1]) >= 0 && v.shownAt(start-1) < 0:
			start--
			continue
		case end < len(body) && strings.IndexByte("*_~`", body[end]) >= 0 && v.shownAt(end) < 0:
			end++
			continue
		case strings.HasPrefix(body[end:], "]("):
			if k := strings.IndexAny(body[end:], ")\n"); k > 0 && body[end+k] == ')' {
				end += k + 1
				continue
			}
		}
		break
	}
	return start, end, true
}

// shownAt is the index in Text of the byte shown for body offset off, -1
// when none is (it is markup).
func (v *Visible) shownAt(off int) int {
	for i := range v.start {
		if v.start[i] <= off && off < v.end[i] {
			return i
		}
	}
	return -1
}

// Slice is the visible text of body[start:end]: what a quote of that source
// range looks like on screen, "" when none of it is shown.
func (v *Visible) Slice(start, end int) string {
	from, to := -1, -1
	for i := range v.start {
		if v.end[i] > start && v.start[i] < end || v.start[i] == v.end[i] && v.start[i] >= start && v.start[i] < end {
			if from < 0 {
				from = i
			}
			to = i + 1
		}
	}
	if from < 0 {
		return ""
	}
	return strings.TrimSpace(v.Text[from:to])
}

func commonPrefixLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func commonSuffixLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}
