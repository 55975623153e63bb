package search

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
)

// A page's postings are what the index keeps of each stem in it: which
// fields hold the stem, how often, how long those fields are, and where in
// them it stands. From them alone ranking computes a word's score exactly as
// MatchWords does from the page's text, so a question is answered from its
// words' lists without reading pages.
//
// A posting is encoded as:
//
//	flags   byte: bit f (0–6) set when field f (see Field) holds the stem;
//	        bit 7 when the page is public
//	then, for each field holding it: uvarint count, uvarint field length
//	then, for each field holding it: its positions, the first as is and
//	        each next as the gap from the one before (count uvarints)
//
// The counts and lengths come first so that ranking can bound a page's
// score before it decodes any position.
const (
	postingFields = int(NumFields)
	flagPublic    = 1 << postingFields
)

// PagePostings returns the distinct stems of a page whose fields tokenize to
// d, sorted, and the posting of each.
func PagePostings(d Doc, public bool) (stems []string, postings [][]byte) {
	x := IndexPage(d, public)
	return x.Stems, x.Postings
}

// A PageIndex is what the engines index of a page.
type PageIndex struct {
	// Words are the page's distinct tokens whose stem is another word,
	// sorted, and WordStems their stems. A prefix matches tokens as
	// written, while the lists are by stem: the store keeps these words
	// beside the lists, so that a prefix finds the lists of the words it
	// begins.
	Words, WordStems []string
	// Stems are the distinct stems, sorted, and Postings the posting of
	// each (PagePostings).
	Stems    []string
	Postings [][]byte
}

// PageStems are the distinct stems of a page whose fields tokenize to d,
// sorted: IndexPage's Stems, without the postings. The store derives from
// them which lists hold a page when it rewrites or removes it, rather than
// keep them beside the page (a third of its row).
func PageStems(d Doc) []string {
	_, stems, _ := stemFields(d.Fields(), nil)
	slices.Sort(stems)
	return stems
}

// stemFields stems each distinct token of fields once. It returns the
// distinct tokens and the distinct stems, each in the order they first
// occur, and each token's stem as an index into stems; when occ is given
// (one entry per occurrence), it sets each occurrence's stem there, field
// by field, position by position.
func stemFields(fields [NumFields][]string, occ []int32) (tokens, stems []string, stemOf map[string]int32) {
	n := 0
	for _, toks := range fields {
		n += len(toks)
	}
	stemOf = make(map[string]int32, n/2+1)
	stemAt := make(map[string]int32, n/2+1)
	tokens = make([]string, 0, n/2+1)
	k := 0
	for _, toks := range fields {
		for _, tok := range toks {
			si, ok := stemOf[tok]
			if !ok {
				tokens = append(tokens, tok)
				st := Stem(tok)
				if si, ok = stemAt[st]; !ok {
					si = int32(len(stems))
					stems = append(stems, st)
					stemAt[st] = si
				}
				stemOf[tok] = si
			}
			if occ != nil {
				occ[k] = si
			}
			k++
		}
	}
	return tokens, stems, stemOf
}

// IndexPage derives a page's index from its fields at once: each distinct
// token is stemmed once, and the occurrences are grouped by stem by counting
// rather than by sorting them — a page of a few hundred words has a few
// hundred distinct ones.
func IndexPage(d Doc, public bool) PageIndex {
	fields := d.Fields()
	n := 0
	for _, toks := range fields {
		n += len(toks)
	}
	occ := make([]int32, n)
	tokens, stems, stemOf := stemFields(fields, occ)
	// The stems in order, and where each one's occurrences start in a list
	// grouped by stem; filled in the fields' and positions' order, each
	// stem's run is in that order too.
	order := make([]int32, len(stems))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(stems[x], stems[y]) })
	count := make([]int32, len(stems))
	for _, si := range occ {
		count[si]++
	}
	start := make([]int32, len(stems)) // by stem index, in sorted order's layout
	at := int32(0)
	for _, si := range order {
		start[si] = at
		at += count[si]
	}
	type place struct{ field, pos uint32 }
	grouped := make([]place, n)
	fill := slices.Clone(start)
	k := 0
	for f, toks := range fields {
		for pos := range toks {
			si := occ[k]
			grouped[fill[si]] = place{uint32(f), uint32(pos)}
			fill[si]++
			k++
		}
	}
	out := PageIndex{Stems: make([]string, len(stems)), Postings: make([][]byte, len(stems))}
	buf := make([]byte, 0, 4*n)
	ends := make([]int, len(stems))
	for i, si := range order {
		run := grouped[start[si] : start[si]+count[si]]
		var flags byte
		if public {
			flags |= flagPublic
		}
		var counts [postingFields]int
		for _, o := range run {
			flags |= 1 << o.field
			counts[o.field]++
		}
		buf = append(buf, flags)
		for f, c := range counts {
			if c > 0 {
				buf = binary.AppendUvarint(buf, uint64(c))
				buf = binary.AppendUvarint(buf, uint64(len(fields[f])))
			}
		}
		for j, o := range run {
			if j > 0 && run[j-1].field == o.field {
				buf = binary.AppendUvarint(buf, uint64(o.pos-run[j-1].pos))
			} else {
				buf = binary.AppendUvarint(buf, uint64(o.pos))
			}
		}
		out.Stems[i] = stems[si]
		ends[i] = len(buf)
	}
	from := 0
	for i, end := range ends {
		out.Postings[i] = buf[from:end:end]
		from = end
	}
	slices.Sort(tokens)
	for _, tok := range tokens {
		if st := stems[stemOf[tok]]; st != tok {
			out.Words = append(out.Words, tok)
			out.WordStems = append(out.WordStems, st)
		}
	}
	return out
}

// PostingPublic reports whether the page of a posting is public.
func PostingPublic(body []byte) bool { return len(body) > 0 && body[0]&flagPublic != 0 }

// posting is a decoded posting's head: where its positions start in body.
type posting struct {
	public bool
	fields byte // bit f: field f holds the stem
	counts [postingFields]int
	lens   [postingFields]int
	pos    []byte // the positions, still encoded
}

// decodeHead decodes body's flags, counts and lengths. It reports false for
// a body it cannot read, which ranking then treats as holding nothing.
func decodeHead(body []byte, p *posting) bool {
	if len(body) == 0 {
		return false
	}
	flags := body[0]
	p.public = flags&flagPublic != 0
	p.counts, p.lens = [postingFields]int{}, [postingFields]int{}
	p.fields = flags &^ flagPublic
	i := 1
	for fs := p.fields; fs != 0; fs &= fs - 1 {
		f := bits.TrailingZeros8(fs)
		c, n := uvarint(body[i:])
		if n <= 0 {
			return false
		}
		i += n
		l, n := uvarint(body[i:])
		if n <= 0 {
			return false
		}
		i += n
		p.counts[f], p.lens[f] = int(c), int(l)
	}
	p.pos = body[i:]
	return true
}

// uvarint is binary.Uvarint with a fast path for the one-byte values that
// make up most of a posting.
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}
