package search

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on a query, so that one search cannot make the engines expand
// hundreds of terms.
const (
	MaxQueryBytes = 500
	MaxTerms      = 32
	// minPrefixRunes keeps "a*" from matching half the vocabulary.
	minPrefixRunes = 2
)

// Term is one thing a query looks for.
type Term struct {
	Text     string   // a token's stem (see Stem), or for a prefix the token as written; for a phrase, its first stem
	Phrase   []string // for a quoted phrase, the stems of all its tokens (len >= 2); nil otherwise
	Prefix   bool     // "arch*": matches tokens starting with Text
	Required bool     // +word, or a quoted phrase or word
	Excluded bool     // -word or -"a phrase": pages containing it are not results
	// Forms, when set, are what the term matches instead of Text: the
	// words and phrases a workspace's synonyms make one (Synonyms.Expand).
	// A phrase's occurrence counts as one, at its first word. Text is then
	// only the term's name.
	Forms []Form
}

// A Form is a word or phrase a term matches: its stems, and its text as
// the synonyms page writes it.
type Form struct {
	Stems []string
	Text  string
}

// Query is a parsed search query. Its terms are in the order they were
// first written.
type Query struct {
	Terms []Term
}

// stopWords are dropped from the optional terms of a query: they are in
// nearly every page, so they rank nothing and only widen the candidates of a
// question such as "how do we deploy to staging". They stay when quoted,
// required, or when nothing else would be left to search for.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about also am an and any are as at be been being between but by
		can could did do does doing for from had has have how i if in into is it its itself just me my
		of on or our s should so t than that the their them then there these they this those to too
		us was we were what when where which who why will with would you your`) {
		m[w] = true
	}
	return m
}()

// ParseQuery parses a natural-language query. Plain words are optional: each
// one found raises a page's rank. Beyond that:
//
//	"error budget"  a phrase: required, its words consecutive in one field
//	"deploy"        a single quoted word is required
//	+deploy         required
//	-legacy         excluded: pages containing it are not results
//	arch*           a prefix of at least two characters; +arch* and -arch* too
//
// Typographic quotes work like straight ones, and an unclosed quote runs to
// the end. A signed word that splits into several tokens (+e-mail) is a
// phrase; an unsigned one gives several optional words. Repeated terms
// collapse into one, and a term both wanted and excluded is excluded.
// Common English words such as "how" and "the" are dropped from the
// optional terms unless nothing else would remain.
func ParseQuery(q string) (Query, error) {
	if len(q) > MaxQueryBytes {
		return Query{}, &Error{Message: "search query is longer than 500 bytes: use fewer, more distinctive words"}
	}
	var p parser
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		var required, excluded bool
		if r == '+' || r == '-' {
			required, excluded = r == '+', r == '-'
			i += size
			if i == len(q) {
				break
			}
			r, size = utf8.DecodeRuneInString(q[i:])
		}
		if isQuote(r) {
			i += size
			end := strings.IndexFunc(q[i:], isQuote)
			if end < 0 {
				end = len(q) - i
			}
			p.phrase(Terms(q[i:i+end]), excluded)
			i += end
			if i < len(q) {
				_, size = utf8.DecodeRuneInString(q[i:])
				i += size
			}
			continue
		}
		end := strings.IndexFunc(q[i:], func(r rune) bool { return unicode.IsSpace(r) || isQuote(r) })
		if end < 0 {
			end = len(q) - i
		}
		p.word(q[i:i+end], required, excluded)
		i += end
	}
	return p.query()
}

func isQuote(r rune) bool {
	return r == '"' || r == '“' || r == '”' || r == '„'
}

type parser struct {
	terms []Term
	stop  []bool // terms[i] is a stop word, which query drops when others remain
	part  []bool // terms[i] is only ever a word of an identifier (Terms)
}

// phrase adds the quoted tokens toks: a phrase is required unless excluded.
func (p *parser) phrase(toks []string, excluded bool) {
	for i, t := range toks {
		toks[i] = Stem(t)
	}
	switch len(toks) {
	case 0:
	case 1:
		p.add(Term{Text: toks[0], Required: !excluded, Excluded: excluded})
	default:
		p.add(Term{Text: toks[0], Phrase: toks, Required: !excluded, Excluded: excluded})
	}
}

// word adds an unquoted word. A star right after a token makes it a prefix,
// even before punctuation ("prod*?").
func (p *parser) word(w string, required, excluded bool) {
	var terms []Term
	var parts []bool
	whole := 0 // where the last identifier ends: its words start before
	TermsFunc(w, func(tok string, start, end int) {
		prefix := end < len(w) && w[end] == '*' && utf8.RuneCountInString(tok) >= minPrefixRunes
		terms = append(terms, Term{Text: tok, Prefix: prefix, Required: required, Excluded: excluded})
		parts = append(parts, start < whole)
		if start >= whole {
			whole = end
		}
	})
	if len(terms) > 1 && (required || excluded) {
		// "+e-mail" means the compound, not e and mail anywhere.
		toks := make([]string, len(terms))
		for i, t := range terms {
			toks[i] = t.Text
		}
		p.phrase(toks, excluded)
		return
	}
	for i, t := range terms {
		stop := isStopWord(t)
		if !t.Prefix {
			t.Text = Stem(t.Text)
		}
		p.addWord(t, stop, parts[i])
	}
}

// add appends t, or merges it into the same term written before.
func (p *parser) add(t Term) { p.addWord(t, false, false) }

func (p *parser) addWord(t Term, stop, part bool) {
	for i, u := range p.terms {
		if u.Text != t.Text || u.Prefix != t.Prefix || !slices.Equal(u.Phrase, t.Phrase) {
			continue
		}
		switch {
		case u.Excluded || t.Excluded:
			u.Required, u.Excluded = false, true
		default:
			u.Required = u.Required || t.Required
		}
		p.terms[i] = u
		p.stop[i] = p.stop[i] && stop
		p.part[i] = p.part[i] && part
		return
	}
	p.terms = append(p.terms, t)
	p.stop = append(p.stop, stop)
	p.part = append(p.part, part)
}

func (p *parser) query() (Query, error) {
	kept, wanted := p.kept(false)
	if len(kept) > MaxTerms {
		// An identifier's words are terms beside it: a question of
		// many identifiers asks for them whole rather than being refused.
		kept, wanted = p.kept(true)
	}
	if wanted == 0 {
		// Only stop words, or nothing but them besides exclusions:
		// search for them rather than for nothing.
		kept = p.terms
	}
	switch {
	case len(kept) == 0:
		return Query{}, &Error{Message: "search query has no words to search for"}
	case len(kept) > MaxTerms:
		return Query{}, &Error{Message: "search query has more than 32 terms: use fewer, more distinctive words"}
	case !slices.ContainsFunc(kept, func(t Term) bool { return !t.Excluded }):
		return Query{}, &Error{Message: "search query only excludes words: add a word to search for"}
	}
	return Query{Terms: kept}, nil
}

// kept are the terms a query asks for, less its optional stop words and,
// with noParts, the words of its identifiers; wanted counts those that are
// not excluded.
func (p *parser) kept(noParts bool) (kept []Term, wanted int) {
	for i, t := range p.terms {
		// A stop word merged with a required or excluded use of itself
		// is no longer optional.
		if p.stop[i] && !t.Required && !t.Excluded || noParts && p.part[i] {
			continue
		}
		kept = append(kept, t)
		if !t.Excluded {
			wanted++
		}
	}
	return kept, wanted
}

// isStopWord reports whether t, as written (before stemming), is a stop
// word that may be dropped.
func isStopWord(t Term) bool {
	return !t.Required && !t.Excluded && !t.Prefix && t.Phrase == nil && stopWords[t.Text]
}

// Retrieval tells the engine which pages are candidates: a page is a
// candidate when it contains every entry of AllOf and every phrase of
// Phrases, at least one entry of AnyOf (or AnyOf is empty), and none of
// NoneOf nor of NoPhrases. An entry is a stem, or a prefix written with a
// trailing star ("arch*"); stems never contain a star. A phrase is stems
// that stand in a row in one field, as Match reads them.
type Retrieval struct {
	AllOf, AnyOf, NoneOf []string
	Phrases, NoPhrases   [][]string
}

// Retrieval returns the candidate conditions for q. Every page that Match
// accepts is a candidate; Match still decides (a prefix's candidates are
// read by stem, see pages). Optional terms narrow the candidates only when
// nothing is required, as they do in Match.
func (q Query) Retrieval() Retrieval {
	var r Retrieval
	required := slices.ContainsFunc(q.Terms, func(t Term) bool { return t.Required && !t.Excluded })
	for _, t := range q.Terms {
		switch {
		case t.Excluded && t.Phrase == nil:
			r.NoneOf = appendNew(r.NoneOf, t.entry())
		case t.Excluded:
			r.NoPhrases = append(r.NoPhrases, t.Phrase)
		case t.Phrase != nil:
			r.Phrases = append(r.Phrases, t.Phrase)
		case t.Required:
			r.AllOf = appendNew(r.AllOf, t.entry())
		case !required:
			r.AnyOf = appendNew(r.AnyOf, t.entry())
		}
	}
	return r
}

// entry is how the engine is told about a word or prefix term.
func (t Term) entry() string {
	if t.Prefix {
		return t.Text + "*"
	}
	return t.Text
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
