package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// as calls a tool in db as handle: the agent ATRIUM_AGENT names, or with
// handle "" the OS user, a person.
func (db cliDB) as(t *testing.T, handle, tool string, args ...string) map[string]any {
	t.Helper()
	var env []string
	if handle != "" {
		env = []string{"ATRIUM_AGENT=" + handle}
	}
	out, errOut, code := runAtrium(t, env, append(slices.Clone(db), append([]string{"call", tool}, args...)...)...)
	if code != 0 {
		t.Fatalf("%s as %q %v: exit %d\n%s%s", tool, handle, args, code, out, errOut)
	}
	return decode(t, out)
}

// buildRecords fills db with what an export's .atrium holds: tasks with
// comments of every kind (a question and its answer, a completion handed on
// by a rule), labels, a phase, blocked_by and open waits; a review thread
// with a reply, resolved, and a submitted review with a reply; a person's
// draft; a desk with a todo, a plan, a draft and progress, archived and not.
// Three agents (alice, bob, carol) and a person (the OS user) write them.
func buildRecords(t *testing.T, db cliDB, person string) {
	t.Helper()
	db.as(t, "alice", "write_page", "path=Projects/Alpha.md", "content=# Alpha\n\nBackups run nightly with a simple copy.\n\n## Risks\n\nThe disk may fill.\n")
	db.as(t, "alice", "task_create", "title=Write the plan", `labels=["plan","q3"]`, "phase=P1", "body=See [[Projects/Alpha]] & <the notes>.", `specs=["Projects/Alpha.md"]`)
	db.as(t, "bob", "task_create", "title=Review the plan", "blocked_by=[1]")
	mustRun(t, db, "handoff", "set", "phase=P1", "bob", "--next-phase", "P2")
	db.as(t, "bob", "task_ask_question", "issue_number=1", "target=alice", "question=Which disk?")
	db.as(t, "alice", "task_post_answer", "issue_number=1", "target=bob", "answer=The data disk.")
	db.as(t, "alice", "task_update_status", "issue_number=1", "status=Drafting", "progress=40")
	db.as(t, "", "task_post_comment", "issue_number=1", "comment_type=clarification", "comment=Keep it short, @alice.")
	db.as(t, "alice", "task_signal_complete", "issue_number=1", "summary=Plan written")
	db.as(t, "carol", "task_signal_blocked", "issue_number=2", "reason=Waiting for the numbers", "waiting_for="+person)
	db.as(t, "carol", "task_ask_question", "issue_number=2", "target=alice", "question=Where are the numbers?")
	db.as(t, "bob", "task_post_comment", "issue_number=2", "comment=<b>Note</b> & more")

	db.as(t, "alice", "create_todo", "title=Water the plants", "description=Twice a week")
	db.as(t, "alice", "update_todo", "id=todo_3", "progress=50", "status=in_progress", "statusDesc=Half done")
	db.as(t, "alice", "add_progress_item", "description=Drafted the plan")
	db.as(t, "alice", "archive_progress")
	db.as(t, "alice", "add_progress_item", "description=Reviewed the numbers")
	db.as(t, "alice", "update_plan", "content=# Plan\n\n1. Ship\n")
	db.as(t, "alice", "update_draft", "content=Draft words")

	root, _ := asMap(db.as(t, "alice", "create_annotation", "doc_path=Projects/Alpha.md", "section=Alpha", "content=Which copy?",
		`quote={"exact":"simple copy"}`, "status=submitted")["annotation"])
	db.as(t, "bob", "create_annotation", "parent_id="+root["id"].(string), "content=The rsync one.")
	db.as(t, "alice", "resolve_annotation", "annotation_id="+root["id"].(string))
	risk, _ := asMap(db.as(t, "bob", "create_annotation", "doc_path=Projects/Alpha.md", "section=Risks", "content=How full?")["annotation"])
	db.as(t, "bob", "submit_review", "doc_path=Projects/Alpha.md", "summary=Looks fine")
	db.as(t, "alice", "create_annotation", "parent_id="+risk["id"].(string), "content=Half full.")
	db.as(t, "", "create_annotation", "doc_path=Projects/Alpha.md", "section=Alpha", "content=My private draft")
}

// readJSON decodes an exported file.
func readJSON(t *testing.T, tree map[string]string, name string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(tree[name]), &m); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, tree[name])
	}
	return m
}

// A workspace's tasks, comments, threads and desks go out beside its pages
// and come back whole: the export of the import is the export, byte for
// byte, and importing it again adds nothing (issue 23.24).
func TestExportImportRecordsRoundTrip(t *testing.T) {
	t.Parallel()
	person := osHandle(t)
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		src := newCLIDB(t, e)
		buildRecords(t, src, person)

		out1 := t.TempDir()
		sum := parseSummary(t, mustRun(t, src, "export", out1))
		sum.want(t, "tasks", "2 tasks, 1 todo, 8 comments, 1 hand-off rule")
		sum.want(t, "threads", "3 threads, 2 replies, 1 review")
		sum.want(t, "desks", "1 desk, 2 progress items")
		sum.want(t, "records", "3 written, 0 unchanged")
		tree := readTree(t, out1)

		// What the files say, where it matters: kinds, comment types and
		// their links, waits, the desk.
		tasks := readJSON(t, tree, ".atrium/tasks.json")
		if tasks["format"] != "atrium-export/1" {
			t.Errorf("format = %v", tasks["format"])
		}
		kinds := map[string]any{}
		for _, p := range tasks["principals"].([]any) {
			m, _ := asMap(p)
			kinds[m["handle"].(string)] = m["kind"]
		}
		if diff := cmp.Diff(map[string]any{"alice": "agent", "bob": "agent", "carol": "agent", person: "human"}, kinds); diff != "" {
			t.Errorf("principals (-want +got):\n%s", diff)
		}
		list := tasks["tasks"].([]any)
		one, _ := asMap(list[0])
		var types []string
		for _, c := range one["comments"].([]any) {
			m, _ := asMap(c)
			types = append(types, m["type"].(string))
			if m["type"] == "answer" && m["answers"] != float64(1) {
				t.Errorf("the answer answers %v, want comment 1", m["answers"])
			}
		}
		if diff := cmp.Diff([]string{"question", "answer", "status", "clarification", "completion"}, types); diff != "" {
			t.Errorf("#1's comments (-want +got):\n%s", diff)
		}
		if one["phase"] != "P2" || one["assignee"] != "bob" || one["status"] != "open" {
			t.Errorf("#1 after its completion: phase %v, assignee %v, status %v; want P2, bob, open (the rule)", one["phase"], one["assignee"], one["status"])
		}
		two, _ := asMap(list[1])
		if diff := cmp.Diff([]any{float64(1)}, two["blocked_by"]); diff != "" {
			t.Errorf("#2 blocked_by (-want +got):\n%s", diff)
		}
		if len(two["waits"].([]any)) != 2 || two["status"] != "blocked" {
			t.Errorf("#2: waits %v, status %v; want two waits, blocked", two["waits"], two["status"])
		}
		if !strings.Contains(tree[".atrium/tasks.json"], `"body": "<b>Note</b> & more"`) {
			t.Errorf("Markdown is escaped in tasks.json:\n%s", tree[".atrium/tasks.json"])
		}
		desks := readJSON(t, tree, ".atrium/desks.json")
		desk, _ := asMap(desks["desks"].([]any)[0])
		if desk["owner"] != "alice" || desk["plan"] != "Desks/alice/Plan.md" || desk["draft"] != "Desks/alice/Draft.md" ||
			!cmp.Equal([]any{float64(3)}, desk["todos"]) {
			t.Errorf("alice's desk = %v", desk)
		}
		if !strings.Contains(tree[".atrium/threads.json"], "My private draft") {
			t.Error("a person's draft thread is not exported")
		}

		// Into a fresh store, through the binary: the same export again.
		dst := newCLIDB(t, e)
		sum = parseSummary(t, mustRun(t, dst, "import", out1))
		sum.want(t, "principals", "4 principals created, 4 made writers")
		sum.want(t, "tasks", "3 created, 0 updated, 0 unchanged; 8 comments added; 1 hand-off rule set")
		sum.want(t, "desks", "2 progress items added")
		sum.want(t, "threads", "5 created, 0 updated, 0 unchanged; 1 review added")
		out2 := t.TempDir()
		mustRun(t, dst, "export", out2)
		if diff := cmp.Diff(tree, readTree(t, out2)); diff != "" {
			t.Fatalf("export → import → export changed the files (-first +second):\n%s", diff)
		}

		// Importing again, twice, adds nothing.
		for range 2 {
			sum = parseSummary(t, mustRun(t, dst, "import", out1))
			sum.want(t, "tasks", "0 created, 0 updated, 3 unchanged; 0 comments added; 0 hand-off rules set")
			sum.want(t, "desks", "0 progress items")
			sum.want(t, "threads", "0 created, 0 updated, 5 unchanged; 0 reviews")
			if _, ok := sum.values["principals"]; ok {
				t.Errorf("a second import made principals:\n%s", sum.text)
			}
		}
		out3 := t.TempDir()
		mustRun(t, dst, "export", out3)
		if diff := cmp.Diff(tree, readTree(t, out3)); diff != "" {
			t.Fatalf("importing again changed the workspace (-first +third):\n%s", diff)
		}

		// The workspace works on from there: the task waits on whom it
		// waited on, and the next task takes the next number.
		ctx := dst.as(t, "alice", "task_get_context", "issue_number=2")
		var waiting []string
		for _, h := range ctx["waiting_for"].([]any) {
			waiting = append(waiting, h.(string))
		}
		if diff := cmp.Diff([]string{"alice", person}, slices.Sorted(slices.Values(waiting))); diff != "" {
			t.Errorf("#2 waits on (-want +got):\n%s", diff)
		}
		next, _ := asMap(dst.as(t, "dave", "task_create", "title=After the import")["task"])
		if next["number"] != float64(4) {
			t.Errorf("the first task after the import is #%v, want #4", next["number"])
		}
	})
}

// An import whose records are wrong writes nothing: a file that is not JSON,
// one of another format version, and tasks whose numbers the workspace gives
// to other tasks are each refused, naming the file or the numbers, before a
// page goes in.
func TestImportRecordsRefusesBeforeWriting(t *testing.T) {
	t.Parallel()
	src := newCLIDB(t, store.SQLite)
	src.as(t, "alice", "write_page", "path=Home.md", "content=# Home\n")
	src.as(t, "alice", "task_create", "title=One")
	src.as(t, "alice", "task_post_comment", "issue_number=1", "comment=First")
	good := t.TempDir()
	mustRun(t, src, "export", good)
	tree := readTree(t, good)

	for _, c := range []struct {
		name, tasks string
		want        []string
	}{
		{"truncated", tree[".atrium/tasks.json"][:120], []string{filepath.Join(".atrium", "tasks.json") + ": line ", "unexpected end of JSON input"}},
		{"a newer format", strings.Replace(tree[".atrium/tasks.json"], "atrium-export/1", "atrium-export/2", 1),
			[]string{"tasks.json: format is \"atrium-export/2\", which this version of Atrium does not read"}},
		{"a misspelt field", strings.Replace(tree[".atrium/tasks.json"], `"status_text"`, `"statustext"`, 1), []string{`tasks.json: unknown field "statustext"`}},
		{"a wrong type", strings.Replace(tree[".atrium/tasks.json"], `"number": 1`, `"number": "1"`, 1), []string{"tasks.json: line ", "tasks.number is a JSON string"}},
		{"an answer to nothing", strings.Replace(tree[".atrium/tasks.json"], `"type": "note"`, `"type": "answer", "answers": 7`, 1), []string{"tasks.json: task #1: comment 1 answers 7, which is not an earlier question"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tree)
			writeFiles(t, dir, map[string]string{".atrium/tasks.json": c.tasks})
			dst := newCLIDB(t, store.SQLite)
			_, errOut, code := dst.run(t, "import", dir)
			if code != 1 {
				t.Fatalf("exit %d, want 1\n%s", code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if _, err := os.Stat(filepath.Join(dst[1], "atrium.db")); err == nil {
				t.Error("a refused import opened the store")
			}
		})
	}

	t.Run("numbers taken", func(t *testing.T) {
		dst := newCLIDB(t, store.SQLite)
		dst.as(t, "zed", "task_create", "title=Another first task")
		_, errOut, code := dst.run(t, "import", good)
		if code != 1 || !strings.Contains(errOut, "already has other tasks numbered #1: an import keeps task numbers") {
			t.Fatalf("exit %d, want 1 naming #1\n%s", code, errOut)
		}
		if paths := dst.pagePaths(t); len(paths) != 0 {
			t.Errorf("a refused import wrote pages: %v", paths)
		}
	})
}
