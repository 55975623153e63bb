package search_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/search"
)

func TestHighlightsMarkWhatMatched(t *testing.T) {
	q, err := search.ParseQuery(`syncing notes arch* -phone "the vault"`)
	if err != nil {
		t.Fatal(err)
	}
	text := "Sync your Notes across architectures, by phone, in the vault."
	var got []string
	for _, r := range search.Highlights(text, q) {
		got = append(got, text[r[0]:r[1]])
	}
	if diff := cmp.Diff([]string{"Sync", "Notes", "architectures", "the", "vault"}, got); diff != "" {
		t.Errorf("highlights (-want +got):\n%s", diff)
	}
}

// The words of an identifier are marked where they match; an identifier
// that matches whole is marked once, not again in its words.
func TestHighlightsMarkTheWordsOfIdentifiers(t *testing.T) {
	text := "The AddPrefix middleware, then StripPrefix."
	for q, want := range map[string][]string{
		"prefix":      {"Prefix", "Prefix"},
		"add prefix":  {"Add", "Prefix", "Prefix"},
		"AddPrefix":   {"AddPrefix", "Prefix"},
		"addprefix":   {"AddPrefix"},
		"stripprefix": {"StripPrefix"},
	} {
		parsed, err := search.ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range search.Highlights(text, parsed) {
			got = append(got, text[r[0]:r[1]])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q: highlights (-want +got):\n%s", q, diff)
		}
	}
}
