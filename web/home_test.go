package web_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// After an import, the home page leads into the pages — the header's Pages,
// the top of the tree, the pages changed lately — and its feed says the
// import in one row ("imported 30 pages and 30 files", each change listed
// inside), not fifty rows of one file each; the feed goes on, page by page,
// at /activity.
func TestHomeAfterAnImport(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	imp := pages.WithOrigin(s.admin, "import")
	for i := range 30 {
		p := fmt.Sprintf("guide/part%02d.md", i)
		if i%3 == 0 {
			p = fmt.Sprintf("reference/ref%02d.md", i)
		}
		if _, err := s.docs.WritePage(imp, pages.WriteRequest{Path: p, Content: fmt.Sprintf("# Part %d\n", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		if _, _, err := s.docs.AttachFile(imp, fmt.Sprintf("guide/assets/shot%02d.png", i), []byte{0x89, 'P', 'N', 'G', byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.docs.WritePage(s.admin, pages.WriteRequest{Path: "README.md", Content: "# Read me\n"}); err != nil {
		t.Fatal(err)
	}
	reader, _ := s.token(t, "rita", atrium.RoleReader, "")
	code, _, home := s.send(t, "GET", "/", reader, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("home: %d", code)
	}
	for _, want := range []string{
		`<a href="/tree" class="pages-link">Pages</a>`,    // the header
		`<a href="/tree?folder=guide">guide/</a>`,         // the top of the tree
		`<a href="/tree?folder=reference">reference/</a>`, //
		`<a href="/pages/README.md">Read me</a>`,          //
		`<a href="/pages/README.md">README</a>`,           // recently changed
		`imported 30 pages and 30 files`,                  // the feed
	} {
		if !strings.Contains(home, want) {
			t.Errorf("the home page lacks %s", want)
		}
	}
	feed := between(home, `<ul class="activity">`, `</details>`)
	if n := strings.Count(feed, "<li"); n != 1+1+50+1 { // README's row, the import's, 50 of its changes inside and the rest
		t.Errorf("the feed's first rows hold %d items, want the README row, the import row, 50 changes and how many more:\n%s", n, feed)
	}
	if !strings.Contains(home, `and 10 more: <a href="/tree">all pages</a>`) {
		t.Errorf("the import's row does not say how many changes it leaves unlisted:\n%s", between(home, `<li class="activity-row run">`, `</li>`))
	}

	// A busier log: twenty people each edit a page; the feed pages back.
	for i := range 20 {
		w, _ := s.token(t, fmt.Sprintf("w%02d", i), atrium.RoleWriter, "")
		if _, err := s.docs.WritePage(s.as(t, w), pages.WriteRequest{Path: "README.md", Content: fmt.Sprintf("# Read me\n\nedit %d\n", i), Overwrite: true}); err != nil {
			t.Fatal(err)
		}
	}
	_, _, home = s.send(t, "GET", "/", reader, nil, nil)
	older := regexp.MustCompile(`<a href="(/activity\?before=\d+)">Older activity</a>`).FindStringSubmatch(home)
	if older == nil {
		t.Fatalf("a home page of 15 rows out of 22 has no link to older activity:\n%s", between(home, `<h2 id="activity-heading">`, `</section>`))
	}
	if n := strings.Count(between(home, `<ul class="activity">`, `</section>`), `<li class="activity-row`); n != 15 {
		t.Errorf("the home feed shows %d rows, want 15", n)
	}
	code, _, next := s.send(t, "GET", older[1], reader, nil, nil)
	if code != http.StatusOK {
		t.Fatalf("%s: %d", older[1], code)
	}
	rows := strings.Count(next, `<li class="activity-row`)
	if rows != 7 || !strings.Contains(next, "imported 30 pages and 30 files") || strings.Contains(next, "Older activity") {
		t.Errorf("the older page shows %d rows (want 7, the last the import) and says:\n%s", rows, between(next, "<main", "</main>"))
	}
	if code, _, _ := s.send(t, "GET", "/activity?before=x", reader, nil, nil); code != http.StatusBadRequest {
		t.Errorf("/activity?before=x: %d, want 400", code)
	}
}
