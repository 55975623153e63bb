package search

import "slices"

// An Explanation says what a page's score is made of: what each term of
// the query adds, and where the page holds it. It is how people tune a
// vault: which field, word or synonym brought a page up.
type Explanation struct {
	Score float64
	Terms []TermScore // the terms the page holds, in the query's order
}

// A TermScore is what one term adds to a page's score.
type TermScore struct {
	// Term is a word's stem, a prefix with its star, one word of a phrase,
	// or the name of a synonym group.
	Term string
	// Synonyms are the words and phrases the page holds that count as the
	// term through the workspace's synonyms, as the synonyms page writes
	// them.
	Synonyms []string
	Fields   []FieldCount // where the page holds the term
	IDF      float64
	Score    float64 // all the term adds
	Near     float64 // the part of Score that standing near the query's other words adds
}

// A FieldCount is how often a field holds a term, and how often next to
// another of the query's words.
type FieldCount struct {
	Field       Field
	Count, Near int
}

// Explain is Match taken apart: d's score for q, term by term.
func Explain(q Query, d Doc, st Stats, df func(Term) int) (Explanation, bool) {
	var ex Explanation
	_, ok := match(q, d, st, df, &ex)
	return ex, ok
}

// add records what term t adds (x) from its counts in each field; seen
// marks the forms of t that d holds.
func (ex *Explanation) add(t Term, s scorer, n, near [NumFields]int, seen []bool, x float64) {
	if ex == nil || n == [NumFields]int{} {
		return
	}
	ts := TermScore{Term: t.Text, Score: x, IDF: idf(s.df(t), s.st.Docs)}
	if t.Prefix {
		ts.Term += "*"
	}
	for k, on := range seen {
		if fm := t.Forms[k]; on && !slices.Equal(fm.Stems, []string{t.Text}) {
			ts.Synonyms = append(ts.Synonyms, fm.Text)
		}
	}
	for f := range n {
		if n[f] > 0 {
			ts.Fields = append(ts.Fields, FieldCount{Field(f), n[f], near[f]})
		}
	}
	if _, nf := frequencies(s.st, s.lens, n, near); nf > 0 {
		ts.Near = ts.IDF * proximity * nf
	}
	ex.Terms = append(ex.Terms, ts)
}
