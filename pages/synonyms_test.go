package pages_test

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// A workspace teaches search its own words through a page: a question
// finds the pages that say it otherwise, from the page's next revision on,
// for those who may read the page; the explanation says which synonym
// scored.
func TestSearchWidensQuestionsWithTheWorkspacesSynonyms(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Ops/File recovery.md", "---\naccess: public\n---\n# File recovery\n\nRestore an older snapshot of a file.\n")
		v.write(t, "Help/Devices.md", "---\naccess: public\n---\n# Devices\n\nEnrolled mobiles and laptops.\n")
		v.write(t, "Notes/Lunch.md", "---\naccess: public\n---\n# Lunch\n\nWe get back at two.\n")
		const question = "how do I get back a deleted file"
		ask := func(q string) []string {
			t.Helper()
			return paths(v.search(t, pages.SearchRequest{Query: q}))
		}
		if got := ask("phone"); len(got) != 0 {
			t.Fatalf("phone before synonyms: %v", got)
		}
		v.write(t, pages.SynonymsPath, "# Synonyms\n\nOne group a line.\n\n- recover, restore, get back, undelete\n- phone, mobile, cell phone\n")
		// The synonyms page, which holds every word of a question it
		// widens, is no answer to it; to other questions it is a page like
		// any.
		if got := ask("phone"); !slices.Equal(got, []string{"Help/Devices.md"}) {
			t.Errorf("phone with synonyms: %v", got)
		}
		if got := ask("synonyms group"); !slices.Equal(got, []string{pages.SynonymsPath}) {
			t.Errorf("synonyms group: %v", got)
		}
		res := v.search(t, pages.SearchRequest{Query: question, Explain: true})
		if len(res.Hits) == 0 || res.Hits[0].Path != "Ops/File recovery.md" {
			t.Fatalf("%q with synonyms: %v", question, paths(res))
		}
		ex := res.Hits[0].Explanation
		i := slices.IndexFunc(ex.Terms, func(te pages.TermExplanation) bool { return te.Term == "get back" })
		if i < 0 || !slices.Equal(ex.Terms[i].Synonyms, []string{"recover", "restore"}) {
			t.Errorf("explanation of the first hit: %+v, want the term \"get back\" scored by recover and restore", ex.Terms)
		}
		// Queries that say exactly what they want are not widened.
		if got := ask("+phone"); !slices.Equal(got, []string{pages.SynonymsPath}) {
			t.Errorf("+phone: %v", got)
		}
		if got := ask("phone lapt*"); !slices.Equal(got, []string{"Help/Devices.md", pages.SynonymsPath}) {
			t.Errorf("phone lapt*: %v", got)
		}
		// The next revision holds at once.
		v.write(t, pages.SynonymsPath, "- recover, restore\n")
		if got := ask("mobile"); !slices.Equal(got, []string{"Help/Devices.md"}) {
			t.Errorf("mobile after the group was removed: %v", got)
		}
		if got := ask("phone"); len(got) != 0 {
			t.Errorf("phone after the group was removed: %v", got)
		}
		// A private synonyms page is not for anonymous readers.
		v.write(t, pages.SynonymsPath, "- phone, mobile\n")
		anon := func(q string) []string {
			t.Helper()
			res, err := v.svc.Search(v.anon, pages.SearchRequest{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			return paths(res)
		}
		if got := anon("phone"); len(got) != 0 {
			t.Errorf("anonymous, private synonyms: %v", got)
		}
		v.write(t, pages.SynonymsPath, "---\naccess: public\n---\n- phone, mobile\n")
		if got := anon("phone"); !slices.Equal(got, []string{"Help/Devices.md"}) {
			t.Errorf("anonymous, public synonyms: %v", got)
		}
		// In the trash, it holds no more.
		if _, err := v.svc.DeletePage(v.ctx, pages.SynonymsPath); err != nil {
			t.Fatal(err)
		}
		if got := ask("phone"); len(got) != 0 {
			t.Errorf("phone with the synonyms page in the trash: %v", got)
		}
	})
}

// With explain, each hit says what made its score: the terms it holds,
// where, through which synonyms, and the signals, which add up to the
// score; from postings or from text alike.
func TestSearchExplainsEachHit(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Ops/Backups.md", "---\naliases: [Snapshots]\ndescription: Nightly database backups\nowner: ops team\n---\n# Backups\n\nDatabase backups run nightly.\n")
		v.write(t, "Eng/Schema.md", "# Schema\n\nThe database schema.\n")
		for _, q := range []string{"database backups snapshots", "datab* backups", `"database backups"`} {
			res := v.search(t, pages.SearchRequest{Query: q, Explain: true})
			if len(res.Hits) == 0 {
				t.Fatalf("%q: no hits", q)
			}
			for _, h := range res.Hits {
				if h.Explanation == nil {
					t.Fatalf("%q: %s has no explanation", q, h.Path)
				}
				sum := 0.0
				for _, s := range h.Explanation.Signals {
					sum += s.Score
				}
				if math.Abs(sum-h.Score) > 1e-5 {
					t.Errorf("%q: %s signals %+v add up to %v, score %v", q, h.Path, h.Explanation.Signals, sum, h.Score)
				}
			}
		}
		ex := v.search(t, pages.SearchRequest{Query: "database backups snapshots", Explain: true}).Hits[0].Explanation
		want := []pages.TermExplanation{
			// The body starts with "# Backups" and says "Database backups".
			{Term: "database", Fields: []pages.FieldExplanation{{Field: "body", Weight: 1, Count: 1, Near: 1}, {Field: "summary", Weight: 2, Count: 1}}},
			{Term: "backups", Fields: []pages.FieldExplanation{{Field: "title", Weight: 3, Count: 1}, {Field: "headings", Weight: 2, Count: 1},
				{Field: "body", Weight: 1, Count: 2, Near: 1}, {Field: "summary", Weight: 2, Count: 1, Near: 1}}},
			{Term: "snapshots", Fields: []pages.FieldExplanation{{Field: "aliases", Weight: 3, Count: 1}}},
		}
		if diff := cmp.Diff(want, ex.Terms, cmpIgnoreScores); diff != "" {
			t.Errorf("explanation (-want +got):\n%s", diff)
		}
		if res := v.search(t, pages.SearchRequest{Query: "database"}); res.Hits[0].Explanation != nil {
			t.Error("an explanation nobody asked for")
		}
	})
}

var cmpIgnoreScores = cmp.FilterPath(func(p cmp.Path) bool {
	switch p.Last().String() {
	case ".IDF", ".Score":
		return true
	}
	return false
}, cmp.Ignore())
