package search

import (
	"encoding/binary"
	"slices"
)

// Union is a cursor over the pages holding any of a term's forms (see
// Term.Forms), each form given as one cursor per stem, in order: a phrase
// when there are several. Its postings are what PagePostings would write
// for a word whose occurrences are the forms' occurrences, a phrase's at
// its first word, and one where several forms occur at once: so
// RankPostings scores the term as Match does.
func Union(forms [][]Cursor) Cursor {
	u := &unionCursor{}
	for _, stems := range forms {
		switch len(stems) {
		case 0:
		case 1:
			u.forms = append(u.forms, stems[0])
		default:
			u.forms = append(u.forms, &phraseCursor{stems: stems, heads: make([]cursorHead, len(stems))})
		}
	}
	u.heads = make([]cursorHead, len(u.forms))
	return u
}

type cursorHead struct {
	page int64
	body []byte
	ok   bool
}

func (h *cursorHead) next(c Cursor) { h.page, h.body, h.ok = c.Next() }

type unionCursor struct {
	forms   []Cursor
	heads   []cursorHead
	started bool
	bodies  [][]byte
}

func (u *unionCursor) Next() (int64, []byte, bool) {
	if !u.started {
		u.started = true
		for i := range u.heads {
			u.heads[i].next(u.forms[i])
		}
	}
	page, any := int64(0), false
	for _, h := range u.heads {
		if h.ok && (!any || h.page < page) {
			page, any = h.page, true
		}
	}
	if !any {
		return 0, nil, false
	}
	u.bodies = u.bodies[:0]
	for i := range u.heads {
		if h := &u.heads[i]; h.ok && h.page == page {
			u.bodies = append(u.bodies, h.body)
			h.next(u.forms[i])
		}
	}
	if len(u.bodies) == 1 {
		return page, u.bodies[0], true
	}
	return page, mergeBodies(u.bodies), true
}

// mergeBodies is one posting holding the occurrences of every posting of
// bodies, all of one page.
func mergeBodies(bodies [][]byte) []byte {
	var (
		lens   [postingFields]int
		pos    [postingFields][]uint32
		public bool
	)
	for _, b := range bodies {
		var p posting
		if !decodeHead(b, &p) {
			continue
		}
		public = p.public
		all, ok := p.positions()
		if !ok {
			continue
		}
		for f, ps := range all {
			if len(ps) > 0 {
				lens[f] = p.lens[f]
				pos[f] = append(pos[f], ps...)
			}
		}
	}
	for f := range pos {
		slices.Sort(pos[f])
		pos[f] = slices.Compact(pos[f])
	}
	return encodePosting(public, lens, pos)
}

// phraseCursor is a cursor over the pages where its stems stand one after
// the other in a field.
type phraseCursor struct {
	stems   []Cursor
	heads   []cursorHead
	started bool
}

func (c *phraseCursor) Next() (int64, []byte, bool) {
	if !c.started {
		c.started = true
		for i := range c.heads {
			c.heads[i].next(c.stems[i])
		}
	}
	for {
		// Bring every stem to the page of the one furthest on.
		page := int64(0)
		for _, h := range c.heads {
			if !h.ok {
				return 0, nil, false
			}
			page = max(page, h.page)
		}
		same := true
		for i := range c.heads {
			h := &c.heads[i]
			for h.ok && h.page < page {
				h.next(c.stems[i])
			}
			if !h.ok {
				return 0, nil, false
			}
			same = same && h.page == page
		}
		if !same {
			continue
		}
		body := c.at()
		for i := range c.heads {
			c.heads[i].next(c.stems[i])
		}
		if body != nil {
			return page, body, true
		}
	}
}

// at is the posting of the phrase on the page every head is at, or nil
// when its stems never stand in a row there.
func (c *phraseCursor) at() []byte {
	all := make([][postingFields][]uint32, len(c.heads))
	var first posting
	for i, h := range c.heads {
		var p posting
		if !decodeHead(h.body, &p) {
			return nil
		}
		var ok bool
		if all[i], ok = p.positions(); !ok {
			return nil
		}
		if i == 0 {
			first = p
		}
	}
	var pos [postingFields][]uint32
	found := false
	for f := range postingFields {
		for _, p := range all[0][f] {
			in := true
			for k := 1; k < len(all) && in; k++ {
				_, in = slices.BinarySearch(all[k][f], p+uint32(k))
			}
			if in {
				pos[f] = append(pos[f], p)
				found = true
			}
		}
	}
	if !found {
		return nil
	}
	return encodePosting(first.public, first.lens, pos)
}

// positions decodes every position of the posting, by field.
func (p *posting) positions() (out [postingFields][]uint32, ok bool) {
	b := p.pos
	for f, c := range p.counts {
		if c == 0 {
			continue
		}
		out[f] = make([]uint32, c)
		last := uint64(0)
		for j := range c {
			v, n := uvarint(b)
			if n <= 0 {
				return out, false
			}
			b = b[n:]
			if j > 0 {
				v += last
			}
			last = v
			out[f][j] = uint32(v)
		}
	}
	return out, true
}

// encodePosting writes a posting (see PagePostings) of the occurrences pos,
// sorted, in fields lens long.
func encodePosting(public bool, lens [postingFields]int, pos [postingFields][]uint32) []byte {
	var flags byte
	if public {
		flags |= flagPublic
	}
	buf := []byte{0}
	for f, ps := range pos {
		if len(ps) > 0 {
			flags |= 1 << f
			buf = binary.AppendUvarint(buf, uint64(len(ps)))
			buf = binary.AppendUvarint(buf, uint64(lens[f]))
		}
	}
	buf[0] = flags
	for _, ps := range pos {
		for k, p := range ps {
			if k > 0 {
				p -= ps[k-1]
			}
			buf = binary.AppendUvarint(buf, uint64(p))
		}
	}
	return buf
}

// ListStems are the stems whose postings lists TermCursor takes for t, in
// order: its own, or each of its forms' in turn.
func (t Term) ListStems() []string {
	if t.Forms == nil {
		return []string{t.Text}
	}
	var out []string
	for _, f := range t.Forms {
		out = append(out, f.Stems...)
	}
	return out
}

// TermCursor is the cursor RankPostings reads for t from the lists of
// t.ListStems() (dfs: how many pages each holds), and the term's document
// frequency. For a term of forms that is the most of its forms', a phrase's
// being at most its rarest word's: which pages hold any form is not known
// before the lists are read, and Lucene's synonyms count so too.
func TermCursor(t Term, lists []Cursor, dfs []int) (Cursor, int) {
	if t.Forms == nil {
		return lists[0], dfs[0]
	}
	forms := make([][]Cursor, len(t.Forms))
	df := 0
	for i, f := range t.Forms {
		n := len(f.Stems)
		forms[i] = lists[:n]
		df = max(df, slices.Min(dfs[:n]))
		lists, dfs = lists[n:], dfs[n:]
	}
	return Union(forms), df
}
