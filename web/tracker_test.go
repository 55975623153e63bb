package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/tasks"
	"github.com/atrium-hq/atrium/trackers/github"
	"github.com/atrium-hq/atrium/trackers/githubfake"
)

// /admin/tracker, against a GitHub fake on loopback: unlinked it offers the
// link form (and no field for a token); a bad repository is refused with
// the service's words and links nothing; a reader is refused as on every
// admin page; linked, it shows the link, its numbers, its dead letters
// (retried one by one) and its conflicts, which the task's page lists too.
func TestTrackerAdminPage(t *testing.T) {
	s := newSite(t)
	fake := githubfake.Start()
	defer fake.Close()
	fake.Token = "tok"
	const repo = "acme/app"
	ts := s.svc.Tasks
	for _, title := range []string{"Both sides", "Deleted on GitHub"} {
		if _, err := ts.Create(s.ctx, tasks.CreateRequest{Fields: tasks.Fields{Title: &title}}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(what string, code int, body string, status int, fragments ...string) {
		t.Helper()
		if code != status {
			t.Errorf("%s: status %d, want %d:\n%.2000s", what, code, status, body)
		}
		for _, f := range fragments {
			if !strings.Contains(body, f) {
				t.Errorf("%s: the page lacks %q:\n%.4000s", what, f, body)
			}
		}
	}
	linked := func() bool {
		t.Helper()
		_, err := ts.TrackerStatus(s.ctx)
		if err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
			t.Fatal(err)
		}
		return err == nil
	}

	code, body := s.get("/admin/tracker")
	want("unlinked", code, body, http.StatusOK, "Not linked", `action="/admin/tracker/link"`, `name="repo"`, "<code>GITHUB_TOKEN</code>")
	if strings.Contains(body, `name="token"`) || strings.Contains(body, "Sync now") {
		t.Errorf("unlinked, the page asks for a token or offers a sync:\n%s", body)
	}
	code, body = s.get("/tasks/1")
	want("a task, unlinked", code, body, http.StatusOK, "Both sides")
	if strings.Contains(body, "Conflicts with the tracker") {
		t.Errorf("an unlinked task lists conflicts:\n%s", body)
	}
	if code, body = s.get("/admin"); !strings.Contains(body, `href="/admin/tracker"`) {
		t.Errorf("/admin (%d) does not lead to /admin/tracker", code)
	}

	// Refused: a bad repository, a bad API URL, and any caller not admin.
	code, body = s.do("POST", "/admin/tracker/link", url.Values{"kind": {"github"}, "repo": {"nope"}}, nil, false)
	want("repo nope", code, body, http.StatusBadRequest, "a repository is OWNER/REPO, not &#34;nope&#34;", "Not linked", `value="nope"`)
	code, body = s.do("POST", "/admin/tracker/link", url.Values{"kind": {"github"}, "repo": {repo}, "api_url": {"ftp://x"}}, nil, false)
	want("api_url ftp", code, body, http.StatusBadRequest, "is an http(s) URL")
	code, body = s.do("POST", "/admin/tracker/link", url.Values{"kind": {"jira"}, "repo": {repo}}, nil, false)
	want("kind jira", code, body, http.StatusBadRequest, "a tracker is one of github")
	reader, _, err := s.ids.CreateToken(context.Background(), identity.TokenRequest{Principal: "rita", Workspace: atrium.DefaultWorkspace, Role: atrium.RoleReader})
	if err != nil {
		t.Fatal(err)
	}
	asReader := http.Header{"Authorization": {"Bearer " + reader}}
	for _, rq := range []struct{ method, path string }{
		{"GET", "/admin/tracker"}, {"POST", "/admin/tracker/link"}, {"POST", "/admin/tracker/sync"}, {"POST", "/admin/tracker/retry"}, {"POST", "/admin/tracker/dead/1/retry"},
	} {
		code, body := s.do(rq.method, rq.path, url.Values{"kind": {"github"}, "repo": {repo}}, asReader, true)
		want("a reader's "+rq.method+" "+rq.path, code, body, http.StatusForbidden, "Only the admins of workspace default can open its admin page: you are reader here.")
	}
	if linked() {
		t.Fatal("a refused form linked the workspace")
	}

	code, body = s.do("POST", "/admin/tracker/link", url.Values{"kind": {"github"}, "repo": {" " + repo + " "}, "api_url": {fake.URL}}, nil, false)
	want("link", code, body, http.StatusSeeOther)
	code, body = s.get("/admin/tracker")
	want("linked", code, body, http.StatusOK, "github <code>acme/app</code> at <code>"+fake.URL+"</code>", "never", "unknown: no call answered yet",
		"2 changes to push", `action="/admin/tracker/sync"`, "Link to another repository")

	// A refused move keeps the link, and the form open with what was sent.
	code, body = s.do("POST", "/admin/tracker/link", url.Values{"kind": {"github"}, "repo": {"acme/app/extra"}}, nil, false)
	want("a bad move", code, body, http.StatusBadRequest, "a repository is OWNER/REPO", `<details class="relink" open>`, `value="acme/app/extra"`, "github <code>acme/app</code>")

	// A conflict on task 1 (closed on GitHub, started here) and a dead
	// change on task 2 (its issue deleted on GitHub, then renamed here).
	st, err := ts.TrackerStatus(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := github.New(github.Config{Owner: "acme", Repo: "app", APIURL: fake.URL, Token: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	sync := func() tasks.SyncReport {
		t.Helper()
		rep, _ := ts.SyncTracker(context.Background(), st.Link.WorkspaceID, tr, tasks.SyncOptions{}) // a gone issue fails the sync, as it should
		return rep
	}
	sync()
	fake.Edit(repo, 1, func(i *githubfake.Issue) { i.State = "closed" })
	fake.DeleteIssue(repo, 2)
	if _, err := ts.Update(s.ctx, tasks.UpdateRequest{Number: 1, Fields: tasks.Fields{Status: ptr(atrium.TaskInProgress)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Update(s.ctx, tasks.UpdateRequest{Number: 2, Fields: tasks.Fields{Title: ptr("Renamed after the deletion")}}); err != nil {
		t.Fatal(err)
	}
	if rep := sync(); rep.Conflicts != 1 || rep.Dead != 1 {
		t.Fatalf("the sync made %+v, want 1 conflict and 1 dead change", rep)
	}

	code, body = s.get("/admin/tracker")
	want("with a dead letter and a conflict", code, body, http.StatusOK, "1 change given up on", "1 issue deleted or moved on the tracker",
		`<a href="/tasks/2">#2</a>`, "is gone from the tracker", `action="/admin/tracker/retry"`, "Retry all",
		`<td><a href="/tasks/1">#1</a></td><td>state</td><td><code>open (in_progress)</code></td><td><code>closed</code></td>`)
	if strings.Contains(body, "unknown: no call answered yet") || !strings.Contains(body, " of 5000 left, resets ") {
		t.Errorf("the rate budget is not shown after a sync:\n%s", body)
	}
	m := regexp.MustCompile(`action="(/admin/tracker/dead/\d+/retry)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no Retry button on the dead letter:\n%s", body)
	}
	code, body = s.get("/tasks/1")
	want("task 1", code, body, http.StatusOK, "Conflicts with the tracker", "<td>state</td><td><code>open (in_progress)</code></td><td><code>closed</code></td>")
	if _, body = s.get("/tasks/2"); strings.Contains(body, "Conflicts with the tracker") {
		t.Errorf("task 2 lists task 1's conflict:\n%s", body)
	}

	code, loc := s.post(m[1])
	if code != http.StatusSeeOther || loc != "/admin/tracker?retried=1" {
		t.Errorf("retry one: %d to %q, want 303 to ?retried=1", code, loc)
	}
	if st, err := ts.TrackerStatus(s.ctx); err != nil || st.Dead != 0 || len(st.DeadLetters) != 0 {
		t.Errorf("after the retry: %d dead, %v; want none", st.Dead, err)
	}
	_, body = s.get("/admin/tracker?retried=1")
	want("after the retry", http.StatusOK, body, http.StatusOK, "1 change queued again", "0 changes given up on")
	if code, loc = s.post("/admin/tracker/retry"); code != http.StatusSeeOther || loc != "/admin/tracker?retried=0" {
		t.Errorf("retry all with none dead: %d to %q", code, loc)
	}
	if code, loc = s.post("/admin/tracker/sync"); code != http.StatusSeeOther || loc != "/admin/tracker?synced=1" {
		t.Errorf("sync now: %d to %q", code, loc)
	}
	code, body = s.do("POST", "/admin/tracker/dead/x/retry", url.Values{}, nil, false)
	want("retry of a bad ID", code, body, http.StatusBadRequest, "dead change ID &#34;x&#34;")

	// A conflict, once settled, is dismissed: gone from the page and the
	// task's, the event log saying who.
	_, body = s.get("/admin/tracker")
	d := regexp.MustCompile(`action="(/admin/tracker/conflicts/\d+/dismiss)"`).FindStringSubmatch(body)
	if d == nil {
		t.Fatalf("no Dismiss button on the conflict:\n%s", body)
	}
	if code, loc = s.post(d[1]); code != http.StatusSeeOther || loc != "/admin/tracker" {
		t.Errorf("dismiss: %d to %q", code, loc)
	}
	if st, err := ts.TrackerStatus(s.ctx); err != nil || len(st.Conflicts) != 0 {
		t.Errorf("after dismissing: %+v, %v; want no conflict", st.Conflicts, err)
	}
	if _, body = s.get("/tasks/1"); strings.Contains(body, "Conflicts with the tracker") {
		t.Errorf("task 1 still lists the dismissed conflict")
	}
	code, body = s.do("POST", "/admin/tracker/conflicts/x/dismiss", url.Values{}, nil, false)
	want("dismissal of a bad ID", code, body, http.StatusBadRequest, "conflict ID &#34;x&#34;")
}

// post posts an empty form as the admin and says where it led.
func (s *site) post(target string) (int, string) {
	code, h, _ := s.full("POST", target, nil, false)
	return code, h.Get("Location")
}
