package e2e

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/trackers/githubfake"
)

// trackerEnv is the CLI's environment for the tracker tests: the fake's
// token, and proxies that lead nowhere, so a call that is not to loopback
// (which Go never proxies) would fail the sync instead of reaching out.
func trackerEnv() []string {
	return []string{"GITHUB_TOKEN=tok", "ATRIUM_AGENT=dede", "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=", "no_proxy="}
}

func trackerCLI(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, errOut, code := runAtrium(t, trackerEnv(), append([]string{"--data-dir", dir}, args...)...)
	if code != 0 {
		t.Fatalf("atrium %v: exit %d\n%s%s", args, code, out, errOut)
	}
	return out
}

type syncReport struct {
	IssuesCreated, CommentsPushed, Recovered, Pushed, Pending, CommentsPulled, TasksCreated, Conflicts, Calls, NotModified, RateRemaining, Dead int
}

func trackerSync(t *testing.T, dir string) syncReport {
	t.Helper()
	out, errOut, code := runAtrium(t, trackerEnv(), "--data-dir", dir, "tracker", "sync", "--json")
	if code != 0 && !strings.Contains(errOut, "gone from the tracker") && !strings.Contains(errOut, "Validation Failed") {
		t.Fatalf("tracker sync: exit %d\n%s%s", code, out, errOut)
	}
	var r struct {
		IssuesCreated  int `json:"issues_created"`
		CommentsPushed int `json:"comments_pushed"`
		Recovered      int `json:"recovered"`
		Pushed         int `json:"pushed"`
		Pending        int `json:"pending"`
		CommentsPulled int `json:"comments_pulled"`
		TasksCreated   int `json:"tasks_created"`
		Conflicts      int `json:"conflicts"`
		Calls          int `json:"calls"`
		NotModified    int `json:"not_modified"`
		RateRemaining  int `json:"rate_remaining"`
		Dead           int `json:"dead"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("sync report %q: %v", out, err)
	}
	return syncReport(r)
}

// TestTrackerMirrorsTasksToGitHub: 002's flow mirrored comment by comment,
// a sync killed (SIGKILL) between GitHub's create and the outbox's record,
// ten rounds, leaves no duplicate and no gap; a comment made on GitHub
// comes in once; an unchanged repository costs no budget; an issue filed on
// GitHub becomes a task.
func TestTrackerMirrorsTasksToGitHub(t *testing.T) {
	fake := githubfake.Start()
	defer fake.Close()
	fake.Token, fake.MaxPerPage = "tok", 2 // pages of 2: the Link header is followed
	dir := t.TempDir()
	const repo = "acme/app"

	trackerCLI(t, dir, "call", "task_create", "title=Add user authentication", "body=OAuth login for the web app")
	trackerCLI(t, dir, "tracker", "link", "github", repo, "--api-url", fake.URL)
	trackerCLI(t, dir, "call", "task_update_status", "issue_number=1", "status=reading the spec")
	trackerCLI(t, dir, "call", "task_ask_question", "issue_number=1", "target=dede", "question=Which provider?")
	trackerCLI(t, dir, "call", "task_post_comment", "issue_number=1", "comment=Draft plan is up")
	trackerCLI(t, dir, "call", "task_create", "title=Second task")
	for k := range 6 {
		trackerCLI(t, dir, "call", "task_post_comment", "issue_number=2", fmt.Sprintf("comment=step %d", k))
	}

	// Ten syncs, each killed with SIGKILL right after GitHub made
	// something and before it answered: the outbox never learns of it.
	for round := range 10 {
		cmd := exec.Command(binary, "--data-dir", dir, "tracker", "sync")
		cmd.Env = append(cleanEnv(), trackerEnv()...)
		var outb syncBuffer
		cmd.Stdout, cmd.Stderr = &outb, &outb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		dead := make(chan struct{})
		go func() { cmd.Wait(); close(dead) }()
		var killed bool
		fake.OnCreate(func(kind string, n int) {
			if !killed {
				killed = true
				cmd.Process.Kill()
				<-dead // dead before GitHub answers
			}
		})
		select {
		case <-dead:
		case <-time.After(30 * time.Second):
			t.Fatal("sync did not end")
		}
		fake.OnCreate(nil)
		if !killed {
			t.Fatalf("round %d: the sync made nothing to be killed after:\n%s", round, outb.String())
		}
	}
	r := trackerSync(t, dir)
	if r.Recovered == 0 || r.Pending != 0 {
		t.Errorf("after the crashes: %+v, want something recovered and nothing pending", r)
	}
	issues := fake.Issues(repo)
	if len(issues) != 2 {
		t.Fatalf("%d issues on GitHub, want 2 (one per task): %+v", len(issues), issues)
	}
	if !strings.Contains(issues[0].Body, "<!-- atrium:task:") || issues[0].Title != "Add user authentication" {
		t.Errorf("issue 1: %+v", issues[0])
	}
	var steps []string
	for _, c := range fake.Comments(repo, 2) {
		steps = append(steps, regexp.MustCompile(`step \d`).FindString(c.Body))
	}
	if want := []string{"step 0", "step 1", "step 2", "step 3", "step 4", "step 5"}; !slices.Equal(steps, want) {
		t.Errorf("issue 2's comments after the crashes: %q, want %q: each once, in order", steps, want)
	}
	cs := fake.Comments(repo, 1)
	want := []string{"📍 Status: reading the spec", "❓ @dede Question: Which provider?", "Draft plan is up"}
	if len(cs) != len(want) {
		t.Fatalf("%d comments on issue 1, want %d:\n%+v", len(cs), len(want), cs)
	}
	for i, c := range cs {
		if !strings.Contains(c.Body, want[i]) || !strings.Contains(c.Body, "<!-- atrium:comment:") || !strings.Contains(c.Body, "**@dede**") {
			t.Errorf("comment %d: %q, want it to say %q with its author and marker", i, c.Body, want[i])
		}
	}

	// A comment and a new issue made on GitHub come in, once.
	fake.AddComment(repo, 1, "octocat", "❓ Does it need SSO?")
	fake.FileIssue(repo, "octocat", "Filed on GitHub", "please")
	r = trackerSync(t, dir)
	if r.CommentsPulled != 1 || r.TasksCreated != 1 {
		t.Errorf("pull: %+v, want 1 comment and 1 task", r)
	}
	trackerSync(t, dir)
	out := trackerCLI(t, dir, "call", "task_get_comments", "issue_number=1")
	if n := strings.Count(out, "Does it need SSO?"); n != 1 || !strings.Contains(out, "gh-octocat") {
		t.Errorf("the GitHub comment is in Atrium %d times (want once, by gh-octocat):\n%s", n, out)
	}
	if got := fake.Comments(repo, 1); len(got) != 4 {
		t.Errorf("%d comments on GitHub after the pull, want 4 (the pulled one not pushed back)", len(got))
	}
	if out := trackerCLI(t, dir, "call", "task_get_context", "issue_number=3"); !strings.Contains(out, "Filed on GitHub") {
		t.Errorf("the issue filed on GitHub is not task #3:\n%s", out)
	}
	if is := fake.Issues(repo); len(is) != 3 || !strings.Contains(is[2].Body, "<!-- atrium:task:") {
		t.Errorf("the adopted issue did not get its marker: %+v", is)
	}

	// Unchanged on both sides: the poll costs nothing.
	trackerSync(t, dir)
	used := fake.Used()
	r = trackerSync(t, dir)
	if fake.Used() != used || r.NotModified == 0 {
		t.Errorf("an unchanged sync cost %d of the budget (report %+v), want 0", fake.Used()-used, r)
	}
	st := trackerCLI(t, dir, "tracker", "status")
	for _, w := range []string{"github acme/app", "3 issues", "pending:   0", "left"} {
		if !strings.Contains(st, w) {
			t.Errorf("status lacks %q:\n%s", w, st)
		}
	}
}

// TestTrackerConflictIsListed: a status changed on both sides since they
// agreed is listed in the status, and Atrium's value stays.
func TestTrackerConflictIsListed(t *testing.T) {
	fake := githubfake.Start()
	defer fake.Close()
	fake.Token = "tok"
	dir := t.TempDir()
	const repo = "acme/app"
	trackerCLI(t, dir, "tracker", "link", "github", repo, "--api-url", fake.URL)
	trackerCLI(t, dir, "call", "task_create", "title=Both sides")
	trackerSync(t, dir)
	fake.Edit(repo, 1, func(i *githubfake.Issue) { i.State = "closed" })
	trackerCLI(t, dir, "call", "task_update", "issue_number=1", "status=in_progress")
	r := trackerSync(t, dir)
	if r.Conflicts != 1 {
		t.Errorf("report %+v, want 1 conflict", r)
	}
	st := trackerCLI(t, dir, "tracker", "status")
	if !strings.Contains(st, "conflicts: 1") || !strings.Contains(st, "#1 state") {
		t.Errorf("status does not list the conflict:\n%s", st)
	}
	if is := fake.Issues(repo); is[0].State != "open" {
		t.Errorf("Atrium's status was not kept on GitHub: %+v", is[0])
	}
	// Settled: dismissed, by an admin.
	if out := trackerCLI(t, dir, "tracker", "dismiss"); !strings.Contains(out, "dismissed 1 conflicts") {
		t.Errorf("dismiss: %s", out)
	}
	if st := trackerCLI(t, dir, "tracker", "status"); !strings.Contains(st, "conflicts: 0") {
		t.Errorf("status after dismissing:\n%s", st)
	}
	if _, errOut, code := runAtrium(t, trackerEnv(), "--data-dir", dir, "tracker", "dismiss", "nope"); code == 0 || !strings.Contains(errOut, "a conflict's ID") {
		t.Errorf("dismiss nope: exit %d %s", code, errOut)
	}
	// An issue changed only on GitHub flows in.
	fake.Edit(repo, 1, func(i *githubfake.Issue) { i.State = "closed" })
	trackerSync(t, dir)
	if out := trackerCLI(t, dir, "call", "task_get_context", "issue_number=1"); !strings.Contains(out, `"done"`) {
		t.Errorf("closed on GitHub, the task is not done:\n%s", out)
	}
}

// Webhooks: a change made on GitHub is delivered signed to /hooks/github and
// wakes the mirror at once (the poll is an hour away here); a delivery with
// a wrong signature is refused and changes nothing; GitHub redelivering the
// same delivery wakes nothing twice.
func TestTrackerWebhooks(t *testing.T) {
	fake := githubfake.Start()
	defer fake.Close()
	fake.Token = "tok"
	const repo = "acme/hooks"
	srv := startServeEnv(t, append(trackerEnv(), "ATRIUM_GITHUB_WEBHOOK_SECRET=s3cret", "ATRIUM_TRACKER_INTERVAL=1h"), "")
	if out, errOut, code := srv.cli(t, trackerEnv(), "tracker", "link", "github", repo, "--api-url", fake.URL); code != 0 {
		t.Fatalf("link: %s%s", out, errOut)
	}
	fake.Hook(srv.URL+"/hooks/github", "s3cret")
	tasksNow := func() string {
		out, errOut, code := srv.cli(t, trackerEnv(), "call", "task_list")
		if code != 0 {
			t.Fatalf("task_list: %s", errOut)
		}
		return out
	}
	fake.FileIssue(repo, "octo", "Filed on GitHub", "Found on the site")
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(tasksNow(), "Filed on GitHub"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook did not bring the issue in\n%s", srv.stderr)
		}
	}
	if code, err := fake.Redeliver(); err != nil || code != http.StatusOK {
		t.Errorf("a redelivery: %d %v (want 200, a duplicate)", code, err)
	}
	// A forged delivery: refused, and it wakes nothing.
	fake.Hook(srv.URL+"/hooks/github", "not-the-secret")
	if code, err := fake.Redeliver(); err != nil || code != http.StatusUnauthorized {
		t.Errorf("a delivery signed with another secret: %d %v", code, err)
	}
	res, err := http.Post(srv.URL+"/hooks/github", "application/json", strings.NewReader(`{"repository":{"full_name":"acme/hooks"}}`))
	if err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unsigned delivery: %v %v", res, err)
	}

	// A change made in Atrium by another process reaches GitHub at once,
	// with the poll an hour away and no webhook to wake it.
	fake.Hook(srv.URL+"/hooks/github", "s3cret")
	if _, errOut, code := srv.cli(t, trackerEnv(), "call", "task_post_comment", "issue_number=1", "comment=seen from Atrium"); code != 0 {
		t.Fatalf("comment: %s", errOut)
	}
	var theirs int64
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		cs := fake.Comments(repo, 1)
		if len(cs) > 0 && strings.Contains(cs[len(cs)-1].Body, "seen from Atrium") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a comment made in Atrium did not reach GitHub: %+v\n%s", cs, srv.stderr)
		}
	}
	// A comment written on GitHub, then deleted there: the delivery names
	// its issue, whose comments are read whole, and the copy is marked.
	theirs = fake.AddComment(repo, 1, "octo", "a comment soon deleted")
	comments := func() string {
		out, errOut, code := srv.cli(t, trackerEnv(), "call", "task_get_comments", "issue_number=1")
		if code != 0 {
			t.Fatalf("task_get_comments: %s", errOut)
		}
		return out
	}
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(comments(), "a comment soon deleted"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the GitHub comment did not come in\n%s", srv.stderr)
		}
	}
	fake.DeleteComment(repo, theirs)
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(comments(), "deleted_at"); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the comment deleted on GitHub is not marked deleted:\n%s\n%s", comments(), srv.stderr)
		}
	}
}

// TestTrackerFieldsEditsAndDeadLetters: assignees and bodies flow both ways
// (an assignee with no GitHub account shows as a label); a comment written
// on GitHub and edited or deleted there is marked so in Atrium, its text
// kept in the event log; an edit there of Atrium's own comment is listed as
// a conflict; a comment GitHub refuses is dead, listed, and holds back no
// other task; an issue deleted on GitHub leaves its task's changes dead
// until `tracker retry` makes it a new issue; a failing GitHub (5xx) makes
// a change wait, counted, not dead.
func TestTrackerFieldsEditsAndDeadLetters(t *testing.T) {
	fake := githubfake.Start()
	defer fake.Close()
	fake.Token = "tok"
	dir := t.TempDir()
	const repo = "acme/app"
	trackerCLI(t, dir, "tracker", "link", "github", repo, "--api-url", fake.URL)
	trackerCLI(t, dir, "call", "task_create", "title=Assigned in Atrium", "body=first body", "assignee=dede")
	trackerCLI(t, dir, "call", "task_create", "title=Edited on GitHub", "body=before")
	trackerSync(t, dir)
	is := fake.Issues(repo)
	if len(is) != 2 || !slices.Contains(is[0].Labels, "assignee:dede") || len(is[0].Assignees) != 0 {
		t.Fatalf("issue 1 does not show its Atrium assignee as a label: %+v", is)
	}

	// Changed on GitHub only: the assignee and the body flow in.
	fake.Edit(repo, 1, func(i *githubfake.Issue) {
		i.Assignees = []string{"octocat"}
		i.Labels = slices.DeleteFunc(i.Labels, func(l string) bool { return l == "assignee:dede" })
	})
	fake.Edit(repo, 2, func(i *githubfake.Issue) { i.Body = strings.Replace(i.Body, "before", "after, from GitHub", 1) })
	trackerSync(t, dir)
	if out := trackerCLI(t, dir, "call", "task_get_context", "issue_number=1"); !strings.Contains(out, `"assignee": "gh-octocat"`) {
		t.Errorf("assigned to octocat on GitHub, task 1 is not gh-octocat's:\n%s", out)
	}
	if out := trackerCLI(t, dir, "call", "task_get_context", "issue_number=2"); !strings.Contains(out, "after, from GitHub") || strings.Contains(out, "atrium:task") {
		t.Errorf("task 2's body is not GitHub's (without the marker):\n%s", out)
	}
	// Assigned in Atrium to a GitHub user: assigned there too.
	trackerCLI(t, dir, "call", "task_update", "issue_number=2", "assignee=gh-octocat")
	trackerSync(t, dir)
	if is := fake.Issues(repo); !slices.Equal(is[1].Assignees, []string{"octocat"}) {
		t.Errorf("issue 2's assignees %v, want [octocat]", is[1].Assignees)
	}

	// Comments edited and deleted on GitHub.
	theirs := fake.AddComment(repo, 1, "octocat", "first words")
	trackerCLI(t, dir, "call", "task_post_comment", "issue_number=1", "comment=Atrium's own words")
	trackerSync(t, dir)
	fake.EditComment(repo, theirs, "second words")
	var ours int64
	for _, c := range fake.Comments(repo, 1) {
		if strings.Contains(c.Body, "Atrium's own words") {
			ours = c.ID
		}
	}
	fake.EditComment(repo, ours, "rewritten on GitHub")
	r := trackerSync(t, dir)
	out := trackerCLI(t, dir, "call", "task_get_comments", "issue_number=1")
	if !strings.Contains(out, "second words") || strings.Contains(out, "first words") || !strings.Contains(out, "edited_at") {
		t.Errorf("the comment edited on GitHub is not edited in Atrium:\n%s", out)
	}
	if !strings.Contains(out, "Atrium's own words") || r.Conflicts != 1 {
		t.Errorf("Atrium's comment edited on GitHub: report %+v, want 1 conflict and Atrium's text kept:\n%s", r, out)
	}
	fake.DeleteComment(repo, theirs)
	fake.Edit(repo, 1, func(i *githubfake.Issue) { i.Labels = append(i.Labels, "bug") }) // someone touches the issue
	trackerSync(t, dir)
	if out := trackerCLI(t, dir, "call", "task_get_comments", "issue_number=1"); !strings.Contains(out, "deleted_at") || !strings.Contains(out, "second words") {
		t.Errorf("the comment deleted on GitHub is not marked deleted (with its text kept):\n%s", out)
	}
	if out := trackerCLI(t, dir, "call", "task_get_context", "issue_number=1"); !strings.Contains(out, `"bug"`) {
		t.Errorf("the label added on GitHub did not flow in:\n%s", out)
	}
	events := eventLog(t, dir)
	for _, k := range []string{"task.comment_edited", "task.comment_deleted", `first words`} {
		if !strings.Contains(events, k) {
			t.Errorf("the event log lacks %q", k)
		}
	}

	// A comment GitHub refuses (too long there) is dead; the other task's
	// later comment goes on.
	trackerCLI(t, dir, "call", "task_post_comment", "issue_number=1", "comment="+strings.Repeat("x", 65500))
	trackerCLI(t, dir, "call", "task_post_comment", "issue_number=2", "comment=after the long one")
	r = trackerSync(t, dir)
	if r.Pending != 0 || r.Dead != 1 {
		t.Errorf("report %+v, want 1 dead and nothing pending", r)
	}
	if cs := fake.Comments(repo, 2); len(cs) == 0 || !strings.Contains(cs[len(cs)-1].Body, "after the long one") {
		t.Errorf("task 2's comment waited behind task 1's dead one: %+v", cs)
	}
	st := trackerCLI(t, dir, "tracker", "status")
	if !strings.Contains(st, "dead:      1") || !strings.Contains(st, "#1 task.commented") {
		t.Errorf("status does not list the dead change:\n%s", st)
	}

	// Issue 2 deleted on GitHub: its task's next change is dead, the issue
	// gone; retry makes it a new issue.
	fake.DeleteIssue(repo, 2)
	trackerCLI(t, dir, "call", "task_update", "issue_number=2", "title=Renamed after the deletion")
	r = trackerSync(t, dir)
	if r.Dead != 1 || len(fake.Issues(repo)) != 2 {
		t.Errorf("after the deletion: %+v, %d issues, want 1 dead and no new issue", r, len(fake.Issues(repo)))
	}
	st = trackerCLI(t, dir, "tracker", "status")
	if !strings.Contains(st, "gone:      1") || !strings.Contains(st, "is gone from the tracker") {
		t.Errorf("status does not say issue 2 is gone:\n%s", st)
	}
	if out := trackerCLI(t, dir, "tracker", "retry"); !strings.Contains(out, "queued 2 changes") {
		t.Errorf("retry: %s", out)
	}
	trackerSync(t, dir)
	is = fake.Issues(repo)
	if len(is) != 3 || is[2].Title != "Renamed after the deletion" {
		t.Errorf("after retry, want a new issue 3 for task 2: %+v", is)
	}

	// GitHub failing: the change waits, counted; nothing is dead.
	fake.FailWrites(100, http.StatusBadGateway)
	trackerCLI(t, dir, "call", "task_post_comment", "issue_number=1", "comment=while GitHub fails")
	out, _, code := runAtrium(t, trackerEnv(), "--data-dir", dir, "tracker", "sync")
	st = trackerCLI(t, dir, "tracker", "status")
	if code == 0 || !strings.Contains(st, "(1 waiting out a failure)") || !strings.Contains(st, "502") {
		t.Errorf("a failing GitHub: exit %d\n%s\nstatus:\n%s", code, out, st)
	}
}

// eventLog is the store's event log in dir, one event (kind and payload) a
// line.
func eventLog(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "atrium.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	err = db.View(ctx, func(tx *store.Tx) error {
		evs, err := tx.EventsAfter(ctx, 0, 0, 10000)
		for _, e := range evs {
			fmt.Fprintf(&b, "%s %s\n", e.Kind, e.Payload)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestTrackerAgentsPostAsTheirOwnApps: the link is a GitHub App (no
// GITHUB_TOKEN), dede has its own App and baron has none. dede's question
// is posted by dede's App's bot, 002's typed text without the attribution
// line; baron's comment by the link's App's bot, naming baron. A key file
// that is missing or garbled stops the sync with an error naming its
// variable, and no output ever shows a key.
func TestTrackerAgentsPostAsTheirOwnApps(t *testing.T) {
	fake := githubfake.Start()
	defer fake.Close()
	fake.Token = "not-for-apps"    // only the Apps' installation tokens get in
	fake.TokenTTL(2 * time.Second) // tokens expire between the runs
	keys := t.TempDir()
	writeKey := func(name string) (string, *rsa.PrivateKey, string) {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
		p := filepath.Join(keys, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p, k, strings.Split(string(b), "\n")[3] // a line of the key's body
	}
	linkPath, linkKey, linkLine := writeKey("link.pem")
	dedePath, dedeKey, dedeLine := writeKey("dede.pem")
	fake.AddApp(101, "atrium-acme", &linkKey.PublicKey) // its installation is looked up
	dedeInst := fake.AddApp(202, "dede-app", &dedeKey.PublicKey)
	proxies := []string{"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=", "no_proxy="}
	apps := append([]string{
		"ATRIUM_GITHUB_APP_ID=101", "ATRIUM_GITHUB_APP_PRIVATE_KEY_PATH=" + linkPath,
		"ATRIUM_AGENT_DEDE_GITHUB_APP_ID=202", "ATRIUM_AGENT_DEDE_GITHUB_APP_PRIVATE_KEY_PATH=" + dedePath,
		fmt.Sprintf("ATRIUM_AGENT_DEDE_GITHUB_APP_INSTALLATION_ID=%d", dedeInst),
	}, proxies...)
	as := func(agent string, env []string) []string { return append([]string{"ATRIUM_AGENT=" + agent}, env...) }
	var outputs strings.Builder
	data := t.TempDir()
	run := func(env []string, args ...string) (string, int) {
		t.Helper()
		out, errOut, code := runAtrium(t, env, append([]string{"--data-dir", data}, args...)...)
		outputs.WriteString(out + errOut)
		return out + errOut, code
	}
	must := func(env []string, args ...string) string {
		t.Helper()
		out, code := run(env, args...)
		if code != 0 {
			t.Fatalf("atrium %v: exit %d\n%s", args, code, out)
		}
		return out
	}
	const repo = "acme/apps"
	must(as("dede", apps), "tracker", "link", "github", repo, "--api-url", fake.URL)
	must(as("dede", apps), "call", "task_create", "title=Auth service")
	must(as("baron", apps), "call", "task_post_comment", "issue_number=1", "comment=Spec is in .plans/1/specs")
	must(as("dede", apps), "call", "task_ask_question", "issue_number=1", "target=baron", "question=REST or GraphQL?")
	must(as("baron", apps), "call", "task_post_comment", "issue_number=1", "comment=GraphQL, like the BFF")
	sync := func() (r struct {
		Pushed int `json:"comments_pushed"`
		Pulled int `json:"comments_pulled"`
	}) {
		t.Helper()
		out := must(as("dede", apps), "tracker", "sync", "--json")
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("sync report %q: %v", out, err)
		}
		return r
	}
	if r := sync(); r.Pushed != 3 {
		t.Fatalf("sync pushed %d comments, want 3", r.Pushed)
	}
	if is := fake.Issues(repo); len(is) != 1 || is[0].Login != "atrium-acme[bot]" {
		t.Fatalf("issues: %+v, want one made by the link's App", is)
	}
	cs := fake.Comments(repo, 1)
	if len(cs) != 3 {
		t.Fatalf("%d comments, want 3: %+v", len(cs), cs)
	}
	q := cs[1]
	if q.Login != "dede-app[bot]" || strings.Contains(q.Body, "**@dede**") || !strings.HasPrefix(q.Body, "❓ @baron Question: REST or GraphQL?") || !strings.Contains(q.Body, "<!-- atrium:comment:") {
		t.Errorf("dede's question, by %s:\n%s\nwant it by dede-app[bot], typed, unattributed, with its marker", q.Login, q.Body)
	}
	for _, c := range []githubfake.Comment{cs[0], cs[2]} {
		if c.Login != "atrium-acme[bot]" || !strings.HasPrefix(c.Body, "**@baron** (") || !strings.Contains(c.Body, "<!-- atrium:comment:") {
			t.Errorf("baron's comment, by %s:\n%s\nwant it by the link's App, naming baron, with its marker", c.Login, c.Body)
		}
	}
	// Past the tokens' life, the next sync mints new ones and pushes on;
	// what it pulls back is its own, and nothing comes in twice.
	mints := fake.Mints()
	time.Sleep(2100 * time.Millisecond)
	must(as("dede", apps), "call", "task_update_status", "issue_number=1", "status=writing the plan")
	if r := sync(); r.Pushed != 1 || r.Pulled != 0 {
		t.Errorf("second sync: %+v, want 1 comment pushed and none pulled", r)
	}
	if fake.Mints() <= mints {
		t.Errorf("no token minted after they expired (%d)", fake.Mints())
	}
	if cs := fake.Comments(repo, 1); len(cs) != 4 || cs[3].Login != "dede-app[bot]" || !strings.HasPrefix(cs[3].Body, "📍 Status: writing the plan") {
		t.Errorf("after the second sync: %+v", cs)
	}

	// A key that is not there, or not a key: the sync stops, naming the
	// variable and the path.
	garbled := filepath.Join(keys, "garbled.pem")
	os.WriteFile(garbled, []byte("-----BEGIN RSA PRIVATE KEY-----\n"+dedeLine+"\n-----END RSA PRIVATE KEY-----\n"), 0o600)
	for _, bad := range []string{filepath.Join(keys, "missing.pem"), garbled} {
		env := as("dede", append([]string{"ATRIUM_GITHUB_APP_ID=101", "ATRIUM_GITHUB_APP_PRIVATE_KEY_PATH=" + linkPath,
			"ATRIUM_AGENT_DEDE_GITHUB_APP_ID=202", "ATRIUM_AGENT_DEDE_GITHUB_APP_PRIVATE_KEY_PATH=" + bad}, proxies...))
		out, code := run(env, "tracker", "sync")
		if code == 0 || !strings.Contains(out, "ATRIUM_AGENT_DEDE_GITHUB_APP_PRIVATE_KEY_PATH") || !strings.Contains(out, filepath.Base(bad)) {
			t.Errorf("sync with the key %s: exit %d\n%s\nwant a failure naming the variable and the path", bad, code, out)
		}
	}
	for _, line := range []string{linkLine, dedeLine} {
		if strings.Contains(outputs.String(), line) {
			t.Errorf("a key's content is in Atrium's output:\n%s", outputs.String())
		}
	}
}

// TestTrackerTwoReplicasOnPostgres: two servers on one PostgreSQL database,
// both running the mirror, while several processes write tasks and
// comments and one replica is killed with kill -9 and started again: every
// task has one issue and every comment one twin on GitHub, nothing twice
// and nothing missing. A second workspace, linked to another repository,
// never sees the first's tasks, nor it the second's.
func TestTrackerTwoReplicasOnPostgres(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	fake := githubfake.Start()
	defer fake.Close()
	fake.Token = "tok"
	fake.SetLatency(20 * time.Millisecond) // calls overlap writes, as GitHub's would
	env := append(trackerEnv(), "ATRIUM_TRACKER_INTERVAL=1s")
	r1 := startServeEnv(t, env, dsn)
	r2 := startServeEnv(t, env, dsn)
	cli := func(srv *server, extra []string, args ...string) string {
		t.Helper()
		out, errOut, code := srv.cli(t, append(trackerEnv(), extra...), args...)
		if code != 0 {
			t.Fatalf("atrium %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	cli(r1, nil, "tracker", "link", "github", "acme/app", "--api-url", fake.URL)
	cli(r1, nil, "workspace", "create", "ops")
	ops := []string{"ATRIUM_WORKSPACE=ops"}
	cli(r1, ops, "tracker", "link", "github", "acme/ops", "--api-url", fake.URL)
	cli(r2, ops, "call", "task_create", "title=An ops task")

	const writers, each = 3, 3
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			srv := []*server{r1, r2}[w%2]
			for k := range each {
				out := cli(srv, []string{fmt.Sprintf("ATRIUM_AGENT=writer%d", w)}, "call", "task_create", fmt.Sprintf("title=Task %d.%d", w, k))
				n := regexp.MustCompile(`"number": (\d+)`).FindStringSubmatch(out)
				if n == nil {
					t.Errorf("task_create said %s", out)
					return
				}
				for c := range 2 {
					cli(srv, []string{fmt.Sprintf("ATRIUM_AGENT=writer%d", w)}, "call", "task_post_comment", "issue_number="+n[1], fmt.Sprintf("comment=comment %d of %d.%d", c, w, k))
				}
			}
		})
	}
	time.Sleep(time.Second)
	r2.kill(t) // mid-run: its claim, if it held one, dies with it
	wg.Wait()
	r2.restart(t)

	const tasks, comments = writers * each, writers * each * 2
	var is []githubfake.Issue
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		is = fake.Issues("acme/app")
		n := 0
		for _, i := range is {
			n += len(fake.Comments("acme/app", i.Number))
		}
		if len(is) >= tasks && n >= comments {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a minute GitHub has %d issues and %d comments, want %d and %d\nr1:\n%s\nr2:\n%s", len(is), n, tasks, comments, r1.stderr, r2.stderr)
		}
	}
	time.Sleep(2 * time.Second) // both replicas sync a few more times: nothing more may come
	is = fake.Issues("acme/app")
	seen := map[string]int{}
	for _, i := range is {
		for _, m := range regexp.MustCompile(`atrium:task:\d+`).FindAllString(i.Body, -1) {
			seen[m]++
		}
		for _, c := range fake.Comments("acme/app", i.Number) {
			for _, m := range regexp.MustCompile(`atrium:comment:\d+`).FindAllString(c.Body, -1) {
				seen[m]++
			}
		}
		if strings.Contains(i.Title, "ops") {
			t.Errorf("the ops workspace's task is in acme/app: %+v", i)
		}
	}
	tasksSeen, commentsSeen := 0, 0
	for m, n := range seen {
		if n != 1 {
			t.Errorf("%s is on GitHub %d times", m, n)
		}
		if strings.HasPrefix(m, "atrium:task:") {
			tasksSeen++
		} else {
			commentsSeen++
		}
	}
	if len(is) != tasks || tasksSeen != tasks || commentsSeen != comments {
		t.Errorf("GitHub has %d issues (%d marked) and %d comments, want %d and %d", len(is), tasksSeen, commentsSeen, tasks, comments)
	}
	if o := fake.Issues("acme/ops"); len(o) != 1 || o[0].Title != "An ops task" {
		t.Errorf("acme/ops has %+v, want the ops task alone", o)
	}
	st := cli(r1, nil, "tracker", "status")
	if !strings.Contains(st, "pending:   0") || !strings.Contains(st, "dead:      0") {
		t.Errorf("status after the run:\n%s", st)
	}
}

// TestTrackerPrimaryRateLimit: a sync that spends the hour's budget stops
// there, with nothing dead and nothing counted against the changes; the
// status shows the budget spent; once the window resets, the next sync
// finishes, nothing made twice.
func TestTrackerPrimaryRateLimit(t *testing.T) {
	fake := githubfake.Start()
	defer fake.Close()
	fake.Token = "tok"
	fake.NewWindow(8)
	dir := t.TempDir()
	const repo = "acme/budget"
	trackerCLI(t, dir, "tracker", "link", "github", repo, "--api-url", fake.URL)
	for k := range 5 {
		trackerCLI(t, dir, "call", "task_create", fmt.Sprintf("title=Task %d", k))
		trackerCLI(t, dir, "call", "task_post_comment", fmt.Sprintf("issue_number=%d", k+1), "comment=hello")
	}
	out, errOut, code := runAtrium(t, trackerEnv(), "--data-dir", dir, "tracker", "sync")
	if code == 0 || !strings.Contains(errOut, "rate limit") {
		t.Fatalf("a sync past the budget: exit %d\n%s%s", code, out, errOut)
	}
	st := trackerCLI(t, dir, "tracker", "status")
	for _, w := range []string{"0 of 8 left", "dead:      0", "rate limit"} {
		if !strings.Contains(st, w) {
			t.Errorf("status lacks %q:\n%s", w, st)
		}
	}
	if strings.Contains(st, "pending:   0 ") {
		t.Errorf("nothing pending after a sync cut short:\n%s", st)
	}
	fake.NewWindow(5000)
	if r := trackerSync(t, dir); r.Pending != 0 || r.Dead != 0 {
		t.Errorf("after the reset: %+v", r)
	}
	is := fake.Issues(repo)
	if len(is) != 5 {
		t.Fatalf("%d issues, want 5", len(is))
	}
	for _, i := range is {
		if n := len(fake.Comments(repo, i.Number)); n != 1 {
			t.Errorf("issue %d has %d comments, want 1", i.Number, n)
		}
	}
}
