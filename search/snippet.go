package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// MaxContext bounds a snippet's context in bytes, ellipses included.
	MaxContext = 160
	ellipsis   = "…"
	// lead is how much of the line a context keeps before the match, so
	// that the reader sees what leads to it.
	lead = 48
)

// Snippet finds the body line that best matches q, the one with the most
// distinct query tokens (ties go to the earliest), and returns its 1-based
// number with a context of at most MaxContext bytes around the line's first
// match: whitespace collapsed, cut at word boundaries, "…" where cut.
//
// When no line matches, as when only the title did, it returns line 0 and
// the start of the first non-blank line.
func Snippet(body string, q Query) (line int, context string) {
	units := snippetUnits(q)
	seen := make([]int, len(units)) // the last line each unit was found on
	best, bestCount, bestAt := 0, 0, 0
	cur, curCount, curFirst, counted := 1, 0, 0, 0
	scan(body, true, func(tok []byte, start, _ int) {
		if n := strings.Count(body[counted:start], "\n"); n > 0 {
			cur += n
			curCount = 0
		}
		counted = start
		for i, u := range units {
			if seen[i] == cur || !u.match(tok) {
				continue
			}
			seen[i] = cur
			if curCount == 0 {
				curFirst = start
			}
			curCount++
			if curCount > bestCount {
				best, bestCount, bestAt = cur, curCount, curFirst
			}
		}
	})
	if best == 0 {
		for l := range strings.Lines(body) {
			if strings.TrimSpace(l) != "" {
				s, _ := collapse(l, 0)
				return 0, window(s, 0)
			}
		}
		return 0, ""
	}
	from := strings.LastIndexByte(body[:bestAt], '\n') + 1
	to := len(body)
	if i := strings.IndexByte(body[bestAt:], '\n'); i >= 0 {
		to = bestAt + i
	}
	s, at := collapse(body[from:to], bestAt-from)
	return best, window(s, at)
}

// unit is a token a snippet looks for: a word, a prefix, or one of a
// phrase's words.
type unit struct {
	text   string
	prefix bool
}

func (u unit) match(tok []byte) bool {
	if u.prefix {
		return len(tok) >= len(u.text) && string(tok[:len(u.text)]) == u.text
	}
	return stemIs(tok, u.text)
}

func snippetUnits(q Query) []unit {
	var units []unit
	add := func(u unit) {
		for _, v := range units {
			if v == u {
				return
			}
		}
		units = append(units, u)
	}
	for _, t := range q.Terms {
		switch {
		case t.Excluded:
		case t.Phrase != nil:
			for _, tok := range t.Phrase {
				add(unit{text: tok})
			}
		case t.Forms != nil:
			for _, f := range t.Forms {
				for _, tok := range f.Stems {
					add(unit{text: tok})
				}
			}
		default:
			add(unit{text: t.Text, prefix: t.Prefix})
		}
	}
	return units
}

// collapse turns each run of whitespace in s into one space, trims it,
// and replaces invalid UTF-8, so that a context is one valid line. It also
// returns where the byte at offset at of s ends up.
func collapse(s string, at int) (string, int) {
	var b strings.Builder
	b.Grow(len(s))
	pos, space := 0, false
	for i, r := range s {
		if i == at {
			pos = b.Len()
			if space && b.Len() > 0 {
				pos++
			}
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r) // invalid bytes decode as, and become, U+FFFD
	}
	return b.String(), pos
}

// window cuts s, a collapsed line, to at most MaxContext bytes around the
// byte offset at, at spaces when it can and never inside a rune.
func window(s string, at int) string {
	if len(s) <= MaxContext {
		return s
	}
	start := 0
	if at > lead {
		// Near the end of the line, spend the room after it before the match.
		start = min(at-lead, len(s)-(MaxContext-len(ellipsis)))
		if s[start-1] != ' ' {
			if i := strings.IndexByte(s[start:at], ' '); i >= 0 {
				start += i + 1
			} else {
				// No space to cut at, as in Chinese or a long URL.
				for !utf8.RuneStart(s[start]) {
					start++
				}
			}
		}
	}
	head := ""
	if start > 0 {
		head = ellipsis
	}
	room := MaxContext - len(head)
	if len(s)-start <= room {
		return head + s[start:]
	}
	end := start + room - len(ellipsis)
	if s[end] != ' ' {
		if i := strings.LastIndexByte(s[start:end], ' '); start+i > at {
			end = start + i
		} else {
			for !utf8.RuneStart(s[end]) {
				end--
			}
		}
	}
	return head + s[start:end] + ellipsis
}
