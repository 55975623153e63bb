package search

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sliceCursor walks postings held in memory.
type sliceCursor struct {
	pages  []int64
	bodies [][]byte
}

func (c *sliceCursor) Next() (int64, []byte, bool) {
	if len(c.pages) == 0 {
		return 0, nil, false
	}
	p, b := c.pages[0], c.bodies[0]
	c.pages, c.bodies = c.pages[1:], c.bodies[1:]
	return p, b, true
}

// Ranking from postings gives, for every page, the score MatchWords gives
// its text, and the same top: on random pages of a small vocabulary, where
// words are often near one another, in every field, with required and
// excluded words and private pages.
func TestRankPostingsEqualsMatchWords(t *testing.T) {
	vocab := strings.Fields("plan plans planning review reviews storage migration team budget note notes noted release the alpha beta")
	r := rand.New(rand.NewPCG(1, 2))
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	type page struct {
		id     int64
		fields [NumFields]string
		public bool
	}
	var docs []page
	var st Stats
	for i := range 300 {
		p := page{id: int64(3*i + 1), public: i%3 == 0}
		// Title, tags, headings, body, aliases, summary, other frontmatter.
		p.fields = [NumFields]string{text(r.IntN(4)), text(r.IntN(3)), text(r.IntN(6)), text(r.IntN(40)), text(r.IntN(3)), text(r.IntN(8)), text(r.IntN(5))}
		docs = append(docs, p)
		st.Docs++
		for f, x := range p.fields {
			st.Avg[f] += float64(len(Terms(x)))
		}
	}
	for f := range st.Avg {
		st.Avg[f] /= float64(st.Docs)
	}
	// The index: each stem's postings in page order.
	index := map[string]*sliceCursor{}
	for _, p := range docs {
		var d Doc
		for f, dst := range []*[]string{&d.Title, &d.Tags, &d.Headings, &d.Body, &d.Aliases, &d.Summary, &d.Meta} {
			*dst = Terms(p.fields[f])
		}
		stems, bodies := PagePostings(d, p.public)
		for i, s := range stems {
			c := index[s]
			if c == nil {
				c = &sliceCursor{}
				index[s] = c
			}
			c.pages = append(c.pages, p.id)
			c.bodies = append(c.bodies, bodies[i])
		}
	}
	queries := []string{"plan review", "storage migration team budget release", "planning +review", "+notes +budget alpha",
		"plan -beta", "the", "alpha beta note plan review storage", "missing", "release -release plan"}
	for _, query := range queries {
		q, err := ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		if !RanksFromPostings(q) {
			continue
		}
		for _, member := range []bool{true, false} {
			for _, k := range []int{1, 3, 10, 400} {
				df := make([]int, len(q.Terms))
				lists := make([]Cursor, len(q.Terms))
				for i, term := range q.Terms {
					c := sliceCursor{}
					if ix := index[term.Text]; ix != nil {
						c = *ix
					}
					df[i] = len(c.pages)
					lists[i] = &c
				}
				dfOf := func(term Term) int {
					return df[slices.IndexFunc(q.Terms, func(u Term) bool { return u.Text == term.Text })]
				}
				var want []Ranked
				for _, p := range docs {
					if !member && !p.public {
						continue
					}
					f := Fields{Text: p.fields}
					for i, x := range p.fields {
						f.Lens[i] = len(Terms(x))
					}
					if s, ok := MatchWords(q, f, st, dfOf); ok {
						want = append(want, Ranked{p.id, s})
					}
				}
				slices.SortFunc(want, func(x, y Ranked) int {
					if c := cmp.Compare(y.Score, x.Score); c != 0 {
						return c
					}
					return cmp.Compare(x.Page, y.Page)
				})
				total := len(want)
				want = want[:min(k, len(want))]
				got, gotTotal := RankPostings(q, Postings{Lists: lists, DF: df, Keep: func(_ int64, public bool) bool { return member || public }}, st, k)
				if gotTotal != total {
					t.Errorf("%q k=%d member=%v: total %d, want %d", query, k, member, gotTotal, total)
				}
				// got holds the top and every page tying the k-th; the
				// caller breaks ties by path, here by page.
				if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
					t.Errorf("%q k=%d member=%v:\n got %v\nwant %v", query, k, member, got, want)
				}
				for _, g := range got[len(want):] {
					if g.Score != want[len(want)-1].Score {
						t.Errorf("%q k=%d: %v is past the top without tying it", query, k, g)
					}
				}
			}
		}
	}
}

// Synonyms rank from postings as Match scores them: a term of forms, some
// of them phrases, reads the union of its forms' lists, with the document
// frequency TermCursor gives it; pages where a phrase of synonyms starts
// where a word of the question stands count nearness as the text does.
func TestRankPostingsWithSynonymsEqualsMatch(t *testing.T) {
	vocab := strings.Fields("get back recover restore old page page notes roll the cell phone mobile plan review call")
	// "undo" is in no page: its term reads two phrases' postings only.
	syn := ParseSynonyms("recover, restore, get back, roll back\nphone, mobile, cell phone, phone call\nplan, review\nundo, get notes, roll the\n")
	docs := randomDocs(rand.New(rand.NewPCG(3, 4)), vocab, 400)
	st, index := indexDocs(docs)
	for _, question := range []string{"how do I recover an old page", "get back the old notes", "cell phone plan", "recover or restore a phone",
		"roll back", "mobile page review", "phone phone cell", "notes -mobile recover", "undo the plan"} {
		q := syn.Expand(mustParseQuery(t, question), question)
		if !slices.ContainsFunc(q.Terms, func(t Term) bool { return t.Forms != nil }) {
			t.Fatalf("%q: no synonyms in %+v", question, q)
		}
		for _, k := range []int{1, 5, 500} {
			lists := make([]Cursor, len(q.Terms))
			df := make([]int, len(q.Terms))
			for i, term := range q.Terms {
				lists[i], df[i] = termList(term, index)
			}
			dfOf := func(term Term) int {
				return df[slices.IndexFunc(q.Terms, func(u Term) bool { return u.Text == term.Text })]
			}
			var want []Ranked
			for i, d := range docs {
				if s, ok := Match(q, d, st, dfOf); ok {
					want = append(want, Ranked{pageOf(i), s})
					if ex, _ := Explain(q, d, st, dfOf); ex.Score != s {
						t.Fatalf("%q page %d: Explain says %v, Match %v", question, pageOf(i), ex.Score, s)
					}
				}
			}
			slices.SortFunc(want, func(x, y Ranked) int {
				if c := cmp.Compare(y.Score, x.Score); c != 0 {
					return c
				}
				return cmp.Compare(x.Page, y.Page)
			})
			total := len(want)
			want = want[:min(k, len(want))]
			got, gotTotal := RankPostings(q, Postings{Lists: lists, DF: df}, st, k)
			if gotTotal != total {
				t.Errorf("%q k=%d: total %d, want %d", question, k, gotTotal, total)
			}
			if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Errorf("%q k=%d:\n got %v\nwant %v", question, k, got[:min(len(got), 8)], want[:min(len(want), 8)])
			}
		}
	}
}

// randomDocs are n pages of words drawn from vocab, up to 11 in each field.
func randomDocs(r *rand.Rand, vocab []string, n int) []Doc {
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	docs := make([]Doc, n)
	for i := range docs {
		d := &docs[i]
		for _, dst := range []*[]string{&d.Title, &d.Tags, &d.Headings, &d.Body, &d.Aliases, &d.Summary, &d.Meta} {
			*dst = Terms(text(r.IntN(12)))
		}
	}
	return docs
}

// indexDocs indexes public pages: docs[i] is page pageOf(i). It returns
// their statistics and each stem's postings in page order.
func indexDocs(docs []Doc) (Stats, map[string]*sliceCursor) {
	var st Stats
	index := map[string]*sliceCursor{}
	for i, d := range docs {
		st.Docs++
		for f, toks := range d.Fields() {
			st.Avg[f] += float64(len(toks))
		}
		stems, bodies := PagePostings(d, true)
		for j, s := range stems {
			c := index[s]
			if c == nil {
				c = &sliceCursor{}
				index[s] = c
			}
			c.pages = append(c.pages, pageOf(i))
			c.bodies = append(c.bodies, bodies[j])
		}
	}
	for f := range st.Avg {
		st.Avg[f] /= float64(st.Docs)
	}
	return st, index
}

// pageOf is the page ID of docs[i] for indexDocs: odd, so that IDs are not
// positions.
func pageOf(i int) int64 { return int64(2*i + 1) }

// termList is a term's cursor over the lists of index, each read from its
// start, and its document frequency.
func termList(term Term, index map[string]*sliceCursor) (Cursor, int) {
	var cs []Cursor
	var ns []int
	for _, s := range term.ListStems() {
		c := sliceCursor{}
		if ix := index[s]; ix != nil {
			c = *ix
		}
		cs = append(cs, &c)
		ns = append(ns, len(c.pages))
	}
	return TermCursor(term, cs, ns)
}

func mustParseQuery(t *testing.T, s string) Query {
	t.Helper()
	q, err := ParseQuery(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// A page that holds a synonym in a field its other forms are not in is
// bounded by every form's fields: the posting a union returns first is one
// form's, and a bound from its fields alone would pass over the page.
func TestRankPostingsBoundsAPageByEveryFormsFields(t *testing.T) {
	syn := ParseSynonyms("recover, restore\n")
	docs := []Doc{
		// Page 1 takes the top first: the word in its title and body.
		{Title: Terms("recover notes"), Body: Terms("recover a page from the trash")},
		// Page 3 holds the word in its body, and its synonym in its title
		// and headings: it scores more, though "recover" alone would bound
		// it below page 1.
		{Title: Terms("restore restore"), Headings: Terms("restore"), Body: Terms("recover a page")},
		{Body: Terms("nothing of the kind here")},
	}
	st, index := indexDocs(docs)
	q := syn.Expand(mustParseQuery(t, "recover"), "recover")
	list, df := termList(q.Terms[0], index)
	dfOf := func(Term) int { return df }
	s1, _ := Match(q, docs[0], st, dfOf)
	s3, _ := Match(q, docs[1], st, dfOf)
	if !(s3 > s1) {
		t.Fatalf("the case does not hold: page 3 scores %v, page 1 %v", s3, s1)
	}
	got, total := RankPostings(q, Postings{Lists: []Cursor{list}, DF: []int{df}}, st, 1)
	if want := []Ranked{{pageOf(1), s3}}; total != 2 || !slices.Equal(got, want) {
		t.Errorf("top 1 = %v of %d; want %v of 2", got, total, want)
	}
}

// A phrase ranks from postings as Match scores it: a filter of the pages
// where its stems stand in a row (Postings.Filters), scoring nothing, and
// each of its words apart (Postings.Apart), counted wherever it stands and
// never near another word.
func TestRankPostingsWithPhrasesEqualsMatch(t *testing.T) {
	vocab := strings.Fields("plan review the release notes team plan budget the review")
	docs := randomDocs(rand.New(rand.NewPCG(5, 6)), vocab, 400)
	st, index := indexDocs(docs)
	word := func(stem string) (Cursor, int) { return termList(Term{Text: stem}, index) }
	// plan is q's terms as RankPostings reads them, each time with lists
	// read from their start.
	plan := func(q Query) (Query, Postings) {
		rq, filters, apart, ok := ExpandPhrases(q)
		if !ok {
			t.Fatalf("%+v: past MaxTerms", q)
		}
		p := Postings{Filters: filters, Apart: apart}
		for _, term := range rq.Terms {
			if term.Phrase == nil {
				c, n := termList(term, index)
				p.Lists, p.DF = append(p.Lists, c), append(p.DF, n)
				continue
			}
			stems := make([]Cursor, len(term.Phrase))
			for i, s := range term.Phrase {
				stems[i], _ = word(s)
			}
			p.Lists, p.DF = append(p.Lists, Union([][]Cursor{stems})), append(p.DF, 0)
		}
		return rq, p
	}
	dfOf := func(term Term) int { _, n := word(term.Text); return n }
	for _, question := range []string{`"plan review"`, `"the plan" review`, `"plan review" -"review plan"`, `+notes "the release" budget`,
		`"plan plan"`, `"review the plan" team -budget`, `"the release" "release notes" plan`, `review "review notes"`} {
		q := mustParseQuery(t, question)
		var want []Ranked
		for i, d := range docs {
			if s, ok := Match(q, d, st, dfOf); ok {
				want = append(want, Ranked{pageOf(i), s})
			}
		}
		if len(want) == 0 {
			t.Fatalf("%q matches no page: the test ranks nothing", question)
		}
		slices.SortFunc(want, func(x, y Ranked) int {
			if c := cmp.Compare(y.Score, x.Score); c != 0 {
				return c
			}
			return cmp.Compare(x.Page, y.Page)
		})
		for _, k := range []int{1, 5, 500} {
			rq, p := plan(q)
			got, total := RankPostings(rq, p, st, k)
			if total != len(want) {
				t.Errorf("%q k=%d: total %d, want %d", question, k, total, len(want))
			}
			w := want[:min(k, len(want))]
			if len(got) < len(w) || !slices.Equal(got[:len(w)], w) {
				t.Errorf("%q k=%d:\n got %v\nwant %v", question, k, got[:min(len(got), 8)], w[:min(len(w), 8)])
			}
		}
	}
}

func TestExpandPhrases(t *testing.T) {
	texts := func(q Query) []string {
		var out []string
		for _, term := range q.Terms {
			out = append(out, term.Text)
		}
		return out
	}
	for _, c := range []struct {
		q              string
		texts          []string
		filters, apart uint32
	}{
		{`"the plan" review`, []string{"the", "the", "plan", "review"}, 0b0001, 0b0110},
		{`review -"the plan"`, []string{"review", "the"}, 0b10, 0},
		{`"plan the plan" +plan`, []string{"plan", "plan", "the", "plan"}, 0b0001, 0b0110},
		{"plan review", []string{"plan", "review"}, 0, 0},
	} {
		out, filters, apart, ok := ExpandPhrases(mustParseQuery(t, c.q))
		if !ok || !slices.Equal(texts(out), c.texts) || filters != c.filters || apart != c.apart {
			t.Errorf("%q: %q filters %b apart %b (ok %v), want %q %b %b", c.q, texts(out), filters, apart, ok, c.texts, c.filters, c.apart)
		}
	}
	var long []string
	for i := range 30 {
		long = append(long, fmt.Sprintf("w%d", i))
	}
	if _, _, _, ok := ExpandPhrases(Query{Terms: []Term{{Text: long[0], Phrase: long, Required: true}, {Text: "x"}, {Text: "y"}}}); ok {
		t.Error("a phrase of 30 distinct words and two words more expanded past MaxTerms")
	}
}
