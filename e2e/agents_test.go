package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newRepo is a git repository with one commit on main, in a folder of its
// own: its worktrees go beside it.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "start"}} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(cleanEnv(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// sessionOf reads session id from agent_sessions.
func sessionOf(t *testing.T, cs *mcp.ClientSession, id string) map[string]any {
	t.Helper()
	list, _ := structured(t, callTool(t, cs, "agent_sessions", nil))["sessions"].([]any)
	for _, s := range list {
		if m, _ := s.(map[string]any); m["session_id"] == id {
			return m
		}
	}
	t.Fatalf("agent_sessions does not list %s: %v", id, list)
	return nil
}

// waitSession waits until session id is in one of the states.
func waitSession(t *testing.T, cs *mcp.ClientSession, id string, states ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := sessionOf(t, cs, id)
		for _, st := range states {
			if s["state"] == st {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s is %v, want one of %v", id, s, states)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// An admin adds an agent from the CLI; a writer starts it over MCP on a
// task; the agent works in its own worktree and reaches Atrium as itself
// with the session's token (atrium call against ATRIUM_URL), its work is
// committed on its branch, and the token dies with the session.
func TestAgentSessionThroughTheBinary(t *testing.T) {
	srv := startServe(t, "")
	repo := newRepo(t)
	script := `"$ATRIUM_BIN" call task_update_status issue_number="$ATRIUM_TASK" status="reading the task" --url "$ATRIUM_URL" && echo "$ATRIUM_TOKEN" > "$AGENT_WORKSPACE/../token-$ATRIUM_SESSION" && "$ATRIUM_BIN" call whoami --url "" --stdio "$ATRIUM_BIN mcp" > "$AGENT_WORKSPACE/../whoami-$ATRIUM_SESSION" && echo done > DONE.md`
	if out, errOut, code := srv.cli(t, nil, "agent", "add", "duc", "--command", "/bin/sh", "--arg", "-c", "--arg", script, "--env", "ATRIUM_BIN="+binary, "--repo", repo); code != 0 {
		t.Fatalf("agent add: %d\n%s%s", code, out, errOut)
	}
	cs := connectHTTP(t, srv.MCP(), srv.createToken(t, "wendy", "", "writer"), "")
	task := structured(t, callTool(t, cs, "task_create", map[string]any{"title": "Add user authentication"}))
	n := int64(task["task"].(map[string]any)["number"].(float64))
	started := structured(t, callTool(t, cs, "agent_start", map[string]any{"agent": "duc", "issue_number": n}))
	id, _ := started["session_id"].(string)
	wantDir := filepath.Join(filepath.Dir(repo), fmt.Sprintf("%d-add-user-authentication", n))
	if started["worktree_path"] != wantDir {
		t.Fatalf("started %v; want its worktree at %s", started, wantDir)
	}
	s := waitSession(t, cs, id, "exited", "failed", "stopped")
	if s["state"] != "exited" || s["exit_code"] != float64(0) {
		t.Fatalf("the session ended as %v", s)
	}
	ctx := structured(t, callTool(t, cs, "task_get_context", map[string]any{"issue_number": n}))
	issue := ctx["issue"].(map[string]any)
	if issue["status_text"] != "reading the task" {
		t.Errorf("the agent's status did not reach the task: %v", issue)
	}
	comments, _ := ctx["comments"].([]any)
	if len(comments) == 0 || comments[len(comments)-1].(map[string]any)["author"] != "duc" {
		t.Errorf("the task's last comment is not the agent's: %v", comments)
	}
	if out, err := exec.Command("git", "-C", repo, "show", "atrium/"+filepath.Base(wantDir)+":DONE.md").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "done" {
		t.Errorf("the agent's work is not committed on its branch: %v %s", err, out)
	}
	// The MCP configuration's server, atrium mcp, forwards to this server as the agent.
	if who, err := os.ReadFile(filepath.Join(filepath.Dir(repo), "whoami-"+id)); err != nil || !strings.Contains(string(who), `"handle": "duc"`) {
		t.Errorf("atrium mcp inside the session answered whoami with %s (%v); want @duc", who, err)
	}
	// The session's page shows what it changed, and merges it into main.
	page := webGet(t, srv.URL+"/sessions/"+id, srv.AdminToken)
	if !strings.Contains(page, "DONE.md") || !strings.Contains(page, "Merge into main") {
		t.Errorf("the session's page shows no diff of DONE.md:\n%.2000s", page)
	}
	form, _ := http.NewRequest("POST", srv.URL+"/sessions/"+id+"/merge", nil)
	form.Header.Set("Authorization", "Bearer "+srv.AdminToken)
	form.Header.Set("Origin", srv.URL)
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(form)
	if err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("merge: %v %v", err, res)
	}
	res.Body.Close()
	if out, err := exec.Command("git", "-C", repo, "show", "main:DONE.md").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "done" {
		t.Errorf("main lacks the merged work: %v %s", err, out)
	}
	token, err := os.ReadFile(filepath.Join(filepath.Dir(repo), "token-"+id))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tryConnectHTTP(srv.MCP(), strings.TrimSpace(string(token)), ""); err == nil {
		t.Error("the session's token still opens a session after it ended")
	}
}

// sessionProcesses lists the processes whose environment names session id.
func sessionProcesses(id string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && strings.Contains(string(b), "ATRIUM_SESSION="+id+"\x00") {
			out = append(out, pid)
		}
	}
	return out
}

// A kill -9 of Atrium leaves no process of its sessions behind, the forked
// children of an agent included, also one that left the session and its
// group with setsid; when it starts again, the session it left is marked
// failed.
func TestKillingAtriumEndsItsSessions(t *testing.T) {
	srv := startServe(t, "")
	if out, errOut, code := srv.cli(t, nil, "agent", "add", "sleeper", "--command", "/bin/sh", "--arg", "-c", "--arg", "sleep 1000 & setsid sleep 1000 & sleep 1000"); code != 0 {
		t.Fatalf("agent add: %d\n%s%s", code, out, errOut)
	}
	cs := connectHTTP(t, srv.MCP(), srv.createToken(t, "wendy", "", "writer"), "")
	id, _ := structured(t, callTool(t, cs, "agent_start", map[string]any{"agent": "sleeper"}))["session_id"].(string)
	deadline := time.Now().Add(10 * time.Second)
	for len(sessionProcesses(id)) < 4 { // the guardian, the shell, its two sleeps and the setsid one
		if time.Now().After(deadline) {
			t.Fatalf("the session's processes never showed: %v", sessionProcesses(id))
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.kill(t)
	deadline = time.Now().Add(10 * time.Second)
	for len(sessionProcesses(id)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes of the session outlived Atrium: %v", sessionProcesses(id))
		}
		time.Sleep(20 * time.Millisecond)
	}
	srv.restart(t)
	cs = connectHTTP(t, srv.MCP(), srv.createToken(t, "wendy", "", "writer"), "")
	if s := sessionOf(t, cs, id); s["state"] != "failed" {
		t.Errorf("after a restart the session is %v, want failed", s)
	}
}

// webGet reads a browser page with a bearer token.
func webGet(t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", url, res.StatusCode, b)
	}
	return string(b)
}

// atrium agent attach shows a session's terminal from a terminal: the
// first key takes control, the typed line reaches the process, Ctrl-]
// detaches and the session goes on.
func TestAgentAttachFromTheCLI(t *testing.T) {
	srv := startServe(t, "")
	if out, errOut, code := srv.cli(t, nil, "agent", "add", "echoer", "--command", "/bin/cat"); code != 0 {
		t.Fatalf("agent add: %d\n%s%s", code, out, errOut)
	}
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	id, _ := structured(t, callTool(t, cs, "agent_start", map[string]any{"agent": "echoer"}))["session_id"].(string)
	cmd := exec.Command(binary, "agent", "attach", id, "--url", srv.MCP())
	cmd.Env = append(cleanEnv(), "ATRIUM_TOKEN="+srv.AdminToken)
	stdin, _ := cmd.StdinPipe()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	io.WriteString(stdin, "hello from the cli\n")
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(out.String(), "hello from the cli") < 2 { // the echo, and cat's answer
		if time.Now().After(deadline) {
			t.Fatalf("the typed line did not come back\nstdout %q\nstderr %s", out, errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	io.WriteString(stdin, "\x1d")
	if err := cmd.Wait(); err != nil || !strings.Contains(errOut.String(), "detached; the session goes on") {
		t.Errorf("attach ended with %v\n%s", err, errOut)
	}
	if s := sessionOf(t, cs, id); s["state"] != "running" {
		t.Errorf("after a detach the session is %v, want running", s["state"])
	}
}
