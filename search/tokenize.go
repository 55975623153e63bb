package search

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxTokenLen bounds a token in bytes. Longer runs are hashes, base64 and
// the like: nobody searches for them, and they would bloat the index.
const maxTokenLen = 64

// Tokenize splits text into search tokens: Unicode NFKD with combining
// diacritics removed (café → cafe), lower-cased, tokens being maximal runs of
// letters and digits. Tokens longer than 64 bytes once normalized are
// dropped. Anything else separates tokens, apostrophes too ("don't" → "don",
// "t").
//
// Marks that belong to one script (Devanagari vowel signs, Thai tone marks)
// are part of the spelling: they are kept inside the token rather than
// removed, so such words neither fall apart nor collapse into each other.
//
// Tokens that are already normalized share memory with text, and the others
// share one buffer, so a call allocates a few times however long text is.
//
// The search index holds Terms, which add the words of identifiers; a
// review's quote is found again by Tokenize's tokens, one per word written.
func Tokenize(text string) []string { return tokens(text, false) }

func tokens(text string, split bool) []string {
	// The capacities are guesses for prose (a word and a space average
	// about six bytes; a fifth of the words capitalized) that spare most
	// texts any regrowth.
	toks := make([]string, 0, len(text)/5+1)
	// Normalized tokens are collected in one buffer and cut into strings at
	// the end, so that a capitalized word does not cost an allocation.
	var arena []byte
	type pending struct{ tok, off, end int }
	var fix []pending
	scan(text, split, func(b []byte, start, end int) {
		if s := text[start:end]; string(b) == s {
			toks = append(toks, s)
			return
		}
		if fix == nil {
			fix = make([]pending, 0, cap(toks)/5+1)
			arena = make([]byte, 0, len(text)/5+len(b))
		}
		fix = append(fix, pending{len(toks), len(arena), len(arena) + len(b)})
		arena = append(arena, b...)
		toks = append(toks, "")
	})
	if len(fix) > 0 {
		s := string(arena)
		for _, f := range fix {
			toks[f.tok] = s[f.off:f.end]
		}
	}
	return toks
}

// TokenizeFunc calls fn for each token of text, as Tokenize finds them, with
// the byte offsets in text of the runes the token comes from.
func TokenizeFunc(text string, fn func(tok string, start, end int)) {
	scanTokens(text, false, fn)
}

// Terms are the tokens the search index holds for text and a question is
// asked in: Tokenize's, each identifier written in mixed case followed by
// its words ("AddPrefix" → "addprefix", "add", "prefix"; "HTTPServer" →
// "httpserver", "http", "server"). Documentation names things in such
// identifiers where people ask in words: "add a prefix to the path" should
// find the AddPrefix middleware, and "addprefix" still finds it whole. The
// words of an identifier follow it as the words of a phrase would, so that
// a question asked in the identifier matches it as a phrase too. Words of
// one letter are left out ("iPhone" → "iphone", "phone").
func Terms(text string) []string { return tokens(text, true) }

// TermsFunc calls fn for each of text's Terms, with the byte offsets in text
// of the runes each comes from: an identifier's words have their own.
func TermsFunc(text string, fn func(tok string, start, end int)) {
	scanTokens(text, true, fn)
}

func scanTokens(text string, split bool, fn func(tok string, start, end int)) {
	scan(text, split, func(b []byte, start, end int) {
		if s := text[start:end]; string(b) == s {
			fn(s, start, end)
			return
		}
		fn(string(b), start, end)
	})
}

// scan finds the tokens of text, and with split the words of its
// identifiers after each (Terms). The slice given to emit is only valid
// during the call.
func scan(text string, split bool, emit func(tok []byte, start, end int)) {
	s := scanner{emit: emit, start: -1, split: split}
	for i := 0; i < len(text); {
		// ASCII is most text and needs no tables: a run of letters and
		// digits is copied lower-cased in one go.
		if c := text[i]; c < utf8.RuneSelf {
			if asciiWord[c] == 0 {
				if s.start >= 0 {
					s.flush()
				}
				i++
				continue
			}
			j := i + 1
			for j < len(text) && text[j] < utf8.RuneSelf && asciiWord[text[j]] != 0 {
				j++
			}
			if s.start < 0 {
				s.start = i
			}
			s.end = j
			if s.n+j-i > len(s.buf) {
				s.long = true
			} else {
				if s.split {
					s.cutCase(text, i, j)
				}
				buf := s.buf[s.n : s.n+j-i]
				for k := range buf {
					buf[k] = asciiWord[text[i+k]]
				}
				s.n += j - i
			}
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		end := i + size
		if d := norm.NFKD.PropertiesString(text[i:end]).Decomposition(); d != nil {
			for len(d) > 0 {
				r, n := utf8.DecodeRune(d)
				s.hangul(r, i, end)
				d = d[n:]
			}
		} else {
			s.hangul(r, i, end)
		}
		i = end
	}
	s.flush()
}

// asciiWord maps the ASCII letters and digits to their lower case, and every
// other ASCII byte to 0.
var asciiWord = func() (t [utf8.RuneSelf]byte) {
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = c, c
	}
	return t
}()

// Hangul syllable decomposition, from the Unicode standard, section 3.12.
const (
	hangulBase  = 0xAC00
	hangulL     = 0x1100
	hangulVBase = 0x1161
	hangulTBase = 0x11A7
	hangulV     = 21
	hangulT     = 28
	hangulCount = 19 * hangulV * hangulT
)

type scanner struct {
	emit  func(tok []byte, start, end int)
	buf   [maxTokenLen]byte
	n     int
	start int // offset of the open token in the text, -1 when none is open
	end   int
	long  bool // the open token has outgrown buf and will be dropped

	// With split, where the open token's words start after its first
	// (offsets in buf and in the text), and the case of its last ASCII
	// letter or digit: 0 none (or not ASCII), 1 lower case or a digit, 2
	// upper case.
	split bool
	cuts  []cut
	last  byte
}

type cut struct{ buf, text int }

// cutCase notes where words start in text[i:j], a run of ASCII letters and
// digits about to be added to the open token at s.n: at an upper-case
// letter after a lower-case one or a digit ("addPrefix", "http2Server"),
// and at the last of a run of capitals before a lower-case letter
// ("HTTPServer").
func (s *scanner) cutCase(text string, i, j int) {
	for k := i; k < j; k++ {
		c := text[k]
		upper := 'A' <= c && c <= 'Z'
		if upper && (s.last == 1 || s.last == 2 && k+1 < j && 'a' <= text[k+1] && text[k+1] <= 'z') {
			s.cuts = append(s.cuts, cut{s.n + k - i, k})
		}
		s.last = 1
		if upper {
			s.last = 2
		}
	}
}

// hangul decomposes r if it is a Hangul syllable, which the norm tables
// leave to arithmetic, even inside other decompositions ("㉮" → "가").
func (s *scanner) hangul(r rune, start, end int) {
	h := r - hangulBase
	if h < 0 || h >= hangulCount {
		s.rune(r, start, end)
		return
	}
	s.rune(hangulL+h/(hangulV*hangulT), start, end)
	s.rune(hangulVBase+h%(hangulV*hangulT)/hangulT, start, end)
	if t := h % hangulT; t != 0 {
		s.rune(hangulTBase+t, start, end)
	}
}

// rune handles one rune of the decomposition of text[start:end].
func (s *scanner) rune(r rune, start, end int) {
	switch {
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		r = unicode.ToLower(r)
		s.add(r, utf8.RuneLen(r), start, end)
		s.last = 0 // case is read from ASCII letters only
	case !unicode.Is(unicode.Mark, r):
		s.flush()
	case unicode.Is(unicode.Inherited, r):
		// A diacritic shared by scripts (acute, umlaut, Arabic vowel
		// points, kana voicing): removed, but a highlight should cover it.
		if s.start >= 0 {
			s.end = end
		}
	default:
		// A mark of one script's spelling: part of the word.
		if size := utf8.RuneLen(r); s.add(r, size, start, end) {
			s.order(size)
		}
	}
}

// add appends r, of size bytes, to the open token or opens one at start.
// It reports whether r fit.
func (s *scanner) add(r rune, size, start, end int) bool {
	if s.start < 0 {
		s.start = start
	}
	s.end = end
	if s.n+size > len(s.buf) {
		s.long = true
		return false
	}
	s.n += utf8.EncodeRune(s.buf[s.n:], r)
	return true
}

// order moves the mark just added, of size bytes, before the marks of a
// higher combining class that it follows: NFKD puts a run of marks in this
// canonical order, so that keyboards that type them in different orders
// give the same token. Runs are a few marks long.
func (s *scanner) order(size int) {
	last := s.n - size
	ccc := norm.NFKD.Properties(s.buf[last:s.n]).CCC()
	if ccc == 0 {
		return
	}
	at := last
	for at > 0 {
		_, n := utf8.DecodeLastRune(s.buf[:at])
		if norm.NFKD.Properties(s.buf[at-n:at]).CCC() <= ccc {
			break
		}
		at -= n
	}
	if at < last {
		var mark [utf8.UTFMax]byte
		copy(mark[:], s.buf[last:s.n])
		copy(s.buf[at+size:], s.buf[at:last])
		copy(s.buf[at:], mark[:size])
	}
}

func (s *scanner) flush() {
	if s.start >= 0 && !s.long {
		s.emit(s.buf[:s.n], s.start, s.end)
		if len(s.cuts) > 0 {
			from := cut{0, s.start}
			for i := 0; i <= len(s.cuts); i++ {
				to := cut{s.n, s.end}
				if i < len(s.cuts) {
					to = s.cuts[i]
				}
				if to.buf-from.buf > 1 {
					s.emit(s.buf[from.buf:to.buf], from.text, to.text)
				}
				from = to
			}
		}
	}
	s.n, s.start, s.long, s.cuts, s.last = 0, -1, false, s.cuts[:0], 0
}
