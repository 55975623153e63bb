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
	fields := d.Fields()
	type occurrence struct {
		stem       string
		field, pos uint32
	}
	n := 0
	for _, toks := range fields {
		n += len(toks)
	}
	occs := make([]occurrence, 0, n)
	for f, toks := range fields {
		for pos, tok := range toks {
			occs = append(occs, occurrence{Stem(tok), uint32(f), uint32(pos)})
		}
	}
	// By stem, then field and position: each stem's run is its posting.
	slices.SortFunc(occs, func(x, y occurrence) int {
		if c := strings.Compare(x.stem, y.stem); c != 0 {
			return c
		}
		if x.field != y.field {
			return int(x.field) - int(y.field)
		}
		return int(x.pos) - int(y.pos)
	})
	buf := make([]byte, 0, 4*n)
	var ends []int
	for i := 0; i < len(occs); {
		j := i + 1
		for j < len(occs) && occs[j].stem == occs[i].stem {
			j++
		}
		run := occs[i:j]
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
		for k, o := range run {
			if k > 0 && run[k-1].field == o.field {
				buf = binary.AppendUvarint(buf, uint64(o.pos-run[k-1].pos))
			} else {
				buf = binary.AppendUvarint(buf, uint64(o.pos))
			}
		}
		stems = append(stems, occs[i].stem)
		ends = append(ends, len(buf))
		i = j
	}
	postings = make([][]byte, len(stems))
	start := 0
	for i, end := range ends {
		postings[i] = buf[start:end:end]
		start = end
	}
	return stems, postings
}

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
