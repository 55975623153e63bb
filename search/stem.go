package search

import (
	"strings"
)

// Stem reduces an English word token to the stem that its inflections share,
// so that a question finds the pages whatever form they use: sync, syncs,
// syncing and synced are all "sync"; recover, recovering and recovery
// "recover"; configure, configured and configuration "configur". Stems are
// keys, not words.
//
// Cutting a silent e (or a final y, -ed, -ing) off a short root can leave
// another word: note would become "not", plane "plan", code "cod". Such stems
// (one syllable ending consonant–vowel–consonant, not from a doubled
// consonant as in stopped) end in StemMark, which no token holds: note,
// notes, noted and noting are "not_", apart from the word not, while plan,
// plans and planned stay "plan".
//
// Otherwise only suffixes are removed: a stem without its mark is always a
// prefix of its token, which lets scoring test a token's first bytes before
// stemming it. Tokens with other letters than a–z (digits, other scripts) and
// short ones are their own stem, and no stem is shorter than three letters.
func Stem(tok string) string {
	n, marked := stemLen(tok)
	if marked {
		return tok[:n] + StemMark
	}
	return tok[:n]
}

// StemMark ends the stems that would otherwise equal a shorter word (see
// Stem). Tokens are letters and digits, so no token ends in it; the engines'
// indexes take it as part of a token.
const StemMark = "_"

// stemLen is the length of tok's stem without its mark, and whether the
// stem is marked.
func stemLen[T string | []byte](tok T) (int, bool) {
	n := len(tok)
	if n < 4 {
		return n, false
	}
	for i := range n {
		if c := tok[i]; c < 'a' || c > 'z' {
			return n, false
		}
	}
	// cut: a suffix that may have followed a silent e went; undoubled: the
	// root's last consonant was doubled, so no e followed it.
	cut, undoubled := false, false
	// ends reports whether tok[:n] ends in suf with at least three letters,
	// one of them a vowel, left before it.
	ends := func(suf string) bool {
		if n-len(suf) < 3 || string(tok[n-len(suf):n]) != suf {
			return false
		}
		for i := range n - len(suf) {
			if isVowel(tok[i]) {
				return true
			}
		}
		return false
	}
	// Plurals and the third person: libraries, classes, matches, notes;
	// not status, basis, class.
	switch {
	case ends("ies"):
		n -= 3
		cut = true // from a final y
	case ends("sses"), ends("ches"), ends("shes"), ends("xes"), ends("zes"):
		n -= 2
	case ends("s") && !ends("ss") && !ends("us") && !ends("is"):
		n--
	}
	// Verb forms: syncing, synced (not speed: "eed" stays), and the nouns
	// made from them: configuration, redirection.
	switch {
	case ends("ing"):
		n -= 3
		cut = true
	case ends("ed") && tok[n-3] != 'e':
		n -= 2
		cut = true
	case ends("ation"):
		n -= 5
		cut = true
	case ends("ion") && (tok[n-4] == 't' || tok[n-4] == 's'):
		n -= 3
		cut = true
	case ends("ly") && n >= 6:
		n -= 2
	}
	// stopped → stop, embedded → embed; but pass, call, buzz stay.
	if n >= 4 && tok[n-1] == tok[n-2] && !isVowel(tok[n-1]) && tok[n-1] != 'l' && tok[n-1] != 's' && tok[n-1] != 'z' {
		n--
		undoubled = true
	}
	// The silent e and final y: configure, configuring → configur;
	// recovery, recover → recover; library, libraries → librar; but
	// deploy stays.
	if ends("e") || ends("y") && !isVowel(tok[n-2]) {
		n--
		cut = true
	}
	return n, cut && !undoubled && shortCVC(tok[:n])
}

// shortCVC reports whether root is one syllable ending consonant, vowel,
// consonant (not w, x or y): the roots that a silent e can follow, as in
// note, plane, code; not sync, fix, storag.
func shortCVC[T string | []byte](root T) bool {
	n := len(root)
	if n < 3 || isVowel(root[n-1]) || !isVowel(root[n-2]) || isVowel(root[n-3]) {
		return false
	}
	switch root[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	// One vowel group: nothing but consonants before the last vowels.
	i := n - 2
	for i > 0 && isVowel(root[i-1]) {
		i--
	}
	for j := range i {
		if isVowel(root[j]) {
			return false
		}
	}
	return true
}

func isVowel(c byte) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y'
}

// stemIs reports whether tok's stem is stem, testing the cheap parts first:
// a stem without its mark is a prefix of its token.
func stemIs[T string | []byte](tok T, stem string) bool {
	root, marked := strings.CutSuffix(stem, StemMark)
	if len(tok) < len(root) || len(root) == 0 || tok[0] != root[0] || string(tok[:len(root)]) != root {
		return false
	}
	n, m := stemLen(tok)
	return n == len(root) && m == marked
}
