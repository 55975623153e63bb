package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
)

// CandidateFilter narrows the pages a search ranks.
type CandidateFilter struct {
	Prefix         string   // folder key ("projects/"), "" for all
	Tags           []string // tag keys a page must all have
	IncludePrivate bool
}

// PrefixStems returns the stems of workspace ws whose lists hold the pages
// with a word beginning with prefix: each stem that begins with it (pages
// waiting beside the lists count theirs too), and the stem of each word of
// search_words that does.
func (tx *Tx) PrefixStems(ctx context.Context, ws int64, prefix string) ([]string, error) {
	// Every token a search keeps is below U+10FFFF followed by anything, in
	// the byte order both engines compare these columns in.
	hi := prefix + "\U0010FFFF"
	stems, err := queryAll(ctx, tx, scanString, "SELECT DISTINCT stem FROM search_postings WHERE workspace_id = ? AND stem >= ? AND stem < ?", ws, prefix, hi)
	if err != nil {
		return nil, fmt.Errorf("read stems: %w", err)
	}
	words, err := queryAll(ctx, tx, scanString, "SELECT DISTINCT stem FROM search_words WHERE workspace_id = ? AND word >= ? AND word < ?", ws, prefix, hi)
	if err != nil {
		return nil, fmt.Errorf("read words: %w", err)
	}
	stems = append(stems, words...)
	pending, err := queryAll(ctx, tx, func(sc scanner) (b []byte, err error) {
		err = sc.Scan(&b)
		return b, err
	}, "SELECT data FROM search_pending WHERE workspace_id = ?", ws)
	if err != nil {
		return nil, fmt.Errorf("read pending postings: %w", err)
	}
	for _, data := range pending {
		err := eachPending(data, func(stem, _ []byte) {
			if strings.HasPrefix(string(stem), prefix) {
				stems = append(stems, string(stem))
			}
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(stems)
	return slices.Compact(stems), nil
}

// StemWords returns the words of search_words of workspace ws whose stems
// are among stems.
func (tx *Tx) StemWords(ctx context.Context, ws int64, stems []string) ([]SearchWord, error) {
	var out []SearchWord
	for chunk := range slices.Chunk(stems, 500) {
		args := make([]any, 0, 1+len(chunk))
		args = append(args, ws)
		for _, s := range chunk {
			args = append(args, s)
		}
		words, err := queryAll(ctx, tx, func(sc scanner) (w SearchWord, err error) {
			err = sc.Scan(&w.Word, &w.Stem)
			return w, err
		}, "SELECT word, stem FROM search_words WHERE workspace_id = ? AND stem IN ("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return nil, fmt.Errorf("read words: %w", err)
		}
		out = append(out, words...)
	}
	return out, nil
}

func scanString(sc scanner) (s string, err error) {
	err = sc.Scan(&s)
	return s, err
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
