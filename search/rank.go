package search

import (
	"cmp"
	"container/heap"
	"math/bits"
	"slices"
)

// A Cursor walks one term's postings (see PagePostings) in page order.
type Cursor interface {
	// Next returns the next page holding the term and its posting; ok is
	// false past the last. The posting stays as it is until Next has been
	// called twice more: a cursor may build postings in turns in a few
	// buffers.
	Next() (page int64, body []byte, ok bool)
}

// A Ranked page is a page and its score.
type Ranked struct {
	Page  int64
	Score float64
}

// Postings is what RankPostings ranks: one cursor per term of the query, in
// the query's order, with the number of pages in each list (the document
// frequency), and which pages may be results.
type Postings struct {
	Lists []Cursor
	DF    []int
	// Keep reports whether a page holding the query may be a result (the
	// caller's filters); nil keeps every page.
	Keep func(page int64, public bool) bool
	// Filters are terms (bit i: q.Terms[i]) that select pages and score
	// nothing; Apart, terms that take no part in nearness, neither near
	// another term nor another near them. A phrase, which Match scores
	// by its words alone, each as if the only word of the question, is a
	// filter of the pages where it stands and one apart term per word.
	Filters, Apart uint32
}

// ExpandPhrases returns q as RankPostings reads it when q has phrases, as
// Match scores them: each phrase term stays, a filter of the pages where its
// stems stand in a row (filters), and unless it is excluded is followed by
// each of its distinct stems as a word of its own, apart from nearness
// (apart), in the order Match adds their scores. ok is false past MaxTerms.
func ExpandPhrases(q Query) (out Query, filters, apart uint32, ok bool) {
	add := func(t Term) bool {
		out.Terms = append(out.Terms, t)
		return len(out.Terms) <= MaxTerms
	}
	for _, t := range q.Terms {
		if !add(t) {
			return Query{}, 0, 0, false
		}
		if t.Phrase == nil {
			continue
		}
		filters |= 1 << (len(out.Terms) - 1)
		if t.Excluded {
			continue
		}
		for j, s := range t.Phrase {
			if slices.Contains(t.Phrase[:j], s) {
				continue
			}
			if !add(Term{Text: s}) {
				return Query{}, 0, 0, false
			}
			apart |= 1 << (len(out.Terms) - 1)
		}
	}
	return out, filters, apart, true
}

// RanksFromPostings reports whether RankPostings can rank q: a query of
// words, optional, required or excluded, with no prefix or phrase.
func RanksFromPostings(q Query) bool {
	scored := false
	for _, t := range q.Terms {
		if t.Prefix || t.Phrase != nil || t.Text == "" {
			return false
		}
		scored = scored || !t.Excluded
	}
	return scored
}

// RankPostings ranks the pages that match q (as Match decides) from the
// postings of its terms, with the scores MatchWords gives each page's text,
// and returns the k best, best first, with every page that ties the k-th
// (the caller breaks ties), and how many pages match.
//
// It reads the lists together in page order, and spends on a page only what
// it takes to know the page cannot make the top (the k best so far):
//
//   - which words it holds, and in which fields: no word adds more than
//     its saturated most in each (maxIn);
//   - the counts and field lengths of each: they give each word's score but
//     for nearness, which is at most as often as the word occurs;
//   - only then, for a page that could still make it, the positions that
//     tell nearness, and its exact score.
func RankPostings(q Query, p Postings, st Stats, k int) (top []Ranked, total int) {
	terms := q.Terms
	n := len(terms)
	var required, excluded uint32
	idfs := make([]float64, n)
	for i, t := range terms {
		if p.Filters&(1<<i) == 0 {
			idfs[i] = idf(p.DF[i], st.Docs)
		}
		switch {
		case t.Excluded:
			excluded |= 1 << i
		case t.Required:
			required |= 1 << i
		}
	}
	type cursor struct {
		page int64
		body []byte
		ok   bool
	}
	curs := make([]cursor, n)
	next := func(i int) {
		c := &curs[i]
		c.page, c.body, c.ok = p.Lists[i].Next()
	}
	// page is the least page of the lists not read yet.
	page, more := int64(0), false
	for i := range curs {
		next(i)
		if c := &curs[i]; c.ok && (!more || c.page < page) {
			page, more = c.page, true
		}
	}
	builders := make([]postingBuilder, n) // lists that build a page's posting when it is read
	for i, l := range p.Lists {
		builders[i], _ = l.(postingBuilder)
	}
	norms := newNormTable(st)
	best := &ranks{k: k}
	heads := make([]posting, n)
	bodies := make([][]byte, n)
	var fieldPos [postingFields][]entry
	nears := make([][postingFields]int, n)
	var after int64
	for ; more; page = after {
		var held uint32
		after, more = 0, false
		for i := range curs {
			c := &curs[i]
			if !c.ok {
				continue
			}
			if c.page == page {
				if len(c.body) > 0 {
					held |= 1 << i
					bodies[i] = c.body
				}
				if next(i); !c.ok {
					continue
				}
			}
			if !more || c.page < after {
				after, more = c.page, true
			}
		}
		if held&excluded != 0 || held&required != required || held == 0 {
			continue
		}
		if p.Keep != nil && !p.Keep(page, bodies[bits.TrailingZeros32(held)][0]&flagPublic != 0) {
			continue
		}
		total++
		bound := 0.0 // the most each word adds in the fields that hold it
		for h := held; h != 0; h &= h - 1 {
			i := bits.TrailingZeros32(h)
			bound += maxIn(idfs[i], bodies[i][0])
		}
		if !best.within(bound) {
			continue
		}
		// The page's field lengths, from whichever postings hold each
		// field, and which fields hold two of its words or more.
		var lens, inField [postingFields]int
		for h := held; h != 0; h &= h - 1 {
			i := bits.TrailingZeros32(h)
			if builders[i] != nil {
				bodies[i] = builders[i].posting(page)
			}
			if !decodeHead(bodies[i], &heads[i]) {
				held &^= 1 << i
				continue
			}
			for fs := heads[i].fields; fs != 0; fs &= fs - 1 {
				f := bits.TrailingZeros8(fs)
				lens[f] = heads[i].lens[f]
				inField[f]++
			}
		}
		shared := false
		for _, c := range inField {
			shared = shared || c > 1
		}
		if shared {
			bound = 0
			for h := held; h != 0; h &= h - 1 {
				i := bits.TrailingZeros32(h)
				bound += norms.bound(idfs[i], &heads[i], &lens, &inField)
			}
			if !best.within(bound) {
				continue
			}
		}
		clear(nears) // of the query's terms only: a page's clearing adds up
		if shared && !nearness(held&^(p.Filters|p.Apart), heads, &inField, &fieldPos, nears) {
			continue
		}
		score := 0.0
		for i := range n {
			if held&(1<<i) == 0 {
				continue
			}
			tf, nf := frequencies(st, lens, heads[i].counts, nears[i])
			if tf > 0 {
				score += weigh(idfs[i], tf, nf)
			}
		}
		best.offer(Ranked{page, score})
	}
	return best.result(), total
}

// nearness counts, for each word the page holds, its occurrences one or two
// tokens after another of the words, in each field that holds two of them
// or more (inField): what countToken counts from the text.
func nearness(held uint32, heads []posting, inField *[postingFields]int, fieldPos *[postingFields][]entry, nears [][postingFields]int) bool {
	for f := range fieldPos {
		fieldPos[f] = fieldPos[f][:0]
	}
	for h := held; h != 0; h &= h - 1 {
		i := bits.TrailingZeros32(h)
		if !heads[i].decodePositions(i, inField, fieldPos) {
			return false
		}
	}
	for f, es := range fieldPos {
		if len(es) < 2 {
			continue
		}
		slices.SortFunc(es, func(x, y entry) int { return cmp.Compare(x.pos, y.pos) })
		for j, e := range es {
			// Another word one or two tokens before, which does not stand at
			// e's place too (a phrase of synonyms starts where a word of the
			// question may be).
			for k := j - 1; k >= 0 && es[k].pos+2 >= e.pos; k-- {
				if d := es[k]; d.term != e.term && d.pos != e.pos && !heldAt(es, j, d.term) {
					nears[e.term][f]++
					break
				}
			}
		}
	}
	return true
}

// heldAt reports whether term has an entry at the place of es[j]: entries
// of one place are next to one another.
func heldAt(es []entry, j int, term int) bool {
	for _, step := range [2]int{-1, 1} {
		for k := j + step; k >= 0 && k < len(es) && es[k].pos == es[j].pos; k += step {
			if es[k].term == term {
				return true
			}
		}
	}
	return false
}

// normTable holds 1/(1 − b + b·length/average) for the field lengths met so
// far, so that bounding a page's score takes no division by field.
type normTable struct {
	inv [postingFields][]float64 // 0: not computed yet
	st  Stats
}

// normTableLen covers field lengths below it; longer ones are computed.
const normTableLen = 2048

func newNormTable(st Stats) *normTable { return &normTable{st: st} }

func (t *normTable) get(f, l int) float64 {
	if l >= normTableLen {
		return t.compute(f, l)
	}
	if t.inv[f] == nil {
		t.inv[f] = make([]float64, normTableLen)
	}
	v := t.inv[f][l]
	if v == 0 {
		v = t.compute(f, l)
		t.inv[f][l] = v
	}
	return v
}

func (t *normTable) compute(f, l int) float64 {
	avg := t.st.Avg[f]
	if avg <= 0 {
		return 1
	}
	return 1 / (1 - b + b*float64(l)/avg)
}

// bound is the most a word of posting h adds to a page whose fields are
// lens long: its score with every occurrence in a field shared with another
// word counted near. The slack of ranks.within covers the rounding that
// sets it apart from frequencies' float.
func (t *normTable) bound(idf float64, h *posting, lens, inField *[postingFields]int) float64 {
	var tf, nf float64
	for fs := h.fields; fs != 0; fs &= fs - 1 {
		f := bits.TrailingZeros8(fs)
		x := float64(h.counts[f]) * t.get(f, lens[f])
		y := 0.0
		if inField[f] > 1 {
			y = x
		}
		x, y = saturate(x, y)
		tf += fieldWeights[f] * x
		nf += fieldWeights[f] * y
	}
	return weigh(idf, tf, nf)
}

// entry is an occurrence of a query term in a field.
type entry struct {
	pos  uint32
	term int
}

// decodePositions appends the term's occurrences in the fields that hold
// two query words or more to fieldPos.
func (p *posting) decodePositions(term int, inField *[postingFields]int, fieldPos *[postingFields][]entry) bool {
	b := p.pos
	for f, c := range p.counts {
		last := uint64(0)
		for j := range c {
			v, n := uvarint(b)
			if n <= 0 {
				return false
			}
			b = b[n:]
			if j > 0 {
				v += last
			}
			last = v
			if inField[f] > 1 {
				fieldPos[f] = append(fieldPos[f], entry{uint32(v), term})
			}
		}
	}
	return true
}

// ranks keeps the k best pages offered, and the pages that tie the worst of
// them.
type ranks struct {
	k    int
	h    rankHeap // the k best, worst first
	ties []Ranked // pages offered with the worst kept score, not kept
}

// slack keeps a bound summed in another order than the score it bounds from
// passing over a page that ties.
const slack = 1e-9

// within reports whether a page whose score is at most s could still be
// among the results.
func (r *ranks) within(s float64) bool {
	return len(r.h) < r.k || s >= r.h[0].Score-slack
}

func (r *ranks) offer(x Ranked) {
	if r.k <= 0 {
		return
	}
	if len(r.h) < r.k {
		heap.Push(&r.h, x)
		return
	}
	worst := r.h[0].Score
	switch {
	case x.Score < worst:
		return
	case x.Score == worst:
		r.ties = append(r.ties, x)
		return
	}
	out := r.h[0]
	r.h[0] = x
	heap.Fix(&r.h, 0)
	if nw := r.h[0].Score; nw != worst {
		r.ties = r.ties[:0]
	}
	if out.Score == r.h[0].Score {
		r.ties = append(r.ties, out)
	}
}

func (r *ranks) result() []Ranked {
	out := append(slices.Clone([]Ranked(r.h)), r.ties...)
	slices.SortFunc(out, func(x, y Ranked) int {
		if c := cmp.Compare(y.Score, x.Score); c != 0 {
			return c
		}
		return cmp.Compare(x.Page, y.Page)
	})
	return out
}

type rankHeap []Ranked

func (h rankHeap) Len() int           { return len(h) }
func (h rankHeap) Less(i, j int) bool { return h[i].Score < h[j].Score }
func (h rankHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rankHeap) Push(x any)        { *h = append(*h, x.(Ranked)) }
func (h *rankHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
