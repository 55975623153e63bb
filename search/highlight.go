package search

import "strings"

// Highlights returns the byte ranges of text that match q's words, in order
// and apart: what a results page marks. A word matches by its stem, a prefix
// as written, a term of synonyms by any of its forms' words; excluded words
// are not marked. An identifier's words are marked where they match, unless
// the identifier does, whole.
func Highlights(text string, q Query) [][2]int {
	stems := map[string]bool{}
	var prefixes []string
	for _, t := range q.Terms {
		switch {
		case t.Excluded:
		case t.Prefix:
			prefixes = append(prefixes, t.Text)
		case len(t.Phrase) > 0:
			for _, s := range t.Phrase {
				stems[s] = true
			}
		case t.Forms != nil:
			for _, f := range t.Forms {
				for _, s := range f.Stems {
					stems[s] = true
				}
			}
		default:
			stems[t.Text] = true
		}
	}
	var out [][2]int
	TermsFunc(text, func(tok string, start, end int) {
		hit := stems[Stem(tok)]
		for _, p := range prefixes {
			hit = hit || strings.HasPrefix(tok, p)
		}
		switch {
		case !hit:
		case len(out) > 0 && start < out[len(out)-1][1]:
			// An identifier's word, inside the identifier marked whole.
		default:
			out = append(out, [2]int{start, end})
		}
	})
	return out
}
