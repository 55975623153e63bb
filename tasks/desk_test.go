package tasks_test

import (
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/tasks"
)

// 001's desk: a todo with a file, progress and status, a plan and a draft,
// a progress log closed by archiving, all in one get_desk answer.
func TestDesk(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		v.tasks.Pages = v.docs
		summ := v.agent("summ")
		todo, err := v.tasks.CreateTodo(summ, "Test Task", "Write the API.", []tasks.TodoFile{{Name: "notes.txt", Data: []byte("hello")}})
		if err != nil {
			t.Fatal(err)
		}
		if todo.Kind != atrium.KindTodo || todo.Assignee != "summ" || tasks.TodoID(todo.Number) != "todo_1" {
			t.Fatalf("todo %+v", todo)
		}
		up, err := v.tasks.UpdateTodo(summ, "todo_1", ptr(75), ptr("in_progress"), ptr("Implemented API endpoints"))
		if err != nil {
			t.Fatal(err)
		}
		if up.Progress != 75 || up.Status != atrium.TaskInProgress || up.StatusText != "Implemented API endpoints" {
			t.Fatalf("updated todo %+v", up)
		}
		for _, bad := range []struct {
			id     string
			status string
			code   string
		}{{"todo_x", "done", atrium.EInvalid}, {"todo_1", "someday", atrium.EInvalid}, {"todo_9", "done", atrium.ENotFound}} {
			_, err := v.tasks.UpdateTodo(summ, bad.id, nil, &bad.status, nil)
			wantCode(t, err, bad.code)
		}
		if _, err := v.tasks.UpdateDeskPage(summ, "Plan", "# Plan\n\n1. API\n2. Tests\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := v.tasks.UpdateDeskPage(summ, "Plan", "# Plan\n\n1. API (done)\n2. Tests\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := v.tasks.UpdateDeskPage(summ, "Draft", "Dear team,"); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
		if _, err := v.tasks.AddProgress(summ, "Reviewed the spec", at); err != nil {
			t.Fatal(err)
		}
		if _, err := v.tasks.AddProgress(summ, "Wrote the endpoints", time.Time{}); err != nil {
			t.Fatal(err)
		}
		_, err = v.tasks.AddProgress(summ, "  ", time.Time{})
		wantCode(t, err, atrium.EInvalid)

		d, err := v.tasks.GetDesk(summ, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Todos) != 1 || len(d.Files[1]) != 1 || d.Files[1][0].Name != "notes.txt" || d.Files[1][0].Size != 5 ||
			d.Plan == nil || d.Plan.Revision != 2 || d.Draft == nil || len(d.Progress) != 2 || !d.Progress[0].DoneAt.Equal(at) {
			t.Fatalf("desk %+v", d)
		}
		// Another member reads summ's desk; the board shows the todo too.
		other := v.agent("dede")
		if od, err := v.tasks.GetDesk(other, "summ"); err != nil || len(od.Todos) != 1 {
			t.Fatalf("dede reads summ's desk: %+v, %v", od, err)
		}
		if _, err := v.tasks.GetDesk(other, "ghost"); atrium.ErrorCode(err) != atrium.ENotFound {
			t.Fatalf("a desk of nobody: %v", err)
		}
		if err := v.tasks.RemoveTodoFile(summ, "todo_1", d.Files[1][0].ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, v.tasks.RemoveTodoFile(summ, "todo_1", d.Files[1][0].ID), atrium.ENotFound)
		if n, err := v.tasks.ArchiveProgress(summ); err != nil || n != 2 {
			t.Fatalf("archive progress: %d, %v", n, err)
		}
		if _, err := v.tasks.ArchiveTodo(summ, "todo_1"); err != nil {
			t.Fatal(err)
		}
		d, _ = v.tasks.GetDesk(summ, "")
		if len(d.Todos) != 0 || len(d.Progress) != 0 {
			t.Fatalf("after archiving: %+v", d)
		}
	})
}
