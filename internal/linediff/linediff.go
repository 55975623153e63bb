// Package linediff compares two texts line by line, for people reading what
// changed between two revisions of a page.
package linediff

import "strings"

// Op says what a line of a diff is.
type Op int

const (
	Same Op = iota
	Removed
	Added
)

// Line is one line of a diff.
type Line struct {
	Op   Op
	Text string
}

// maxCells bounds the work of one diff (lines of a × lines of b): a longest
// common subsequence table of that size takes a few milliseconds.
const maxCells = 4_000_000

// Lines returns the lines of a and b in order, marked as in both, only in a
// (removed) or only in b (added), and whether the texts were small enough
// to compare at all; lines common to the start and end are matched first, so
// that the usual small edit of a long page costs little.
func Lines(a, b string) ([]Line, bool) {
	x, y := split(a), split(b)
	var head, tail []Line
	for len(x) > 0 && len(y) > 0 && x[0] == y[0] {
		head = append(head, Line{Same, x[0]})
		x, y = x[1:], y[1:]
	}
	for len(x) > 0 && len(y) > 0 && x[len(x)-1] == y[len(y)-1] {
		tail = append(tail, Line{Same, x[len(x)-1]})
		x, y = x[:len(x)-1], y[:len(y)-1]
	}
	if len(x)*len(y) > maxCells {
		return nil, false
	}
	// lcs[i][j] is the length of the longest common subsequence of x[i:]
	// and y[j:].
	w := len(y) + 1
	lcs := make([]int32, (len(x)+1)*w)
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	out := head
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			out = append(out, Line{Same, x[i]})
			i, j = i+1, j+1
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			out = append(out, Line{Removed, x[i]})
			i++
		default:
			out = append(out, Line{Added, y[j]})
			j++
		}
	}
	for ; i < len(x); i++ {
		out = append(out, Line{Removed, x[i]})
	}
	for ; j < len(y); j++ {
		out = append(out, Line{Added, y[j]})
	}
	for k := len(tail) - 1; k >= 0; k-- {
		out = append(out, tail[k])
	}
	return out, true
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
