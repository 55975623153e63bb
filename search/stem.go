package search

import "slices"

// Stem reduces an English word token to the stem that its inflections share,
// so that a question finds the pages whatever form they use: sync, syncs,
// syncing and synced are all "sync"; note and notes "not"; recover,
// recovering and recovery "recover"; configure, configured and configuration
// "configur". Stems are keys, not words.
//
// Only suffixes are removed: a stem is always a prefix of its token, which
// lets scoring test a token's first bytes before stemming it. Tokens with
// other letters than a–z (digits, other scripts) and short ones are their own
// stem, and no stem is shorter than three letters.
func Stem(tok string) string { return tok[:stemLen(tok)] }

// stemLen is the length of tok's stem.
func stemLen[T string | []byte](tok T) int {
	n := len(tok)
	if n < 4 {
		return n
	}
	for i := range n {
		if c := tok[i]; c < 'a' || c > 'z' {
			return n
		}
	}
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
	case ends("ed") && tok[n-3] != 'e':
		n -= 2
	case ends("ation"):
		n -= 5
	case ends("ion") && (tok[n-4] == 't' || tok[n-4] == 's'):
		n -= 3
	case ends("ly") && n >= 6:
		n -= 2
	}
	// stopped → stop, embedded → embed; but pass, call, buzz stay.
	if n >= 4 && tok[n-1] == tok[n-2] && !isVowel(tok[n-1]) && tok[n-1] != 'l' && tok[n-1] != 's' && tok[n-1] != 'z' {
		n--
	}
	// The silent e and final y: configure, configuring → configur;
	// recovery, recover → recover; library, libraries → librar; but
	// deploy stays.
	if ends("e") || ends("y") && !isVowel(tok[n-2]) {
		n--
	}
	return n
}

func isVowel(c byte) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y'
}

// stemIs reports whether tok's stem is stem, testing the cheap parts first:
// a stem is a prefix of its token.
func stemIs[T string | []byte](tok T, stem string) bool {
	return len(tok) >= len(stem) && len(stem) > 0 && tok[0] == stem[0] && string(tok[:len(stem)]) == stem &&
		stemLen(tok) == len(stem)
}

// IndexTokens are the tokens an engine indexes for a page whose fields
// tokenize to fields, sorted and distinct: each token as written, which
// prefixes match, and its stem, which words match. Every page that Match
// accepts holds its query's Retrieval in these.
func IndexTokens(fields ...[]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, toks := range fields {
		for _, t := range toks {
			for _, t := range [2]string{t, Stem(t)} {
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
