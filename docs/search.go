package docs

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
)

// Search limits. Ranking reads every candidate, so candidates are capped (in
// page-ID order, the same on both engines); a query that matches more than
// that many pages ranks the first ones and says so.
const (
	maxScored          = 5000
	defaultSearchLimit = 20
	maxSearchLimit     = 100
	maxCandidates      = 20000
	candidateBatch     = 500
)

// SearchRequest searches pages.
type SearchRequest struct {
	Query  string
	Path   string   // only pages under this folder
	Tags   []string // only pages with all these tags
	Limit  int
	Cursor string
}

// Hit is one search result.
type Hit struct {
	Path      string
	Title     string
	PageID    string
	MatchLine int // 1-based line of the page (frontmatter counted), 0 when only the title or tags matched
	Context   string
	Score     float64
}

// SearchResult is one page of results, best first.
type SearchResult struct {
	Hits       []Hit
	Total      int
	NextCursor string
	Note       string
}

// Search ranks the pages that match a natural-language query with BM25 over
// title, tags, headings and body. Every word counts toward the rank and none is
// required unless quoted ("exact phrase") or marked (+word); word* is a prefix
// and -word excludes. Ranking happens here, in Go, from the same inputs on
// SQLite and PostgreSQL, so both engines answer alike.
func (s *Service) Search(ctx context.Context, r SearchRequest) (SearchResult, error) {
	a, member, err := reader(ctx)
	if err != nil {
		return SearchResult{}, err
	}
	q, err := search.ParseQuery(r.Query)
	if err != nil {
		return SearchResult{}, atrium.Errorf(atrium.EInvalid, "invalid query: %v", err)
	}
	folder, err := listFolder(r.Path)
	if err != nil {
		return SearchResult{}, err
	}
	c, err := decodeCursor(r.Cursor)
	if err != nil {
		return SearchResult{}, err
	}
	offset := 0
	if c != "" {
		if offset, err = strconv.Atoi(c); err != nil || offset < 0 {
			return SearchResult{}, atrium.Errorf(atrium.EInvalid, "invalid cursor")
		}
	}
	limit := clampLimit(r.Limit, defaultSearchLimit, maxSearchLimit)
	if offset > maxSearchOffset {
		return SearchResult{}, atrium.Errorf(atrium.EInvalid, "results past the first %d are not served: narrow the search", maxSearchOffset)
	}
	filter := store.CandidateFilter{IncludePrivate: member}
	if folder != "" {
		filter.Prefix = store.PathKey(folder) + "/"
	}
	for _, t := range r.Tags {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
			filter.Tags = append(filter.Tags, t)
		}
	}
	top := newTopK(offset + limit)
	var res SearchResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		rk, err := newRanking(ctx, tx, a.Workspace.ID, q)
		if err != nil {
			return err
		}
		if words, ok := onlyOptionalWords(q); ok {
			return rk.rankByTerm(ctx, words, filter, top, &res)
		}
		return rk.rankAll(ctx, filter, top, &res)
	})
	if err != nil {
		return SearchResult{}, err
	}
	ranked := top.sorted()
	if offset < len(ranked) {
		window := ranked[offset:]
		ids := make([]int64, len(window))
		for i, h := range window {
			ids[i] = h.id
		}
		var docs []store.SearchDoc
		if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
			docs, err = tx.SearchDocs(ctx, ids)
			return err
		}); err != nil {
			return SearchResult{}, err
		}
		byID := make(map[int64]store.SearchDoc, len(docs))
		for _, d := range docs {
			byID[d.ID] = d
		}
		for _, h := range window {
			d, ok := byID[h.id]
			if !ok {
				continue // deleted since
			}
			fm, body, _ := markdown.Split(d.Content)
			line, ctxText := search.Snippet(body, q)
			if line > 0 {
				line += lineOffset(d.Content, fm)
			}
			res.Hits = append(res.Hits, Hit{Path: d.Path, Title: d.Title, PageID: d.UID, MatchLine: line, Context: ctxText, Score: round(h.score)})
		}
	}
	if offset+limit < res.Total && len(ranked) == offset+limit {
		res.NextCursor = encodeCursor(strconv.Itoa(offset + limit))
	}
	return res, nil
}

// maxSearchOffset bounds how deep pagination goes: ranking keeps the best
// offset+limit pages in memory, never every match.
const maxSearchOffset = 2000

// ranking scores candidates of one query in one transaction.
type ranking struct {
	tx    *store.Tx
	ws    int64
	q     search.Query
	stats search.Stats
	df    map[string]int
	// phrases: the query has a phrase, whose tokens' order only the
	// tokenized fields tell; others are scored without tokenizing.
	phrases bool
}

func newRanking(ctx context.Context, tx *store.Tx, ws int64, q search.Query) (*ranking, error) {
	st, err := tx.SearchStats(ctx, ws)
	if err != nil {
		return nil, err
	}
	rk := &ranking{tx: tx, ws: ws, q: q, stats: search.Stats{Docs: st.Docs}, df: map[string]int{},
		phrases: slices.ContainsFunc(q.Terms, func(t search.Term) bool { return t.Phrase != nil })}
	if st.Docs > 0 {
		n := float64(st.Docs)
		rk.stats.AvgTitle, rk.stats.AvgTags, rk.stats.AvgHeadings, rk.stats.AvgBody = float64(st.Lens[0])/n, float64(st.Lens[1])/n, float64(st.Lens[2])/n, float64(st.Lens[3])/n
	}
	for _, tok := range dfTokens(q) {
		if rk.df[tok], err = tx.DocFreq(ctx, ws, tok); err != nil {
			return nil, err
		}
	}
	return rk, nil
}

func (rk *ranking) dfOf(t search.Term) int {
	if t.Prefix {
		return rk.df[t.Text+"*"]
	}
	return rk.df[t.Text]
}

func token(t search.Term) string {
	if t.Prefix {
		return t.Text + "*"
	}
	return t.Text
}

// score loads and scores candidates, keeping the best in top; it returns how
// many matched the query exactly.
func (rk *ranking) score(ctx context.Context, ids []int64, top *topK) (int, error) {
	matched := 0
	for chunk := range slices.Chunk(ids, candidateBatch) {
		docs, err := rk.tx.SearchDocs(ctx, chunk)
		if err != nil {
			return 0, err
		}
		for _, d := range docs {
			_, body, _ := markdown.Split(d.Content)
			var score float64
			var ok bool
			if rk.phrases {
				score, ok = search.Match(rk.q, searchFields(d.Title, d.Tags, d.Headings, body), rk.stats, rk.dfOf)
			} else {
				// The same result, from the lengths stored at write time and
				// one pass over each field: most of a search's time is here.
				score, ok = search.MatchWords(rk.q, search.Fields{Text: [4]string{d.Title, strings.Join(d.Tags, " "), d.Headings, body}, Lens: d.Lens}, rk.stats, rk.dfOf)
			}
			if ok {
				matched++
				top.push(hit{id: d.ID, key: store.PathKey(d.Path), score: score})
			}
		}
	}
	return matched, nil
}

// rankAll scores every candidate: for queries with required words, phrases
// or exclusions, whose candidates are already narrow.
func (rk *ranking) rankAll(ctx context.Context, f store.CandidateFilter, top *topK, res *SearchResult) error {
	rt := rk.q.Retrieval()
	f.Limit = maxCandidates + 1
	ids, err := rk.tx.SearchCandidates(ctx, rk.ws, store.Match{AllOf: rt.AllOf, AnyOf: rt.AnyOf, NoneOf: rt.NoneOf}, f)
	if err != nil {
		return err
	}
	if len(ids) > maxCandidates {
		ids = ids[:maxCandidates]
		res.Note = "more than 20000 pages match; only the first 20000 were ranked: add words, a path or tags to narrow the search"
	}
	res.Total, err = rk.score(ctx, ids, top)
	return err
}

// rankByTerm ranks a query of optional words without reading every page that
// has one of them. From each word's page list (IDs only, cheap) it knows which
// words each page holds, hence the most that page can score (the sum of their
// MaxScore); it reads and scores pages from the highest bound down, and stops
// once no page left could make the top. Up to that point the result is
// exactly that of scoring every candidate. Queries of only very common words
// can leave too many pages in reach: after maxScored pages it stops and says
// so, the pages holding the most query words having been ranked first.
func (rk *ranking) rankByTerm(ctx context.Context, words []search.Term, f store.CandidateFilter, top *topK, res *SearchResult) error {
	rt := rk.q.Retrieval()
	bound := map[int64]float64{}
	for _, w := range words {
		ids, err := rk.tx.SearchCandidates(ctx, rk.ws, store.Match{AllOf: []string{token(w)}, NoneOf: rt.NoneOf}, f)
		if err != nil {
			return err
		}
		m := search.MaxScore(rk.dfOf(w), rk.stats.Docs)
		for _, id := range ids {
			bound[id] += m
		}
	}
	res.Total = len(bound)
	type cand struct {
		id    int64
		bound float64
	}
	order := make([]cand, 0, len(bound))
	for id, b := range bound {
		order = append(order, cand{id, b})
	}
	slices.SortFunc(order, func(x, y cand) int {
		if c := cmp.Compare(y.bound, x.bound); c != 0 {
			return c
		}
		return cmp.Compare(x.id, y.id)
	})
	for start := 0; start < len(order); start += candidateBatch {
		if top.full() && order[start].bound < top.threshold() {
			return nil
		}
		if start >= maxScored {
			res.Note = fmt.Sprintf("%d pages match; the %d holding the most of your words were ranked: add rarer words, a path or tags for an exact ranking", res.Total, maxScored)
			return nil
		}
		end := min(start+candidateBatch, len(order))
		ids := make([]int64, 0, end-start)
		for _, c := range order[start:end] {
			if !top.full() || c.bound >= top.threshold() {
				ids = append(ids, c.id)
			}
		}
		if _, err := rk.score(ctx, ids, top); err != nil {
			return err
		}
	}
	return nil
}

// onlyOptionalWords returns the terms of a query made only of optional words
// and prefixes (exclusions allowed), the shape rankByTerm handles.
func onlyOptionalWords(q search.Query) ([]search.Term, bool) {
	var words []search.Term
	for _, t := range q.Terms {
		switch {
		case len(t.Phrase) > 0, t.Required:
			return nil, false
		case t.Excluded:
		default:
			words = append(words, t)
		}
	}
	return words, len(words) > 0
}

// hit is a ranked candidate.
type hit struct {
	id    int64
	key   string // path key, breaks ties
	score float64
}

// better orders hits: higher score first, then path.
func better(x, y hit) bool {
	if x.score != y.score {
		return x.score > y.score
	}
	return x.key < y.key
}

// topK keeps the k best hits seen.
type topK struct {
	k    int
	hits []hit // a heap with the worst kept hit first
}

func newTopK(k int) *topK { return &topK{k: k} }

func (t *topK) full() bool { return len(t.hits) >= t.k }

// threshold is the score a hit must beat to enter a full top.
func (t *topK) threshold() float64 { return t.hits[0].score }

func (t *topK) push(h hit) {
	if len(t.hits) < t.k {
		t.hits = append(t.hits, h)
		t.up(len(t.hits) - 1)
		return
	}
	if !better(h, t.hits[0]) {
		return
	}
	t.hits[0] = h
	t.down(0)
}

func (t *topK) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(t.hits[p], t.hits[i]) {
			break
		}
		t.hits[p], t.hits[i] = t.hits[i], t.hits[p]
		i = p
	}
}

func (t *topK) down(i int) {
	for {
		w := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(t.hits) && better(t.hits[w], t.hits[c]) {
				w = c
			}
		}
		if w == i {
			return
		}
		t.hits[w], t.hits[i] = t.hits[i], t.hits[w]
		i = w
	}
}

// sorted returns the hits best first.
func (t *topK) sorted() []hit {
	out := slices.Clone(t.hits)
	slices.SortFunc(out, func(x, y hit) int {
		if better(x, y) {
			return -1
		}
		if better(y, x) {
			return 1
		}
		return 0
	})
	return out
}

// dfTokens are the tokens whose document frequency ranking needs: every term,
// and every token of every phrase; prefixes end in "*".
func dfTokens(q search.Query) []string {
	var out []string
	for _, t := range q.Terms {
		switch {
		case t.Excluded:
		case t.Prefix:
			out = append(out, t.Text+"*")
		case len(t.Phrase) > 0:
			out = append(out, t.Phrase...)
		default:
			out = append(out, t.Text)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// round keeps scores readable and stable to compare.
func round(f float64) float64 { return math.Round(f*1e6) / 1e6 }
