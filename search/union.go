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
	// The postings of the forms on the last two pages Next returned, which
	// posting merges when ranking reads the page: most pages are passed
	// over on the words they hold alone.
	last [2]struct {
		page   int64
		bodies [][]byte
		flags  [1]byte // the forms' flags together, when several are on the page
	}
	turn int
	out  postingBuffers
}

// A postingBuilder is a cursor that puts off building a page's posting
// until ranking reads it: Next returns, for a page that one form is on, its
// posting, and for a page that several are on only their flags together (a
// posting's first byte: the fields that hold one of them, and whether the
// page is public), which is all ranking reads before it asks posting for the
// whole, for one of the last two pages Next returned.
type postingBuilder interface {
	posting(page int64) []byte
}

// postingBuffers build the postings a cursor returns, in turns in three
// buffers (see Cursor: a union passes a phrase's posting on, which its
// reader uses after the union's next call), from positions gathered in pos.
type postingBuffers struct {
	buf  [3][]byte
	turn int
	pos  [postingFields][]uint32
	dec  [postingFields][]uint32
}

// encode writes the posting of pos into the next buffer.
func (b *postingBuffers) encode(public bool, lens *[postingFields]int) []byte {
	b.turn = (b.turn + 1) % len(b.buf)
	b.buf[b.turn] = encodePosting(b.buf[b.turn][:0], public, lens, &b.pos)
	return b.buf[b.turn]
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
	u.turn ^= 1
	l := &u.last[u.turn]
	l.page, l.bodies = page, l.bodies[:0]
	l.flags[0] = 0
	for i := range u.heads {
		if h := &u.heads[i]; h.ok && h.page == page {
			l.bodies = append(l.bodies, h.body)
			if len(h.body) > 0 {
				l.flags[0] |= h.body[0]
			}
			h.next(u.forms[i])
		}
	}
	switch {
	case len(l.bodies) == 1:
		return page, l.bodies[0], true
	case l.flags[0] == 0:
		return page, nil, true // no form holds anything on the page
	}
	return page, l.flags[:], true
}

func (u *unionCursor) posting(page int64) []byte {
	for _, l := range u.last {
		if l.page == page && len(l.bodies) > 0 {
			if len(l.bodies) == 1 {
				return l.bodies[0]
			}
			return u.merge(l.bodies)
		}
	}
	return nil
}

// merge is one posting holding the occurrences of every posting of bodies,
// all of one page.
func (u *unionCursor) merge(bodies [][]byte) []byte {
	var (
		lens   [postingFields]int
		public bool
	)
	b := &u.out
	for f := range b.pos {
		b.pos[f] = b.pos[f][:0]
	}
	for _, body := range bodies {
		var p posting
		if !decodeHead(body, &p) || !p.positions(&b.dec) {
			continue
		}
		public = p.public
		for f, ps := range b.dec {
			if len(ps) > 0 {
				lens[f] = p.lens[f]
				b.pos[f] = append(b.pos[f], ps...)
			}
		}
	}
	for f := range b.pos {
		if !slices.IsSorted(b.pos[f]) {
			slices.Sort(b.pos[f])
		}
		b.pos[f] = slices.Compact(b.pos[f])
	}
	return b.encode(public, &lens)
}

// phraseCursor is a cursor over the pages where its stems stand one after
// the other in a field.
type phraseCursor struct {
	stems   []Cursor
	heads   []cursorHead
	started bool
	all     [][postingFields][]uint32 // each stem's positions on the page
	out     postingBuffers
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
	if c.all == nil {
		c.all = make([][postingFields][]uint32, len(c.heads))
	}
	var first posting
	inAll := byte(1<<postingFields - 1) // the fields holding every stem
	for i, h := range c.heads {
		var p posting
		if !decodeHead(h.body, &p) {
			return nil
		}
		inAll &= h.body[0]
		if i == 0 {
			first = p
		}
		if inAll == 0 {
			return nil
		}
		if !p.positions(&c.all[i]) {
			return nil
		}
	}
	b := &c.out
	found := false
	for f := range postingFields {
		b.pos[f] = b.pos[f][:0]
		if inAll&(1<<f) == 0 {
			continue
		}
		for _, p := range c.all[0][f] {
			in := true
			for k := 1; k < len(c.all) && in; k++ {
				_, in = slices.BinarySearch(c.all[k][f], p+uint32(k))
			}
			if in {
				b.pos[f] = append(b.pos[f], p)
				found = true
			}
		}
	}
	if !found {
		return nil
	}
	return b.encode(first.public, &first.lens)
}

// positions decodes every position of the posting into out, by field.
func (p *posting) positions(out *[postingFields][]uint32) bool {
	b := p.pos
	for f, c := range p.counts {
		out[f] = out[f][:0]
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
			out[f] = append(out[f], uint32(v))
		}
	}
	return true
}

// encodePosting appends to dst a posting (see PagePostings) of the
// occurrences pos, sorted, in fields lens long.
func encodePosting(dst []byte, public bool, lens *[postingFields]int, pos *[postingFields][]uint32) []byte {
	var flags byte
	if public {
		flags |= flagPublic
	}
	at := len(dst)
	dst = append(dst, 0)
	for f, ps := range pos {
		if len(ps) > 0 {
			flags |= 1 << f
			dst = binary.AppendUvarint(dst, uint64(len(ps)))
			dst = binary.AppendUvarint(dst, uint64(lens[f]))
		}
	}
	dst[at] = flags
	for _, ps := range pos {
		for k, p := range ps {
			if k > 0 {
				p -= ps[k-1]
			}
			dst = binary.AppendUvarint(dst, uint64(p))
		}
	}
	return dst
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
