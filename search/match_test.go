package search_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/search"
)

func doc(title, tags, headings, body string) search.Doc {
	return search.Doc{
		Title:    search.Terms(title),
		Tags:     search.Terms(tags),
		Headings: search.Terms(headings),
		Body:     search.Terms(body),
	}
}

func mustParse(tb testing.TB, q string) search.Query {
	tb.Helper()
	parsed, err := search.ParseQuery(q)
	if err != nil {
		tb.Fatalf("ParseQuery(%q): %v", q, err)
	}
	return parsed
}

var stats = search.Stats{Docs: 10, Avg: [search.NumFields]float64{4, 2, 8, 100, 2, 12, 6}}

func df1(search.Term) int { return 1 }

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		q    string
		d    search.Doc
		want bool
	}{
		{"an optional word", "deploy staging", doc("", "", "", "deploy now"), true},
		{"no optional word", "deploy staging", doc("", "", "", "nothing here"), false},
		{"stop words when alone", "the", doc("", "", "", "the cat"), true},
		{"required in the title", "+deploy staging", doc("Deploy", "", "", ""), true},
		{"required missing", "+deploy staging", doc("", "", "", "staging only"), false},
		{"required and optional missing", "+deploy staging", doc("", "", "", "deploy"), true},
		{"excluded in tags", "deploy -legacy", doc("", "legacy", "", "deploy"), false},
		{"excluded absent", "deploy -legacy", doc("", "ops", "", "deploy"), true},
		{"excluded prefix", "deploy -leg*", doc("", "", "", "deploy Legacy"), false},
		{"prefix", "arch*", doc("", "", "Architecture", ""), true},
		{"prefix is not infix", "arch*", doc("", "", "", "search"), false},
		{"required prefix missing", "+arch* deploy", doc("", "", "", "deploy"), false},
		{"phrase", `"error budget"`, doc("", "", "", "the Error-Budget policy"), true},
		{"phrase across a line", `"error budget"`, doc("", "", "", "error\nbudget"), true},
		{"phrase reversed", `"error budget"`, doc("", "", "", "budget error"), false},
		{"phrase with a gap", `"error budget"`, doc("", "", "", "error and budget"), false},
		{"phrase across fields", `"error budget"`, doc("Error", "", "", "budget policy"), false},
		{"phrase at the end", `"state of the art"`, doc("", "", "the state of the art", ""), true},
		{"phrase missing a stop word", `"state of the art"`, doc("", "", "state of art", ""), false},
		{"excluded phrase", `deploy -"error budget"`, doc("", "", "", "deploy error budget"), false},
		{"excluded phrase words apart", `deploy -"error budget"`, doc("", "", "", "deploy budget error"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			score, ok := search.Match(mustParse(t, tt.q), tt.d, stats, df1)
			if ok != tt.want {
				t.Fatalf("Match(%q) ok = %v, want %v", tt.q, ok, tt.want)
			}
			if ok && !(score > 0) || !ok && score != 0 {
				t.Errorf("Match(%q) = %v, %v", tt.q, score, ok)
			}
		})
	}
}

func TestMatchNothingToLookFor(t *testing.T) {
	t.Parallel()
	if score, ok := search.Match(search.Query{}, doc("a", "b", "c", "d"), stats, df1); ok {
		t.Errorf("empty query matched with score %v", score)
	}
}

func TestMatchScore(t *testing.T) {
	t.Parallel()
	// Corpus: N = 10, average field lengths title 4, tags 2, headings 8, body 100.
	d := search.Doc{
		Title:    []string{"deploy", "to", "staging"},                      // 3 tokens
		Tags:     []string{"ops"},                                          // 1
		Headings: []string{"how", "we", "deploy", "a", "b", "c", "d", "e"}, // 8
		Body:     fill(50, "deploy", "deploy", "staging"),                  // 50
	}
	df := func(t search.Term) int { return map[string]int{"deploy": 3, search.Stem("staging"): 1}[t.Text] }
	// Length norms 1 − b + b·len/avg: title 0.25 + 0.75·3/4 = 0.8125,
	// headings 1, body 0.25 + 0.75·50/100 = 0.625. Each field's count over
	// its norm, x, saturates as x·2.2/(x+1.2), and the fields add up by
	// weight (title 3, tags 2, headings 2, body 1).
	// deploy:  title x = 1/0.8125, saturated 1.1139240506329113; headings
	//          x = 1, 1; body x = 2/0.625 = 3.2, 1.6
	//          tf = 3·1.1139240506329113 + 2·1 + 1·1.6 = 6.941772151898734
	//          idf = ln(1 + 7.5/3.5) = ln(22/7)
	//          score = idf·tf = 7.9492475402502105
	// staging: title 1.1139240506329113; body x = 1/0.625, 1.2571428571428573
	//          tf = 3·1.1139240506329113 + 1.2571428571428573 = 4.598915009041591
	//          idf = ln(1 + 9.5/1.5) = ln(22/3)
	//          score = 9.163016988861
	// and staging stands near deploy in the title ("deploy to staging")
	// and in the body: near, normalised as x is, saturates as y/(y+1.2):
	// 3·(1/0.8125)/(1/0.8125+1.2) + 1.6/2.8 = 2.090415913200723, adding
	// idf·2.090415913200723.
	const words = 17.112264529111208
	const want = words + 4.165007722209545
	score, ok := search.Match(mustParse(t, "how do we deploy to staging"), d, stats, df)
	if !ok || math.Abs(score-want) > 1e-9 {
		t.Errorf("Match = %v, %v; want %v, true", score, ok, want)
	}
	// A phrase scores as its words: "to", with df 0 and only in the title,
	// adds ln(1 + 10.5/0.5)·3·1.1139240506329113. A phrase's words score
	// no proximity: they are consecutive by definition.
	const withTo = words + 10.329559590969563
	score, ok = search.Match(mustParse(t, `"deploy to staging"`), d, stats, df)
	if !ok || math.Abs(score-withTo) > 1e-9 {
		t.Errorf(`Match("deploy to staging") = %v, %v; want %v, true`, score, ok, withTo)
	}
}

// fill returns n tokens: words followed by filler.
func fill(n int, words ...string) []string {
	toks := append([]string(nil), words...)
	for len(toks) < n {
		toks = append(toks, "filler")
	}
	return toks
}

func TestMatchFieldWeights(t *testing.T) {
	t.Parallel()
	// Every field at its average length, the word in one of them.
	in := func(field search.Field) search.Doc {
		d := search.Doc{Title: fill(4), Tags: fill(2), Headings: fill(8), Body: fill(100), Aliases: fill(2), Summary: fill(12), Meta: fill(6)}
		fields := []*[]string{&d.Title, &d.Tags, &d.Headings, &d.Body, &d.Aliases, &d.Summary, &d.Meta}
		(*fields[field])[0] = "deploy"
		return d
	}
	q := mustParse(t, "deploy")
	var scores [search.NumFields]float64
	for f := range scores {
		var ok bool
		if scores[f], ok = search.Match(q, in(search.Field(f)), stats, df1); !ok {
			t.Fatalf("field %v: no match", search.Field(f))
		}
	}
	title, tags, headings, body := scores[search.FieldTitle], scores[search.FieldTags], scores[search.FieldHeadings], scores[search.FieldBody]
	aliases, summary, meta := scores[search.FieldAliases], scores[search.FieldSummary], scores[search.FieldMeta]
	if !(title > headings && headings == tags && tags > body) {
		t.Errorf("scores title %v, tags %v, headings %v, body %v: want title > headings = tags > body",
			title, tags, headings, body)
	}
	// Aliases are other titles; a page's summary of itself says as much as
	// a heading; the rest of the frontmatter says less than the body.
	if !(aliases == title && summary == headings && meta > 0 && meta < body) {
		t.Errorf("scores aliases %v (title %v), summary %v (headings %v), other frontmatter %v (body %v): want aliases = title, summary = headings, 0 < frontmatter < body",
			aliases, title, summary, headings, meta, body)
	}
}

func TestMatchPrefixCountsEveryToken(t *testing.T) {
	t.Parallel()
	q := mustParse(t, "arch*")
	one, _ := search.Match(q, doc("", "", "", "architecture"), stats, df1)
	two, _ := search.Match(q, doc("", "", "", "architecture archive"), stats, df1)
	if !(two > one) {
		t.Errorf("two prefixed tokens score %v, one %v: want more", two, one)
	}
}

func TestMatchDFCalls(t *testing.T) {
	t.Parallel()
	var got []search.Term
	df := func(t search.Term) int {
		got = append(got, t)
		return 2
	}
	q := mustParse(t, `"error budget" arch* missing -legacy "error budget error"`)
	if _, ok := search.Match(q, doc("", "", "", "error budget error architecture"), stats, df); !ok {
		t.Fatal("no match")
	}
	// Only terms present are looked up; phrases by their distinct words.
	want := []search.Term{
		{Text: "error"}, {Text: "budget"},
		{Text: "arch", Prefix: true},
		{Text: "error"}, {Text: "budget"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("df calls (-want +got):\n%s", diff)
	}
}

func TestMatchDeterministic(t *testing.T) {
	t.Parallel()
	q := mustParse(t, `deploy staging "error budget" arch* +policy -legacy rollback canary`)
	d := doc("Error budget policy", "ops deploy", "Architecture review", corpusText(2000)+" error budget policy")
	df := func(t search.Term) int { return len(t.Text) }
	first, ok := search.Match(q, d, stats, df)
	if !ok {
		t.Fatal("no match")
	}
	for range 1000 {
		if score, _ := search.Match(q, d, stats, df); math.Float64bits(score) != math.Float64bits(first) {
			t.Fatalf("Match gave %v, then %v", first, score)
		}
	}
}

// Stale or empty statistics must still give a finite, positive score.
func TestMatchDegenerateStats(t *testing.T) {
	t.Parallel()
	q := mustParse(t, "deploy")
	d := doc("deploy", "deploy", "deploy", "deploy")
	for _, tt := range []struct {
		st search.Stats
		df int
	}{
		{search.Stats{}, 0},
		{search.Stats{}, 5},
		{stats, -1},
		{stats, 50},
	} {
		score, ok := search.Match(q, d, tt.st, func(search.Term) int { return tt.df })
		if !ok || !(score > 0) || math.IsInf(score, 0) {
			t.Errorf("stats %+v, df %d: Match = %v, %v", tt.st, tt.df, score, ok)
		}
	}
}

// candidate is what the engine does with a Retrieval, from the lists by
// stem: a word is in its stem's list, and a prefix in the list of each stem
// it begins and of the stem of each word it begins (PageIndex.Words).
func candidate(r search.Retrieval, d search.Doc) bool {
	words := indexWords(d.Title, d.Tags, d.Headings, d.Body)
	var stems []string
	for _, toks := range [][]string{d.Title, d.Tags, d.Headings, d.Body} {
		for _, t := range toks {
			stems = append(stems, search.Stem(t))
		}
	}
	has := func(entry string) bool {
		word, prefix := strings.CutSuffix(entry, "*")
		if !prefix {
			return slices.Contains(stems, word)
		}
		begins := func(s string) bool { return strings.HasPrefix(s, word) }
		return slices.ContainsFunc(stems, begins) || slices.ContainsFunc(words, begins)
	}
	// A prefix's lists hold pages without a word it begins: only a word
	// excludes by its list.
	excludes := func(entry string) bool { return !strings.HasSuffix(entry, "*") && has(entry) }
	// A phrase's stems stand in a row in one field.
	inRow := func(phrase []string) bool {
		for _, toks := range [][]string{d.Title, d.Tags, d.Headings, d.Body} {
			for i := range toks {
				j := 0
				for j < len(phrase) && i+j < len(toks) && search.Stem(toks[i+j]) == phrase[j] {
					j++
				}
				if j == len(phrase) {
					return true
				}
			}
		}
		return false
	}
	return !slices.ContainsFunc(r.AllOf, func(e string) bool { return !has(e) }) &&
		!slices.ContainsFunc(r.Phrases, func(p []string) bool { return !inRow(p) }) &&
		(len(r.AnyOf) == 0 || slices.ContainsFunc(r.AnyOf, has)) &&
		!slices.ContainsFunc(r.NoneOf, excludes) &&
		!slices.ContainsFunc(r.NoPhrases, inRow)
}

// Every page that Match accepts must be among the engine's candidates, or
// the engines would lose results.
func FuzzMatchIsCandidate(f *testing.F) {
	f.Add(`"error budget" arch* -legacy`, "Error budget", "architecture", "the error budget policy")
	f.Add("how do we deploy", "", "", "we deploy daily")
	f.Add(`+e-mail -"foo bar"`, "e mail", "foo", "bar foo")
	f.Fuzz(func(t *testing.T, q, title, headings, body string) {
		query, err := search.ParseQuery(q)
		if err != nil {
			return
		}
		d := doc(title, "", headings, body)
		score, ok := search.Match(query, d, stats, df1)
		if ok && !candidate(query.Retrieval(), d) {
			t.Fatalf("Match(%q) accepts %+v, which Retrieval %+v excludes", q, d, query.Retrieval())
		}
		if ok && (math.IsNaN(score) || math.IsInf(score, 0) || score <= 0) {
			t.Fatalf("Match(%q) = %v", q, score)
		}
	})
}

// MatchWords must agree with Match, to the bit, on every query it is meant
// for: ranking reads one or the other depending on the query's shape.
func FuzzMatchWordsIsMatch(f *testing.F) {
	f.Add("how do we deploy the staging server", "Deploy", "ops", "Staging", "we deploy daily to staging")
	f.Add("arch* -legacy café", "Architecture", "arch", "Archive", "naïve résumé arch archive legacy")
	f.Add("+review p99 -canary", "", "", "", prose(3, 400))
	f.Add("ÉCOLE école ecole*", "Ecole", "", "", "L'École des Beaux-Arts")
	f.Fuzz(func(t *testing.T, q, title, tags, headings, body string) {
		query, err := search.ParseQuery(q)
		if err != nil || slices.ContainsFunc(query.Terms, func(t search.Term) bool { return t.Phrase != nil }) {
			return
		}
		d := doc(title, tags, headings, body)
		fields := search.Fields{
			Text: [search.NumFields]string{title, tags, headings, body},
			Lens: [search.NumFields]int{len(d.Title), len(d.Tags), len(d.Headings), len(d.Body)},
		}
		df := func(t search.Term) int { return len(t.Text) % 7 }
		want, wantOK := search.Match(query, d, stats, df)
		got, gotOK := search.MatchWords(query, fields, stats, df)
		if got != want || gotOK != wantOK {
			t.Fatalf("MatchWords(%q) = %v, %v; Match = %v, %v", q, got, gotOK, want, wantOK)
		}
	})
}

func TestMatchWordsOnProse(t *testing.T) {
	t.Parallel()
	queries := []string{"deploy", "how do we deploy the server", "arch* review -canary", "+error budget", "café naive", "2024 v2", "nothing here"}
	matched := 0
	for seed := range uint64(200) {
		title, body := prose(seed, 30), prose(seed+1000, 2000)
		d := doc(title, "", "", body)
		fields := search.Fields{Text: [search.NumFields]string{title, "", "", body}, Lens: [search.NumFields]int{len(d.Title), 0, 0, len(d.Body)}}
		for _, q := range queries {
			query := mustParse(t, q)
			want, wantOK := search.Match(query, d, stats, df1)
			got, gotOK := search.MatchWords(query, fields, stats, df1)
			if got != want || gotOK != wantOK {
				t.Fatalf("seed %d, %q: MatchWords = %v, %v; Match = %v, %v", seed, q, got, gotOK, want, wantOK)
			}
			if gotOK {
				matched++
			}
		}
	}
	if matched < 200 {
		t.Fatalf("only %d matches: the corpus no longer exercises scoring", matched)
	}
}
