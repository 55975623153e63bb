package pages_test

import (
	"database/sql"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Pages that say what they are about in their frontmatter: other names
// (aliases), a summary, and other keys of text.
var fieldPages = map[string]string{
	"Handbook/Recovery.md": "---\naliases: [Undelete guide, Trash can]\n---\n# Recovery\n\nSteps for the help desk.\n",
	"Ops/Snapshots.md":     "---\ndescription: How to bring back an older version of a file\n---\n# Snapshots\n\nTaken hourly.\n",
	"Team/Owners.md":       "---\nowner: kestrel\nicon: falcon\nreviewed: 2024-01-02\nstatus: [draft, falcon]\n---\n# Owners\n\nWho answers for what.\n",
	"Notes/Birds.md":       "# Birds\n\nA kestrel hovered; an undelete key; the older version of the plan.\n",
}

func TestSearchScoresEveryFieldAPageDeclares(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		for p, c := range fieldPages {
			v.write(t, p, c)
		}
		for _, c := range []struct {
			q    string
			want []string
		}{
			// An alias counts as a title, a description as the page's own
			// summary: both above a word in passing in a body.
			{"undelete", []string{"Handbook/Recovery.md", "Notes/Birds.md"}},
			{"older version", []string{"Ops/Snapshots.md", "Notes/Birds.md"}},
			// Other frontmatter text counts, a little: less than the body.
			{"kestrel", []string{"Notes/Birds.md", "Team/Owners.md"}},
			{"draft", []string{"Team/Owners.md"}},
			// The icon is a setting, not text; a date is no text either.
			{"2024", nil},
			// Queries ranked from the pages' text (a prefix, a phrase) see
			// the same fields.
			{"undel*", []string{"Handbook/Recovery.md", "Notes/Birds.md"}},
			{`"trash can"`, []string{"Handbook/Recovery.md"}},
			{`"older version"`, []string{"Ops/Snapshots.md", "Notes/Birds.md"}},
		} {
			if diff := cmp.Diff(c.want, paths(v.search(t, pages.SearchRequest{Query: c.q}))); diff != "" {
				t.Errorf("%q (-want +got):\n%s", c.q, diff)
			}
		}
		if got := paths(v.search(t, pages.SearchRequest{Query: "falcon"})); len(got) != 1 {
			t.Errorf("falcon: %v, want the page whose status says it (not its icon)", got)
		}
		// Ranked from postings or from text, a page scores the same.
		words := v.search(t, pages.SearchRequest{Query: "undelete guide"})
		text := v.search(t, pages.SearchRequest{Query: "undelete guide gu*"})
		if words.Hits[0].Path != "Handbook/Recovery.md" || text.Hits[0].Path != "Handbook/Recovery.md" {
			t.Fatalf("undelete guide: %v; with a prefix: %v", paths(words), paths(text))
		}
	})
}

// A store written before search scored the frontmatter holds no field
// lengths or texts for it, and postings without it: the next start rebuilds
// every page, the trashed ones once restored, and search then answers as it
// does in a store written since, to the score.
func TestSearchFieldsOfPagesWrittenBeforeThem(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		dsn := storetest.DSN(t, e)
		v := openEnv(t, dsn)
		ensureIndex(t, v, 0) // records the index version
		for p, c := range fieldPages {
			v.write(t, p, c)
		}
		if _, err := v.svc.DeletePage(v.ctx, "Ops/Snapshots.md"); err != nil {
			t.Fatal(err)
		}
		v.db.Close()
		// As the store was before: the columns at their defaults, and the
		// index version of then.
		driver := map[store.Engine]string{store.SQLite: "sqlite", store.Postgres: "pgx"}[e]
		raw, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{
			"UPDATE pages SET aliases_len = 0, summary_len = 0, meta_len = 0, field_texts = '[]'",
			"UPDATE search_stats SET aliases_len = 0, summary_len = 0, meta_len = 0",
			"UPDATE meta SET value = '6' WHERE key = 'docs.index_version'",
		} {
			if res, err := raw.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			} else if n, _ := res.RowsAffected(); n == 0 {
				t.Fatalf("%s: no row", q)
			}
		}
		raw.Close()

		v = openEnv(t, dsn)
		ensureIndex(t, v, len(fieldPages)-1)
		v.checkPostings(t)
		if _, err := v.svc.RestorePage(v.ctx, pages.RestoreRequest{Path: "Ops/Snapshots.md"}); err != nil {
			t.Fatal(err)
		}
		fresh := mustEnv(t, e)
		for p, c := range fieldPages {
			fresh.write(t, p, c)
		}
		for _, q := range []string{"undelete", "older version", "kestrel falcon", "trash*", `"bring back"`} {
			want := fresh.search(t, pages.SearchRequest{Query: q})
			got := v.search(t, pages.SearchRequest{Query: q})
			if diff := cmp.Diff(hitScores(want), hitScores(got)); diff != "" {
				t.Errorf("%q after the rebuild (-fresh store +upgraded):\n%s", q, diff)
			}
		}
	})
}

// hitScores are the paths and scores of the hits.
func hitScores(res pages.SearchResult) map[string]float64 {
	out := map[string]float64{}
	for _, h := range res.Hits {
		out[h.Path] = h.Score
	}
	return out
}
