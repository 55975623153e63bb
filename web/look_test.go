package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// What a reader of an imported documentation site meets: a page whose title
// is in its frontmatter shows it as its heading (and one that opens with
// its own heading shows no second); a long page's history shows the lines
// around a change, not the page whole; search results read as text, not
// Markdown; the admin page names browsers.
func TestPagesReadWell(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	admin := mustAdmin(t, s)
	write := func(path, content string) {
		t.Helper()
		if _, err := s.docs.WritePage(s.admin, pages.WriteRequest{Path: path, Content: content, Overwrite: true}); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/entry.md", "---\ntitle: \"Entry Points\"\n---\n\nListening for connections.\n\n### Example\n")
	write("docs/own.md", "# Its Own Heading\n\nText.\n")
	_, _, entry := s.send(t, "GET", "/pages/docs/entry.md", admin, nil, nil)
	if !strings.Contains(entry, `<h1 class="page-title">Entry Points</h1>`) {
		t.Errorf("a page with its title in frontmatter shows no heading:\n%s", between(entry, `<article`, `<div class="markdown">`))
	}
	_, _, own := s.send(t, "GET", "/pages/docs/own.md", admin, nil, nil)
	if strings.Contains(own, `class="page-title"`) || strings.Count(own, "<h1") != 1 {
		t.Errorf("a page with its own heading shows %d h1", strings.Count(own, "<h1"))
	}

	// A relative image address (../assets/shot.png) reaches the file.
	code, hdr, _ := s.send(t, "GET", "/pages/docs/assets/shot%20one.png", admin, nil, nil)
	if code != http.StatusFound || hdr.Get("Location") != "/api/attachments/docs/assets/shot%20one.png" {
		t.Errorf("a file beside the pages: %d to %q", code, hdr.Get("Location"))
	}

	var long strings.Builder
	for i := range 400 {
		fmt.Fprintf(&long, "Line %d of a long page.\n", i)
	}
	write("docs/long.md", long.String())
	write("docs/long.md", strings.Replace(long.String(), "Line 200 of", "Line two hundred of", 1))
	_, _, history := s.send(t, "GET", "/history/docs/long.md", admin, nil, nil)
	diff := between(history, `<pre class="diff">`, `</pre>`)
	for _, want := range []string{"⋯ 197 unchanged lines", "<del>- Line 200 of a long page.</del>", "<ins>+ Line two hundred of a long page.</ins>", "⋯ 196 unchanged lines"} {
		if !strings.Contains(diff, want) {
			t.Errorf("the diff lacks %q:\n%s", want, diff)
		}
	}
	if n := strings.Count(diff, "<span>"); n != 6 {
		t.Errorf("the diff shows %d unchanged lines, want 3 on either side of the change", n)
	}

	write("docs/mw.md", "# Security\n\n- **Middlewares** for `security` and [the docs](other.md)\n")
	_, _, found := s.send(t, "GET", "/search?q=middlewares", admin, nil, nil)
	snippet := between(between(found, `href="/pages/docs/mw.md"`, `</li>`), `<p class="snippet">`, `</p>`)
	if !strings.Contains(snippet, "<mark>Middlewares</mark> for security and the docs") || strings.ContainsAny(snippet, "*`[") {
		t.Errorf("the snippet reads %q", snippet)
	}
	// Admins see what made each score, and the synonyms that did; writers
	// only the results.
	write("Settings/Synonyms.md", "- middlewares, interceptors\n")
	_, _, why := s.send(t, "GET", "/search?q=interceptors", admin, nil, nil)
	explained := between(between(why, `href="/pages/docs/mw.md"`, `</li>`), `<details class="explain">`, `</details>`)
	for _, want := range []string{"Why this result: words ", "<strong>interceptors</strong>", "body ×1;", "through “middlewares”"} {
		if !strings.Contains(explained, want) {
			t.Errorf("the explanation lacks %q: %q", want, explained)
		}
	}
	writer, _ := s.token(t, "wim", atrium.RoleWriter, "")
	if _, _, page := s.send(t, "GET", "/search?q=interceptors", writer, nil, nil); !strings.Contains(page, "docs/mw.md") || strings.Contains(page, `class="explain"`) {
		t.Errorf("a writer's results: %s", between(page, `<main`, `</main>`))
	}

	if _, _, err := s.ids.Login(context.Background(), admin, "", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15"); err != nil {
		t.Fatal(err)
	}
	_, _, adm := s.send(t, "GET", "/admin", admin, nil, nil)
	if !strings.Contains(adm, ">Safari 17 on macOS</td>") {
		t.Errorf("the admin page does not name the browser:\n%s", between(adm, `<section id="sessions"`, `</section>`))
	}
}
