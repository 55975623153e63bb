package pages

import (
	"context"
	"math/bits"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
)

// A candidateMatch says which pages a search ranks by reading them, when
// the lists alone cannot rank it (phrases, prefixes): the pages holding
// every token of AllOf and every phrase of Phrases, at least one token of
// AnyOf (when not empty), and none of NoneOf nor of NoPhrases
// (search.Retrieval). A token is a stem, or a prefix when it ends in "*"; a
// phrase is stems in a row, which the lists' positions tell.
//
// The pages come from the postings lists, the one full-text index: a word
// is its stem's list; a prefix the lists of the stems it begins and of the
// stems of the words it begins (store.PrefixStems). A list whose stem has a
// word not beginning with the prefix ("run" for "runn*", through
// "running") also holds pages without one: such pages are unsure, and only
// search.Match, reading the page, tells whether they match.
type candidateMatch struct {
	AllOf, AnyOf, NoneOf []string
	Phrases, NoPhrases   [][]string
}

// stemsAtOnce is how many lists one read of tokenPages asks for: a short
// prefix can begin thousands of stems.
const stemsAtOnce = 500

// candidates returns the pages of workspace ws that m and f select, in ID
// order, at most limit of them (0: all); and which of them are unsure (see
// candidateMatch), in ID order.
func candidates(ctx context.Context, tx *store.Tx, ws int64, m candidateMatch, f store.CandidateFilter, limit int) (ids, unsure []int64, err error) {
	if len(m.AllOf) == 0 && len(m.AnyOf) == 0 && len(m.Phrases) == 0 {
		return nil, nil, nil
	}
	have := false
	// Phrases first: they are sure, and rarer than their words.
	for _, phrase := range m.Phrases {
		set, err := phrasePages(ctx, tx, ws, phrase, !f.IncludePrivate)
		if err != nil {
			return nil, nil, err
		}
		if !have {
			ids, have = set, true
		} else {
			ids = intersect(ids, set)
		}
		if len(ids) == 0 {
			return nil, nil, nil
		}
	}
	for _, tok := range m.AllOf {
		set, uns, err := tokenPages(ctx, tx, ws, tok, !f.IncludePrivate)
		if err != nil {
			return nil, nil, err
		}
		if !have {
			ids, unsure, have = set, uns, true
		} else {
			ids = intersect(ids, set)
			unsure = intersect(ids, union([][]int64{unsure, uns}))
		}
		if len(ids) == 0 {
			return nil, nil, nil
		}
	}
	if len(m.AnyOf) > 0 {
		var sets, sure [][]int64
		for _, tok := range m.AnyOf {
			set, uns, err := tokenPages(ctx, tx, ws, tok, !f.IncludePrivate)
			if err != nil {
				return nil, nil, err
			}
			sets, sure = append(sets, set), append(sure, subtract(set, uns))
		}
		// Unsure unless a sure page of one of them.
		either := union(sets)
		eitherUnsure := subtract(either, union(sure))
		if !have {
			ids, unsure = either, eitherUnsure
		} else {
			ids = intersect(ids, either)
			unsure = intersect(ids, union([][]int64{unsure, eitherUnsure}))
		}
	}
	for _, tok := range m.NoneOf {
		if len(ids) == 0 {
			return nil, nil, nil
		}
		// A page sure to hold the word goes; one unsure to stays, unsure.
		set, uns, err := tokenPages(ctx, tx, ws, tok, false)
		if err != nil {
			return nil, nil, err
		}
		ids = subtract(ids, subtract(set, uns))
		unsure = union([][]int64{subtract(unsure, subtract(set, uns)), intersect(ids, uns)})
	}
	for _, phrase := range m.NoPhrases {
		if len(ids) == 0 {
			return nil, nil, nil
		}
		set, err := phrasePages(ctx, tx, ws, phrase, false)
		if err != nil {
			return nil, nil, err
		}
		ids, unsure = subtract(ids, set), subtract(unsure, set)
	}
	if len(ids) > 0 && (f.Prefix != "" || len(f.Tags) > 0) {
		allowed, err := tx.FilterPages(ctx, ws, f)
		if err != nil {
			return nil, nil, err
		}
		ids, unsure = intersect(ids, allowed), intersect(unsure, allowed)
	}
	if limit > 0 && len(ids) > limit {
		ids = ids[:limit]
		unsure = intersect(unsure, ids)
	}
	return ids, unsure, nil
}

// docFreq counts the pages of workspace ws whose lists hold token, private
// ones included: the document frequency of BM25. For a prefix that counts
// its unsure pages too, as the full-text engines counted a page holding a
// stem the prefix begins.
func docFreq(ctx context.Context, tx *store.Tx, ws int64, token string) (int, error) {
	if !strings.HasSuffix(token, "*") {
		// A stem's list counts its pages: no need to read them.
		lists, err := tx.PostingLists(ctx, ws, []string{token})
		if err != nil {
			return 0, err
		}
		return lists[0].Pages, nil
	}
	set, _, err := tokenPages(ctx, tx, ws, token, false)
	return len(set), err
}

// tokenPages returns the pages whose lists hold token (see candidateMatch)
// and which of them are unsure, each in ID order; only public ones when
// publicOnly.
func tokenPages(ctx context.Context, tx *store.Tx, ws int64, token string, publicOnly bool) (pages, unsure []int64, err error) {
	stems := []string{token}
	var doubt map[string]bool
	if p, ok := strings.CutSuffix(token, "*"); ok {
		if stems, doubt, err = prefixStems(ctx, tx, ws, p); err != nil {
			return nil, nil, err
		}
	}
	return stemPages(ctx, tx, ws, stems, doubt, publicOnly)
}

// prefixStems returns the stems of the lists prefix p reads (see
// candidateMatch), and which of them have a word that p does not begin.
func prefixStems(ctx context.Context, tx *store.Tx, ws int64, p string) (stems []string, doubt map[string]bool, err error) {
	if stems, err = tx.PrefixStems(ctx, ws, p); err != nil {
		return nil, nil, err
	}
	words, err := tx.StemWords(ctx, ws, stems)
	if err != nil {
		return nil, nil, err
	}
	doubt = map[string]bool{}
	for _, s := range stems {
		// The stem may be a word of its own.
		doubt[s] = !strings.HasPrefix(s, p)
	}
	for _, w := range words {
		doubt[w.Stem] = doubt[w.Stem] || !strings.HasPrefix(w.Word, p)
	}
	return stems, doubt, nil
}

// stemPages returns the pages of the lists of stems, and those of them that
// only lists of doubtful stems hold (unsure), each in ID order; only public
// ones when publicOnly.
func stemPages(ctx context.Context, tx *store.Tx, ws int64, stems []string, doubt map[string]bool, publicOnly bool) (pages, unsure []int64, err error) {
	var sets, sure [][]int64
	for chunk := range slices.Chunk(stems, stemsAtOnce) {
		lists, err := tx.PostingLists(ctx, ws, chunk)
		if err != nil {
			return nil, nil, err
		}
		for i, l := range lists {
			set := make([]int64, 0, l.Pages)
			for page, body, ok := l.Next(); ok; page, body, ok = l.Next() {
				if !publicOnly || search.PostingPublic(body) {
					set = append(set, page)
				}
			}
			if err := l.Err(); err != nil {
				return nil, nil, err
			}
			sets = append(sets, set)
			if !doubt[chunk[i]] {
				sure = append(sure, set)
			}
		}
	}
	pages = union(sets)
	if len(sure) < len(sets) {
		unsure = subtract(pages, union(sure))
	}
	return pages, unsure, nil
}

// phrasePages returns the pages of workspace ws where the stems of phrase
// stand in a row in one field, in ID order; only public ones when
// publicOnly.
func phrasePages(ctx context.Context, tx *store.Tx, ws int64, phrase []string, publicOnly bool) ([]int64, error) {
	lists, err := tx.PostingLists(ctx, ws, phrase)
	if err != nil {
		return nil, err
	}
	stems := make([]search.Cursor, len(lists))
	for i, l := range lists {
		stems[i] = l
	}
	var out []int64
	c := search.Union([][]search.Cursor{stems})
	for page, body, ok := c.Next(); ok; page, body, ok = c.Next() {
		if !publicOnly || search.PostingPublic(body) {
			out = append(out, page)
		}
	}
	for _, l := range lists {
		if err := l.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// union merges sets of page IDs, each in order, into one in order.
func union(sets [][]int64) []int64 {
	switch len(sets) {
	case 0:
		return nil
	case 1:
		return sets[0]
	}
	// A bitmap over the IDs' range: a prefix's thousands of lists would
	// make a merge of them slow, and IDs are dense.
	lo, hi := int64(-1), int64(-1)
	n := 0
	for _, s := range sets {
		if len(s) == 0 {
			continue
		}
		if lo < 0 || s[0] < lo {
			lo = s[0]
		}
		hi = max(hi, s[len(s)-1])
		n += len(s)
	}
	if n == 0 {
		return nil
	}
	words := make([]uint64, (hi-lo)/64+1)
	for _, s := range sets {
		for _, id := range s {
			words[(id-lo)/64] |= 1 << ((id - lo) % 64)
		}
	}
	out := make([]int64, 0, n)
	for i, w := range words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, lo+int64(i)*64+int64(b))
			w &= w - 1
		}
	}
	return out
}

// intersect returns the IDs in both a and b, each in order.
func intersect(a, b []int64) []int64 {
	out := a[:0:0]
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// subtract returns the IDs of a not in b, each in order.
func subtract(a, b []int64) []int64 {
	out := a[:0:0]
	j := 0
	for _, id := range a {
		for j < len(b) && b[j] < id {
			j++
		}
		if j < len(b) && b[j] == id {
			continue
		}
		out = append(out, id)
	}
	return out
}
