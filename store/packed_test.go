package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// A page's texts come back as written from every reader — the page, its
// listing, its history with and without texts, a revision, the search's
// documents, the embedder's jobs — whether SQLite keeps them packed (long),
// as they are (short), or as a store written before packing left them.
func TestPageTextsReadBackAsWritten(t *testing.T) {
	long := strings.Repeat("Grüße aus Zürich — the kestrel hovers over the ridge. ", 80)
	texts := []string{long, "short", long + " and then some", strings.Repeat("ß", 300)}
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		db := storetest.MustOpen(t, e, nil)
		var stems []string
		for i := range 400 {
			stems = append(stems, "stem"+strings.Repeat("x", i%7)+string(rune('a'+i%26)))
		}
		slices.Sort(stems)
		stems = slices.Compact(stems)
		idx := store.PageIndex{Stems: stems, Headings: strings.Join(stems, " "), Postings: make([][]byte, len(stems))}
		for i := range idx.Postings {
			idx.Postings[i] = []byte{1}
		}
		var p atrium.Page
		err := db.Update(ctx, func(tx *store.Tx) error {
			w, err := tx.CreateWorkspace(ctx, "texts")
			if err != nil {
				return err
			}
			p = atrium.Page{WorkspaceID: w.ID, Path: "Texts.md", Title: "Texts", Access: atrium.AccessPublic, Content: texts[0], ContentHash: "h0"}
			return tx.InsertPage(ctx, &p, idx, 0)
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, text := range texts[1:] {
			err := db.Update(ctx, func(tx *store.Tx) error {
				p.Content, p.ContentHash = text, "h"+string(rune('1'+i))
				return tx.UpdatePage(ctx, &p, idx, 0)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		// A store written before packing holds its texts as TEXT.
		legacy := long + " from before"
		err = db.Update(ctx, func(tx *store.Tx) error {
			return tx.Exec(ctx, "UPDATE page_revisions SET content = ? WHERE page_id = ? AND revision = 3", legacy, p.ID)
		})
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(texts)
		want[2] = legacy
		slices.Reverse(want)
		err = db.View(ctx, func(tx *store.Tx) error {
			got, err := tx.PageByPath(ctx, p.WorkspaceID, p.Path)
			if err != nil {
				return err
			}
			if got.Content != texts[3] {
				t.Errorf("page content %q, want %q", got.Content, texts[3])
			}
			revs, err := tx.PageRevisions(ctx, p.ID, 0, 10, true)
			if err != nil {
				return err
			}
			bare, err := tx.PageRevisions(ctx, p.ID, 0, 10, false)
			if err != nil {
				return err
			}
			var contents []string
			var sizes, bareSizes, wantSizes []int
			for i, r := range revs {
				contents = append(contents, r.Content)
				sizes = append(sizes, r.Size)
				bareSizes = append(bareSizes, bare[i].Size)
				wantSizes = append(wantSizes, len(want[i]))
				if bare[i].Content != "" {
					t.Errorf("revision %d listed without its text has %d bytes of it", bare[i].Revision, len(bare[i].Content))
				}
				one, err := tx.PageRevision(ctx, p.ID, r.Revision)
				if err != nil {
					return err
				}
				if one.Content != want[i] || one.Size != len(want[i]) {
					t.Errorf("revision %d: %d bytes (size %d), want %d", r.Revision, len(one.Content), one.Size, len(want[i]))
				}
			}
			if diff := cmp.Diff(want, contents); diff != "" {
				t.Errorf("revision texts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSizes, sizes); diff != "" {
				t.Errorf("revision sizes with texts, in bytes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantSizes, bareSizes); diff != "" {
				t.Errorf("revision sizes without texts, in bytes (-want +got):\n%s", diff)
			}
			list, err := tx.ListPages(ctx, store.ListQuery{Workspace: p.WorkspaceID, Limit: 10, WithContent: true})
			if err != nil {
				return err
			}
			if len(list) != 1 || list[0].Content != texts[3] {
				t.Errorf("listed with content: %d pages, want the page's text", len(list))
			}
			docs, err := tx.SearchDocs(ctx, []int64{p.ID})
			if err != nil {
				return err
			}
			if len(docs) != 1 || docs[0].Content != texts[3] {
				t.Errorf("search documents: %d, want the page's text", len(docs))
			}
			jobs, err := tx.StaleEmbeddings(ctx, "m", 0, 10)
			if err != nil {
				return err
			}
			if len(jobs) != 1 || jobs[0].Content != texts[3] {
				t.Errorf("embedding jobs: %d, want the page's text", len(jobs))
			}
			if err := tx.CheckPostings(ctx, p.WorkspaceID); err != nil {
				t.Errorf("postings: %v", err)
			}
			if e != store.SQLite {
				return nil
			}
			kinds, err := tx.Strings(ctx, "SELECT typeof(content) FROM pages WHERE id = ?", p.ID)
			if err != nil {
				return err
			}
			// The newest text is 300 repeats of one letter: packed.
			if diff := cmp.Diff([]string{"blob"}, kinds); diff != "" {
				t.Errorf("storage of the page's text (-want +got):\n%s", diff)
			}
			kinds, err = tx.Strings(ctx, "SELECT typeof(content) FROM page_revisions WHERE page_id = ? ORDER BY revision", p.ID)
			if err != nil {
				return err
			}
			// The first packed, the short one not, the one from before as
			// it was, the newest's kept in the page.
			if diff := cmp.Diff([]string{"blob", "text", "text", "text"}, kinds); diff != "" {
				t.Errorf("storage of the revisions' texts (-want +got):\n%s", diff)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
