package markdown

import (
	"cmp"
	"slices"
	"strings"
)

// An Edit replaces body[Start:End] with Text.
type Edit struct {
	Start, End int
	Text       string
}

// Rewrite applies edits, given in any order, to body. Edits must lie within
// body and must not overlap; two insertions at one offset would have no
// defined order and are refused too. Identical edits count once: links that
// share a reference definition share its target range.
func Rewrite(body string, edits []Edit) (string, error) {
	sorted := slices.Clone(edits)
	slices.SortStableFunc(sorted, func(a, b Edit) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End))
	})
	var b strings.Builder
	b.Grow(len(body))
	pos := 0
	for i, e := range sorted {
		if e.Start < 0 || e.End < e.Start || e.End > len(body) {
			return "", errorf(EInvalid, "edit [%d, %d) is outside the text (length %d)", e.Start, e.End, len(body))
		}
		if i > 0 {
			prev := sorted[i-1]
			if e == prev {
				continue
			}
			if e.Start < prev.End || e.Start == prev.Start && e.End == prev.End {
				return "", errorf(EInvalid, "edits [%d, %d) and [%d, %d) overlap", prev.Start, prev.End, e.Start, e.End)
			}
		}
		b.WriteString(body[pos:e.Start])
		b.WriteString(e.Text)
		pos = e.End
	}
	b.WriteString(body[pos:])
	return b.String(), nil
}
