package records_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/records"
)

const (
	tasksOK = `{"format": "atrium-export/1", "workspace": "default",
  "principals": [{"handle": "alice", "kind": "agent", "display_name": "alice"}, {"handle": "dan", "kind": "human", "display_name": "Dan"}],
  "tasks": [
    {"number": 1, "kind": "task", "title": "One", "body": "", "status": "open", "status_text": "", "progress": 0, "phase": "",
     "labels": [], "creator": "dan", "assignee": "", "specs": [], "plans": [], "blocked_by": [],
     "created_at": "2026-11-27T10:00:00Z", "updated_at": "2026-11-27T10:00:00Z",
     "comments": [{"n": 1, "author": "alice", "type": "question", "body": "@dan Question: why?", "created_at": "2026-11-27T10:01:00Z"},
                  {"n": 2, "author": "dan", "type": "answer", "body": "@alice Answer: because.", "answers": 1, "created_at": "2026-11-27T10:02:00Z"}],
     "waits": []},
    {"number": 2, "kind": "todo", "title": "Two", "body": "", "status": "open", "status_text": "", "progress": 0, "phase": "",
     "labels": [], "creator": "alice", "assignee": "alice", "specs": [], "plans": [], "blocked_by": [1],
     "created_at": "2026-11-27T10:00:00Z", "updated_at": "2026-11-27T10:00:00Z", "comments": [], "waits": []}],
  "handoff_rules": []}`
	desksOK = `{"format": "atrium-export/1", "workspace": "default",
  "principals": [{"handle": "alice", "kind": "agent", "display_name": "alice"}],
  "desks": [{"owner": "alice", "todos": [2], "plan": "Desks/alice/Plan.md", "draft": "", "progress": []}]}`
	threadsOK = `{"format": "atrium-export/1", "workspace": "default",
  "principals": [{"handle": "dan", "kind": "human", "display_name": "Dan"}],
  "reviews": [],
  "threads": [{"id": "ann_1", "doc_path": "Home.md", "section": "", "orphaned": false, "status": "resolved", "author": "dan",
     "author_type": "human", "content": "Hm.", "created_at": "2026-11-27T10:00:00Z", "updated_at": "2026-11-27T10:00:00Z",
     "replies": [{"id": "ann_2", "status": "submitted", "author": "dan", "author_type": "human", "content": "Yes.",
       "created_at": "2026-11-27T10:00:00Z", "updated_at": "2026-11-27T10:00:00Z"}]}]}`
)

func writeSet(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, records.Dir), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, records.Dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Read takes a good export whole, and refuses a bad one naming the file and
// what is wrong, from each file's own checks to what one file says of another.
func TestReadChecksEveryFile(t *testing.T) {
	set, err := records.Read(writeSet(t, map[string]string{"tasks.json": tasksOK, "desks.json": desksOK, "threads.json": threadsOK}))
	if err != nil || set == nil || len(set.Tasks.Tasks) != 2 || len(set.Desks.Desks) != 1 || len(set.Threads.Threads) != 1 {
		t.Fatalf("Read of a good export = %+v, %v", set, err)
	}
	if set, err := records.Read(t.TempDir()); set != nil || err != nil {
		t.Errorf("Read of a folder without .atrium = %+v, %v; want nothing", set, err)
	}

	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no format", map[string]string{"tasks.json": `{"tasks": []}`}, `tasks.json: no "format"`},
		{"not JSON", map[string]string{"threads.json": "{\n  \"format\": \"atrium-export/1\",\n  oops\n}"}, "threads.json: line 3, column 3: invalid character 'o'"},
		{"unknown principal", map[string]string{"tasks.json": strings.Replace(tasksOK, `"creator": "dan"`, `"creator": "erin"`, 1)}, "tasks.json: task #1: creator @erin is not among the file's principals"},
		{"bad kind", map[string]string{"tasks.json": strings.Replace(tasksOK, `"kind": "human"`, `"kind": "robot"`, 1)}, `principal dan: kind is human or agent, not "robot"`},
		{"numbers twice", map[string]string{"tasks.json": strings.Replace(tasksOK, `"number": 2`, `"number": 1`, 1)}, "task number 1: numbers are 1 or more, each once"},
		{"blocked by a stranger", map[string]string{"tasks.json": strings.Replace(tasksOK, `"blocked_by": [1]`, `"blocked_by": [9]`, 1)}, "task #2: blocked_by names #9"},
		{"comments out of order", map[string]string{"tasks.json": strings.Replace(tasksOK, `"n": 2`, `"n": 3`, 1)}, "comment 2 has n 3"},
		{"a wait on no comment", map[string]string{"tasks.json": strings.Replace(tasksOK, `"comments": [], "waits": []`, `"comments": [], "waits": [{"on": "alice", "reason": "question", "comment": 1}]`, 1)},
			"task #2: the wait on @alice names comment 1"},
		{"a resolved reply", map[string]string{"threads.json": strings.Replace(threadsOK, `"status": "submitted"`, `"status": "resolved"`, 1)}, "annotation ann_2: status is draft, submitted or (for a thread's root) resolved"},
		{"a review nobody holds", map[string]string{"threads.json": strings.Replace(threadsOK, `"status": "resolved", "author"`, `"status": "resolved", "review": "rev_x", "author"`, 1)}, "annotation ann_1 names review rev_x"},
		{"a desk's plan elsewhere", map[string]string{"desks.json": strings.Replace(desksOK, "Desks/alice/Plan.md", "Plans/alice.md", 1)}, "@alice's plan is Plans/alice.md; a desk's is Desks/alice/Plan.md"},
		{"a todo that is a task", map[string]string{"tasks.json": tasksOK, "desks.json": strings.Replace(desksOK, `"todos": [2]`, `"todos": [1]`, 1)}, "desks.json lists todo_1 on @alice's desk, but tasks.json holds no todo #1"},
		{"two kinds of one principal", map[string]string{"tasks.json": tasksOK, "threads.json": strings.Replace(threadsOK, `"kind": "human"`, `"kind": "agent"`, 1)}, "principal dan is human in one file and agent in another"},
	} {
		t.Run(c.name, func(t *testing.T) {
			set, err := records.Read(writeSet(t, c.files))
			if set != nil || atrium.ErrorCode(err) != atrium.EInvalid || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Read = %v, %v; want invalid_argument with %q", set, err, c.want)
			}
		})
	}

	// A link is never read: it could lead out of the folder.
	dir := writeSet(t, nil)
	outside := filepath.Join(t.TempDir(), "tasks.json")
	if err := os.WriteFile(outside, []byte(tasksOK), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, records.Dir, "tasks.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := records.Read(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Read through a link: %v", err)
	}
}
