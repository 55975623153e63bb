package markdown_test

import (
	"testing"

	"github.com/atrium-hq/atrium/markdown"
)

// What a person selects in the rendered page is found in the source, with
// the markup around it, and a source range reads as it is shown.
func TestVisibleFindsRenderedQuotes(t *testing.T) {
	body := "# Ops\n\nBackups run **nightly** with a [simple copy](https://example.com/x) of the `atrium.db` file.\n\nSee [[Other Page|the other page]] too.\n"
	v := markdown.NewVisible(body)
	for _, c := range []struct{ exact, source, shown string }{
		{"Backups run nightly", "Backups run **nightly**", "Backups run nightly"},
		{"nightly with a simple copy of the atrium.db", "**nightly** with a [simple copy](https://example.com/x) of the `atrium.db`", "nightly with a simple copy of the atrium.db"},
		{"Backups  run\nnightly", "Backups run **nightly**", "Backups run nightly"},
		{"See the other page too", "See [[Other Page|the other page]] too", "See the other page too"},
	} {
		s, e, ok := v.Find(body, c.exact, "", "", 0, len(body))
		if !ok {
			t.Errorf("%q not found in %q", c.exact, v.Text)
			continue
		}
		if body[s:e] != c.source {
			t.Errorf("%q is at %q, want %q", c.exact, body[s:e], c.source)
		}
		if got := v.Slice(s, e); got != c.shown {
			t.Errorf("%q shows as %q, want %q", c.exact, got, c.shown)
		}
	}
	if _, _, ok := v.Find(body, "nightly backups", "", "", 0, len(body)); ok {
		t.Error("found a quote that is not there")
	}
	// Of two occurrences, the one whose surroundings match.
	two := "A cat sat.\n\nA **cat** ran.\n"
	s, e, ok := markdown.NewVisible(two).Find(two, "cat", "A ", " ran", 0, len(two))
	if !ok || two[s:e] != "**cat**" {
		t.Fatalf("the second cat: %d %d %v", s, e, ok)
	}
}
