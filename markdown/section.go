package markdown

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// sections turns the top-level heading nodes into Headings with their
// nesting and extents.
func (p *page) sections() []Heading {
	hs := make([]Heading, 0, len(p.headings))
	var open []int // enclosing headings, outermost first
	for _, n := range p.headings {
		pos := n.Pos()
		if pos < 0 || pos > len(p.src) {
			continue
		}
		first := p.lineIndex(pos)
		last := first
		if !p.isATX(first) && n.Lines().Len() > 0 {
			// A setext heading's underline follows its last line of text.
			last = min(p.lineIndex(n.Lines().At(n.Lines().Len()-1).Start)+1, len(p.lineStarts)-1)
		}
		h := Heading{
			Level:        n.Level,
			Text:         p.inlineText(n),
			Line:         first + 1,
			Start:        p.lineStarts[first],
			ContentStart: len(p.src),
			End:          len(p.src),
		}
		if last+1 < len(p.lineStarts) {
			h.ContentStart = p.lineStarts[last+1]
		}
		for len(open) > 0 && hs[open[len(open)-1]].Level >= h.Level {
			hs[open[len(open)-1]].End = h.Start
			open = open[:len(open)-1]
		}
		for _, i := range open {
			h.Path = append(h.Path, hs[i].Text)
		}
		h.Path = append(h.Path, h.Text)
		open = append(open, len(hs))
		hs = append(hs, h)
	}
	return hs
}

// isATX reports whether line starts an ATX heading: up to three spaces, one
// to six "#", then a blank or the end of the line.
func (p *page) isATX(line int) bool {
	s := p.src[p.lineStarts[line]:]
	i := 0
	for i < 3 && i < len(s) && s[i] == ' ' {
		i++
	}
	n := 0
	for i < len(s) && s[i] == '#' {
		i++
		n++
	}
	return n >= 1 && n <= 6 && (i == len(s) || s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')
}

var pathIndex = regexp.MustCompile(`^(.*?)\s*\[(\d+)\]$`)

// Section finds the heading a path names. The path is heading texts joined
// by ">" ("Design > Storage"); each part matches a heading's text exactly or,
// when nothing matches exactly, ignoring case. The path need not start at the
// top: its last part names the heading and the parts before it name
// ancestors at any depth, in order. When several headings match, a suffix
// "[n]" on the last part ("Storage[2]") picks the n-th in document order.
//
// A path that matches nothing is an *Error with code ENotFound, one that
// matches several without "[n]" an *Error with code EAmbiguous; both list the
// headings to choose from.
func (d *Doc) Section(path string) (Heading, error) {
	parts := splitPath(path)
	if len(parts) == 0 {
		return Heading{}, errorf(EInvalid, "section path is empty: give heading texts joined by \">\", like \"Design > Storage\"")
	}
	matches := d.match(parts)
	nth := 0
	if len(matches) == 0 {
		// Only now read a trailing "[n]" as an index: a heading may end in
		// "[2]" itself.
		if m := pathIndex.FindStringSubmatch(parts[len(parts)-1]); m != nil && m[1] != "" {
			nth, _ = strconv.Atoi(m[2])
			parts[len(parts)-1] = m[1]
			matches = d.match(parts)
		}
	}
	switch {
	case len(matches) == 0:
		return Heading{}, d.notFound(path)
	case nth == 0 && len(matches) == 1:
		return d.Headings[matches[0]], nil
	case nth == 0:
		return Heading{}, d.ambiguous(path, matches)
	case nth > len(matches):
		return Heading{}, errorf(ENotFound, "section %q not found: only %d %s match %q:\n%s",
			path, len(matches), plural(len(matches), "heading", "headings"), strings.Join(parts, " > "), d.list(matches, true))
	}
	return d.Headings[matches[nth-1]], nil
}

// splitPath splits a section path (or a heading text) at ">" and normalizes
// white space in each part. Empty parts are kept: they match only headings
// with empty parts ("# >"), which stay reachable that way.
func splitPath(s string) []string {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	parts := strings.Split(s, ">")
	for i, part := range parts {
		parts[i] = strings.Join(strings.Fields(part), " ")
	}
	return parts
}

// match returns the indexes of the headings parts names: exact matches, or
// if there are none, case-insensitive ones.
func (d *Doc) match(parts []string) []int {
	parent := make([]int, len(d.Headings))
	var open []int
	for i, h := range d.Headings {
		for len(open) > 0 && d.Headings[open[len(open)-1]].Level >= h.Level {
			open = open[:len(open)-1]
		}
		parent[i] = -1
		if len(open) > 0 {
			parent[i] = open[len(open)-1]
		}
		open = append(open, i)
	}
	for _, fold := range []bool{false, true} {
		var found []int
		for i := range d.Headings {
			if d.matchAt(i, parts, parent, fold) {
				found = append(found, i)
			}
		}
		if len(found) > 0 {
			return found
		}
	}
	return nil
}

// matchAt reports whether heading i is named by the last parts of path and
// the rest of path names its ancestors. A heading whose text holds ">"
// consumes as many parts.
func (d *Doc) matchAt(i int, path []string, parent []int, fold bool) bool {
	own := splitPath(d.Headings[i].Text)
	if len(own) == 0 {
		own = []string{""}
	}
	if len(own) > len(path) {
		return false
	}
	rest := path[:len(path)-len(own)]
	for k, part := range path[len(rest):] {
		if part != own[k] && !(fold && strings.EqualFold(part, own[k])) {
			return false
		}
	}
	if len(rest) == 0 {
		return true
	}
	for a := parent[i]; a >= 0; a = parent[a] {
		if d.matchAt(a, rest, parent, fold) {
			return true
		}
	}
	return false
}

func (d *Doc) ambiguous(path string, matches []int) error {
	base := strings.TrimSpace(path)
	msg := fmt.Sprintf("section %q is ambiguous: %d headings match:\n%s\nAdd the number of the one you mean, like %q",
		path, len(matches), d.list(matches, true), base+"[2]")
	if full := strings.Join(d.Headings[matches[0]].Path, " > "); full != base && !sameFullPaths(d, matches) {
		msg += fmt.Sprintf(", or give more of its path, like %q", full)
	}
	return errorf(EAmbiguous, "%s.", msg)
}

func sameFullPaths(d *Doc, matches []int) bool {
	first := strings.Join(d.Headings[matches[0]].Path, ">")
	for _, i := range matches[1:] {
		if strings.Join(d.Headings[i].Path, ">") != first {
			return false
		}
	}
	return true
}

const maxListed = 20

func (d *Doc) notFound(path string) error {
	if len(d.Headings) == 0 {
		return errorf(ENotFound, "section %q not found: this page has no headings", path)
	}
	all := make([]int, len(d.Headings))
	for i := range all {
		all[i] = i
	}
	return errorf(ENotFound, "section %q not found. Headings in this page:\n%s", path, d.list(all, false))
}

// list writes headings as full paths with their lines, numbered when the
// number is how to pick one, and at most maxListed of them.
func (d *Doc) list(idx []int, numbered bool) string {
	var b strings.Builder
	for k, i := range idx {
		if k == maxListed {
			fmt.Fprintf(&b, "  … and %d more\n", len(idx)-maxListed)
			break
		}
		h := d.Headings[i]
		if numbered {
			fmt.Fprintf(&b, "  [%d] ", k+1)
		} else {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s (line %d)\n", strings.Join(h.Path, " > "), h.Line)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
