package linediff

import (
	"slices"
	"strings"
)

// A hunk replaces base lines [start, end) with lines.
type hunk struct {
	start, end int
	lines      []string
}

// hunks are the changes from base to text, in base order; ok false when the
// texts are too large to compare.
func hunksOf(base, text string) ([]hunk, bool) {
	diff, ok := Lines(base, text)
	if !ok {
		return nil, false
	}
	var out []hunk
	i := 0
	var cur *hunk
	for _, l := range diff {
		if l.Op == Same {
			cur = nil
			i++
			continue
		}
		if cur == nil {
			out = append(out, hunk{start: i, end: i})
			cur = &out[len(out)-1]
		}
		if l.Op == Removed {
			i++
			cur.end = i
		} else {
			cur.lines = append(cur.lines, l.Text)
		}
	}
	return out, true
}

// overlap says whether two changes touch the same lines of the base: their
// ranges share a line, or both insert at the same place, or one inserts
// inside what the other replaces.
func overlap(a, b hunk) bool {
	switch {
	case a.start == a.end && b.start == b.end:
		return a.start == b.start
	case a.start == a.end:
		return b.start < a.start && a.start < b.end
	case b.start == b.end:
		return a.start < b.start && b.start < a.end
	}
	return a.start < b.end && b.start < a.end
}

// Merge merges two texts made from base by different writers (three-way,
// line by line): each one's changes apply when they touch lines the other
// left alone; the same change made by both counts once. ok is false on a
// true overlap (both changed the same lines differently) or texts too
// large to compare; the caller then asks a person.
func Merge(base, mine, theirs string) (string, bool) {
	hm, ok1 := hunksOf(base, mine)
	ht, ok2 := hunksOf(base, theirs)
	if !ok1 || !ok2 {
		return "", false
	}
	var all []hunk
	for i, j := 0, 0; i < len(hm) || j < len(ht); {
		switch {
		case j == len(ht) || i < len(hm) && before(hm[i], ht[j]):
			all = append(all, hm[i])
			i++
		case i == len(hm) || before(ht[j], hm[i]):
			all = append(all, ht[j])
			j++
		case hm[i].start == ht[j].start && hm[i].end == ht[j].end && slices.Equal(hm[i].lines, ht[j].lines):
			all = append(all, hm[i]) // both made the same change
			i, j = i+1, j+1
		default:
			return "", false
		}
	}
	lines := split(base)
	var out []string
	at := 0
	for _, h := range all {
		out = append(out, lines[at:h.start]...)
		out = append(out, h.lines...)
		at = h.end
	}
	out = append(out, lines[at:]...)
	// The final newline is a change of its own: whoever changed it wins.
	nl := strings.HasSuffix(base, "\n")
	if strings.HasSuffix(mine, "\n") != nl {
		nl = !nl
	} else if strings.HasSuffix(theirs, "\n") != nl {
		nl = !nl
	}
	text := strings.Join(out, "\n")
	if nl && len(out) > 0 {
		text += "\n"
	}
	return text, true
}

// before says a comes wholly before b, touching none of its lines.
func before(a, b hunk) bool {
	if overlap(a, b) {
		return false
	}
	if a.start != b.start {
		return a.start < b.start
	}
	// Same start, no overlap: one is an insertion there, which goes first.
	return a.start == a.end && b.start != b.end
}
