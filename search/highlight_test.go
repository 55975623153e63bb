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
