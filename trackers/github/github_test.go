package github_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
	"github.com/atrium-hq/atrium/trackers/github"
	"github.com/atrium-hq/atrium/trackers/githubfake"
)

func MustClient(tb testing.TB, f *githubfake.Server) *github.Client {
	tb.Helper()
	c, err := github.New(github.Config{Owner: "acme", Repo: "app", APIURL: f.URL, Token: "tok", MaxWait: 10 * time.Millisecond})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestAdapterAgainstFake(t *testing.T) {
	f := githubfake.Start()
	defer f.Close()
	f.Token, f.MaxPerPage = "tok", 2
	c := MustClient(t, f)
	ctx := context.Background()

	title, body := "First", "hello"
	i, err := c.CreateIssue(ctx, tasks.IssueFields{Title: &title, Body: &body, Labels: &[]string{"status:open"}})
	if err != nil || i.Number != 1 || i.Labels[0] != "status:open" {
		t.Fatalf("create: %+v %v", i, err)
	}
	for k := range 4 {
		if _, err := c.PostComment(ctx, 1, "dede", "c"+string(rune('0'+k))); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := c.Comments(ctx, 1) // 2 pages of 2 through the Link header
	if err != nil || len(cs) != 4 || cs[3].Body != "c3" || cs[0].Author != "atrium-bot" {
		t.Fatalf("comments: %+v %v", cs, err)
	}
	if err := c.AddLabel(ctx, 1, "blocked:agent"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveLabel(ctx, 1, "status:open"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveLabel(ctx, 1, "never-there"); err != nil {
		t.Fatalf("removing an absent label: %v", err)
	}
	closed := true
	if i, err = c.UpdateIssue(ctx, 1, tasks.IssueFields{Closed: &closed}); err != nil || !i.Closed || len(i.Labels) != 1 {
		t.Fatalf("update: %+v %v", i, err)
	}
	f.FileIssue("acme/app", "octocat", "Second", "")
	f.FileIssue("acme/app", "octocat", "Third", "")
	is, _, unchanged, err := c.IssuesSince(ctx, time.Time{}, "")
	if err != nil || unchanged || len(is) != 3 {
		t.Fatalf("list: %d %v %v", len(is), unchanged, err)
	}
	used := f.Used()
	is, _, unchanged, err = c.IssuesSince(ctx, time.Time{}, "")
	if err != nil || !unchanged || len(is) != 0 {
		t.Fatalf("list again: %d %v %v, want unchanged", len(is), unchanged, err)
	}
	if f.Used() != used {
		t.Errorf("an unchanged list cost %d of the budget, want 0", f.Used()-used)
	}
	b := c.Budget()
	if b.Remaining != 5000-used || b.Limit != 5000 || b.NotModified != 1 {
		t.Errorf("budget %+v, fake used %d", b, used)
	}

	if _, err := c.Issue(ctx, 99); atrium.ErrorCode(err) != atrium.ENotFound {
		t.Errorf("missing issue: %v", err)
	}
	empty := " "
	if _, err := c.CreateIssue(ctx, tasks.IssueFields{Title: &empty}); atrium.ErrorCode(err) != atrium.EInvalid {
		t.Errorf("empty title: %v", err)
	}
	f.SecondaryLimit(1)
	if _, err := c.PostComment(ctx, 2, "dede", "after a secondary limit"); err != nil {
		t.Errorf("a secondary limit is waited out: %v", err)
	}
	bad, _ := github.New(github.Config{Owner: "acme", Repo: "app", APIURL: f.URL, Token: "wrong"})
	var e *atrium.Error
	if _, err := bad.Issue(ctx, 1); !errors.As(err, &e) || e.Code != atrium.EPermission {
		t.Errorf("bad token: %v", err)
	}
}
