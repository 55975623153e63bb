package docs

import (
	"cmp"
	"context"
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
	rt := q.Retrieval()
	filter := store.CandidateFilter{IncludePrivate: member, Limit: maxCandidates + 1}
	if folder != "" {
		filter.Prefix = store.PathKey(folder) + "/"
	}
	for _, t := range r.Tags {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" {
			filter.Tags = append(filter.Tags, t)
		}
	}
	type scored struct {
		doc   store.SearchDoc
		score float64
	}
	var hits []scored
	var res SearchResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ids, err := tx.SearchCandidates(ctx, a.Workspace.ID, store.Match{AllOf: rt.AllOf, AnyOf: rt.AnyOf, NoneOf: rt.NoneOf}, filter)
		if err != nil {
			return err
		}
		if len(ids) > maxCandidates {
			ids = ids[:maxCandidates]
			res.Note = "more than 20000 pages match; only the first 20000 were ranked: add words, a path or tags to narrow the search"
		}
		if len(ids) == 0 {
			return nil
		}
		st, err := tx.SearchStats(ctx, a.Workspace.ID)
		if err != nil {
			return err
		}
		stats := search.Stats{Docs: st.Docs}
		if st.Docs > 0 {
			n := float64(st.Docs)
			stats.AvgTitle, stats.AvgTags, stats.AvgHeadings, stats.AvgBody = float64(st.Lens[0])/n, float64(st.Lens[1])/n, float64(st.Lens[2])/n, float64(st.Lens[3])/n
		}
		df := map[string]int{}
		for _, tok := range dfTokens(q) {
			if df[tok], err = tx.DocFreq(ctx, a.Workspace.ID, tok); err != nil {
				return err
			}
		}
		dfOf := func(t search.Term) int {
			if t.Prefix {
				return df[t.Text+"*"]
			}
			return df[t.Text]
		}
		for chunk := range slices.Chunk(ids, candidateBatch) {
			docs, err := tx.SearchDocs(ctx, chunk)
			if err != nil {
				return err
			}
			for _, d := range docs {
				_, body, _ := markdown.Split(d.Content)
				if score, ok := search.Match(q, searchFields(d.Title, d.Tags, d.Headings, body), stats, dfOf); ok {
					hits = append(hits, scored{d, score})
				}
			}
		}
		return nil
	})
	if err != nil {
		return SearchResult{}, err
	}
	slices.SortFunc(hits, func(x, y scored) int {
		if c := cmp.Compare(y.score, x.score); c != 0 {
			return c
		}
		return strings.Compare(store.PathKey(x.doc.Path), store.PathKey(y.doc.Path))
	})
	res.Total = len(hits)
	if offset < len(hits) {
		page := hits[offset:min(offset+limit, len(hits))]
		for _, h := range page {
			fm, body, _ := markdown.Split(h.doc.Content)
			line, ctxText := search.Snippet(body, q)
			if line > 0 {
				line += lineOffset(h.doc.Content, fm)
			}
			res.Hits = append(res.Hits, Hit{Path: h.doc.Path, Title: h.doc.Title, PageID: h.doc.UID, MatchLine: line, Context: ctxText, Score: round(h.score)})
		}
		if offset+limit < len(hits) {
			res.NextCursor = encodeCursor(strconv.Itoa(offset + limit))
		}
	}
	return res, nil
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
