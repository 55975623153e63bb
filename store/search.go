package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
)

// A Match says which pages are search candidates: pages holding every token of
// AllOf, at least one of AnyOf (when not empty) and none of NoneOf. A token
// ending in "*" is a prefix. Tokens are search tokens (letters and digits);
// the engines index each page's distinct tokens verbatim — FTS5, a tsvector
// built from the token array — so that both find the same pages, and ranking
// happens in Go. Neither keeps positions (FTS5's detail=none): phrases are
// checked against the text.
type Match struct {
	AllOf, AnyOf, NoneOf []string
}

// CandidateFilter narrows candidates.
type CandidateFilter struct {
	Prefix         string   // folder key ("projects/"), "" for all
	Tags           []string // tag keys a page must all have
	IncludePrivate bool
	Limit          int // at most this many candidates, 0: no limit
}

func (m Match) empty() bool { return len(m.AllOf) == 0 && len(m.AnyOf) == 0 }

// ftsExpr is m as an FTS5 query within workspace ws, whose tokens the index
// holds as "w<ws>_<token>" (see ftsTokens).
func (m Match) ftsExpr(ws int64) string {
	prefix := wsPrefix(ws)
	term := func(t string) string {
		if p, ok := strings.CutSuffix(t, "*"); ok {
			return `"` + prefix + p + `"*`
		}
		return `"` + prefix + t + `"`
	}
	var parts []string
	for _, t := range m.AllOf {
		parts = append(parts, term(t))
	}
	if len(m.AnyOf) > 0 {
		alts := make([]string, len(m.AnyOf))
		for i, t := range m.AnyOf {
			alts[i] = term(t)
		}
		parts = append(parts, "("+strings.Join(alts, " OR ")+")")
	}
	expr := "(" + strings.Join(parts, " AND ") + ")"
	for _, t := range m.NoneOf {
		expr += " NOT " + term(t)
	}
	return expr
}

// wsPrefix is what the full-text index puts before every token of workspace
// ws. Search tokens are letters and digits only, so "_" cannot be part of one
// and "w1_" + token never equals "w12_" + another.
func wsPrefix(ws int64) string { return "w" + strconv.FormatInt(ws, 10) + "_" }

// ftsTokens is the tokens column of a page of workspace ws.
func ftsTokens(ws int64, tokens []string) string {
	prefix := wsPrefix(ws)
	var b strings.Builder
	n := 0
	for _, t := range tokens {
		n += len(prefix) + len(t) + 1
	}
	b.Grow(n)
	for i, t := range tokens {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(prefix)
		b.WriteString(t)
	}
	return b.String()
}

// tsquery is m as a PostgreSQL tsquery over the token lexemes.
func (m Match) tsquery() string {
	term := func(t string) string {
		if p, ok := strings.CutSuffix(t, "*"); ok {
			return "'" + p + "':*"
		}
		return "'" + t + "'"
	}
	var parts []string
	for _, t := range m.AllOf {
		parts = append(parts, term(t))
	}
	if len(m.AnyOf) > 0 {
		alts := make([]string, len(m.AnyOf))
		for i, t := range m.AnyOf {
			alts[i] = term(t)
		}
		parts = append(parts, "("+strings.Join(alts, " | ")+")")
	}
	for _, t := range m.NoneOf {
		parts = append(parts, "!"+term(t))
	}
	return strings.Join(parts, " & ")
}

func validTokens(m Match) error {
	for _, list := range [][]string{m.AllOf, m.AnyOf, m.NoneOf} {
		for _, t := range list {
			if strings.ContainsAny(strings.TrimSuffix(t, "*"), `"'*:&|!() `) || t == "" || t == "*" {
				return fmt.Errorf("search token %q is not a token", t)
			}
		}
	}
	return nil
}

// SearchCandidates returns the IDs of the pages of workspace ws that m and f
// select, in ID order.
func (tx *Tx) SearchCandidates(ctx context.Context, ws int64, m Match, f CandidateFilter) ([]int64, error) {
	if m.empty() {
		return nil, nil
	}
	if err := validTokens(m); err != nil {
		return nil, err
	}
	var q string
	var args []any
	switch {
	case tx.db.engine == SQLite && f.indexOnly():
		// The index alone answers: its tokens carry the workspace.
		q = "SELECT rowid AS id FROM page_fts WHERE page_fts MATCH ?"
		args = []any{m.ftsExpr(ws)}
		if f.Limit > 0 {
			q += " ORDER BY rowid LIMIT ?"
			args = append(args, f.Limit)
		}
		return tx.ids(ctx, q, args...)
	case tx.db.engine == SQLite:
		q = "SELECT p.id FROM page_fts JOIN pages p ON p.id = page_fts.rowid WHERE page_fts MATCH ?"
		args = []any{m.ftsExpr(ws)}
	default:
		q = "SELECT p.id FROM pages p WHERE p.workspace_id = ? AND p.tsv @@ ?::tsquery"
		args = []any{ws, m.tsquery()}
	}
	cond, cargs := filterSQL(f)
	q += cond
	args = append(args, cargs...)
	q += " ORDER BY p.id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return tx.ids(ctx, q, args...)
}

// ids runs a query of one column, id, and returns the IDs in order. The
// engine joins them into one string: a list of 100k pages read row by row
// through database/sql takes three times as long.
func (tx *Tx) ids(ctx context.Context, q string, args ...any) ([]int64, error) {
	agg := "SELECT COALESCE(group_concat(id, ','), '') FROM (" + q + ")"
	if tx.db.engine != SQLite {
		agg = "SELECT COALESCE(string_agg(id::text, ','), '') FROM (" + q + ") AS ids"
	}
	var joined string
	if err := tx.queryRow(ctx, agg, args...).Scan(&joined); err != nil {
		return nil, err
	}
	if joined == "" {
		return nil, nil
	}
	out := make([]int64, 0, strings.Count(joined, ",")+1)
	for f := range strings.SplitSeq(joined, ",") {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("page id %q: %w", f, err)
		}
		out = append(out, id)
	}
	// Neither engine promises the order of an aggregate's input; sorting
	// sorted IDs costs next to nothing.
	slices.Sort(out)
	return out, nil
}

// CountCandidates counts the pages of workspace ws that m and f select.
func (tx *Tx) CountCandidates(ctx context.Context, ws int64, m Match, f CandidateFilter) (int, error) {
	if m.empty() {
		return 0, nil
	}
	if err := validTokens(m); err != nil {
		return 0, err
	}
	var q string
	var args []any
	switch {
	case tx.db.engine == SQLite && f.indexOnly():
		q = "SELECT COUNT(*) FROM page_fts WHERE page_fts MATCH ?"
		args = []any{m.ftsExpr(ws)}
	case tx.db.engine == SQLite:
		q = "SELECT COUNT(*) FROM page_fts JOIN pages p ON p.id = page_fts.rowid WHERE page_fts MATCH ?"
		args = []any{m.ftsExpr(ws)}
	default:
		q = "SELECT COUNT(*) FROM pages p WHERE p.workspace_id = ? AND p.tsv @@ ?::tsquery"
		args = []any{ws, m.tsquery()}
	}
	cond, cargs := filterSQL(f) // nothing when indexOnly
	var n int
	err := tx.queryRow(ctx, q+cond, append(args, cargs...)...).Scan(&n)
	return n, err
}

// indexOnly reports whether f selects nothing beyond the workspace, which
// SQLite's full-text index answers alone.
func (f CandidateFilter) indexOnly() bool {
	return f.Prefix == "" && len(f.Tags) == 0 && f.IncludePrivate
}

// filterSQL is the SQL of a candidate filter, on pages p.
func filterSQL(f CandidateFilter) (string, []any) {
	q, args := under("p.path_key", f.Prefix)
	if !f.IncludePrivate {
		q += " AND p.access = 'public'"
	}
	for _, t := range f.Tags {
		q += " AND EXISTS (SELECT 1 FROM page_tags t WHERE t.page_id = p.id AND t.tag_key = ?)"
		args = append(args, t)
	}
	return q, args
}

// DocFreq counts the pages of workspace ws holding token (a prefix when it
// ends in "*"), private ones included: the document frequency of BM25.
func (tx *Tx) DocFreq(ctx context.Context, ws int64, token string) (int, error) {
	return tx.CountCandidates(ctx, ws, Match{AllOf: []string{token}}, CandidateFilter{IncludePrivate: true})
}

// SearchFields is how many fields search scores (search.NumFields). The
// store keeps each page's count of search tokens in each, and each
// workspace's totals, in the columns lenCols names, in the fields' order.
const SearchFields = 7

var lenCols = [SearchFields]string{"title_len", "tags_len", "headings_len", "body_len", "aliases_len", "summary_len", "meta_len"}

// lenColumns is lenCols as a column list.
func lenColumns() string { return strings.Join(lenCols[:], ", ") }

// lenSets is "title_len = ?, …" for an UPDATE.
func lenSets() string { return strings.Join(lenCols[:], " = ?, ") + " = ?" }

func lenArgs(lens [SearchFields]int, sign int) []any {
	out := make([]any, SearchFields)
	for i, l := range lens {
		out[i] = sign * l
	}
	return out
}

func lenDest(lens *[SearchFields]int) []any {
	out := make([]any, SearchFields)
	for i := range lens {
		out[i] = &lens[i]
	}
	return out
}

// SearchStats are the corpus figures of BM25: documents and the total search
// tokens of each field (see SearchFields); and the index's
// generation, which every change to the workspace's index raises in the same
// transaction: figures derived from the index (document frequencies) hold
// while it is the same.
type SearchStats struct {
	Docs       int
	Lens       [SearchFields]int64
	Generation int64
}

// SearchStats returns the search figures of workspace ws.
func (tx *Tx) SearchStats(ctx context.Context, ws int64) (SearchStats, error) {
	var s SearchStats
	cols := "COALESCE(MAX(docs), 0)"
	dest := []any{&s.Docs}
	for i, c := range lenCols {
		cols += ", COALESCE(MAX(" + c + "), 0)"
		dest = append(dest, &s.Lens[i])
	}
	err := tx.queryRow(ctx, "SELECT "+cols+", COALESCE(MAX(generation), 0) FROM search_stats WHERE workspace_id = ?", ws).
		Scan(append(dest, &s.Generation)...)
	return s, err
}

// A SearchDoc is what ranking reads of a candidate.
type SearchDoc struct {
	ID       int64
	Path     string
	Title    string
	Tags     []string
	Headings string
	Content  string
	Access   atrium.Access
	UID      string
	Lens     [SearchFields]int // search tokens in each field
	Texts    []string          // the texts of the fields after the body (PageIndex.Texts)
}

// SearchDocs loads candidates for ranking.
func (tx *Tx) SearchDocs(ctx context.Context, ids []int64) ([]SearchDoc, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := idArgs(ids)
	return queryAll(ctx, tx, func(sc scanner) (d SearchDoc, err error) {
		var tags, access, texts string
		if err := sc.Scan(append([]any{&d.ID, &d.UID, &d.Path, &d.Title, &tags, &d.Headings, textDest{text: &d.Content}, &access, &texts}, lenDest(&d.Lens)...)...); err != nil {
			return d, err
		}
		d.Access = atrium.Access(access)
		if err := jsonUnmarshalStrings(tags, &d.Tags); err != nil {
			return d, err
		}
		if err := jsonUnmarshalStrings(texts, &d.Texts); err != nil {
			return d, err
		}
		return d, nil
	}, "SELECT id, uid, path, title, tags, headings, content, access, field_texts, "+lenColumns()+" FROM pages WHERE id IN ("+placeholders(len(ids))+")", args...)
}

// FilterPages returns the IDs of the pages of workspace ws that f selects,
// in ID order.
func (tx *Tx) FilterPages(ctx context.Context, ws int64, f CandidateFilter) ([]int64, error) {
	cond, args := filterSQL(f)
	return tx.ids(ctx, "SELECT p.id FROM pages p WHERE p.workspace_id = ? AND p.trashed_at IS NULL"+cond+" ORDER BY p.id", append([]any{ws}, args...)...)
}

// PathKeys returns the path keys of the pages of ids that exist.
func (tx *Tx) PathKeys(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	for chunk := range slices.Chunk(ids, 500) {
		args := idArgs(chunk)
		type row struct {
			id  int64
			key string
		}
		rows, err := queryAll(ctx, tx, func(sc scanner) (r row, err error) {
			err = sc.Scan(&r.id, &r.key)
			return r, err
		}, "SELECT id, path_key FROM pages WHERE id IN ("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.id] = r.key
		}
	}
	return out, nil
}
