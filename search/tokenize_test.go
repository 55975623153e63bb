package search_test

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/text/unicode/norm"

	"github.com/atrium-hq/atrium/search"
)

func TestTokenize(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 65)
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"only punctuation", " -- !? ... ", nil},
		{"words", "Deploy the staging server", []string{"deploy", "the", "staging", "server"}},
		{"case", "HTTP Http hTTp", []string{"http", "http", "http"}},
		{"precomposed diacritics", "Café crème Ünïcödé naïve", []string{"cafe", "creme", "unicode", "naive"}},
		{"decomposed diacritics", "cafe\u0301 e\u0301te", []string{"cafe", "ete"}},
		{"dotted capital I", "İstanbul", []string{"istanbul"}},
		{"sharp s stays", "Straße", []string{"straße"}},
		{"compatibility forms", "ﬁle ＡＢＣ１２ x² ㎏ Ⅻ", []string{"file", "abc12", "x2", "kg", "xii"}},
		{"fraction splits", "½", []string{"1", "2"}},
		{"digits", "v1.2.3 on 2024-05-01, 42x", []string{"v1", "2", "3", "on", "2024", "05", "01", "42x"}},
		{"CJK runs", "東京タワー 東京、タワー", []string{"東京タワー", "東京", "タワー"}},
		{"Hangul decomposes", "한국 ㉮", []string{"\u1112\u1161\u11ab\u1100\u116e\u11a8", "\u1100\u1161"}},
		{"script marks stay", "किताब कातिब", []string{"किताब", "कातिब"}},
		{"script marks in canonical order", "ש\u05C1\u05B8 ש\u05B8\u05C1", []string{"ש\u05B8\u05C1", "ש\u05B8\u05C1"}},
		{"Arabic vowel points go", "كَتَبَ كتب", []string{"كتب", "كتب"}},
		{"Greek and Cyrillic", "Αθήνα Москва", []string{"αθηνα", "москва"}},
		{"apostrophes split", "don't DON’T", []string{"don", "t", "don", "t"}},
		{"underscores and symbols split", "snake_case a+b c#d e@f.g", []string{"snake", "case", "a", "b", "c", "d", "e", "f", "g"}},
		{"emoji split", "👍🏽ok🎉go", []string{"ok", "go"}},
		{"invalid UTF-8 splits", "a\xffb", []string{"a", "b"}},
		{"64 bytes kept", strings.Repeat("x", 64), []string{strings.Repeat("x", 64)}},
		{"65 bytes dropped", "a " + long + " b", []string{"a", "b"}},
		{"length counted after normalization", strings.Repeat("é", 33) + " " + strings.Repeat("㌀", 5) + " " + strings.Repeat("㌀", 6),
			[]string{strings.Repeat("e", 33), strings.Repeat("アハート", 5)}},
		{"long multi-byte dropped", strings.Repeat("東", 22), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := search.Tokenize(tt.in)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Tokenize(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// Terms are Tokenize's tokens with the words of each mixed-case identifier
// after it; TermsFunc gives each word the bytes it comes from.
func TestTerms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string // token[the text it comes from]
	}{
		{"deploy the Staging server", []string{"deploy[deploy]", "the[the]", "staging[Staging]", "server[server]"}},
		{"HTTP HTTPS", []string{"http[HTTP]", "https[HTTPS]"}},
		{"the AddPrefix middleware", []string{"the[the]", "addprefix[AddPrefix]", "add[Add]", "prefix[Prefix]", "middleware[middleware]"}},
		{"maxRequestBodyBytes", []string{"maxrequestbodybytes[maxRequestBodyBytes]", "max[max]", "request[Request]", "body[Body]", "bytes[Bytes]"}},
		{"HTTPServer IPAllowList", []string{"httpserver[HTTPServer]", "http[HTTP]", "server[Server]", "ipallowlist[IPAllowList]", "ip[IP]", "allow[Allow]", "list[List]"}},
		{"http2Server", []string{"http2server[http2Server]", "http2[http2]", "server[Server]"}},
		{"iPhone getX", []string{"iphone[iPhone]", "phone[Phone]", "getx[getX]", "get[get]"}},
		{"AddPräfix", []string{"addprafix[AddPräfix]", "add[Add]", "prafix[Präfix]"}},
		{"snake_case X-Forwarded-For", []string{"snake[snake]", "case[case]", "x[X]", "forwarded[Forwarded]", "for[For]"}},
		{"ÜberSchall ÉCOLEÉcole", []string{"uberschall[ÜberSchall]", "uber[Über]", "schall[Schall]", "ecoleecole[ÉCOLEÉcole]"}}, // cut at ASCII capitals only
		{"SQLite PostgreSQL", []string{"sqlite[SQLite]", "sq[SQ]", "lite[Lite]", "postgresql[PostgreSQL]", "postgre[Postgre]", "sql[SQL]"}},
		{strings.Repeat("aB", 33), nil}, // too long: dropped whole, words and all
	}
	for _, tt := range tests {
		var got []string
		search.TermsFunc(tt.in, func(tok string, start, end int) { got = append(got, tok+"["+tt.in[start:end]+"]") })
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("TermsFunc(%q) (-want +got):\n%s", tt.in, diff)
		}
		var toks []string
		for _, w := range tt.want {
			toks = append(toks, w[:strings.IndexByte(w, '[')])
		}
		if diff := cmp.Diff(toks, search.Terms(tt.in), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Terms(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	// Without mixed case, Terms are Tokenize's.
	text := strings.ToLower(prose(7, 4000))
	if diff := cmp.Diff(search.Tokenize(text), search.Terms(text)); diff != "" {
		t.Errorf("Terms of prose differ from Tokenize (-want +got):\n%s", diff)
	}
}

// Precomposed and decomposed spellings, from macOS file names or another
// keyboard, must give the same tokens.
func TestTokenizeNormalizationInvariant(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"Crème brûlée", "한국어 검색", "Ǖber ﬃ", "Ἀθῆναι"} {
		want := search.Tokenize(s)
		for _, form := range []norm.Form{norm.NFC, norm.NFD, norm.NFKC, norm.NFKD} {
			if got := search.Tokenize(form.String(s)); !cmp.Equal(want, got) {
				t.Errorf("Tokenize(%q in form %v) = %q, want %q", s, form, got, want)
			}
		}
	}
}

func TestTokenizeFunc(t *testing.T) {
	t.Parallel()
	text := "Café\tdon't — ＡＢ ½ e\u0301!"
	type tok struct {
		Tok        string
		Start, End int
		Src        string
	}
	var got []tok
	search.TokenizeFunc(text, func(s string, start, end int) {
		got = append(got, tok{s, start, end, text[start:end]})
	})
	want := []tok{
		{"cafe", 0, 5, "Café"},
		{"don", 6, 9, "don"},
		{"t", 10, 11, "t"},
		{"ab", 16, 22, "ＡＢ"},
		{"1", 23, 25, "½"},
		{"2", 23, 25, "½"},
		{"e", 26, 29, "e\u0301"}, // the highlight covers the removed accent
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TokenizeFunc (-want +got):\n%s", diff)
	}
	var toks []string
	search.TokenizeFunc(text, func(s string, _, _ int) { toks = append(toks, s) })
	if !cmp.Equal(toks, search.Tokenize(text)) {
		t.Errorf("TokenizeFunc tokens %q differ from Tokenize %q", toks, search.Tokenize(text))
	}
}

// Tokenize runs on every page write: its allocations must not grow with
// the number of tokens, capitalized or accented ones included.
func TestTokenizeAllocs(t *testing.T) {
	for _, n := range []int{5_000, 50_000} {
		text := corpusText(n)
		allocs := testing.AllocsPerRun(10, func() { search.Tokenize(text) })
		if allocs > 10 {
			t.Errorf("Tokenize of %d bytes made %v allocations, want at most 10", len(text), allocs)
		}
	}
}

// referenceTokenize is the specification spelled out naively: normalize the
// whole text, then split.
func referenceTokenize(text string) []string {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 && cur.Len() <= 64 {
			toks = append(toks, cur.String())
		}
		cur.Reset()
	}
	for _, r := range norm.NFKD.String(text) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur.WriteRune(unicode.ToLower(r))
		case unicode.Is(unicode.Mark, r) && unicode.Is(unicode.Inherited, r):
		case unicode.Is(unicode.Mark, r):
			cur.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return toks
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"Café don't", "東京タワー ½", "한국 ㉮", "e\u0301\u0302x", strings.Repeat("ab", 40), "AddPrefix add", "HTTPServer2Go iPhone", "ÜberSchall É"} {
		f.Add(s)
	}
	for _, s := range []string{"caf\xe9 don't", "ab\xffcd", "\xed\xa0\x80x", "e\xcc"} {
		f.Add(s) // invalid UTF-8: a page's text is not checked before it is indexed
	}
	f.Fuzz(func(t *testing.T, text string) {
		// Every input, valid UTF-8 or not, gives tokens that are.
		got := search.Tokenize(text)
		for _, tok := range got {
			if tok == "" || len(tok) > 64 || !utf8.ValidString(tok) {
				t.Fatalf("Tokenize(%q) gave bad token %q", text, tok)
			}
		}
		checkTerms(t, text, got)
		// The store derives a page's lists from PageStems: they must be the
		// stems its postings were written under.
		d := search.Doc{Title: search.Terms(text), Body: search.Terms(strings.ToUpper(text) + " " + text)}
		if want, stems := search.IndexPage(d, false).Stems, search.PageStems(d); !cmp.Equal(want, stems, cmpopts.EquateEmpty()) {
			t.Fatalf("PageStems(%q) = %q, IndexPage's stems %q", text, stems, want)
		}
		// The reference decodes invalid UTF-8 differently: compared on valid
		// text only.
		if !utf8.ValidString(text) {
			return
		}
		if want := referenceTokenize(text); !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
			t.Fatalf("Tokenize(%q) = %q, reference gives %q", text, got, want)
		}
	})
}

// checkTerms checks text's Terms against its tokens toks: each token in
// order, from the same bytes, and after each only words of it, from bytes
// inside its own.
func checkTerms(t *testing.T, text string, toks []string) {
	t.Helper()
	type span struct{ start, end int }
	var spans []span
	search.TokenizeFunc(text, func(_ string, start, end int) { spans = append(spans, span{start, end}) })
	var terms []string
	i, whole := 0, -1
	search.TermsFunc(text, func(tok string, start, end int) {
		terms = append(terms, tok)
		switch {
		case tok == "" || len(tok) > 64 || !utf8.ValidString(tok):
			t.Fatalf("Terms(%q) gave bad token %q", text, tok)
		case i < len(toks) && tok == toks[i] && (span{start, end}) == spans[i]:
			whole = i
			i++
		case whole < 0 || start < spans[whole].start || end > spans[whole].end || (span{start, end}) == spans[whole] || !strings.Contains(toks[whole], tok):
			t.Fatalf("Terms(%q): %q from %d:%d is neither the next token nor a word of the last", text, tok, start, end)
		}
	})
	if i != len(toks) {
		t.Fatalf("Terms(%q) left out tokens after %q", text, toks[:i])
	}
	if !slices.Equal(terms, search.Terms(text)) {
		t.Fatalf("Terms(%q) = %q, TermsFunc gave %q", text, search.Terms(text), terms)
	}
}

func TestStem(t *testing.T) {
	t.Parallel()
	groups := [][]string{
		{"sync", "syncs", "syncing", "synced"},
		{"note", "notes", "noted", "noting"},
		{"plan", "plans", "planned", "planning"},
		{"plane", "planes"},
		{"code", "codes", "coded", "coding"},
		{"hope", "hoped", "hoping"},
		{"hop", "hops", "hopped", "hopping"},
		{"copy", "copies"},
		{"bug", "bugs"},
		{"fix", "fixes", "fixed", "fixing"},
		{"state", "states", "stated"},
		{"stat", "stats"},
		{"recover", "recovers", "recovering", "recovered", "recovery"},
		{"configure", "configured", "configuring", "configuration"},
		{"redirect", "redirects", "redirection"},
		{"library", "libraries"},
		{"deploy", "deploys", "deployed", "deploying"},
		{"stop", "stopped"},
		{"match", "matches"},
	}
	for _, g := range groups {
		for _, w := range g {
			if got, want := search.Stem(w), search.Stem(g[0]); got != want {
				t.Errorf("Stem(%q) = %q, want %q as for %q", w, got, want, g[0])
			}
			if s := strings.TrimSuffix(search.Stem(w), search.StemMark); !strings.HasPrefix(w, s) || len(s) < 3 {
				t.Errorf("Stem(%q) = %q: not a prefix of three letters or more", w, s)
			}
		}
	}
	// A stem cut short of a silent e is not the shorter word it spells: a
	// question about notes must not find every page that says "not".
	for _, pair := range [][2]string{{"notes", "not"}, {"note", "not"}, {"noted", "not"}, {"planes", "plan"}, {"coding", "cod"},
		{"hoped", "hop"}, {"states", "stat"}, {"copies", "cop"}} {
		if a, b := search.Stem(pair[0]), search.Stem(pair[1]); a == b {
			t.Errorf("Stem(%q) = Stem(%q) = %q, want them apart", pair[0], pair[1], a)
		}
	}
	// Words that only look inflected, and tokens that are not English
	// words, stay as they are.
	for _, w := range []string{"status", "class", "speed", "string", "use", "v3", "http2", "café", "東京"} {
		if got := search.Stem(w); got != w {
			t.Errorf("Stem(%q) = %q, want it unchanged", w, got)
		}
	}
}
