package agents_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/tasks"
)

// env is a workspace whose server runs sessions, with an admin.
type env struct {
	svc   *services.Services
	admin context.Context
	data  string
}

func newEnv(t testing.TB, e store.Engine) *env {
	t.Helper()
	return newEnvOver(t, storetest.MustOpen(t, e, &store.Options{Conns: 4}))
}

// newEnvOver is newEnv over a store the test holds too.
func newEnvOver(t testing.TB, db *store.DB) *env {
	t.Helper()
	svc := servicestest.Over(t, db)
	secret, _, err := svc.Identity.CreateToken(context.Background(), identity.TokenRequest{Principal: "ada", Workspace: atrium.DefaultWorkspace, Role: atrium.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	a, err := svc.Identity.Authenticate(context.Background(), secret, "")
	if err != nil {
		t.Fatal(err)
	}
	v := &env{svc: svc, admin: atrium.NewContextWithActor(context.Background(), a), data: t.TempDir()}
	if err := svc.Agents.Enable(context.Background(), agents.RunnerConfig{DataDir: v.data, URL: "http://127.0.0.1:1", Binary: "/bin/true", Replica: "test-" + t.Name(), StopGrace: time.Second, MaxSessions: 64}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Agents.Shutdown)
	return v
}

// gitRepo is a repository with one commit on main, in a folder of its own
// (its worktrees go beside it).
func gitRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# repo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", ".")
	run("commit", "-q", "-m", "first")
	return dir
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// ended waits for session id to end and returns it.
func (v *env) ended(t *testing.T, id string) agents.Session {
	t.Helper()
	events, stop := v.svc.Events()
	defer stop()
	for {
		s, err := v.svc.Agents.Session(v.admin, id)
		if err != nil {
			t.Fatal(err)
		}
		if !s.EndedAt.IsZero() {
			return s
		}
		select {
		case <-events:
		case <-time.After(30 * time.Second):
			t.Fatalf("session %s never ended: %+v", id, s)
		}
	}
}

// A session runs in a verified worktree beside the repository, on its own
// branch from the default branch, with its identity in its environment and
// none of Atrium's secrets; its work is committed on its branch when it
// ends, and its token no longer works.
func TestASessionWorksInItsOwnWorktree(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		t.Setenv("ATRIUM_DB", "postgres://secret@db/atrium")
		t.Setenv("CLAUDECODE", "1")
		v := newEnv(t, e)
		repo := gitRepo(t)
		script := `cat /proc/$$/environ | tr '\0' '\n' > "$AGENT_WORKSPACE/../env-$ATRIUM_SESSION.txt"; echo "work by $ATRIUM_AGENT" > result.txt; pwd; exit 3`
		if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "duc", Command: "/bin/sh", Args: []string{"-c", script}, Repo: repo}); err != nil {
			t.Fatal(err)
		}
		task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Add user authentication")}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "duc", Task: task.Number})
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(filepath.Dir(repo), strconv.FormatInt(task.Number, 10)+"-add-user-authentication")
		if s.Dir != want || s.Branch != "atrium/"+filepath.Base(want) || s.Base != "main" {
			t.Fatalf("session in %s on %s from %s; want %s on atrium/%s from main", s.Dir, s.Branch, s.Base, want, filepath.Base(want))
		}
		s = v.ended(t, s.ID)
		if s.State != agents.StateExited || s.ExitCode == nil || *s.ExitCode != 3 {
			t.Fatalf("ended as %s (%v), %s; want exited with 3", s.State, s.ExitCode, s.Reason)
		}
		if got := git(t, repo, "worktree", "list", "--porcelain"); !strings.Contains(got, "worktree "+want) {
			t.Errorf("git does not list the worktree %s:\n%s", want, got)
		}
		if got := git(t, repo, "show", s.Branch+":result.txt"); got != "work by duc" {
			t.Errorf("the branch holds %q, want the agent's work committed", got)
		}
		if got := git(t, repo, "log", "-1", "--format=%an", s.Branch); got != "duc" {
			t.Errorf("the work is committed by %q, want the agent", got)
		}
		if _, err := os.Stat(filepath.Join(repo, "result.txt")); err == nil {
			t.Error("the agent's work landed in the main checkout")
		}
		environ, err := os.ReadFile(filepath.Join(filepath.Dir(want), "env-"+s.ID+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]string{}
		for line := range strings.Lines(string(environ)) {
			k, val, _ := strings.Cut(strings.TrimSpace(line), "=")
			vars[k] = val
		}
		for k, want := range map[string]string{"ATRIUM_AGENT": "duc", "ATRIUM_WORKSPACE": "default", "AGENT_WORKSPACE": want, "ATRIUM_TASK": strconv.FormatInt(task.Number, 10), "ATRIUM_URL": "http://127.0.0.1:1/mcp"} {
			if vars[k] != want {
				t.Errorf("%s=%q in the session, want %q", k, vars[k], want)
			}
		}
		for _, k := range []string{"ATRIUM_DB", "CLAUDECODE", "ATRIUM_TEST_POSTGRES"} {
			if _, ok := vars[k]; ok {
				t.Errorf("the session inherited %s", k)
			}
		}
		if _, err := v.svc.Identity.Authenticate(context.Background(), vars["ATRIUM_TOKEN"], ""); err == nil {
			t.Error("the session's token still works after it ended")
		}
	})
}

// Stopping a session ends its whole process group, a forked child that
// ignores SIGTERM included.
func TestStoppingASessionEndsItsGroup(t *testing.T) {
	v := newEnv(t, store.SQLite)
	script := `trap '' TERM; sleep 1000 & echo "child $!"; while :; do sleep 1; done`
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "stubborn", Command: "/bin/sh", Args: []string{"-c", script}}); err != nil {
		t.Fatal(err)
	}
	s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "stubborn"})
	if err != nil {
		t.Fatal(err)
	}
	if s.PID == 0 || s.State != agents.StateRunning {
		t.Fatalf("started as %+v", s)
	}
	pgid := s.PID
	deadline := time.Now().Add(10 * time.Second)
	for len(groupMembers(pgid)) < 3 { // the shell, its sleep and the guardian
		if time.Now().After(deadline) {
			t.Fatalf("the session's group is %v", groupMembers(pgid))
		}
		time.Sleep(10 * time.Millisecond)
	}
	s, err = v.svc.Agents.Stop(v.admin, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s.State != agents.StateStopped {
		t.Fatalf("stopped as %s", s.State)
	}
	if left := groupMembers(pgid); len(left) > 0 {
		t.Errorf("processes of the session's group are left: %v", left)
	}
}

// groupMembers lists the processes of group pgid.
func groupMembers(pgid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// Only admins configure agents; readers start nothing; one session per
// agent and task; a folder in the way of the worktree stops the start, and
// nothing runs in the main checkout.
func TestSessionRules(t *testing.T) {
	v := newEnv(t, store.SQLite)
	writer := servicestest.Agent(t, v.svc, "wendy", "")
	wctx := atrium.NewContextWithActor(context.Background(), writer)
	if _, err := v.svc.Agents.SetAgent(wctx, agents.AgentRequest{Handle: "x", Preset: "shell"}); atrium.ErrorCode(err) != atrium.EPermission {
		t.Errorf("a writer configured an agent: %v", err)
	}
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "x", Preset: "nope"}); atrium.ErrorCode(err) != atrium.EInvalid {
		t.Errorf("an unknown preset: %v", err)
	}
	repo := gitRepo(t)
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "sleeper", Command: "/bin/sh", Args: []string{"-c", "sleep 1000"}, Repo: repo}); err != nil {
		t.Fatal(err)
	}
	task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Twice")}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := v.svc.Agents.Start(wctx, agents.StartRequest{Agent: "sleeper", Task: task.Number})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.svc.Agents.Start(wctx, agents.StartRequest{Agent: "sleeper", Task: task.Number}); atrium.ErrorCode(err) != atrium.EConflict {
		t.Errorf("a second session on the same task: %v", err)
	}
	if _, err := v.svc.Agents.Stop(wctx, s.ID); err != nil {
		t.Fatal(err)
	}
	// A folder that is not the worktree, where the next one would go.
	other, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Blocked folder")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(filepath.Dir(repo), strconv.FormatInt(other.Number, 10)+"-blocked-folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := v.svc.Agents.Start(wctx, agents.StartRequest{Agent: "sleeper", Task: other.Number}); atrium.ErrorCode(err) != atrium.EConflict {
		t.Errorf("a start over a folder that is not its worktree: %v", err)
	}
	// It is on record as failed, with why: nothing ran over the folder.
	list, err := v.svc.Agents.Sessions(wctx, 10)
	if err != nil || len(list) != 2 || list[0].State != agents.StateFailed || !strings.Contains(list[0].Reason, "is not") || list[0].PID != 0 || list[0].Dir != "" {
		t.Errorf("sessions %+v, %v; want the first and a failed one that says why", list, err)
	}
	// A git still making the worktree (one a killed Atrium started) is no
	// conflict: the start waits for it and runs in what it made.
	third, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Half made")}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(repo), strconv.FormatInt(third.Number, 10)+"-half-made")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	finished := make(chan string, 1)
	go func() {
		time.Sleep(time.Second)
		os.Remove(dir)
		out, err := exec.Command("git", "-C", repo, "worktree", "add", "-b", "atrium/"+filepath.Base(dir), dir, "main").CombinedOutput()
		msg := ""
		if err != nil {
			msg = fmt.Sprintf("%v: %s", err, out)
		}
		finished <- msg
	}()
	s, err = v.svc.Agents.Start(wctx, agents.StartRequest{Agent: "sleeper", Task: third.Number})
	if msg := <-finished; msg != "" {
		t.Fatalf("the other git: %s", msg)
	}
	if err != nil || s.Dir != dir {
		t.Fatalf("a start while another git made its worktree: %+v, %v", s, err)
	}
	if _, err := v.svc.Agents.Stop(wctx, s.ID); err != nil {
		t.Fatal(err)
	}
}

// A viewer that stops reading is dropped, and neither the agent nor the
// other viewers wait for it: the agent's 8 MB of output all reach the
// viewer that reads, in order.
func TestAStalledViewerSlowsNoOne(t *testing.T) {
	v := newEnv(t, store.SQLite)
	// Waits for its go-ahead (a line typed in), then writes 8 MB.
	script := `read go; head -c 8000000 /dev/zero | tr '\0' 'a'; echo; echo END; sleep 1000`
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "loud", Command: "/bin/sh", Args: []string{"-c", script}}); err != nil {
		t.Fatal(err)
	}
	s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "loud"})
	if err != nil {
		t.Fatal(err)
	}
	stalled, _, _, err := v.svc.Agents.Attach(v.admin, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	reader, replay, _, err := v.svc.Agents.Attach(v.admin, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.TakeControl(); err != nil {
		t.Fatal(err)
	}
	if err := stalled.Input([]byte("x\r")); atrium.ErrorCode(err) != atrium.EPermission {
		t.Errorf("a viewer without control typed: %v", err)
	}
	if err := reader.Input([]byte("go\r")); err != nil {
		t.Fatal(err)
	}
	got := len(replay)
	as := 0
	deadline := time.After(60 * time.Second)
	for done := false; !done; {
		select {
		case f, ok := <-reader.C:
			if !ok {
				t.Fatalf("the reading viewer was dropped after %d bytes", got)
			}
			got += len(f.Output)
			as += strings.Count(string(f.Output), "a")
			done = strings.Contains(string(f.Output), "END")
		case <-deadline:
			t.Fatalf("the reading viewer got %d bytes (%d of 8000000 a's), not the end", got, as)
		}
	}
	if as != 8000000 {
		t.Errorf("the reading viewer got %d a's, want 8000000: output lost or repeated", as)
	}
	// The stalled one was let go once its buffer filled.
	n := 0
	for range stalled.C {
		n++
	}
	if n >= 300 {
		t.Errorf("the stalled viewer held %d frames", n)
	}
	if _, err := v.svc.Agents.Stop(v.admin, s.ID); err != nil {
		t.Fatal(err)
	}
}

// A writer sees what a session changed, merges it into the default branch
// (checked first: a conflict is reported, nothing forced), and removes its
// worktree (kept while it has uncommitted changes, unless forced).
func TestDiffMergeAndRemove(t *testing.T) {
	v := newEnv(t, store.SQLite)
	repo := gitRepo(t)
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "writer", Command: "/bin/sh", Args: []string{"-c", `echo "# Feature" > FEATURE.md; echo "changed by the agent" > README.md`}, Repo: repo}); err != nil {
		t.Fatal(err)
	}
	start := func(title string) agents.Session {
		task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new(title)}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "writer", Task: task.Number})
		if err != nil {
			t.Fatal(err)
		}
		return v.ended(t, s.ID)
	}
	one := start("One")
	diff, cut, err := v.svc.Agents.Diff(v.admin, one.ID)
	if err != nil || cut || !strings.Contains(diff, "+# Feature") || !strings.Contains(diff, "+changed by the agent") {
		t.Fatalf("diff %q (cut %v), %v", diff, cut, err)
	}
	// A second session changes README.md too, from the same base.
	two := start("Two")
	if _, err := v.svc.Agents.Merge(v.admin, one.ID); err != nil {
		t.Fatal(err)
	}
	if got := git(t, repo, "show", "main:FEATURE.md"); got != "# Feature" {
		t.Errorf("main has FEATURE.md %q after the merge", got)
	}
	// Now main's README.md differs from what two's branch started from.
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("a person's README\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qam", "a person's change")
	before := git(t, repo, "rev-parse", "main")
	_, err = v.svc.Agents.Merge(v.admin, two.ID)
	if atrium.ErrorCode(err) != atrium.EConflict || !strings.Contains(err.Error(), "README.md") {
		t.Errorf("merging a conflicting branch: %v; want a conflict naming README.md", err)
	}
	if after := git(t, repo, "rev-parse", "main"); after != before || git(t, repo, "status", "--porcelain") != "" {
		t.Errorf("a refused merge changed the checkout: %s → %s", before, after)
	}
	// Uncommitted changes keep a worktree, unless forced.
	if err := os.WriteFile(filepath.Join(two.Dir, "WIP.md"), []byte("wip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := v.svc.Agents.RemoveWorktree(v.admin, two.ID, false); atrium.ErrorCode(err) != atrium.EConflict {
		t.Errorf("removing a worktree with uncommitted changes: %v", err)
	}
	if err := v.svc.Agents.RemoveWorktree(v.admin, two.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := v.svc.Agents.RemoveWorktree(v.admin, one.ID, false); err != nil {
		t.Fatal(err)
	}
	for _, s := range []agents.Session{one, two} {
		if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
			t.Errorf("the worktree %s is still there: %v", s.Dir, err)
		}
	}
	if got := git(t, repo, "branch", "--list", two.Branch); got == "" {
		t.Error("removing the worktree removed its branch")
	}
}

// The terminal's size reaches the process (SIGWINCH), and Ctrl-C typed in
// it interrupts the process as in any terminal.
func TestResizeAndInterrupt(t *testing.T) {
	v := newEnv(t, store.SQLite)
	script := `trap 'echo "size $(stty size)"' WINCH; echo ready; while :; do sleep 0.05; done`
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "tty", Command: "/bin/sh", Args: []string{"-c", script}}); err != nil {
		t.Fatal(err)
	}
	s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "tty"})
	if err != nil {
		t.Fatal(err)
	}
	viewer, replay, _, err := v.svc.Agents.Attach(v.admin, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := viewer.Resize(30, 100); atrium.ErrorCode(err) != atrium.EPermission {
		t.Errorf("a viewer without control resized: %v", err)
	}
	if err := viewer.TakeControl(); err != nil {
		t.Fatal(err)
	}
	seen := string(replay)
	wait := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for !strings.Contains(seen, want) {
			select {
			case f, ok := <-viewer.C:
				if !ok {
					t.Fatalf("the viewer was let go before %q; it saw %q", want, seen)
				}
				seen += string(f.Output)
				if f.Ended {
					seen += "[ended " + f.State + "]"
				}
			case <-deadline:
				t.Fatalf("no %q in %q", want, seen)
			}
		}
	}
	wait("ready")
	if err := viewer.Resize(30, 100); err != nil {
		t.Fatal(err)
	}
	wait("size 30 100")
	if err := viewer.Input([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	s = v.ended(t, s.ID)
	if s.State != agents.StateExited || s.ExitCode == nil || *s.ExitCode != 130 {
		t.Errorf("after Ctrl-C the session is %s (%v), want exited by SIGINT (130)", s.State, s.ExitCode)
	}
}

// Twenty sessions run at once, and stop, leaving nothing behind.
func TestTwentySessionsAtOnce(t *testing.T) {
	v := newEnv(t, store.SQLite)
	if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "many", Command: "/bin/sh", Args: []string{"-c", "sleep 1000 & sleep 1000"}, MaxSessions: 20}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ids := make([]agents.Session, 20)
	for i := range ids {
		wg.Go(func() {
			task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new(fmt.Sprintf("Task %d", i))}})
			if err != nil {
				t.Error(err)
				return
			}
			if ids[i], err = v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "many", Task: task.Number}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, s := range ids {
		if s.State != agents.StateRunning {
			t.Fatalf("a session started as %+v", s)
		}
	}
	for _, s := range ids {
		wg.Go(func() {
			if _, err := v.svc.Agents.Stop(v.admin, s.ID); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, s := range ids {
		if left := groupMembers(s.PID); len(left) > 0 {
			t.Errorf("session %s left %v", s.ID, left)
		}
	}
}

// Starts of one agent on one task at the same moment: exactly one runs, the
// others are conflicts, on either engine.
func TestConcurrentStartsRunOneSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := newEnv(t, e)
		if _, err := v.svc.Agents.SetAgent(v.admin, agents.AgentRequest{Handle: "racer", Command: "/bin/sh", Args: []string{"-c", "sleep 1000"}}); err != nil {
			t.Fatal(err)
		}
		task, err := v.svc.Tasks.Create(v.admin, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Once")}})
		if err != nil {
			t.Fatal(err)
		}
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			started   []agents.Session
			conflicts int
		)
		for range 6 {
			wg.Go(func() {
				s, err := v.svc.Agents.Start(v.admin, agents.StartRequest{Agent: "racer", Task: task.Number})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					started = append(started, s)
				case atrium.ErrorCode(err) == atrium.EConflict:
					conflicts++
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if len(started) != 1 || conflicts != 5 {
			t.Fatalf("%d started and %d conflicts, want 1 and 5", len(started), conflicts)
		}
		if _, err := v.svc.Agents.Stop(v.admin, started[0].ID); err != nil {
			t.Fatal(err)
		}
	})
}
