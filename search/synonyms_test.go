package search_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/search"
)

const synonymsPage = `# Synonyms

One group a line; lines without a comma are notes like this one.

- recover, restore, get back, undelete
* phone, mobile, cell phone
1. laptop, notebook computer
restore, roll back
the, a, an
just one
` + "```" + `
code, is, not, read
` + "```" + `
five words are too many, ok, okay
maxRequestBodyBytes, body size limit
`

func TestParseSynonyms(t *testing.T) {
	t.Parallel()
	got := search.ParseSynonyms(synonymsPage).Groups()
	want := [][]string{
		// "restore" joins the two lines.
		{"recover", "restore", "get back", "undelete", "roll back"},
		{"phone", "mobile", "cell phone"},
		{"laptop", "notebook computer"},
		{"ok", "okay"},
		// An identifier is one word, whatever words it holds.
		{"maxrequestbodybytes", "body size limit"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
}

func form(text string) search.Form {
	f := search.Form{Text: strings.Join(search.Tokenize(text), " ")}
	for _, tok := range search.Terms(text) {
		f.Stems = append(f.Stems, search.Stem(tok))
	}
	return f
}

func forms(texts ...string) []search.Form {
	var out []search.Form
	for _, t := range texts {
		out = append(out, form(t))
	}
	return out
}

func TestExpandQuestions(t *testing.T) {
	t.Parallel()
	syn := search.ParseSynonyms(synonymsPage)
	all := []string{"recover", "restore", "get back", "undelete", "roll back"}
	for _, c := range []struct {
		q    string
		want search.Query
	}{
		// A word of a group counts as every form of it, its own first.
		{"how do I recover a page", terms(search.Term{Text: "recover", Forms: forms(all...)}, opt("page"))},
		{"undelete my notes", terms(search.Term{Text: search.Stem("undelete"), Forms: forms("undelete", "recover", "restore", "get back", "roll back")}, opt("notes"))},
		// Two words of one group are one term.
		{"recover or restore", terms(search.Term{Text: "recover", Forms: forms(all...)})},
		// A phrase of a group keeps its words and adds the group's other forms.
		{"get back an old page", terms(opt("get"), opt("back"), opt("old"), opt("page"),
			search.Term{Text: "get back", Forms: forms("recover", "restore", "undelete", "roll back")})},
		// The longest form wins where forms overlap: "cell phone", not "phone".
		{"cell phone bill", terms(opt("cell"), opt("phone"), opt("bill"), search.Term{Text: "cell phone", Forms: forms("phone", "mobile")})},
		{"phone bill", terms(search.Term{Text: search.Stem("phone"), Forms: forms("phone", "mobile", "cell phone")}, opt("bill"))},
		// Nothing to widen.
		{"release notes", terms(opt("release"), opt("notes"))},
		// Required and excluded words ask for themselves.
		{"+recover page", terms(req("recover"), opt("page"))},
		{"page -restore", terms(opt("page"), exc("restore"))},
		// Prefixes and phrases rank from text, as written.
		{"recover pag*", terms(opt("recover"), pre(opt(""), "pag"))},
		{`recover "old page"`, terms(opt("recover"), phrase("old page"))},
	} {
		q := mustParse(t, c.q)
		if diff := cmp.Diff(c.want, syn.Expand(q, c.q)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", c.q, diff)
		}
	}
	// No synonyms, nothing changes.
	var none *search.Synonyms
	if q := mustParse(t, "recover"); !cmp.Equal(q, none.Expand(q, "recover")) {
		t.Error("a nil Synonyms changed a query")
	}
}
