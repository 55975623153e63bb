package search_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/atrium-hq/atrium/search"
)

// Short constructors keep the table one line per case. Words are given as
// written: terms hold their stems, prefixes their text.
func opt(s string) search.Term { return search.Term{Text: search.Stem(s)} }
func req(s string) search.Term { return search.Term{Text: search.Stem(s), Required: true} }
func exc(s string) search.Term { return search.Term{Text: search.Stem(s), Excluded: true} }
func pre(t search.Term, text string) search.Term {
	t.Text, t.Prefix = text, true
	return t
}
func phrase(s string) search.Term {
	toks := strings.Fields(s)
	for i, t := range toks {
		toks[i] = search.Stem(t)
	}
	return search.Term{Text: toks[0], Phrase: toks, Required: true}
}

func terms(ts ...search.Term) search.Query { return search.Query{Terms: ts} }

func TestParseQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q    string
		want search.Query
	}{
		// Plain words are optional; stop words go.
		{"deploy staging", terms(opt("deploy"), opt("staging"))},
		{"How do we deploy to staging?", terms(opt("deploy"), opt("staging"))},
		{"what's the error budget policy", terms(opt("error"), opt("budget"), opt("policy"))},
		{"Café  RÉSUMÉ\tnaïve", terms(opt("cafe"), opt("resume"), opt("naive"))},
		// Stop words stay when nothing else would.
		{"the", terms(opt("the"))},
		{"what is it", terms(opt("what"), opt("is"), opt("it"))},
		{"to be or not to be", terms(opt("not"))},
		{"how -legacy", terms(opt("how"), exc("legacy"))},
		// Phrases are required, keep stop words, and need two tokens.
		{`"error budget" policy`, terms(phrase("error budget"), opt("policy"))},
		{`how to "roll back" the deploy`, terms(phrase("roll back"), opt("deploy"))},
		{`"state of the art"`, terms(phrase("state of the art"))},
		{`"Deploy"`, terms(req("deploy"))},
		{`"the"`, terms(req("the"))},
		{`"" deploy "!!"`, terms(opt("deploy"))},
		{`+"error budget"`, terms(phrase("error budget"))},
		{`“error budget” policy`, terms(phrase("error budget"), opt("policy"))},
		{`deploy "error budget`, terms(opt("deploy"), phrase("error budget"))},
		{`x"error budget"y`, terms(opt("x"), phrase("error budget"), opt("y"))},
		// Required, excluded.
		{"+deploy staging", terms(req("deploy"), opt("staging"))},
		{"+the deploy", terms(req("the"), opt("deploy"))},
		{"deploy -legacy -the", terms(opt("deploy"), exc("legacy"), exc("the"))},
		{`deploy -"error budget"`, terms(opt("deploy"), search.Term{Text: "error", Phrase: []string{"error", "budget"}, Excluded: true})},
		{"+ deploy -", terms(opt("deploy"))},
		// A signed compound is a phrase; an unsigned one is words.
		{"+e-mail", terms(phrase("e mail"))},
		{"don't panic", terms(opt("don"), opt("panic"))},
		{"-foo.bar baz", terms(search.Term{Text: "foo", Phrase: []string{"foo", "bar"}, Excluded: true}, opt("baz"))},
		// Prefixes.
		{"arch*", terms(pre(opt("arch"), "arch"))},
		{"+arch* -legacy*", terms(pre(req("arch"), "arch"), pre(exc("legacy"), "legacy"))},
		{"ar** review", terms(pre(opt("ar"), "ar"), opt("review"))},
		{"x* review", terms(opt("x"), opt("review"))},
		{"the* review", terms(pre(opt("the"), "the"), opt("review"))},
		{"東* 東京*", terms(opt("東"), pre(opt("東京"), "東京"))},
		{"v1.ar*", terms(opt("v1"), pre(opt("ar"), "ar"))},
		{"is it in prod*? or arch*, maybe", terms(pre(opt("prod"), "prod"), pre(opt("arch"), "arch"), opt("maybe"))},
		{"foo*bar", terms(pre(opt("foo"), "foo"), opt("bar"))},
		{"+e-ma*", terms(phrase("e ma"))},
		// Duplicates collapse; the strongest wins, exclusion above all.
		{"deploy Deploy DEPLOY", terms(opt("deploy"))},
		{"deploy +deploy", terms(req("deploy"))},
		{`deploy "deploy"`, terms(req("deploy"))},
		{"deploy staging -deploy", terms(exc("deploy"), opt("staging"))},
		{"arch arch*", terms(opt("arch"), pre(opt("arch"), "arch"))},
		{`"error budget" "Error, budget!"`, terms(phrase("error budget"))},
		// Exactly at the limits.
		{strings.Repeat("ab ", 166) + "ab", terms(opt("ab"))}, // 500 bytes
		{words(32), terms(wordTerms(32)...)},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			t.Parallel()
			got, err := search.ParseQuery(tt.q)
			if err != nil {
				t.Fatalf("ParseQuery(%q): %v", tt.q, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseQuery(%q) (-want +got):\n%s", tt.q, diff)
			}
		})
	}
}

// words returns n distinct words that are not stop words.
func words(n int) string {
	var w []string
	for i := range n {
		w = append(w, fmt.Sprintf("w%d", i))
	}
	return strings.Join(w, " ")
}

func wordTerms(n int) []search.Term {
	var ts []search.Term
	for _, w := range strings.Fields(words(n)) {
		ts = append(ts, opt(w))
	}
	return ts
}

// A question asks for an identifier's words beside it; one of so many
// identifiers that their words would pass MaxTerms asks for them whole,
// where it was refused before, and a word also written on its own stays.
func TestParseQueryKeepsIdentifiersWholeWhenTheirWordsAreTooMany(t *testing.T) {
	t.Parallel()
	texts := func(q search.Query) []string {
		var out []string
		for _, t := range q.Terms {
			out = append(out, t.Text)
		}
		return out
	}
	if diff := cmp.Diff([]string{"addprefix", "add", "prefix", "middlewar"}, texts(mustParse(t, "AddPrefix middleware"))); diff != "" {
		t.Errorf("AddPrefix middleware (-want +got):\n%s", diff)
	}
	var ids, want []string
	for i := range 15 {
		id := fmt.Sprintf("Word%cPart%c", 'a'+i, 'a'+i)
		ids = append(ids, id)
		want = append(want, search.Stem(strings.ToLower(id)))
	}
	got := texts(mustParse(t, strings.Join(ids, " ")+" parta"))
	want = slices.Insert(want, 1, "parta") // where the question first has it
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("15 identifiers (-want +got):\n%s", diff)
	}
}

func TestParseQueryErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q, want string
	}{
		{"", "no words"},
		{"   \t ", "no words"},
		{`!!! "" ** + -`, "no words"},
		{strings.Repeat("x", 65), "no words"},
		{strings.Repeat("ab ", 167), "longer than 500 bytes"},
		{words(33), "more than 32 terms"},
		{"-legacy", "only excludes"},
		{"-legacy -old*", "only excludes"},
		{`-the -"error budget"`, "only excludes"},
		{"deploy -deploy", "only excludes"},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			t.Parallel()
			q, err := search.ParseQuery(tt.q)
			var e *search.Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseQuery(%q) = %+v, %v; want a *search.Error", tt.q, q, err)
			}
			if !strings.Contains(e.Message, tt.want) {
				t.Errorf("ParseQuery(%q) error %q, want it to mention %q", tt.q, e.Message, tt.want)
			}
		})
	}
}

func TestRetrieval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q    string
		want search.Retrieval
	}{
		{"how do we deploy to staging", search.Retrieval{AnyOf: []string{"deploy", "stag_"}}},
		{"arch* review", search.Retrieval{AnyOf: []string{"arch*", "review"}}},
		// Once something is required, optional words only rank.
		{"+deploy staging", search.Retrieval{AllOf: []string{"deploy"}}},
		{"+arch* staging", search.Retrieval{AllOf: []string{"arch*"}}},
		{`"error budget" policy`, search.Retrieval{Phrases: [][]string{{"error", "budget"}}}},
		{`"a rose is a rose" +rose`, search.Retrieval{AllOf: []string{"ros_"}, Phrases: [][]string{{"a", "ros_", "is", "a", "ros_"}}}},
		// Words are looked up by stem, prefixes as written.
		{"deploy -legacy -old*", search.Retrieval{AnyOf: []string{"deploy"}, NoneOf: []string{"legac", "old*"}}},
		{"recovering* deleted notes", search.Retrieval{AnyOf: []string{"recovering*", "delet", "not_"}}},
		{`deploy -"error budget"`, search.Retrieval{AnyOf: []string{"deploy"}, NoPhrases: [][]string{{"error", "budget"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			t.Parallel()
			q, err := search.ParseQuery(tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, q.Retrieval(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Retrieval of %q (-want +got):\n%s", tt.q, diff)
			}
		})
	}
}

func FuzzParseQuery(f *testing.F) {
	for _, q := range []string{
		"how do we deploy to staging", `"error budget" +policy -legacy arch*`, `“x y`,
		"+e-mail -foo.bar* ar**", "-the", `"" + - *`, strings.Repeat("ab ", 170),
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := search.ParseQuery(s)
		if err != nil {
			var e *search.Error
			if !errors.As(err, &e) || e.Message == "" {
				t.Fatalf("ParseQuery(%q) error %v is not a *search.Error with a message", s, err)
			}
			return
		}
		if len(q.Terms) == 0 || len(q.Terms) > search.MaxTerms {
			t.Fatalf("ParseQuery(%q) gave %d terms", s, len(q.Terms))
		}
		wanted := false
		for _, term := range q.Terms {
			wanted = wanted || !term.Excluded
			switch {
			case term.Text == "" || !utf8.ValidString(term.Text):
				t.Fatalf("ParseQuery(%q): bad term text %q", s, term.Text)
			case term.Required && term.Excluded:
				t.Fatalf("ParseQuery(%q): term %+v both required and excluded", s, term)
			case term.Phrase != nil && (len(term.Phrase) < 2 || term.Phrase[0] != term.Text || term.Prefix):
				t.Fatalf("ParseQuery(%q): bad phrase %+v", s, term)
			case term.Phrase != nil && !term.Required && !term.Excluded:
				t.Fatalf("ParseQuery(%q): optional phrase %+v", s, term)
			case term.Prefix && utf8.RuneCountInString(term.Text) < 2:
				t.Fatalf("ParseQuery(%q): prefix %q too short", s, term.Text)
			}
		}
		if !wanted {
			t.Fatalf("ParseQuery(%q) = %+v: only excluded terms", s, q)
		}
		r := q.Retrieval()
		if len(r.AllOf)+len(r.AnyOf)+len(r.Phrases) == 0 {
			t.Fatalf("Retrieval of %q = %+v: every page would be a candidate", s, r)
		}
	})
}
