package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// answer serves one request signed in as the admin and returns its status,
// where it redirects and its body.
func (s *site) answer(method, target string, form url.Values) (int, string, string) {
	var req *http.Request
	if form != nil {
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	req.Header.Set("Authorization", "Bearer "+s.secret)
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, req)
	return rec.Code, rec.Header().Get("Location"), rec.Body.String()
}

// The preview renders the editor's text through the pages service, as the
// page view does: a link to a page that exists goes there, a link to none
// is marked unresolved; and nothing is saved.
func TestPreviewResolvesLinks(t *testing.T) {
	s := newSite(t)
	s.write(t, "Design.md", "# Design\n")
	form := url.Values{"content": {"---\ntags: [x]\n---\n# Draft\n\nSee [[Design]] and [[Nowhere]].\n"}, "base_revision": {"0"}, "action": {"preview"}}
	code, _, body := s.answer("POST", "/preview/Notes/Draft.md", form)
	if code != http.StatusOK {
		t.Fatalf("preview: %d\n%.600s", code, body)
	}
	for _, want := range []string{
		`<a class="wikilink" href="/pages/Design.md">Design</a>`,
		`<a class="wikilink unresolved" title="no page is called this yet">Nowhere</a>`,
		`<textarea name="content" rows="24" aria-label="Markdown" autofocus>---`, // the text stays in the editor
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the preview lacks %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "tags: [x]</p>") {
		t.Error("the preview shows the frontmatter")
	}
	if _, err := s.docs.ReadPage(s.ctx, pages.ReadRequest{Path: "Notes/Draft.md"}); atrium.ErrorCode(err) != atrium.ENotFound {
		t.Errorf("a preview saved the page: %v", err)
	}
}

// Each action on a page has its route, the action before the page's path;
// the addresses from before (the editor at ?edit, the history after the
// path, a Preview from an editor opened then) lead to the new ones.
func TestPageActionsHaveRoutes(t *testing.T) {
	s := newSite(t)
	s.write(t, "A.md", "# A\n\none\n")
	s.write(t, "A.md", "# A\n\ntwo\n")
	s.write(t, "Links.md", "[[A]]\n")
	for _, c := range []struct {
		method, target string
		form           url.Values
		status         int
		location       string
	}{
		{"GET", "/pages/A.md?edit", nil, http.StatusFound, "/edit/A.md"},
		{"GET", "/pages/Notes/A%20b.md?edit", nil, http.StatusFound, "/edit/Notes/A%20b.md"},
		{"GET", "/pages/A.md/history?from=1&to=2", nil, http.StatusFound, "/history/A.md?from=1&to=2"},
		{"POST", "/pages/A.md", url.Values{"content": {"x"}, "action": {"preview"}}, http.StatusTemporaryRedirect, "/preview/A.md"},
		{"GET", "/edit/A.md", nil, http.StatusOK, ""},
		{"GET", "/history/A.md", nil, http.StatusOK, ""},
		{"POST", "/restore/A.md", url.Values{"revision": {"1"}, "base_revision": {"2"}}, http.StatusSeeOther, "/pages/A.md"},
		{"POST", "/move/A.md", url.Values{"destination_path": {"B.md"}}, http.StatusSeeOther, "/pages/B.md?moved=1&pages=1"},
		{"POST", "/delete/B.md", nil, http.StatusSeeOther, "/trash"},
		{"POST", "/move/B.md", url.Values{"destination_path": {"C.md"}}, http.StatusNotFound, ""},
	} {
		code, loc, body := s.answer(c.method, c.target, c.form)
		if code != c.status || loc != c.location {
			t.Errorf("%s %s: %d to %q, want %d to %q\n%.400s", c.method, c.target, code, loc, c.status, c.location, body)
		}
	}
	read, err := s.docs.ReadPage(s.ctx, pages.ReadRequest{Path: "Links.md"})
	if err != nil || !strings.Contains(read.Page.Content, "[[B]]") {
		t.Errorf("the move did not rewrite the link: %q, %v", read.Page.Content, err)
	}
}

// A reader previews nothing: previewing is editing, which is for writers.
func TestPreviewIsForWriters(t *testing.T) {
	s := newSite(t)
	req := identityReq("rita")
	req.Role = atrium.RoleReader
	secret, _, err := s.ids.CreateToken(s.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	post := httptest.NewRequest("POST", "/preview/A.md", strings.NewReader("content=%5B%5BA%5D%5D"))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post.Header.Set("Authorization", "Bearer "+secret)
	rec := httptest.NewRecorder()
	s.mux.ServeHTTP(rec, post)
	if rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), `class="preview"`) {
		t.Fatalf("a reader's preview: %d\n%.400s", rec.Code, rec.Body.String())
	}
}
