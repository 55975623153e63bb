package search

import (
	"math"
	"slices"
	"strings"
)

// Doc is a candidate page's fields, each tokenized with Tokenize.
type Doc struct {
	Title, Tags, Headings, Body []string
}

// Stats describe the searched corpus: the number of documents and the
// average number of tokens in each field.
type Stats struct {
	Docs                                    int
	AvgTitle, AvgTags, AvgHeadings, AvgBody float64
}

// BM25F parameters. A word in the title says more about a page than the
// same word in passing in the body, hence the weights.
const (
	k1 = 1.2
	b  = 0.75
)

var fieldWeights = [4]float64{3, 2, 2, 1} // title, tags, headings, body

// Match reports whether d satisfies q and, when it does, its BM25F score.
//
// d satisfies q when every required term and phrase is in some field (a
// phrase's tokens consecutive within one field), no excluded one is, and,
// when nothing is required, at least one optional term is. A query without
// any term to look for matches nothing.
//
// Each term not excluded scores idf × tf(k1+1)/(tf+k1), where
// idf = ln(1 + (N − df + 0.5)/(df + 0.5)) and tf adds up the term's
// occurrences in each field times the field's weight, divided by
// 1 − b + b·length/average. A prefix term counts every token it prefixes;
// a phrase scores as its distinct tokens. df reports how many documents of
// the corpus contain a term (for a phrase token it is given Term{Text:
// token}); it is called only for terms present in d.
//
// Terms and fields are summed in a fixed order, so the same inputs always
// give the same float.
func Match(q Query, d Doc, st Stats, df func(Term) int) (score float64, ok bool) {
	fields := [4][]string{d.Title, d.Tags, d.Headings, d.Body}
	var buf [MaxTerms][4]int
	counts := buf[:0]
	var found [MaxTerms]bool
	for i, t := range q.Terms {
		var c [4]int
		if t.Phrase != nil {
			found[i] = slices.ContainsFunc(fields[:], func(toks []string) bool { return hasPhrase(toks, t.Phrase) })
		} else {
			c = countFields(fields, t)
			found[i] = c != [4]int{}
		}
		counts = append(counts, c)
	}
	if !matches(q, found[:len(q.Terms)]) {
		return 0, false
	}
	s := scorer{lens: [4]int{len(d.Title), len(d.Tags), len(d.Headings), len(d.Body)}, st: st, df: df}
	for i, t := range q.Terms {
		switch {
		case t.Excluded:
		case t.Phrase != nil:
			for j, tok := range t.Phrase {
				if !slices.Contains(t.Phrase[:j], tok) {
					w := Term{Text: tok}
					score += s.score(w, countFields(fields, w))
				}
			}
		default:
			score += s.score(t, counts[i])
		}
	}
	return score, true
}

// Fields are a candidate's field texts (title, tags joined by spaces,
// headings, body) with the number of tokens Tokenize finds in each, as
// stored when the page was written.
type Fields struct {
	Text [4]string
	Lens [4]int
}

// MatchWords is Match for a query of words and prefixes only, with no phrase
// (a phrase term never matches here): it gives Match's results without
// tokenizing the fields into slices, counting the query's terms in one pass
// over each field, which makes scoring a candidate several times cheaper.
func MatchWords(q Query, d Fields, st Stats, df func(Term) int) (score float64, ok bool) {
	var counts [MaxTerms][4]int
	terms := q.Terms
	for f, text := range d.Text {
		scan(text, func(tok []byte, _, _ int) {
			for i, t := range terms {
				if t.Phrase == nil && t.Text != "" && len(tok) >= len(t.Text) && tok[0] == t.Text[0] &&
					(len(tok) == len(t.Text) || t.Prefix) && string(tok[:len(t.Text)]) == t.Text {
					counts[i][f]++
				}
			}
		})
	}
	var found [MaxTerms]bool
	for i := range terms {
		found[i] = counts[i] != [4]int{}
	}
	if !matches(q, found[:len(terms)]) {
		return 0, false
	}
	s := scorer{lens: d.Lens, st: st, df: df}
	for i, t := range terms {
		if !t.Excluded && t.Phrase == nil {
			score += s.score(t, counts[i])
		}
	}
	return score, true
}

// matches decides a match from which terms a document holds: every required
// term, no excluded one, and, when nothing is required, an optional one.
func matches(q Query, found []bool) bool {
	required, optional, optionalFound := false, false, false
	for i, t := range q.Terms {
		switch {
		case t.Excluded:
			if found[i] {
				return false
			}
		case t.Required:
			if !found[i] {
				return false
			}
			required = true
		default:
			optional = true
			optionalFound = optionalFound || found[i]
		}
	}
	return required || optional && optionalFound
}

type scorer struct {
	lens [4]int // tokens in each field
	st   Stats
	df   func(Term) int
}

// score is the BM25F score of a word or prefix term occurring counts times
// in each field.
func (s scorer) score(t Term, counts [4]int) float64 {
	avg := [4]float64{s.st.AvgTitle, s.st.AvgTags, s.st.AvgHeadings, s.st.AvgBody}
	var tf float64
	for f, n := range counts {
		if n == 0 {
			continue
		}
		norm := 1.0
		if avg[f] > 0 { // stats of an empty corpus say nothing about length
			norm = 1 - b + b*float64(s.lens[f])/avg[f]
		}
		tf += fieldWeights[f] * float64(n) / norm
	}
	if tf == 0 {
		return 0
	}
	return idf(s.df(t), s.st.Docs) * tf * (k1 + 1) / (tf + k1)
}

// idf is the inverse document frequency of a term in df of docs documents.
func idf(df, docs int) float64 {
	// Stale statistics must not make the idf negative or undefined.
	df = max(df, 0)
	n := max(docs, df)
	return math.Log(1 + (float64(n-df)+0.5)/(float64(df)+0.5))
}

// MaxScore is the most a word or prefix term found in df of docs documents
// can add to any document's score: BM25 saturates term frequency, so no
// document gets more than idf × (k1+1) from it. Top-k search uses it to stop
// reading candidates that could no longer make the cut.
func MaxScore(df, docs int) float64 {
	return idf(df, docs) * (k1 + 1)
}

func countFields(fields [4][]string, t Term) [4]int {
	var c [4]int
	if t.Text == "" {
		return c
	}
	w, first := t.Text, t.Text[0]
	for f, toks := range fields {
		for _, tok := range toks {
			// Most tokens differ in length or first byte: checking these
			// first spares a call to compare them whole.
			if len(tok) < len(w) || tok[0] != first {
				continue
			}
			if tok == w || t.Prefix && strings.HasPrefix(tok, w) {
				c[f]++
			}
		}
	}
	return c
}

func hasPhrase(toks, phrase []string) bool {
	for i := 0; i+len(phrase) <= len(toks); i++ {
		if slices.Equal(toks[i:i+len(phrase)], phrase) {
			return true
		}
	}
	return false
}
