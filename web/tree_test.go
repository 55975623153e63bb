package web_test

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var moreLink = regexp.MustCompile(`<a href="(/tree\?[^"]*)" data-more>`)

// The sidebar opens the folders above the page, marks the page, and keeps
// every folder's window small with "More" links that, followed to the end,
// list each child once; the fragment route serves the same items to the
// script, and the anonymous never see a private page.
func TestSidebarTreeWindows(t *testing.T) {
	s := newSite(t)
	pub := "---\naccess: public\n---\nhello"
	for i := range 120 {
		s.write(t, fmt.Sprintf("Big/P%03d.md", i), pub)
	}
	s.write(t, "Big/Deep/Here.md", "# Here\n\nthe page")
	s.write(t, "Big/Deep/Sibling.md", pub)
	s.write(t, "Secret.md", "private")
	s.write(t, "Open.md", pub)

	code, body := s.get("/pages/Big/Deep/Here.md")
	if code != 200 {
		t.Fatalf("page: %d", code)
	}
	side := body[strings.Index(body, `<nav class="sidebar tree"`):strings.Index(body, `<article class="page"`)]
	for _, want := range []string{`data-folder="Big" aria-expanded="true"`, `data-folder="Big/Deep" aria-expanded="true"`, `href="/pages/Big/Deep/Here.md" aria-current="page"`, `/pages/Big/Deep/Sibling.md`, `/pages/Secret.md`} {
		if !strings.Contains(side, want) {
			t.Errorf("sidebar lacks %s:\n%s", want, side)
		}
	}
	if n := strings.Count(side, "/pages/Big/P"); n > 2*50 {
		t.Errorf("sidebar lists %d pages of Big at once", n)
	}

	// Follow Big's windows to the end, as the script would.
	seen := map[string]int{}
	frag := http.Header{"X-Atrium-Fragment": {"1"}}
	next := []string{"/tree?folder=Big"}
	for len(next) > 0 {
		target := next[0]
		next = next[1:]
		code, items := s.do("GET", target, nil, frag, false)
		if code != 200 || strings.Contains(items, "<html") {
			t.Fatalf("%s: %d %.200s", target, code, items)
		}
		for _, m := range regexp.MustCompile(`href="/pages/(Big/P\d+\.md)"`).FindAllStringSubmatch(items, -1) {
			seen[m[1]]++
		}
		for _, m := range moreLink.FindAllStringSubmatch(items, -1) {
			next = append(next, html.UnescapeString(m[1]))
		}
	}
	if len(seen) != 120 {
		t.Errorf("walking Big's windows saw %d of 120 pages", len(seen))
	}
	for p, n := range seen {
		if n != 1 {
			t.Errorf("%s listed %d times", p, n)
		}
	}

	// Without the script, a folder is a page of its own.
	if code, body := s.get("/tree?folder=Big/Deep"); code != 200 || !strings.Contains(body, "<html") || !strings.Contains(body, "/pages/Big/Deep/Here.md") {
		t.Errorf("folder page: %d", code)
	}
	for _, c := range []struct {
		target string
		code   int
	}{{"/tree?folder=Nowhere", 404}, {"/tree?after=%21%21", 400}, {"/tree?folder=../x", 400}} {
		if code, _ := s.get(c.target); code != c.code {
			t.Errorf("%s: %d, want %d", c.target, code, c.code)
		}
	}

	code, body = s.do("GET", "/pages/Open.md", nil, nil, true)
	if code != 200 || strings.Contains(body, "Secret.md") || !strings.Contains(body, `aria-current="page"`) {
		t.Errorf("anonymous page view: %d, private page shown: %v", code, strings.Contains(body, "Secret.md"))
	}
	if _, body := s.do("GET", "/tree", nil, nil, true); strings.Contains(body, "Secret.md") || !strings.Contains(body, "Open.md") {
		t.Errorf("anonymous tree shows a private page, or not the public one")
	}
}
