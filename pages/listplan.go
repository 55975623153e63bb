package pages

import (
	"context"

	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
)

// A listPlan is how RankPostings ranks a query from the postings lists: the
// terms as it reads them, the lists of each, and which of them are filters
// and which stand apart (see search.Postings). A query's words and prefixes
// are terms as they are; a phrase is a filter of the pages where it stands,
// followed by its words, apart, as Match scores it.
type listPlan struct {
	q              search.Query
	lists          []termLists
	filters, apart uint32
}

// termLists are the lists one term of a plan reads.
type termLists struct {
	kind  listKind
	stems []string
	df    int // a prefix's document frequency, as docFreq counts it
}

type listKind int

const (
	wordLists   listKind = iota // search.TermCursor over the term's ListStems
	prefixLists                 // any of the stems, as one word
	phraseLists                 // the stems in a row
)

// wordPlan is the plan of a query of words (search.RanksFromPostings).
func wordPlan(q search.Query) listPlan {
	p := listPlan{q: q}
	for _, t := range q.Terms {
		p.lists = append(p.lists, termLists{kind: wordLists, stems: t.ListStems()})
	}
	return p
}

// maxPrefixStems is the most stems a prefix ranked from the lists may
// begin: the union of its lists looks at the head of each for every page.
// A shorter prefix is ranked by reading its pages.
const maxPrefixStems = 64

// planFromLists returns the plan of a query of words, prefixes and phrases
// when RankPostings ranks it exactly as Match would (ok), which is when no
// prefix begins a word whose stem another word has ("runn*" reaches the list
// of "run" through "running", and that list holds pages with "run" alone:
// they are unsure, see candidateMatch); no prefix begins more than
// maxPrefixStems stems; and no two scored words or prefixes share a stem
// (Match counts a token for every term it matches, the lists would merge
// it into one).
func planFromLists(ctx context.Context, tx *store.Tx, ws int64, q search.Query, dfs *dfCache) (plan listPlan, ok bool, err error) {
	scored := false
	for _, t := range q.Terms {
		if t.Forms != nil || t.Text == "" {
			return listPlan{}, false, nil
		}
		scored = scored || !t.Excluded
	}
	if !scored {
		return listPlan{}, false, nil
	}
	st, err := tx.SearchStats(ctx, ws)
	if err != nil {
		return listPlan{}, false, err
	}
	expanded, filters, apart, ok := search.ExpandPhrases(q)
	if !ok {
		return listPlan{}, false, nil
	}
	plan = listPlan{q: expanded, filters: filters, apart: apart}
	owner := map[string]int{} // which scored word or prefix each stem is read for
	claim := func(i int, stems []string) bool {
		for _, s := range stems {
			if j, taken := owner[s]; taken && j != i {
				return false
			}
			owner[s] = i
		}
		return true
	}
	for i, t := range expanded.Terms {
		switch {
		case t.Phrase != nil:
			plan.lists = append(plan.lists, termLists{kind: phraseLists, stems: t.Phrase})
		case t.Prefix:
			stems, doubt, err := prefixStems(ctx, tx, ws, t.Text)
			if err != nil {
				return listPlan{}, false, err
			}
			if len(stems) > maxPrefixStems {
				return listPlan{}, false, nil
			}
			for _, s := range stems {
				if doubt[s] {
					return listPlan{}, false, nil
				}
			}
			if !t.Excluded && !claim(i, stems) {
				return listPlan{}, false, nil
			}
			l := termLists{kind: prefixLists, stems: stems}
			tok := token(t)
			if n, cached := dfs.get(ws, st.Generation, tok); cached {
				l.df = n
			} else {
				pages, _, err := stemPages(ctx, tx, ws, stems, nil, false)
				if err != nil {
					return listPlan{}, false, err
				}
				l.df = len(pages)
				dfs.put(ws, st.Generation, tok, l.df)
			}
			plan.lists = append(plan.lists, l)
		default:
			// A phrase's words stand apart from nearness: they may share
			// a stem with any term.
			if !t.Excluded && apart&(1<<i) == 0 && !claim(i, []string{t.Text}) {
				return listPlan{}, false, nil
			}
			plan.lists = append(plan.lists, termLists{kind: wordLists, stems: t.ListStems()})
		}
	}
	return plan, true, nil
}
