package search_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/search"
)

// BenchmarkTokenize tokenizes as a quote is anchored (Tokenize) and as the
// index does (Terms, with the words of identifiers).
func BenchmarkTokenize(b *testing.B) {
	text := corpusText(5000)
	for _, f := range []struct {
		name string
		fn   func(string) []string
	}{{"Tokenize", search.Tokenize}, {"Terms", search.Terms}} {
		b.Run(f.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				f.fn(text)
			}
		})
	}
}

// BenchmarkMatch scores the candidates of one search: 100 pages of about
// 300 tokens.
func BenchmarkMatch(b *testing.B) {
	docs := make([]search.Doc, 100)
	var st search.Stats
	for i := range docs {
		d := proseDoc(uint64(i), 2050)
		docs[i] = d
		st.Avg[search.FieldTitle] += float64(len(d.Title)) / 100
		st.Avg[search.FieldTags] += float64(len(d.Tags)) / 100
		st.Avg[search.FieldHeadings] += float64(len(d.Headings)) / 100
		st.Avg[search.FieldBody] += float64(len(d.Body)) / 100
	}
	st.Docs = 1000
	df := func(t search.Term) int { return 10 * len(t.Text) }
	for _, q := range []string{
		"how do we deploy the staging server",
		`"error budget" arch* +policy -legacy rollback`,
	} {
		b.Run(q, func(b *testing.B) {
			query := mustParse(b, q)
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range docs {
					search.Match(query, d, st, df)
				}
			}
		})
	}
}

// BenchmarkIndexPage derives what the store keeps of a page of about 450
// tokens: its index tokens and its postings, as every write and import does.
func BenchmarkIndexPage(b *testing.B) {
	d := proseDoc(7, 3000)
	b.ReportAllocs()
	for b.Loop() {
		search.IndexPage(d, true)
	}
}

// proseDoc is a page of about n bytes of prose: its first line the title,
// the next two its headings, the rest its body.
func proseDoc(seed uint64, n int) search.Doc {
	lines := strings.Split(prose(seed, n), "\n")
	return search.Doc{
		Title:    search.Terms(lines[0]),
		Tags:     search.Terms("ops deploy"),
		Headings: search.Terms(lines[1] + " " + lines[2]),
		Body:     search.Terms(strings.Join(lines[3:], "\n")),
	}
}
