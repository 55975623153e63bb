package store

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

// A page's texts — its content and its older revisions' — were most of a
// SQLite store: at 100k pages 4× the vault, where PostgreSQL compresses any
// long value itself (TOAST).
// On SQLite they are kept packed: a BLOB of packedDeflate, the text's length
// as a uvarint, and the text as a raw DEFLATE stream. A text that packing
// would not shrink by an eighth stays TEXT, as does every text of a store
// written before, so a column holds either and readers take both (textDest).
// SQL copies a packed value as it is (a revision's text moving out of its
// page's row), but must not compare or measure one: the length a history
// lists comes from the header, not LENGTH().
const (
	packedDeflate = 1
	// packMin is the shortest text worth packing: below it DEFLATE's
	// framing eats most of what it saves.
	packMin = 256
)

// PackedText is a page's text as its row holds it, packed before the
// transaction that writes it (DB.PackText): packing is a write's
// largest piece of work that needs no database, and done outside, it does
// not keep other writers waiting (an import's writer spent a twelfth of its
// time on it).
type PackedText struct {
	text string
	v    any
}

// PackText packs s as a page's text is written on db's engine.
func (db *DB) PackText(s string) PackedText { return PackedText{s, packText(db.engine, s)} }

// packedText is what is written for a page's content: pre when it was packed
// from that very content.
func (tx *Tx) packedText(pre PackedText, content string) any {
	if pre.v != nil && pre.text == content {
		return pre.v
	}
	return packText(tx.db.engine, content)
}

// packText is how s is written to a column of page text on engine.
func packText(engine Engine, s string) any {
	if engine != SQLite || len(s) < packMin {
		return s
	}
	w := packers.Get().(*packer)
	defer packers.Put(w)
	w.buf.Reset()
	w.buf.WriteByte(packedDeflate)
	w.buf.Write(binary.AppendUvarint(w.hdr[:0], uint64(len(s))))
	w.fw.Reset(&w.buf)
	// Writes to a bytes.Buffer cannot fail.
	_, _ = io.WriteString(w.fw, s)
	_ = w.fw.Close()
	if w.buf.Len() > len(s)-len(s)/8 {
		return s
	}
	return bytes.Clone(w.buf.Bytes())
}

type packer struct {
	buf bytes.Buffer
	hdr [binary.MaxVarintLen64]byte
	fw  *flate.Writer
}

// A flate.Writer holds over half a megabyte of tables: one per write would
// cost more than the packing.
var packers = sync.Pool{New: func() any {
	// BestSpeed packs page text within a few percent of the default level
	// (3% at 100k pages) for less CPU, which a write pays.
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	return &packer{fw: fw}
}}

var inflaters = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

// textDest scans a column of page text, packed or not, into text; size, if
// set, gets the text's length in bytes. Without text it reads a packed
// value's header only, for a history that lists sizes.
type textDest struct {
	text *string
	size *int
}

func (d textDest) Scan(src any) error {
	var s string
	var n int
	switch v := src.(type) {
	case nil:
	case string:
		s, n = v, len(v)
	case []byte:
		var err error
		if s, n, err = unpackText(v, d.text != nil); err != nil {
			return err
		}
	default:
		return fmt.Errorf("page text: unexpected %T", src)
	}
	if d.text != nil {
		*d.text = s
	}
	if d.size != nil {
		*d.size = n
	}
	return nil
}

// unpackText reads a packed text's length and, when inflate, the text.
func unpackText(b []byte, inflate bool) (string, int, error) {
	if len(b) == 0 || b[0] != packedDeflate {
		// A BLOB this package did not pack: text as some other writer
		// (a restore, a hand's edit) left it.
		return string(b), len(b), nil
	}
	size, k := binary.Uvarint(b[1:])
	// DEFLATE shrinks nothing more than 1032 to 1: a header saying more
	// is damaged, and must not make this allocate what it says.
	if k <= 0 || size > uint64(len(b))*1032 {
		return "", 0, fmt.Errorf("page text: damaged header")
	}
	if !inflate {
		return "", int(size), nil
	}
	r := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(b[1+k:]), nil); err != nil {
		return "", 0, err
	}
	// Read whole into one buffer: io.Copy would allocate 32 KB per text.
	out := make([]byte, size)
	if _, err := io.ReadFull(r, out); err != nil {
		return "", 0, fmt.Errorf("page text: %w", err)
	}
	return string(out), int(size), nil
}
