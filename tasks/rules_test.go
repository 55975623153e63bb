package tasks_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/tasks"
)

// The todo tools change todos only, and only on the caller's own desk (or
// as an admin); other members read a todo and comment on it.
func TestTodoToolsKeepToTodosAndTheirDesk(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		summ, dede := v.agent("summ"), v.agent("dede")
		root := v.as("root", atrium.KindHuman, atrium.RoleAdmin, "")
		todo, err := v.tasks.CreateTodo(summ, "Summ's todo", "", []tasks.TodoFile{{Name: "a.txt", Data: []byte("a")}})
		if err != nil {
			t.Fatal(err)
		}
		task := v.create(dede, "A plain task", tasks.Fields{})
		files, _ := v.tasks.TodoFiles(summ, todo.Number)

		// A plain task is not a todo, whoever asks, and is left as it was.
		plain := tasks.TodoID(task.Number)
		for name, call := range map[string]func() error{
			"update_todo":      func() error { _, err := v.tasks.UpdateTodo(dede, plain, ptr(50), nil, nil); return err },
			"archive_todo":     func() error { _, err := v.tasks.ArchiveTodo(dede, plain); return err },
			"add_todo_file":    func() error { _, err := v.tasks.AddTodoFile(dede, plain, tasks.TodoFile{Name: "x.txt"}); return err },
			"remove_todo_file": func() error { return v.tasks.RemoveTodoFile(dede, plain, "file_x") },
			"read a file":      func() error { _, _, err := v.tasks.TodoFile(dede, plain, "file_x"); return err },
		} {
			err := call()
			wantCode(t, err, atrium.EInvalid)
			if msg := atrium.ErrorMessage(err); !strings.Contains(msg, plain) || !strings.Contains(msg, "not a todo") {
				t.Errorf("%s on task #%d: %q does not name it", name, task.Number, msg)
			}
		}
		if now, _ := v.tasks.Get(dede, task.Number); now.Revision != task.Revision || now.Status != atrium.TaskOpen {
			t.Fatalf("a todo tool changed task #%d: %+v", task.Number, now)
		}

		// Another writer may not change summ's todo, through any tool…
		id := tasks.TodoID(todo.Number)
		for name, call := range map[string]func() error{
			"update_todo":  func() error { _, err := v.tasks.UpdateTodo(dede, id, ptr(90), ptr("done"), nil); return err },
			"archive_todo": func() error { _, err := v.tasks.ArchiveTodo(dede, id); return err },
			"add_todo_file": func() error {
				_, err := v.tasks.AddTodoFile(dede, id, tasks.TodoFile{Name: "x.txt", Data: []byte("x")})
				return err
			},
			"remove_todo_file": func() error { return v.tasks.RemoveTodoFile(dede, id, files[0].ID) },
			"task_update": func() error {
				_, err := v.tasks.Update(dede, tasks.UpdateRequest{Number: todo.Number, Fields: tasks.Fields{Title: ptr("Taken")}})
				return err
			},
			"task_update_status":   func() error { _, err := v.tasks.UpdateStatus(dede, todo.Number, "mine now", ptr(10)); return err },
			"task_signal_blocked":  func() error { _, err := v.tasks.Blocked(dede, todo.Number, "no", ""); return err },
			"task_signal_complete": func() error { _, err := v.tasks.Complete(dede, todo.Number, "", "done"); return err },
		} {
			err := call()
			wantCode(t, err, atrium.EPermission)
			if !strings.Contains(atrium.ErrorMessage(err), "@summ") {
				t.Errorf("%s on summ's todo by dede: %q does not name the desk", name, atrium.ErrorMessage(err))
			}
		}
		now, _ := v.tasks.Get(summ, todo.Number)
		if now.Revision != todo.Revision || now.Progress != 0 || now.Title != todo.Title {
			t.Fatalf("dede changed summ's todo: %+v", now)
		}
		if fs, _ := v.tasks.TodoFiles(summ, todo.Number); len(fs) != 1 {
			t.Fatalf("files after dede's attempts: %+v", fs)
		}
		// …but reads it, its files, and talks about it.
		if _, _, err := v.tasks.TodoFile(dede, id, files[0].ID); err != nil {
			t.Fatal(err)
		}
		if _, err := v.tasks.Comment(dede, tasks.CommentRequest{Number: todo.Number, Body: "How is it going, @summ?"}); err != nil {
			t.Fatal(err)
		}
		if _, err := v.tasks.Ask(dede, todo.Number, "summ", "Need help?"); err != nil {
			t.Fatal(err)
		}
		// The owner and an admin may.
		if _, err := v.tasks.UpdateTodo(summ, id, ptr(40), nil, ptr("going")); err != nil {
			t.Fatal(err)
		}
		if _, err := v.tasks.UpdateTodo(root, id, ptr(45), nil, nil); err != nil {
			t.Fatalf("an admin updates a todo: %v", err)
		}
		if _, err := v.tasks.AddTodoFile(root, id, tasks.TodoFile{Name: "b.txt", Data: []byte("b")}); err != nil {
			t.Fatalf("an admin attaches a file: %v", err)
		}
		if _, err := v.tasks.ArchiveTodo(summ, id); err != nil {
			t.Fatal(err)
		}
	})
}

// A todo's files are read back — by id, with their content — and every
// todo, however it is read, says where it is shown and where its files are.
func TestTodoFilesAndURLs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		v.tasks.BaseURL = "http://atrium.test"
		summ := v.agent("summ")
		todo, err := v.tasks.CreateTodo(summ, "With files", "", []tasks.TodoFile{{Name: "notes.txt", Data: []byte("hello")}, {Name: "bin.dat", Data: []byte{0, 1, 2}}})
		if err != nil {
			t.Fatal(err)
		}
		d, err := v.tasks.GetDesk(summ, "")
		if err != nil {
			t.Fatal(err)
		}
		out := v.tasks.DeskOutput(d)
		if len(out.Todos) != 1 || len(out.Todos[0].Files) != 2 {
			t.Fatalf("desk %+v", out)
		}
		got := out.Todos[0]
		if got.URL != "http://atrium.test/tasks/1" {
			t.Fatalf("todo url %q", got.URL)
		}
		f := got.Files[0]
		if f.URI != "atrium://todos/todo_1/files/"+f.ID || f.URL != "http://atrium.test/api/todos/todo_1/files/"+f.ID {
			t.Fatalf("file %+v", f)
		}
		for _, want := range []struct {
			id   string
			data string
			mime string
		}{{got.Files[0].ID, "hello", "text/plain; charset=utf-8"}, {got.Files[1].ID, "\x00\x01\x02", "application/octet-stream"}} {
			meta, data, err := v.tasks.TodoFile(v.agent("dede"), "todo_1", want.id)
			if err != nil || string(data) != want.data || meta.MIMEType != want.mime || meta.ID != want.id {
				t.Fatalf("read %s: %+v %q %v", want.id, meta, data, err)
			}
		}
		_, _, err = v.tasks.TodoFile(summ, "todo_1", "file_nothere")
		wantCode(t, err, atrium.ENotFound)
		if one := v.tasks.TodoOutput(todo, nil); one.URL != "http://atrium.test/tasks/1" || one.Files == nil {
			t.Fatalf("one todo %+v", one)
		}
	})
}

// A question waits for an answer, not for any word of its target; a block
// ends when its target answers or when the status moves on.
func TestWaitsEndWithAnAnswerOrAStatus(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		dede, duc := v.agent("dede"), v.agent("duc")
		task := v.create(dede, "Waits", tasks.Fields{Assignee: ptr("dede")})
		n := task.Number
		waiting := func() []string {
			t.Helper()
			c, err := v.tasks.GetContext(dede, n)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, w := range c.Waiting {
				out = append(out, w.Handle+":"+w.Reason)
			}
			return out
		}
		must := func(_ tasks.Posted, err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(v.tasks.Ask(dede, n, "duc", "REST or GraphQL?"))
		// duc says other things first: the question still waits.
		must(v.tasks.UpdateStatus(duc, n, "Reading the spec", nil))
		must(v.tasks.Comment(duc, tasks.CommentRequest{Number: n, Type: atrium.CommentNote, Body: "Looking into it."}))
		must(v.tasks.Comment(duc, tasks.CommentRequest{Number: n, Type: atrium.CommentClarification, Body: "Which client?"}))
		if got := waiting(); !cmp.Equal(got, []string{"duc:question"}) {
			t.Fatalf("after duc's status and notes, waiting on %v, want duc's question", got)
		}
		// An answer-type comment answers, as task_post_answer does.
		must(v.tasks.Comment(duc, tasks.CommentRequest{Number: n, Type: atrium.CommentAnswer, Body: "💬 @dede Answer: GraphQL."}))
		if got := waiting(); len(got) != 0 {
			t.Fatalf("after duc's answer, waiting on %v", got)
		}

		// Blocked on duc: a note of duc's does not unblock…
		must(v.tasks.Blocked(dede, n, "No schema", "duc"))
		must(v.tasks.Comment(duc, tasks.CommentRequest{Number: n, Body: "I'll see."}))
		if tk, _ := v.tasks.Get(dede, n); tk.Status != atrium.TaskBlocked || !tk.HasLabel(tasks.BlockedLabel) {
			t.Fatalf("a note unblocked the task: %+v", tk)
		}
		// …the status moving on does.
		if _, err := v.tasks.Update(dede, tasks.UpdateRequest{Number: n, Fields: tasks.Fields{Status: ptr(atrium.TaskInProgress)}}); err != nil {
			t.Fatal(err)
		}
		if tk, _ := v.tasks.Get(dede, n); tk.Status != atrium.TaskInProgress || tk.HasLabel(tasks.BlockedLabel) || len(waiting()) != 0 {
			t.Fatalf("after the status moved on: %+v, waiting on %v", tk, waiting())
		}
		// Blocked again: duc's answer unblocks.
		must(v.tasks.Blocked(dede, n, "No schema still", "duc"))
		must(v.tasks.Answer(duc, n, "dede", "db/users.sql", 0))
		if tk, _ := v.tasks.Get(dede, n); tk.Status != atrium.TaskInProgress || tk.HasLabel(tasks.BlockedLabel) || len(waiting()) != 0 {
			t.Fatalf("after duc answered: %+v, waiting on %v", tk, waiting())
		}
	})
}

// Callers who send no revision — status updates, update_todo, comments that
// change the task, task_update without base_revision — never get a conflict,
// however many write at once, and every change counts.
func TestWritersWithoutARevisionNeverConflict(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, &store.Options{Conns: 8})
		summ := v.agent("summ")
		task := v.create(summ, "Busy", tasks.Fields{})
		todo, err := v.tasks.CreateTodo(summ, "Busy todo", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		const writers, rounds = 8, 6
		var wg sync.WaitGroup
		var failed atomic.Int64
		for w := range writers {
			wg.Go(func() {
				for i := range rounds {
					var err error
					switch (w + i) % 4 {
					case 0:
						_, err = v.tasks.UpdateStatus(summ, task.Number, fmt.Sprintf("writer %d round %d", w, i), ptr(w*10+i))
					case 1:
						_, err = v.tasks.Update(summ, tasks.UpdateRequest{Number: task.Number, Fields: tasks.Fields{StatusText: ptr(fmt.Sprint(w, i))}})
					case 2:
						_, err = v.tasks.Blocked(summ, task.Number, fmt.Sprintf("blocked %d %d", w, i), "")
					case 3:
						_, err = v.tasks.UpdateTodo(summ, tasks.TodoID(todo.Number), ptr(i), ptr("in_progress"), ptr(fmt.Sprint("todo ", w, i)))
					}
					if err != nil {
						failed.Add(1)
						t.Errorf("writer %d round %d: %v", w, i, err)
					}
				}
			})
		}
		wg.Wait()
		if failed.Load() > 0 {
			t.Fatalf("%d of %d writes without a revision failed", failed.Load(), writers*rounds)
		}
		// Every comment of them is there.
		page, err := v.tasks.Comments(summ, tasks.CommentsRequest{Number: task.Number})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Comments) != writers*rounds/2 {
			t.Fatalf("%d comments for %d status and blocked writes", len(page.Comments), writers*rounds/2)
		}
	})
}

// Opposite blocked_by changes made at the same moment never both pass: the
// graph never holds a cycle.
func TestRacingBlockersMakeNoCycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, &store.Options{Conns: 8})
		dede := v.agent("dede")
		const pairs = 12
		for i := range 2 * pairs {
			v.create(dede, fmt.Sprint("T", i+1), tasks.Fields{})
		}
		var wg sync.WaitGroup
		won := make([]atomic.Int64, pairs)
		start := make(chan struct{})
		for p := range pairs {
			a, b := int64(2*p+1), int64(2*p+2)
			for _, edge := range [][2]int64{{a, b}, {b, a}} {
				wg.Go(func() {
					<-start
					_, err := v.tasks.Update(dede, tasks.UpdateRequest{Number: edge[0], Fields: tasks.Fields{BlockedBy: &[]int64{edge[1]}}})
					switch atrium.ErrorCode(err) {
					case "":
						won[p].Add(1)
					case atrium.EInvalid: // the cycle was seen
					default:
						t.Errorf("#%d blocked by #%d: %v", edge[0], edge[1], err)
					}
				})
			}
		}
		close(start)
		wg.Wait()
		for p := range pairs {
			a, _ := v.tasks.Get(dede, int64(2*p+1))
			b, _ := v.tasks.Get(dede, int64(2*p+2))
			if len(a.BlockedBy) > 0 && len(b.BlockedBy) > 0 {
				t.Errorf("cycle: #%d blocked by %v and #%d blocked by %v", a.Number, a.BlockedBy, b.Number, b.BlockedBy)
			}
			if won[p].Load() != 1 {
				t.Errorf("pair %d: %d of 2 opposite changes passed, want 1", p, won[p].Load())
			}
		}
	})
}

// Acknowledging marks read what the answer listed, and nothing else: on
// PostgreSQL an item that commits after a later one — with a lower id — is
// not marked read unseen.
func TestInboxAckMarksOnlyWhatWasShown(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, &store.Options{Conns: 4})
		dede, duc := v.agent("dede"), v.agent("duc")
		task := v.create(dede, "Ping", tasks.Fields{})
		for i := range 3 {
			if _, err := v.tasks.Comment(dede, tasks.CommentRequest{Number: task.Number, Body: fmt.Sprintf("@duc ping %d", i)}); err != nil {
				t.Fatal(err)
			}
		}
		first, err := v.tasks.ReadInbox(duc, tasks.InboxRequest{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if first.Unread != 3 || len(first.Items) != 2 {
			t.Fatalf("first read %+v", first)
		}
		after, err := v.tasks.ReadInbox(duc, tasks.InboxRequest{Ack: first.AckCursor})
		if err != nil {
			t.Fatal(err)
		}
		if after.Acked != 2 || after.Unread != 1 || len(after.Items) != 1 || !strings.Contains(after.Items[0].Text, "ping 2") {
			t.Fatalf("after acking the two shown: %+v", after)
		}
		_, err = v.tasks.ReadInbox(duc, tasks.InboxRequest{Ack: "i5-999999"})
		wantCode(t, err, atrium.EInvalid)
		if e != store.Postgres {
			return // SQLite's one writer commits in id order
		}
		// An item whose transaction began first, with the lower id, commits last.
		ducID := atrium.ActorFromContext(duc).Principal.ID
		ws := atrium.ActorFromContext(duc).Workspace.ID
		tk, _ := v.tasks.Get(duc, task.Number)
		inserted, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
		go func() {
			done <- v.db.Update(context.Background(), func(tx *store.Tx) error {
				if err := tx.AddInbox(context.Background(), store.InboxEntry{Workspace: ws, Principal: ducID, Task: tk.ID, Kind: atrium.InboxAssigned}); err != nil {
					return err
				}
				close(inserted)
				<-release
				return nil
			})
		}()
		<-inserted
		if _, err := v.tasks.Comment(dede, tasks.CommentRequest{Number: task.Number, Body: "@duc later, higher id"}); err != nil {
			t.Fatal(err)
		}
		shown, err := v.tasks.ReadInbox(duc, tasks.InboxRequest{})
		if err != nil {
			t.Fatal(err)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		acked, err := v.tasks.ReadInbox(duc, tasks.InboxRequest{Ack: shown.AckCursor})
		if err != nil {
			t.Fatal(err)
		}
		if acked.Unread != 1 || len(acked.Items) != 1 || acked.Items[0].Kind != atrium.InboxAssigned {
			t.Fatalf("the item committed late was marked read unseen: shown %+v, then %+v", shown.Items, acked)
		}
	})
}

// A long thread is cut with a count and a way on, never silently.
func TestLongThreadsSayWhatWasLeftOut(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e, nil)
		dede := v.agent("dede")
		task := v.create(dede, "Chatty", tasks.Fields{})
		const total = 205
		err := v.db.Update(context.Background(), func(tx *store.Tx) error {
			tk, err := tx.TaskByNumber(context.Background(), task.WorkspaceID, task.Number)
			if err != nil {
				return err
			}
			for i := range total {
				c := atrium.TaskComment{TaskID: tk.ID, AuthorID: atrium.ActorFromContext(dede).Principal.ID, Type: atrium.CommentNote, Body: fmt.Sprint("comment ", i)}
				if err := tx.InsertComment(context.Background(), task.WorkspaceID, &c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := v.tasks.GetContext(dede, task.Number)
		if err != nil {
			t.Fatal(err)
		}
		out := v.tasks.ContextOutput(c)
		if len(out.Comments) != 200 || out.Omitted != 5 || out.Comments[0].Body != "comment 5" || out.Comments[199].Body != "comment 204" ||
			!strings.Contains(out.Note, "5 older") {
			t.Fatalf("context: %d comments from %q, omitted %d, note %q", len(out.Comments), out.Comments[0].Body, out.Omitted, out.Note)
		}
		// The comments are read in pages that say where the next begins.
		var seen int
		var after int64
		for pages := 0; ; pages++ {
			page, err := v.tasks.Comments(dede, tasks.CommentsRequest{Number: task.Number, After: after, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Comments) > 0 && page.Comments[0].Body != fmt.Sprint("comment ", seen) {
				t.Fatalf("page %d starts at %q, want comment %d", pages, page.Comments[0].Body, seen)
			}
			seen += len(page.Comments)
			if page.NextAfter == 0 {
				break
			}
			if o := page.Output(); !strings.Contains(o.Note, fmt.Sprint("after=", page.NextAfter)) {
				t.Fatalf("a cut page says %q", o.Note)
			}
			after = page.NextAfter
		}
		if seen != total {
			t.Fatalf("read %d of %d comments page by page", seen, total)
		}
		if small := v.create(dede, "Quiet", tasks.Fields{}); true {
			c, _ := v.tasks.GetContext(dede, small.Number)
			if o := v.tasks.ContextOutput(c); o.Omitted != 0 || o.Note != "" {
				t.Fatalf("an uncut context says %+v", o)
			}
		}
	})
}

// task_get_comments' since: comments created at or after it, to the
// microsecond, combined with from_agent.
func TestCommentsSince(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		var now atomic.Int64
		t0 := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
		now.Store(t0.UnixMicro())
		v := newEnv(t, e, &store.Options{Now: func() time.Time { return time.UnixMicro(now.Load()).UTC() }})
		dede, duc := v.agent("dede"), v.agent("duc")
		task := v.create(dede, "Timed", tasks.Fields{})
		post := func(ctx context.Context, at time.Duration, body string) {
			t.Helper()
			now.Store(t0.Add(at).UnixMicro())
			if _, err := v.tasks.Comment(ctx, tasks.CommentRequest{Number: task.Number, Body: body}); err != nil {
				t.Fatal(err)
			}
		}
		post(dede, 0, "at 10:00 by dede")
		post(duc, 15*time.Minute, "at 10:15 by duc")
		post(dede, 15*time.Minute+time.Microsecond, "just after 10:15 by dede")
		post(duc, 30*time.Minute, "at 10:30 by duc")
		for _, c := range []struct {
			since time.Time
			from  string
			want  []string
		}{
			{time.Time{}, "", []string{"at 10:00 by dede", "at 10:15 by duc", "just after 10:15 by dede", "at 10:30 by duc"}},
			{t0.Add(15 * time.Minute), "", []string{"at 10:15 by duc", "just after 10:15 by dede", "at 10:30 by duc"}},
			{t0.Add(15*time.Minute + time.Microsecond), "", []string{"just after 10:15 by dede", "at 10:30 by duc"}},
			{t0.Add(15 * time.Minute), "duc", []string{"at 10:15 by duc", "at 10:30 by duc"}},
			{t0.Add(15 * time.Minute).In(time.FixedZone("CET", 3600)), "@duc", []string{"at 10:15 by duc", "at 10:30 by duc"}},
			{t0.Add(31 * time.Minute), "", nil},
			{time.Time{}, "nobody", nil},
		} {
			page, err := v.tasks.Comments(dede, tasks.CommentsRequest{Number: task.Number, Since: c.since, FromAgent: c.from})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cm := range page.Comments {
				got = append(got, cm.Body)
			}
			if !cmp.Equal(got, c.want) {
				t.Errorf("since %v from %q: %q, want %q", c.since, c.from, got, c.want)
			}
		}
	})
}

func TestWorktreePath(t *testing.T) {
	for title, want := range map[string]string{
		"Add user authentication":         "../123-add-user-authentication",
		"  Fix: the API's 500 (again)!  ": "../123-fix-the-api-s-500-again",
		"Café ☕ crème":                    "../123-caf-cr-me",
		"☕☕":                              "../123",
		strings.Repeat("long words ", 20): "../123-long-words-long-words-long-words-long-words-long-words-long",
	} {
		if got := tasks.WorktreePath(atrium.Task{Number: 123, Title: title}); got != want {
			t.Errorf("WorktreePath(%q) = %q, want %q", title, got, want)
		}
	}
}

// Sessions: joining and leaving are events; a session not seen for the
// presence window leaves by itself, told once.
func TestPresenceJoinsAndLeaves(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		var now atomic.Int64
		now.Store(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC).UnixMicro())
		v := newEnv(t, e, &store.Options{Now: func() time.Time { return time.UnixMicro(now.Load()).UTC() }})
		dede, duc := v.agent("dede"), v.agent("duc")
		if err := v.tasks.Seen(dede, "http:a", "http", "client 1"); err != nil {
			t.Fatal(err)
		}
		if err := v.tasks.Seen(duc, "stdio:b", "stdio", ""); err != nil {
			t.Fatal(err)
		}
		list := func() []string {
			t.Helper()
			s, err := v.tasks.Sessions(dede)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, p := range s.Sessions {
				out = append(out, p.Principal+"/"+p.Transport)
			}
			return out
		}
		if got := list(); !cmp.Equal(got, []string{"dede/http", "duc/stdio"}) {
			t.Fatalf("sessions %v", got)
		}
		if err := v.tasks.Left(dede, "http:a", "http"); err != nil {
			t.Fatal(err)
		}
		if err := v.tasks.Left(dede, "http:a", "http"); err != nil { // twice: nothing more
			t.Fatal(err)
		}
		if got := list(); !cmp.Equal(got, []string{"duc/stdio"}) {
			t.Fatalf("sessions after dede left %v", got)
		}
		now.Add((tasks.PresenceWindow + time.Second).Microseconds())
		if n, err := v.tasks.ExpirePresence(context.Background()); err != nil || n != 1 {
			t.Fatalf("expire: %d, %v", n, err)
		}
		if n, err := v.tasks.ExpirePresence(context.Background()); err != nil || n != 0 {
			t.Fatalf("expire again: %d, %v", n, err)
		}
		// On PostgreSQL an event is read once stamped, a moment after its
		// commit: wait for the expiry's.
		var left []string
		for deadline := time.Now().Add(10 * time.Second); len(left) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			left = nil
			err := v.db.View(context.Background(), func(tx *store.Tx) error {
				evs, err := tx.EventsAfter(context.Background(), atrium.ActorFromContext(dede).Workspace.ID, 0, 100)
				for _, ev := range evs {
					if ev.Kind == tasks.EventLeft {
						left = append(left, ev.Subject)
					}
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if !cmp.Equal(left, []string{"@dede", "@duc"}) {
			t.Fatalf("left events %v", left)
		}
	})
}
