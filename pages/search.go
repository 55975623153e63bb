package pages

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
)

// Search limits. A query with a prefix or a phrase is ranked from its
// candidates' text, so candidates are capped (in page-ID order, the same on
// both engines); one that matches more than that many pages ranks the first
// ones and says so. A query of words ranks from the postings index, exactly.
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
	// Explain asks, for every hit, what made its score (Hit.Explanation).
	Explain bool
}

// Hit is one search result.
type Hit struct {
	Path        string
	Title       string
	PageID      string
	MatchLine   int // 1-based line of the page (frontmatter counted), 0 when only the title or tags matched
	Context     string
	Score       float64
	Explanation *Explanation // when asked for
}

// SearchResult is one page of results, best first.
type SearchResult struct {
	Hits       []Hit
	Total      int
	NextCursor string
	Note       string
	// Query is the query as ranked: its words widened by the workspace's
	// synonyms. What a results page marks in the hits' context.
	Query search.Query
}

// An Explanation says what made a hit's score: each of the query's terms
// the page holds, in which fields, through which synonyms, and what it
// added; and the signals the score sums.
type Explanation struct {
	Terms   []TermExplanation `json:"terms"`
	Signals []Signal          `json:"signals" jsonschema:"the parts the score adds up: words (each term's BM25 in each field, fields weighed) and nearness (the query's words standing together)"`
}

// A TermExplanation is what one term of the query added to a hit's score.
type TermExplanation struct {
	Term     string             `json:"term" jsonschema:"the query's word, or the phrase of a synonym group it wrote"`
	Synonyms []string           `json:"synonyms,omitempty" jsonschema:"the term's synonyms (from the workspace's synonyms page) that the page holds"`
	Fields   []FieldExplanation `json:"fields" jsonschema:"where the page holds the term"`
	IDF      float64            `json:"idf" jsonschema:"how rare the term is in the workspace: rarer terms weigh more"`
	Score    float64            `json:"score" jsonschema:"what the term adds to the score"`
}

// A FieldExplanation is how often a field of the page holds a term, and how
// often right after another of the query's words.
type FieldExplanation struct {
	Field  string  `json:"field" jsonschema:"title, tags, headings, body, aliases, summary (description, summary, excerpt) or frontmatter (its other text)"`
	Weight float64 `json:"weight" jsonschema:"the field's weight"`
	Count  int     `json:"count" jsonschema:"how often the field holds the term"`
	Near   int     `json:"near,omitempty" jsonschema:"how often right after another of the query's words"`
}

// A Signal is one part of a score: "words" (each term's BM25 in each
// field, fields weighed) and "nearness" (the query's words standing
// together); with hybrid search, "lexical" and "vector", the two rankings
// a hit's fused score adds up (reciprocal rank fusion: 1/(60+rank) each).
type Signal struct {
	Name       string  `json:"name"`
	Score      float64 `json:"score"`
	Rank       int     `json:"rank,omitempty" jsonschema:"lexical and vector: the hit's rank in that ranking alone, 1 the best"`
	Similarity float64 `json:"similarity,omitempty" jsonschema:"vector: the cosine of the query's and the nearest section's embeddings"`
	Section    string  `json:"section,omitempty" jsonschema:"vector: the heading path of the section nearest the query, (top) before the first heading"`
}

// Search ranks the pages that match a natural-language query with BM25 over
// every field a page declares (search.Field). Every word counts toward the
// rank and none is required unless quoted ("exact phrase") or marked (+word);
// word* is a prefix and -word excludes. Ranking happens here, in Go, from the
// same inputs on SQLite and PostgreSQL, so both engines answer alike: a query
// of words from its words' postings lists (rankPostings), its plain words
// widened by the workspace's synonyms (SynonymsPath); one with a prefix or a
// phrase from its candidates' text.
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
	release, err := s.searches.enter(ctx, callerKey(a))
	if err != nil {
		return SearchResult{}, err
	}
	defer release()
	// Hybrid: the query's vector is asked for while its words rank, so the
	// endpoint's time and the lexical ranking's overlap.
	depth := offset + limit
	var vside chan vectorSide
	if s.embedder != nil && plainWords(q) {
		depth = max(depth, rrfDepth)
		vside = make(chan vectorSide, 1)
		vctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { vside <- s.searchVectors(vctx, a.Workspace.ID, r.Query, filter, depth) }()
	}
	top := newTopK(depth)
	var res SearchResult
	var scoring scorer // what explains a hit's score
	var rebuilding string
	err = s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if rebuilding, err = rebuildNote(ctx, tx); err != nil {
			return err
		}
		if search.RanksFromPostings(q) {
			syn, synPage, err := s.syns.synonyms(ctx, tx, a.Workspace.ID, member)
			if err != nil {
				return err
			}
			q = syn.Expand(q, r.Query)
			if !slices.ContainsFunc(q.Terms, func(t search.Term) bool { return t.Forms != nil }) {
				synPage = 0 // not widened: the page is a page like any
			}
			scoring, err = rankPostings(ctx, tx, a.Workspace.ID, wordPlan(q), synPage, filter, top, &res)
			return err
		}
		// Phrases, and prefixes whose lists hold just the words they
		// begin, rank from the lists too, without reading a page.
		// (Synonyms widen questions of words alone, as before these
		// ranked so.)
		plan, ok, err := planFromLists(ctx, tx, a.Workspace.ID, q, &s.dfs)
		if err != nil {
			return err
		}
		if ok {
			scoring, err = rankPostings(ctx, tx, a.Workspace.ID, plan, 0, filter, top, &res)
			return err
		}
		rk, err := newRanking(ctx, tx, a.Workspace.ID, q, &s.dfs)
		if err != nil {
			return err
		}
		scoring = scorer{rk.stats, rk.dfOf}
		if words, ok := onlyOptionalWords(q); ok {
			return rk.rankByTerm(ctx, words, filter, top, &res)
		}
		return rk.rankAll(ctx, filter, top, &res)
	})
	if err != nil {
		return SearchResult{}, err
	}
	res.Note = joinNotes(res.Note, rebuilding)
	lexical := top.sorted()
	ranked := make([]fused, len(lexical))
	for i, h := range lexical {
		ranked[i] = fused{hit: h, lexRank: i + 1, lexScore: h.score}
	}
	hybrid := false
	if vside != nil {
		v := <-vside
		res.Note = joinNotes(res.Note, v.note)
		if len(v.hits) > 0 {
			hybrid = true
			ids := make([]int64, len(v.hits))
			for i, h := range v.hits {
				ids[i] = h.page
			}
			var keys map[int64]string
			if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
				keys, err = tx.PathKeys(ctx, ids)
				return err
			}); err != nil {
				return SearchResult{}, err
			}
			ranked = fuse(lexical, v.hits, keys)
			for _, f := range ranked {
				if f.lexRank == 0 {
					res.Total++ // found by meaning alone
				}
			}
		}
	}
	ranked = ranked[:min(len(ranked), offset+limit)]
	if offset < len(ranked) {
		window := ranked[offset:]
		ids := make([]int64, len(window))
		for i, h := range window {
			ids[i] = h.id
		}
		var sections map[store.VectorKey]store.SectionVector
		if hybrid {
			keys := make([]store.VectorKey, 0, len(window))
			for _, h := range window {
				if h.vecRank > 0 {
					keys = append(keys, store.VectorKey{Page: h.id, Section: int(h.vec.section)})
				}
			}
			if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
				sections, err = tx.VectorSections(ctx, keys)
				return err
			}); err != nil {
				return SearchResult{}, err
			}
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
			sec, near := sections[store.VectorKey{Page: h.id, Section: int(h.vec.section)}]
			near = near && h.vecRank > 0
			if near && h.lexRank == 0 {
				// Found by meaning alone: show the section that matched.
				line, ctxText = sectionSnippet(d.Content, sec)
			}
			hit := Hit{Path: d.Path, Title: d.Title, PageID: d.UID, MatchLine: line, Context: ctxText, Score: round(h.score)}
			if r.Explain {
				hit.Explanation = scoring.explain(q, r.Query, d, body)
				if hybrid && hit.Explanation == nil {
					hit.Explanation = &Explanation{Terms: []TermExplanation{}}
				}
				if hybrid {
					hit.Explanation.Signals = append(hit.Explanation.Signals, fusionSignals(h, sec, near)...)
				}
			}
			res.Hits = append(res.Hits, hit)
		}
	}
	res.Query = q
	if offset+limit < res.Total && len(ranked) == offset+limit && offset+limit < maxSearchOffset+maxSearchLimit {
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
	// cheapDF is the longest page list rankByTerm reads before it knows
	// whether it needs it; unread counts the lists it did not need.
	cheapDF, unread int
}

func newRanking(ctx context.Context, tx *store.Tx, ws int64, q search.Query, dfs *dfCache) (*ranking, error) {
	st, err := tx.SearchStats(ctx, ws)
	if err != nil {
		return nil, err
	}
	rk := &ranking{tx: tx, ws: ws, q: q, stats: corpusStats(st), df: map[string]int{},
		phrases: slices.ContainsFunc(q.Terms, func(t search.Term) bool { return t.Phrase != nil }),
		cheapDF: max(1000, st.Docs/50)}
	var counted []string
	for _, tok := range dfTokens(q) {
		if n, ok := dfs.get(ws, st.Generation, tok); ok {
			rk.df[tok] = n
			continue
		}
		if rk.df[tok], err = docFreq(ctx, tx, ws, tok); err != nil {
			return nil, err
		}
		counted = append(counted, tok)
	}
	if len(counted) > 0 {
		// A read transaction of PostgreSQL sees each statement's latest
		// commits: the counts belong to the generation read first only if
		// it is still the one now.
		now, err := tx.SearchStats(ctx, ws)
		if err != nil {
			return nil, err
		}
		if now.Generation == st.Generation {
			for _, tok := range counted {
				dfs.put(ws, st.Generation, tok, rk.df[tok])
			}
		}
	}
	return rk, nil
}

// corpusStats are BM25's figures of a workspace's index.
func corpusStats(st store.SearchStats) search.Stats {
	stats := search.Stats{Docs: st.Docs}
	if st.Docs > 0 {
		n := float64(st.Docs)
		for f, l := range st.Lens {
			stats.Avg[f] = float64(l) / n
		}
	}
	return stats
}

// dfCache keeps document frequencies between searches: counting the pages
// that hold a common word reads its whole page list (5–30 ms for a word in
// half of 100k pages), while a workspace's index changes far less often
// than it is searched. Entries hold for one generation of the workspace's
// index (store.SearchStats), so a search never uses a count of another.
type dfCache struct {
	mu  sync.Mutex
	wss map[int64]*wsDF
}

type wsDF struct {
	gen int64
	df  map[string]int
}

// maxCachedDF bounds the tokens kept per workspace; past it the cache starts
// over, which costs recounting, never a wrong count.
const maxCachedDF = 4096

func (c *dfCache) get(ws, gen int64, tok string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.wss[ws]
	if w == nil || w.gen != gen {
		return 0, false
	}
	n, ok := w.df[tok]
	return n, ok
}

func (c *dfCache) put(ws, gen int64, tok string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wss == nil {
		c.wss = map[int64]*wsDF{}
	}
	w := c.wss[ws]
	switch {
	case w != nil && w.gen > gen:
		return // a newer search already moved on
	case w == nil || w.gen != gen || len(w.df) >= maxCachedDF:
		w = &wsDF{gen: gen, df: map[string]int{}}
		c.wss[ws] = w
	}
	w.df[tok] = n
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
		// Matching is most of a search's time, and each page's is its own:
		// the cores share the pages.
		type result struct {
			score float64
			ok    bool
		}
		results := make([]result, len(docs))
		workers := min(runtime.GOMAXPROCS(0), 4, max(1, len(docs)/50))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(docs); i += workers {
					results[i].score, results[i].ok = rk.match(docs[i])
				}
			})
		}
		wg.Wait()
		for i, d := range docs {
			if results[i].ok {
				matched++
				top.push(hit{id: d.ID, key: store.PathKey(d.Path), score: results[i].score})
			}
		}
	}
	return matched, nil
}

// matching counts the pages of ids that match the query. Past maxVerified
// pages it reads that many, evenly spread, and estimates the rest in
// proportion (estimated).
func (rk *ranking) matching(ctx context.Context, ids []int64) (n int, estimated bool, err error) {
	read := ids
	if len(ids) > maxVerified {
		read = make([]int64, maxVerified)
		for i := range read {
			read[i] = ids[i*len(ids)/maxVerified]
		}
	}
	for chunk := range slices.Chunk(read, candidateBatch) {
		docs, err := rk.tx.SearchDocs(ctx, chunk)
		if err != nil {
			return 0, false, err
		}
		for _, d := range docs {
			if _, ok := rk.match(d); ok {
				n++
			}
		}
	}
	if len(read) < len(ids) {
		return int(math.Round(float64(n) * float64(len(ids)) / float64(len(read)))), true, nil
	}
	return n, false, nil
}

// maxVerified is how many unsure pages (see candidateMatch) a search reads
// to count its matches: a prefix that runs past a common word's stem
// ("sessi*" for "session", whose stem is "sess") makes every page of the
// stem's list unsure: at 100k generated pages, reading all 39,727 took
// 2.5 s, and 1000 of them 60 ms. (A variable for tests.)
var maxVerified = 1000

// match scores one page.
func (rk *ranking) match(d store.SearchDoc) (float64, bool) {
	_, body, _ := markdown.Split(d.Content)
	if rk.phrases {
		return search.Match(rk.q, searchFields(d.Title, d.Tags, d.Headings, body, d.Texts), rk.stats, rk.dfOf)
	}
	// The same result, from the lengths stored at write time and one pass
	// over each field.
	f := search.Fields{Text: [search.NumFields]string{d.Title, strings.Join(d.Tags, " "), d.Headings, body}, Lens: d.Lens}
	copy(f.Text[search.FieldAliases:], d.Texts)
	return search.MatchWords(rk.q, f, rk.stats, rk.dfOf)
}

// rankAll scores every candidate: for queries with required words, phrases
// or exclusions, whose candidates are already narrow.
func (rk *ranking) rankAll(ctx context.Context, f store.CandidateFilter, top *topK, res *SearchResult) error {
	rt := rk.q.Retrieval()
	// Scoring reads every candidate: unsure ones too are matched then.
	ids, _, err := candidates(ctx, rk.tx, rk.ws, candidateMatch{AllOf: rt.AllOf, AnyOf: rt.AnyOf, NoneOf: rt.NoneOf, Phrases: rt.Phrases, NoPhrases: rt.NoPhrases}, f, maxCandidates+1)
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

// rankByTerm ranks a query of optional words without reading every page
// that has one of them, nor every word's page list (the MaxScore method).
// A word adds at most MaxScore(df) to a page's score, so a page's score is at
// most the MaxScores of the words whose lists hold it, plus those of the
// words whose lists are not read yet. Lists are read rarest word first; pages
// are scored from the highest bound down; a page whose bound falls below the
// k-th best score so far is never read, and once the words not yet read could
// not together lift a page into the top, their lists are not read at all —
// in a question, the common words ("how", "the") are the longest lists and
// weigh least. Up to that point the result is exactly that of scoring every
// candidate. Queries of only very common words can leave too many pages in
// reach: after maxScored pages it stops and says so, the pages holding the
// most query words having been ranked first.
func (rk *ranking) rankByTerm(ctx context.Context, words []search.Term, f store.CandidateFilter, top *topK, res *SearchResult) error {
	type list struct {
		term search.Term
		max  float64
		df   int
	}
	lists := make([]list, len(words))
	rest := 0.0 // the MaxScores of the lists not read yet
	for i, w := range words {
		lists[i] = list{w, search.MaxScore(rk.dfOf(w), rk.stats), rk.dfOf(w)}
		rest += lists[i].max
	}
	slices.SortStableFunc(lists, func(x, y list) int { return cmp.Compare(y.max, x.max) })
	rt := rk.q.Retrieval()
	// cands are the pages of the lists read, in ID order (lists come in ID
	// order, so adding one is a merge), each with the MaxScores of the read
	// lists holding it.
	type cand struct {
		id    int64
		bound float64 // done once scored, or out of reach for good
	}
	const done = -1.0
	// One array for every page a query can reach, merged into in place:
	// short-lived arrays of 100k pages would grow the heap by their size
	// each time a list is read.
	reach := 0
	for _, l := range lists {
		reach += l.df
	}
	cands := make([]cand, 0, min(reach, rk.stats.Docs))
	// The pages of each list read that surely match, and whether any list
	// held pages that may not (a prefix's, see candidateMatch).
	var sure [][]int64
	doubted := false
	read := 0
	readNext := func() error {
		l := lists[read]
		ids, unsure, err := candidates(ctx, rk.tx, rk.ws, candidateMatch{AllOf: []string{token(l.term)}, NoneOf: rt.NoneOf, NoPhrases: rt.NoPhrases}, f, 0)
		if err != nil {
			return err
		}
		if len(unsure) > 0 {
			doubted = true
			sure = append(sure, subtract(ids, unsure))
		} else {
			sure = append(sure, ids)
		}
		// Count the new pages, make room at the end, and merge from the back.
		fresh, i := 0, 0
		for _, id := range ids {
			for i < len(cands) && cands[i].id < id {
				i++
			}
			if i < len(cands) && cands[i].id == id {
				if cands[i].bound != done {
					cands[i].bound += l.max
				}
				continue
			}
			fresh++
		}
		old := len(cands)
		cands = slices.Grow(cands, fresh)[:old+fresh]
		w, i := len(cands)-1, old-1
		for j := len(ids) - 1; j >= 0 && w > i; j-- {
			id := ids[j]
			for i >= 0 && cands[i].id > id {
				cands[w] = cands[i]
				w--
				i--
			}
			if i >= 0 && cands[i].id == id {
				continue // counted above
			}
			cands[w] = cand{id: id, bound: l.max}
			w--
		}
		read++
		rest -= l.max
		return nil
	}
	// out reports whether a score of at most b cannot enter the top. The
	// slack keeps float sums summed in another order from dropping a tie.
	out := func(b float64) bool { return top.full() && b < top.threshold()-1e-9 }
	// inReach counts the pages left to score; bounds only fall as lists are
	// read and the top fills, so a page once out of reach stays out.
	inReach := func() int {
		n := 0
		for i := range cands {
			if c := &cands[i]; c.bound != done {
				if out(c.bound + rest) {
					c.bound = done
				} else {
					n++
				}
			}
		}
		return n
	}
	// Short lists are read up front: they cost little and give the first
	// pages to score their bounds.
	for read < len(lists) && (read == 0 || lists[read].df <= rk.cheapDF) {
		if err := readNext(); err != nil {
			return err
		}
	}
	var order []int32 // indexes of cands, highest bound first
	scored := 0
	for {
		left := inReach()
		if left == 0 {
			// Read on while pages holding only unread words could still
			// make the top.
			if read == len(lists) || out(rest) {
				break
			}
			if err := readNext(); err != nil {
				return err
			}
			order = nil
			continue
		}
		// A page costs about as much to score as 20 IDs of a list cost to
		// read: with many pages in reach, the next list, which sharpens
		// their bounds, is worth reading first.
		if read < len(lists) && left*20 > lists[read].df {
			if err := readNext(); err != nil {
				return err
			}
			order = nil
			continue
		}
		if scored >= maxScored {
			res.Note = fmt.Sprintf("more than %d pages could rank; the %d holding the most of your words were ranked: add rarer words, a path or tags for an exact ranking", maxScored, maxScored)
			break
		}
		if order == nil {
			order = make([]int32, 0, left)
			for i, c := range cands {
				if c.bound != done {
					order = append(order, int32(i))
				}
			}
			slices.SortStableFunc(order, func(x, y int32) int { return cmp.Compare(cands[y].bound, cands[x].bound) })
		}
		ids := make([]int64, 0, candidateBatch)
		for _, i := range order {
			if c := &cands[i]; c.bound != done {
				if out(c.bound + rest) {
					break
				}
				ids = append(ids, c.id)
				c.bound = done
				if len(ids) == candidateBatch {
					break
				}
			}
		}
		scored += len(ids)
		if _, err := rk.score(ctx, ids, top); err != nil {
			return err
		}
	}
	// Every page holding a word matches: when ranking skipped some lists,
	// the index counts them.
	rk.unread = len(lists) - read
	var ids, unsure []int64
	if read == len(lists) {
		ids = make([]int64, len(cands))
		for i, c := range cands {
			ids[i] = c.id
		}
		if doubted {
			unsure = subtract(ids, union(sure))
		}
	} else {
		anyOf := make([]string, len(words))
		for i, w := range words {
			anyOf[i] = token(w)
		}
		var err error
		if ids, unsure, err = candidates(ctx, rk.tx, rk.ws, candidateMatch{AnyOf: anyOf, NoneOf: rt.NoneOf, NoPhrases: rt.NoPhrases}, f, 0); err != nil {
			return err
		}
	}
	n, estimated, err := rk.matching(ctx, unsure)
	res.Total = len(ids) - len(unsure) + n
	if estimated {
		res.Note = joinNotes(res.Note, fmt.Sprintf("the total is estimated: %d pages hold a word of the same stem as a word your prefix begins, and %d of them were read to count those that match", len(unsure), maxVerified))
	}
	return err
}

// rankPostings ranks a query from its postings lists (search.RankPostings)
// as plan reads them: exact, and without reading a page. Page skip (0:
// none) is no result. It returns what scored the hits.
func rankPostings(ctx context.Context, tx *store.Tx, ws int64, plan listPlan, skip int64, f store.CandidateFilter, top *topK, res *SearchResult) (scorer, error) {
	st, err := tx.SearchStats(ctx, ws)
	if err != nil {
		return scorer{}, err
	}
	stats := corpusStats(st)
	q := plan.q
	var stems []string
	for _, l := range plan.lists {
		stems = append(stems, l.stems...)
	}
	lists, err := tx.PostingLists(ctx, ws, stems)
	if err != nil {
		return scorer{}, err
	}
	p := search.Postings{Lists: make([]search.Cursor, len(q.Terms)), DF: make([]int, len(q.Terms)), Filters: plan.filters, Apart: plan.apart}
	df := map[string]int{}
	rest := lists
	for i, t := range q.Terms {
		tl := plan.lists[i]
		n := len(tl.stems)
		cursors, dfs := make([]search.Cursor, n), make([]int, n)
		for j, l := range rest[:n] {
			cursors[j], dfs[j] = l, l.Pages
		}
		rest = rest[n:]
		switch tl.kind {
		case prefixLists:
			forms := make([][]search.Cursor, n)
			for j := range cursors {
				forms[j] = cursors[j : j+1]
			}
			p.Lists[i], p.DF[i] = search.Union(forms), tl.df
		case phraseLists:
			p.Lists[i] = search.Union([][]search.Cursor{cursors})
			continue // scores nothing
		default:
			p.Lists[i], p.DF[i] = search.TermCursor(t, cursors, dfs)
		}
		df[token(t)] = p.DF[i]
	}
	sc := scorer{stats, func(t search.Term) int { return df[token(t)] }}
	var allowed []int64 // nil: every page the access rule keeps
	if f.Prefix != "" || len(f.Tags) > 0 {
		if allowed, err = tx.FilterPages(ctx, ws, f); err != nil {
			return sc, err
		}
		if len(allowed) == 0 {
			return sc, nil
		}
	}
	member := f.IncludePrivate
	p.Keep = func(page int64, public bool) bool {
		if !public && !member || page == skip {
			return false
		}
		if allowed == nil {
			return true
		}
		// Pages come in ID order, as allowed is.
		for len(allowed) > 0 && allowed[0] < page {
			allowed = allowed[1:]
		}
		return len(allowed) > 0 && allowed[0] == page
	}
	ranked, total := search.RankPostings(q, p, stats, top.k)
	for _, l := range lists {
		if err := l.Err(); err != nil {
			return sc, fmt.Errorf("search index: %w", err)
		}
	}
	res.Total = total
	ids := make([]int64, len(ranked))
	for i, r := range ranked {
		ids[i] = r.Page
	}
	keys, err := tx.PathKeys(ctx, ids)
	if err != nil {
		return sc, err
	}
	for _, r := range ranked {
		if key, ok := keys[r.Page]; ok {
			top.push(hit{id: r.Page, key: key, score: r.Score})
		}
	}
	return sc, nil
}

// scorer is what a search scored with: the corpus figures and the terms'
// document frequencies.
type scorer struct {
	stats search.Stats
	df    func(search.Term) int
}

// explain takes apart the score of page d (body: its content after the
// frontmatter) for q, parsed from question.
func (sc scorer) explain(q search.Query, question string, d store.SearchDoc, body string) *Explanation {
	if sc.df == nil {
		return nil
	}
	ex, _ := search.Explain(q, searchFields(d.Title, d.Tags, d.Headings, body, d.Texts), sc.stats, sc.df)
	// Terms are stems; the question's words are what its writer knows.
	written := map[string]string{}
	for _, tok := range search.Terms(question) {
		if s := search.Stem(tok); written[s] == "" {
			written[s] = tok
		}
	}
	out := &Explanation{Terms: []TermExplanation{}}
	words, near := 0.0, 0.0
	for _, t := range ex.Terms {
		te := TermExplanation{Term: cmp.Or(written[t.Term], t.Term), Synonyms: t.Synonyms, IDF: round(t.IDF), Score: round(t.Score), Fields: []FieldExplanation{}}
		for _, fc := range t.Fields {
			te.Fields = append(te.Fields, FieldExplanation{Field: fc.Field.String(), Weight: fc.Field.Weight(), Count: fc.Count, Near: fc.Near})
		}
		out.Terms = append(out.Terms, te)
		words += t.Score - t.Near
		near += t.Near
	}
	out.Signals = []Signal{{Name: "words", Score: round(words)}, {Name: "nearness", Score: round(near)}}
	return out
}

// onlyOptionalWords returns the terms of a query made only of optional words
// and prefixes (exclusions allowed), the shape rankByTerm handles.
func onlyOptionalWords(q search.Query) ([]search.Term, bool) {
	var words []search.Term
	for _, t := range q.Terms {
		switch {
		case len(t.Phrase) > 0 && !t.Excluded, t.Required:
			return nil, false
		case t.Excluded: // a phrase too: the lists' positions tell its pages
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

// joinNotes says both notes, either, or none.
func joinNotes(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; " + b
}
