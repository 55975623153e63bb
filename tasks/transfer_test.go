package tasks_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/tasks"
)

// workspace creates workspace name and returns its admin, root.
func (v *env) workspace(name string) context.Context {
	v.t.Helper()
	if _, err := v.ids.CreateWorkspace(context.Background(), name, ""); err != nil {
		v.t.Fatal(err)
	}
	return v.as("root", atrium.KindHuman, atrium.RoleAdmin, name)
}

// An import keeps numbers, authors and times, adds nothing the second time,
// and refuses — writing nothing — a workspace whose numbers are other
// tasks', or records whose blocked_by make a cycle. Only admins export and
// import.
func TestImportKeepsNumbersOrRefuses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		alice := v.agent("alice")
		one := v.create(alice, "One", tasks.Fields{Labels: &[]string{"x"}})
		blocked := []int64{one.Number}
		v.create(alice, "Two", tasks.Fields{BlockedBy: &blocked})
		if _, err := v.tasks.Ask(alice, 1, "alice", "Self-doubt?"); err != nil {
			t.Fatal(err)
		}
		if _, err := v.tasks.AddProgress(alice, "Numbered the tasks", time.Time{}); err != nil {
			t.Fatal(err)
		}
		if _, err := v.tasks.Export(alice); atrium.ErrorCode(err) != atrium.EPermission {
			t.Errorf("a writer's export: %v, want permission_denied", err)
		}
		recs, err := v.tasks.Export(v.as("root", atrium.KindHuman, atrium.RoleAdmin, ""))
		if err != nil {
			t.Fatal(err)
		}

		copyAdmin := v.workspace("copy")
		if _, err := v.tasks.Import(v.as("alice", atrium.KindAgent, atrium.RoleWriter, "copy"), recs); atrium.ErrorCode(err) != atrium.EPermission {
			t.Errorf("a writer's import: %v, want permission_denied", err)
		}
		rep, err := v.tasks.Import(copyAdmin, recs)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tasks.ImportReport{Created: 2, Comments: 1, Waits: 1, Progress: 1}, rep); diff != "" {
			t.Errorf("first import (-want +got):\n%s", diff)
		}
		if rep, err = v.tasks.Import(copyAdmin, recs); err != nil || rep != (tasks.ImportReport{Unchanged: 2}) {
			t.Errorf("second import = %+v, %v; want 2 unchanged", rep, err)
		}
		// A later export of the same workspace brings its changes.
		later := recs
		later.Tasks = slices.Clone(recs.Tasks)
		later.Tasks[0].Task.Title, later.Tasks[0].Task.UpdatedAt = "One, renamed", recs.Tasks[0].Task.UpdatedAt.Add(time.Minute)
		later.Desks = slices.Clone(recs.Desks)
		later.Desks[0].Progress = slices.Clone(recs.Desks[0].Progress)
		archived := recs.Desks[0].Progress[0].DoneAt.Add(time.Hour)
		later.Desks[0].Progress[0].ArchivedAt = &archived
		if rep, err = v.tasks.Import(copyAdmin, later); err != nil || rep != (tasks.ImportReport{Updated: 1, Unchanged: 1, Progress: 1}) {
			t.Errorf("import of a later export = %+v, %v; want 1 updated, 1 unchanged, 1 progress item changed", rep, err)
		}
		if renamed, err := v.tasks.Get(copyAdmin, 1); err != nil || renamed.Title != "One, renamed" || !renamed.UpdatedAt.Equal(later.Tasks[0].Task.UpdatedAt) {
			t.Errorf("#1 after the later import = %+v, %v", renamed, err)
		}
		got, err := v.tasks.Get(copyAdmin, 2)
		if err != nil || got.Creator != "alice" || !got.CreatedAt.Equal(recs.Tasks[1].Task.CreatedAt) || !cmp.Equal(got.BlockedBy, []int64{1}) {
			t.Errorf("#2 in the copy = %+v, %v", got, err)
		}
		next := v.create(v.as("alice", atrium.KindAgent, atrium.RoleWriter, "copy"), "Three", tasks.Fields{})
		if next.Number != 3 {
			t.Errorf("the next task is #%d, want #3", next.Number)
		}

		otherAdmin := v.workspace("other")
		v.create(v.as("bob", atrium.KindAgent, atrium.RoleWriter, "other"), "Bob's first", tasks.Fields{})
		for what, err := range map[string]error{"check": v.tasks.CheckImport(otherAdmin, recs), "import": second(v.tasks.Import(otherAdmin, recs))} {
			if atrium.ErrorCode(err) != atrium.EConflict || !cmp.Equal(atrium.ErrorDetails(err)["conflicting_numbers"], []int64{1}) {
				t.Errorf("%s over #1 taken: %v (details %v), want conflict naming #1", what, err, atrium.ErrorDetails(err))
			}
		}
		if _, err := v.tasks.Get(otherAdmin, 2); atrium.ErrorCode(err) != atrium.ENotFound {
			t.Errorf("a refused import wrote #2: %v", err)
		}

		cycle := tasks.Records{Tasks: []tasks.Record{recs.Tasks[0], recs.Tasks[1]}}
		cycle.Tasks[0].Task.BlockedBy = []int64{2}
		cycleAdmin := v.workspace("cycle")
		if _, err := v.tasks.Import(cycleAdmin, cycle); atrium.ErrorCode(err) != atrium.EInvalid {
			t.Errorf("blocked_by in a cycle: %v, want invalid_argument", err)
		}
		if _, err := v.tasks.Get(cycleAdmin, 1); atrium.ErrorCode(err) != atrium.ENotFound {
			t.Errorf("a refused import wrote #1: %v", err)
		}
	})
}

func second[T any](_ T, err error) error { return err }
