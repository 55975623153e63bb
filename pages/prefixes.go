package pages

import (
	"context"

	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
)

// prefixLists are what a prefix term reads when a query ranks from the
// postings lists: the lists of the stems of the words it begins, and how
// many pages they hold (its document frequency, as docFreq counts it).
type prefixLists struct {
	stems []string
	df    int
}

// maxPrefixStems is the most stems a prefix ranked from the lists may
// begin: the union of its lists looks at the head of each for every page.
// A shorter prefix is ranked by reading its pages.
const maxPrefixStems = 64

// prefixesFromLists returns the lists of each prefix term of q (by index)
// when RankPostings ranks q exactly as Match would: q is words and
// prefixes, no phrase; no prefix begins a word whose stem another word has
// ("runn*" reaches the list of "run" through "running", and that list holds
// pages with "run" alone: they are unsure, see candidateMatch); and no two
// scored terms share a stem (Match counts a token for every term it
// matches, the lists would merge it into one). ok is false otherwise.
func prefixesFromLists(ctx context.Context, tx *store.Tx, ws int64, q search.Query, dfs *dfCache) (lists map[int]prefixLists, ok bool, err error) {
	scored := false
	for _, t := range q.Terms {
		if t.Phrase != nil || t.Forms != nil || t.Text == "" {
			return nil, false, nil
		}
		if t.Prefix {
			ok = true
		}
		scored = scored || !t.Excluded
	}
	if !ok || !scored {
		return nil, false, nil
	}
	st, err := tx.SearchStats(ctx, ws)
	if err != nil {
		return nil, false, err
	}
	lists = map[int]prefixLists{}
	owner := map[string]int{} // which scored term each stem is read for
	for i, t := range q.Terms {
		if !t.Prefix {
			if !t.Excluded {
				owner[t.Text] = i
			}
			continue
		}
		stems, doubt, err := prefixStems(ctx, tx, ws, t.Text)
		if err != nil {
			return nil, false, err
		}
		if len(stems) > maxPrefixStems {
			return nil, false, nil
		}
		for _, s := range stems {
			if doubt[s] {
				return nil, false, nil
			}
		}
		l := prefixLists{stems: stems}
		tok := token(t)
		if n, cached := dfs.get(ws, st.Generation, tok); cached {
			l.df = n
		} else {
			pages, _, err := stemPages(ctx, tx, ws, stems, nil, false)
			if err != nil {
				return nil, false, err
			}
			l.df = len(pages)
			dfs.put(ws, st.Generation, tok, l.df)
		}
		lists[i] = l
	}
	for i, l := range lists {
		if q.Terms[i].Excluded {
			continue
		}
		for _, s := range l.stems {
			if j, taken := owner[s]; taken && j != i {
				return nil, false, nil
			}
			owner[s] = i
		}
	}
	return lists, true, nil
}
