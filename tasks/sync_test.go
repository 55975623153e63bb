package tasks_test

import (
	"context"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/tasks"
	"github.com/atrium-hq/atrium/trackers/github"
	"github.com/atrium-hq/atrium/trackers/githubfake"
)

// A task's page lists its own conflicts with the tracker, not its
// neighbours' nor another workspace's; a workspace with no link has none,
// and asking is no error.
func TestTrackerConflictsOfATask(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		admin := v.as("dede", atrium.KindHuman, atrium.RoleAdmin, "")
		v.create(admin, "Both sides", tasks.Fields{})
		v.create(admin, "Left alone", tasks.Fields{})
		if cs, err := v.tasks.TrackerConflictsOf(admin, 1); err != nil || len(cs) != 0 {
			t.Fatalf("unlinked: %v, %v; want none and no error", cs, err)
		}
		fake := githubfake.Start()
		defer fake.Close()
		fake.Token = "tok"
		l, err := v.tasks.LinkTracker(admin, "github", "acme/app", fake.URL)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := github.New(github.Config{Owner: "acme", Repo: "app", APIURL: fake.URL, Token: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.tasks.SyncTracker(context.Background(), l.WorkspaceID, tr, tasks.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		fake.Edit("acme/app", 1, func(i *githubfake.Issue) { i.State = "closed" })
		if _, err := v.tasks.Update(admin, tasks.UpdateRequest{Number: 1, Fields: tasks.Fields{Status: ptr(atrium.TaskInProgress)}}); err != nil {
			t.Fatal(err)
		}
		if rep, err := v.tasks.SyncTracker(context.Background(), l.WorkspaceID, tr, tasks.SyncOptions{}); err != nil || rep.Conflicts != 1 {
			t.Fatalf("sync: %+v, %v; want 1 conflict", rep, err)
		}
		cs, err := v.tasks.TrackerConflictsOf(v.as("rita", atrium.KindHuman, atrium.RoleReader, ""), 1)
		if err != nil || len(cs) != 1 || cs[0].Task != 1 || cs[0].Field != "state" || cs[0].Remote != "closed" {
			t.Fatalf("task 1's conflicts, as a reader: %+v, %v", cs, err)
		}
		if cs, err := v.tasks.TrackerConflictsOf(admin, 2); err != nil || len(cs) != 0 {
			t.Errorf("task 2 has task 1's conflict: %+v, %v", cs, err)
		}
		if _, err := v.ids.CreateWorkspace(context.Background(), "beta", ""); err != nil {
			t.Fatal(err)
		}
		bob := v.as("bob", atrium.KindHuman, atrium.RoleAdmin, "beta")
		v.create(bob, "Beta's own #1", tasks.Fields{})
		if cs, err := v.tasks.TrackerConflictsOf(bob, 1); err != nil || len(cs) != 0 {
			t.Errorf("another workspace's task 1 has this one's conflict: %+v, %v", cs, err)
		}
	})
}
