package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
)

// send makes one request to the live site as token's holder (a bearer
// token, or "ats_…": a browser session's cookie), without following
// redirects.
func (s *liveSite) send(t *testing.T, method, target, token string, form url.Values, headers map[string]string) (int, http.Header, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.url+target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	switch {
	case strings.HasPrefix(token, "ats_"):
		req.Header.Set("Cookie", authn.SessionCookie+"="+token)
	case token != "":
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// as is the context of token's holder, for the services.
func (s *liveSite) as(t *testing.T, token string) context.Context {
	t.Helper()
	a, err := s.ids.Authenticate(context.Background(), token, "")
	if err != nil {
		t.Fatal(err)
	}
	return atrium.NewContextWithActor(context.Background(), a)
}

// A person edits their own comments (a thread's first, and a reply) from
// the page, with a form that needs no script; others' comments offer no
// such form, and the service refuses a forged edit; a form posted from
// another site with the person's session changes nothing.
func TestEditYourOwnComment(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	s.write(t, "A.md")
	wim, _ := s.token(t, "wim", atrium.RoleWriter, "")
	rita, _ := s.token(t, "rita", atrium.RoleWriter, "")
	root, _, err := s.rev(t).Create(s.as(t, wim), review.CreateRequest{DocPath: "A.md", Content: "first words", Status: atrium.StatusSubmitted})
	if err != nil {
		t.Fatal(err)
	}
	reply, _, err := s.rev(t).Create(s.as(t, rita), review.CreateRequest{ParentID: root.UID, Content: "rita's reply"})
	if err != nil {
		t.Fatal(err)
	}
	mine, _, err := s.rev(t).Create(s.as(t, wim), review.CreateRequest{ParentID: root.UID, Content: "wim's reply"})
	if err != nil {
		t.Fatal(err)
	}

	_, _, page := s.send(t, "GET", "/pages/A.md", wim, nil, nil)
	for _, id := range []string{root.UID, mine.UID} {
		if !strings.Contains(page, `action="/threads/`+id+`/edit"`) {
			t.Errorf("wim's page view offers no edit of their comment %s", id)
		}
	}
	if strings.Contains(page, `action="/threads/`+reply.UID+`/edit"`) {
		t.Error("wim's page view offers to edit rita's reply")
	}

	secret, _, err := s.ids.Login(context.Background(), wim, "", "test")
	if err != nil {
		t.Fatal(err)
	}
	edit := func(id, content string, headers map[string]string) (int, http.Header) {
		code, h, _ := s.send(t, "POST", "/threads/"+id+"/edit", secret, url.Values{"content": {content}}, headers)
		return code, h
	}
	same := map[string]string{"Sec-Fetch-Site": "same-origin"}
	if code, h := edit(root.UID, "better words", same); code != http.StatusSeeOther || h.Get("Location") != "/pages/A.md#comment-"+root.UID {
		t.Fatalf("editing one's thread: %d to %q", code, h.Get("Location"))
	}
	if code, _ := edit(mine.UID, "a better reply", same); code != http.StatusSeeOther {
		t.Fatalf("editing one's reply: %d", code)
	}
	if code, _ := edit(reply.UID, "forged", same); code != http.StatusForbidden {
		t.Fatalf("editing someone else's reply: %d, want 403", code)
	}
	if code, _ := edit(root.UID, "from evil", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
		t.Fatalf("an edit posted from another site: %d, want 403", code)
	}
	if code, _ := edit(root.UID, "   ", same); code != http.StatusBadRequest {
		t.Fatalf("an empty edit: %d, want 400", code)
	}
	th, err := s.rev(t).Get(s.admin, root.UID)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{th.Annotation.Content}
	for _, r := range th.Replies {
		got = append(got, r.Content)
	}
	if want := "better words|rita's reply|a better reply"; strings.Join(got, "|") != want {
		t.Fatalf("after the edits the thread reads %q, want %q", strings.Join(got, "|"), want)
	}
}

// The page view lists the page's reviews with their status, each linking
// to its threads alone.
func TestPageListsItsReviews(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	s.write(t, "A.md")
	wim, _ := s.token(t, "wim", atrium.RoleWriter, "")
	rev := s.rev(t)
	var reviews []atrium.Review
	for i, who := range []string{wim, mustAdmin(t, s)} {
		ctx := s.as(t, who)
		for j := range 2 + i {
			if _, _, err := rev.Create(ctx, review.CreateRequest{DocPath: "A.md", Content: fmt.Sprintf("thread %d of review %d", j, i)}); err != nil {
				t.Fatal(err)
			}
		}
		res, err := rev.Submit(ctx, review.SubmitRequest{DocPath: "A.md", Summary: fmt.Sprintf("summary %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		reviews = append(reviews, res.Review)
	}
	if _, err := rev.Complete(s.as(t, wim), reviews[0].UID, nil); err != nil {
		t.Fatal(err)
	}
	_, _, page := s.send(t, "GET", "/pages/A.md", wim, nil, nil)
	list := between(page, `<ul class="review-list">`, `</ul>`)
	for i, want := range []string{`review-completed" id="review-` + reviews[0].UID, "summary 0", "2 threads", `review-submitted" id="review-` + reviews[1].UID, "summary 1", "3 threads"} {
		if !strings.Contains(list, want) {
			t.Errorf("the reviews list lacks %q (%d):\n%s", want, i, list)
		}
	}
	code, _, only := s.send(t, "GET", "/pages/A.md?review="+reviews[1].UID, wim, nil, nil)
	if code != 200 || strings.Contains(only, "of review 0") || strings.Count(only, "of review 1") != 3 || !strings.Contains(only, "Showing the 3 threads of ada's submitted review") {
		t.Fatalf("one review's threads: %d\n%s", code, between(only, `<div data-live="threads">`, `<script`))
	}
	if code, _, _ := s.send(t, "GET", "/pages/A.md?review=nope", wim, nil, nil); code != http.StatusNotFound {
		t.Fatalf("an unknown review: %d", code)
	}
}

// A page with more threads than one view shows says so and leads to the
// next ones; each thread is shown once.
func TestPageThreadsPaginate(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	s.write(t, "A.md")
	rev := s.rev(t)
	for i := range 203 {
		if _, _, err := rev.Create(s.admin, review.CreateRequest{DocPath: "A.md", Content: fmt.Sprintf("thread number %03d", i), Status: atrium.StatusSubmitted}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	target, views := "/pages/A.md", 0
	for target != "" {
		views++
		_, _, page := s.send(t, "GET", target, mustToken(t, s), nil, nil)
		for _, m := range regexp.MustCompile(`thread number (\d+)`).FindAllStringSubmatch(between(page, `<div data-live="threads">`, `<script`), -1) {
			seen[m[1]]++
		}
		target = ""
		if m := regexp.MustCompile(`<a href="([^"]+)" class="more-threads">`).FindStringSubmatch(page); m != nil {
			target = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if views != 2 || len(seen) != 203 {
		t.Fatalf("%d views showed %d of 203 threads", views, len(seen))
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("thread %s shown %d times", n, c)
		}
	}
}

// between is the part of s from the first from to the next to.
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j+len(to)]
	}
	return s
}

// "New page" asks for a path and opens the editor there; a taken path or
// one not allowed says why and keeps what was typed.
func TestNewPageAsksForAPath(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	s.write(t, "Notes/Taken.md")
	w := mustToken(t, s)
	reader, _ := s.token(t, "rita", atrium.RoleReader, "")
	if _, _, page := s.send(t, "GET", "/pages/Notes/Taken.md", w, nil, nil); !strings.Contains(page, `href="/new?folder=Notes"`) || !strings.Contains(page, `href="/new" class="new-page-link"`) {
		t.Fatal("a page offers no New page (in the header, and here in its folder)")
	}
	if _, _, page := s.send(t, "GET", "/pages/Notes/Taken.md", reader, nil, nil); strings.Contains(page, `/new`) {
		t.Fatal("a reader is offered New page")
	}
	if code, _, page := s.send(t, "GET", "/new?folder=Notes", w, nil, nil); code != 200 || !strings.Contains(page, `name="path" value="Notes/"`) {
		t.Fatalf("the form for Notes: %d", code)
	}
	for _, c := range []struct {
		path, location, code string
		status               int
	}{
		{"Notes/Idea", "/edit/Notes/Idea.md", "", http.StatusSeeOther},
		{"Notes/Odd & 'name'.MD", "/edit/Notes/Odd%20&%20%27name%27.MD", "", http.StatusSeeOther},
		{"Notes/Taken.md", "", "conflict", http.StatusConflict},
		{"Notes/a<b", "", "invalid_argument", http.StatusBadRequest},
		{"../x.md", "", "invalid_argument", http.StatusBadRequest},
	} {
		code, h, page := s.send(t, "GET", "/new?path="+url.QueryEscape(c.path), w, nil, nil)
		if code != c.status || h.Get("Location") != c.location || c.code != "" && !strings.Contains(page, `data-code="`+c.code+`"`) {
			t.Errorf("New page at %q: %d to %q, want %d to %q (%s)", c.path, code, h.Get("Location"), c.status, c.location, c.code)
		}
		if c.code != "" && !strings.Contains(page, `value="`+strings.ReplaceAll(c.path, "<", "&lt;")+`"`) {
			t.Errorf("New page at %q forgets the path typed", c.path)
		}
	}
	if _, _, page := s.send(t, "GET", "/new?path=Notes/Taken.md", w, nil, nil); !strings.Contains(page, `<a href="/edit/Notes/Taken.md">edit it</a>`) {
		t.Error("a taken path does not lead to editing that page")
	}
	if code, _, _ := s.send(t, "GET", "/new?path=Mine.md", reader, nil, nil); code != http.StatusForbidden {
		t.Errorf("a reader's New page: %d, want 403", code)
	}
}

// Home lists threads waiting for the person, and says how many it leaves
// out rather than stopping silently.
func TestHomeSaysWhatWaitingLeavesOut(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	s.write(t, "A.md")
	rev := s.rev(t)
	agent, _ := s.token(t, "claude", atrium.RoleWriter, "")
	for i := range 53 {
		root, _, err := rev.Create(s.admin, review.CreateRequest{DocPath: "A.md", Content: fmt.Sprintf("question %d", i), Status: atrium.StatusSubmitted})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := rev.Create(s.as(t, agent), review.CreateRequest{ParentID: root.UID, Content: "an answer"}); err != nil {
			t.Fatal(err)
		}
	}
	admin, _, err := s.ids.CreateToken(s.admin, identityReq("dede"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, home := s.send(t, "GET", "/", admin, nil, nil)
	waiting := between(home, `<ul class="waiting">`, `</ul>`)
	if n := strings.Count(waiting, "<li>"); n != 50 || !strings.Contains(home, "And 3 more threads waiting, not listed here.") {
		t.Fatalf("home lists %d waiting threads and says:\n%s", n, between(home, "<h2>Waiting for you</h2>", "</section>"))
	}
}

func identityReq(principal string) identity.TokenRequest {
	return identity.TokenRequest{Principal: principal, Workspace: atrium.DefaultWorkspace}
}

// Browsers send a form's line breaks as CRLF; a page saved or a comment
// made in the browser keeps the line breaks that were typed (LF), and a
// quote of several lines still finds its text.
func TestFormsKeepLineBreaksAsTyped(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	w := mustToken(t, s)
	if code, _, _ := s.send(t, "POST", "/pages/A.md", w, url.Values{"content": {"# A\r\n\r\nfirst line\r\nsecond line\r\n"}, "action": {"save"}}, nil); code != http.StatusSeeOther {
		t.Fatalf("save: %d", code)
	}
	read, err := s.docs.ReadPage(s.admin, pages.ReadRequest{Path: "A.md"})
	if err != nil || read.Page.Content != "# A\n\nfirst line\nsecond line\n" {
		t.Fatalf("saved from a form: %q, %v", read.Page.Content, err)
	}
	form := url.Values{"doc_path": {"A.md"}, "content": {"one\r\ntwo"}, "quote_exact": {"first line\r\nsecond line"}}
	if code, _, _ := s.send(t, "POST", "/threads", w, form, nil); code != http.StatusSeeOther {
		t.Fatalf("comment: %d", code)
	}
	list, err := s.rev(t).Threads(s.admin, review.ThreadsRequest{DocPath: "A.md"})
	if err != nil || len(list.Threads) != 1 {
		t.Fatalf("threads: %v %v", list, err)
	}
	if ann := list.Threads[0].Annotation; ann.Content != "one\ntwo" || ann.Quote == nil || ann.Quote.Exact != "first line\nsecond line" || ann.Orphaned {
		t.Fatalf("comment from a form: %q, quote %+v, orphaned %v", ann.Content, ann.Quote, ann.Orphaned)
	}
}

// Issue 23.9: counts read as a person writes them, one or many.
func TestPageCountsReadAsWritten(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	s.write(t, "A.md")
	wim, _ := s.token(t, "wim", atrium.RoleWriter, "")
	rev := s.rev(t)
	for n, want := range []string{1: "Your 1 draft comment is visible only to you", 2: "Your 2 draft comments are visible only to you"} {
		if n == 0 {
			continue
		}
		{
			if _, _, err := rev.Create(s.as(t, wim), review.CreateRequest{DocPath: "A.md", Content: fmt.Sprintf("thread %d", n)}); err != nil {
				t.Fatal(err)
			}
		}
		if page := s.get(t, wim); !strings.Contains(page, want) {
			t.Errorf("with %d drafts the page lacks %q:\n%s", n, want, between(page, `class="submit-review"`, `</form>`))
		}
	}
	if _, _, page := s.send(t, "GET", "/search?q=md", wim, nil, nil); !strings.Contains(page, "1 page matches") {
		t.Errorf("one search result: %s", between(page, `<main`, `</main>`))
	}
}

func (s *liveSite) get(t *testing.T, token string) string {
	t.Helper()
	_, _, page := s.send(t, "GET", "/pages/A.md", token, nil, nil)
	return page
}
