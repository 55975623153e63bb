package store

import (
	"strings"
	"testing"
)

// Any text packs and reads back as it was, its size in bytes; any BLOB,
// however damaged, reads as an error or a text, never a panic.
func FuzzPackedText(f *testing.F) {
	f.Add("short", []byte{packedDeflate, 5, 0xff})
	f.Add("Grüße aus Zürich — the kestrel hovers over the ridge, the falcon waits, the kestrel hovers.", []byte{packedDeflate, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add(string(make([]byte, 4000)), []byte{})
	f.Fuzz(func(t *testing.T, text string, blob []byte) {
		var got string
		var size int
		if err := (textDest{text: &got, size: &size}).Scan(packText(SQLite, text)); err != nil {
			t.Fatalf("packed %d bytes, read back: %v", len(text), err)
		}
		if got != text || size != len(text) {
			t.Fatalf("packed %d bytes, read back %d (size %d)", len(text), len(got), size)
		}
		if s, n, err := unpackText(blob, true); err == nil && len(s) != n {
			t.Fatalf("read %d bytes from a BLOB that says %d", len(s), n)
		}
	})
}

// A text packed ahead is written only for the very text it was packed from:
// a page whose content changed in between is packed again.
func TestPackedAheadIsUsedForItsTextAlone(t *testing.T) {
	db := &DB{engine: SQLite}
	tx := &Tx{db: db}
	text := strings.Repeat("the kestrel hovers over the ridge; ", 20)
	other := strings.Repeat("the falcon waits below the ridge; ", 20)
	pre := db.PackText(text)
	for _, c := range []struct {
		pre  PackedText
		text string
	}{{pre, text}, {pre, other}, {PackedText{}, other}, {db.PackText("short"), "short"}} {
		var got string
		if err := (textDest{text: &got}).Scan(tx.packedText(c.pre, c.text)); err != nil {
			t.Fatal(err)
		}
		if got != c.text {
			t.Errorf("wrote %.20q… for a page of %.20q…", got, c.text)
		}
	}
}
