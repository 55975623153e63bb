package search

import (
	"math"
	"slices"
	"strings"
)

// Doc is a candidate page's fields (see Field), each as Terms.
type Doc struct {
	Title, Tags, Headings, Body, Aliases, Summary, Meta []string
}

// Fields are d's fields in Field order.
func (d Doc) Fields() [NumFields][]string {
	return [NumFields][]string{d.Title, d.Tags, d.Headings, d.Body, d.Aliases, d.Summary, d.Meta}
}

// Stats describe the searched corpus: the number of documents and the
// average number of tokens in each field.
type Stats struct {
	Docs int
	Avg  [NumFields]float64
}

// BM25 parameters; the fields' weights are in fieldTable. Each field's
// frequency saturates on its own before the fields are weighed and summed
// (as Lucene's and Elasticsearch's multi-field queries score), not after, as
// BM25F would: with one saturation shared by the fields, a word in a page's
// title and headings and a dozen times in its body scored barely more than
// the same word twice in another page's body, which then ranked above it.
// Measured on the relevance sets (pages/relevance_test.go): Traefik's MRR
// 0.785 → 0.817, Material for MkDocs' 0.716 → 0.782.
const (
	k1 = 1.2
	b  = 0.75
)

// proximity weighs a term's occurrences near the query's other words
// against its occurrences anywhere (whose most in a field is k1+1); minIDF
// is the least a word found counts for.
const (
	proximity = 1.0
	minIDF    = 0.05
)

// Match reports whether d satisfies q and, when it does, its score: BM25
// in each field, the fields weighed (see k1).
//
// d satisfies q when every required term and phrase is in some field (a
// phrase's tokens consecutive within one field), no excluded one is, and,
// when nothing is required, at least one optional term is. A query without
// any term to look for matches nothing. A word matches the tokens it shares
// its stem with (see Stem); a prefix matches the tokens that start with it.
//
// Each term not excluded scores idf × tf(k1+1)/(tf+k1), where
// idf = ln(1 + (N − df + 0.5)/(df + 0.5)), at least minIDF, and tf adds up
// the term's occurrences in each field times the field's weight, divided by
// 1 − b + b·length/average. A prefix term counts every token it prefixes;
// a phrase scores as its distinct tokens. A word or prefix also scores
// idf × proximity·near/(near+k1), where near adds up, with the same field
// weights, its occurrences that follow another of the query's words within
// two tokens: pages that say "client certificate" rank above pages that say
// "client" and, elsewhere, "certificate". df reports how many documents of
// the corpus contain a term (for a phrase token it is given Term{Text:
// token}); it is called only for terms present in d.
//
// Terms and fields are summed in a fixed order, so the same inputs always
// give the same float.
func Match(q Query, d Doc, st Stats, df func(Term) int) (score float64, ok bool) {
	return match(q, d, st, df, nil)
}

// match is Match; when ex is not nil, it also says there what each term
// adds.
func match(q Query, d Doc, st Stats, df func(Term) int, ex *Explanation) (score float64, ok bool) {
	fields := d.Fields()
	forms := slices.ContainsFunc(q.Terms, func(t Term) bool { return t.Forms != nil })
	var c counts
	var seen [MaxTerms][]bool // for ex: which forms of each term occur
	for f, toks := range fields {
		var last [MaxTerms]int
		for pos, tok := range toks {
			if len(tok) == 0 {
				continue
			}
			hit := tokenHits(q.Terms, tok)
			if forms {
				hit |= formHits(q.Terms, toks, pos, ex != nil, &seen)
			}
			countHits(q.Terms, hit, f, pos, &last, &c)
		}
	}
	var found [MaxTerms]bool
	for i, t := range q.Terms {
		if t.Phrase != nil {
			found[i] = slices.ContainsFunc(fields[:], func(toks []string) bool { return hasPhrase(toks, t.Phrase) })
		} else {
			found[i] = c.n[i] != [NumFields]int{}
		}
	}
	if !matches(q, found[:len(q.Terms)]) {
		return 0, false
	}
	s := scorer{st: st, df: df}
	for f, toks := range fields {
		s.lens[f] = len(toks)
	}
	for i, t := range q.Terms {
		switch {
		case t.Excluded:
		case t.Phrase != nil:
			for j, tok := range t.Phrase {
				if !slices.Contains(t.Phrase[:j], tok) {
					w := Term{Text: tok}
					n := countFields(fields, w)
					x := s.score(w, n, [NumFields]int{})
					score += x
					ex.add(w, s, n, [NumFields]int{}, nil, x)
				}
			}
		default:
			x := s.score(t, c.n[i], c.near[i])
			score += x
			ex.add(t, s, c.n[i], c.near[i], seen[i], x)
		}
	}
	if ex != nil {
		ex.Score = score
	}
	return score, true
}

// counts are how often each term of a query occurs in each field, and how
// often near another of its words.
type counts struct {
	n, near [MaxTerms][NumFields]int
}

// countToken counts tok, the token at pos in field f, for the word and
// prefix terms it matches. last holds, for each term, 1 + the position of
// its last occurrence in the field (0: none yet).
func countToken[T string | []byte](terms []Term, tok T, f, pos int, last *[MaxTerms]int, c *counts) {
	if len(tok) == 0 {
		return
	}
	countHits(terms, tokenHits(terms, tok), f, pos, last, c)
}

// tokenHits are the word and prefix terms tok matches, as bits; terms of
// Forms are formHits'.
func tokenHits[T string | []byte](terms []Term, tok T) (hit uint32) {
	for i, t := range terms {
		if t.Phrase != nil || t.Forms != nil || t.Text == "" || len(tok) < len(t.Text) || tok[0] != t.Text[0] {
			continue
		}
		if t.Prefix && string(tok[:len(t.Text)]) == t.Text || !t.Prefix && stemIs(tok, t.Text) {
			hit |= 1 << i
		}
	}
	return hit
}

// formHits are the terms of Forms that a form starting at toks[pos]
// matches, as bits; when record is set, seen marks the forms that do.
func formHits(terms []Term, toks []string, pos int, record bool, seen *[MaxTerms][]bool) (hit uint32) {
	for i, t := range terms {
		for k, fm := range t.Forms {
			if !formAt(toks, pos, fm.Stems) {
				continue
			}
			hit |= 1 << i
			if !record {
				break
			}
			if seen[i] == nil {
				seen[i] = make([]bool, len(t.Forms))
			}
			seen[i][k] = true
		}
	}
	return hit
}

// formAt reports whether the tokens from toks[pos] have stems.
func formAt(toks []string, pos int, stems []string) bool {
	if len(stems) == 0 || pos+len(stems) > len(toks) {
		return false
	}
	for k, s := range stems {
		if !stemIs(toks[pos+k], s) {
			return false
		}
	}
	return true
}

// countHits counts an occurrence at pos in field f of the terms of hit, and
// of those among them that follow another of the query's words within two
// tokens (one that does not occur at pos too).
func countHits(terms []Term, hit uint32, f, pos int, last *[MaxTerms]int, c *counts) {
	if hit == 0 {
		return
	}
	for i, t := range terms {
		if hit&(1<<i) == 0 {
			continue
		}
		c.n[i][f]++
		if t.Excluded {
			continue
		}
		for j, u := range terms {
			if j != i && !u.Excluded && last[j] > 0 && pos-last[j] < 2 && hit&(1<<j) == 0 {
				c.near[i][f]++
				break
			}
		}
	}
	for i := range terms {
		if hit&(1<<i) != 0 {
			last[i] = pos + 1
		}
	}
}

// Fields are a candidate's field texts, in Field order (tags joined by
// spaces), with the number of Terms in each, as stored when
// the page was written.
type Fields struct {
	Text [NumFields]string
	Lens [NumFields]int
}

// MatchWords is Match for a query of words and prefixes only, with no phrase
// (a phrase term never matches here): it gives Match's results without
// tokenizing the fields into slices, counting the query's terms in one pass
// over each field, which makes scoring a candidate several times cheaper.
func MatchWords(q Query, d Fields, st Stats, df func(Term) int) (score float64, ok bool) {
	var c counts
	terms := q.Terms
	for f, text := range d.Text {
		var last [MaxTerms]int
		pos := 0
		scan(text, true, func(tok []byte, _, _ int) {
			countToken(terms, tok, f, pos, &last, &c)
			pos++
		})
	}
	var found [MaxTerms]bool
	for i := range terms {
		found[i] = c.n[i] != [NumFields]int{}
	}
	if !matches(q, found[:len(terms)]) {
		return 0, false
	}
	s := scorer{lens: d.Lens, st: st, df: df}
	for i, t := range terms {
		if !t.Excluded && t.Phrase == nil {
			score += s.score(t, c.n[i], c.near[i])
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
	lens [NumFields]int // tokens in each field
	st   Stats
	df   func(Term) int
}

// score is the score of a word or prefix term occurring counts times
// in each field, near times next to another of the query's words.
func (s scorer) score(t Term, counts, near [NumFields]int) float64 {
	tf, nf := frequencies(s.st, s.lens, counts, near)
	if tf == 0 {
		return 0
	}
	return weigh(idf(s.df(t), s.st.Docs), tf, nf)
}

// weigh is a term's score from its idf and its saturated frequencies tf
// and nf (frequencies). Match and RankPostings both score through it, so
// that their floats are the same.
func weigh(idf, tf, nf float64) float64 {
	return idf * (tf + proximity*nf)
}

// frequencies are a term's saturated frequencies in a page whose fields are
// lens tokens long, occurring counts times in each field, near times next to
// another of the query's words: each field's count, divided by
// 1 − b + b·length/average, saturates on its own (saturate), and the fields
// add up by their weights.
func frequencies(st Stats, lens, counts, near [NumFields]int) (tf, nf float64) {
	avg := &st.Avg
	for f, n := range counts {
		if n == 0 {
			continue
		}
		norm := 1.0
		if avg[f] > 0 { // stats of an empty corpus say nothing about length
			norm = 1 - b + b*float64(lens[f])/avg[f]
		}
		x, y := saturate(float64(n)/norm, float64(near[f])/norm)
		tf += fieldWeights[f] * x
		nf += fieldWeights[f] * y
	}
	return tf, nf
}

// saturate is BM25's saturation of a field's normalised frequency x, and of
// y of it near the query's other words: more occurrences add less and less,
// up to k1+1 and 1.
func saturate(x, y float64) (float64, float64) {
	return x * (k1 + 1) / (x + k1), y / (y + k1)
}

// idf is the inverse document frequency of a term in df of docs documents.
// A word in every page still says something: at least minIDF, so that where
// it stands (a title, a heading) still ranks pages.
func idf(df, docs int) float64 {
	// Stale statistics must not make the idf negative or undefined.
	df = max(df, 0)
	n := max(docs, df)
	return max(minIDF, math.Log(1+(float64(n-df)+0.5)/(float64(df)+0.5)))
}

// MaxScore is the most a word or prefix term found in df of the documents
// st describes can add to any of them: BM25 saturates each field's
// frequency, so no field gives more than its weight × (k1+1) from it, nor
// more than its weight × proximity from standing near other words; and a
// field no document has a word in (an average length of 0: most vaults
// have no aliases) gives nothing. Top-k search uses it to stop reading
// candidates that could no longer make the cut.
func MaxScore(df int, st Stats) float64 {
	var fields byte
	for f, avg := range st.Avg {
		if avg > 0 {
			fields |= 1 << f
		}
	}
	return maxIn(idf(df, st.Docs), fields)
}

// maxIn is the most a word of the given idf adds to a page that holds it in
// the fields of the set fields (bit f: field f).
func maxIn(idf float64, fields byte) float64 {
	return idf * (k1 + 1 + proximity) * weightOf[fields&(1<<NumFields-1)]
}

// weightOf is the sum of the fields' weights of each set of fields.
var weightOf = func() (w [1 << NumFields]float64) {
	for set := range w {
		for f := range NumFields {
			if set&(1<<f) != 0 {
				w[set] += fieldWeights[f]
			}
		}
	}
	return w
}()

func countFields(fields [NumFields][]string, t Term) [NumFields]int {
	var c [NumFields]int
	if t.Text == "" {
		return c
	}
	for f, toks := range fields {
		for _, tok := range toks {
			if t.Prefix && strings.HasPrefix(tok, t.Text) || !t.Prefix && stemIs(tok, t.Text) {
				c[f]++
			}
		}
	}
	return c
}

func hasPhrase(toks, phrase []string) bool {
	for i := 0; i+len(phrase) <= len(toks); i++ {
		if !stemIs(toks[i], phrase[0]) {
			continue
		}
		j := 1
		for j < len(phrase) && stemIs(toks[i+j], phrase[j]) {
			j++
		}
		if j == len(phrase) {
			return true
		}
	}
	return false
}
