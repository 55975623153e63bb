package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/store/storetest"
)

// The three agents of 002's example flow, as scripts: dede plans and asks
// duc; duc answers; dede, woken with the answer, completes the phase; the
// hand-off rule gives the task to rev, who reviews. Each rule is written so
// that an agent started again (after a crash) picks up where the thread is.
var flow002 = map[string]string{
	"dede": `{"rules":[
	  {"match":"Server-side sessions","calls":[
	     {"tool":"task_inbox","args":{}},
	     {"tool":"task_signal_complete","args":{"issue_number":"{task}","artifact_path":"plans/{task}.md","summary":"Plan ready: server-side sessions, as advised."}}],
	   "reply":"done","exit":true},
	  {"match":"Atrium woke you","calls":[
	     {"tool":"task_get_context","args":{"issue_number":"{task}"}},
	     {"tool":"write_page","args":{"path":"plans/{task}.md","content":"# Plan\n\n1. Sessions table.\n2. Login form.\n"}},
	     {"tool":"task_ask_question","args":{"issue_number":"{task}","target":"duc","question":"Should we use JWT or server-side sessions?"}}],
	   "reply":"I asked @duc."}]}`,
	"duc": `{"rules":[
	  {"match":"JWT or server-side","unless":"Server-side sessions","calls":[
	     {"tool":"task_inbox","args":{}},
	     {"tool":"task_post_answer","args":{"issue_number":"{task}","target":"dede","answer":"Server-side sessions: we revoke them at once."}}],
	   "reply":"answered","exit":true},
	  {"match":"","calls":[{"tool":"task_inbox","args":{}}],"reply":"nothing more to say","exit":true}]}`,
	"rev": `{"rules":[
	  {"match":"handed the task to you","calls":[
	     {"tool":"task_get_context","args":{"issue_number":"{task}"}},
	     {"tool":"task_post_comment","args":{"issue_number":"{task}","comment":"Reviewing the plan now."}}],
	   "reply":"reviewing","exit":true},
	  {"match":"","calls":[{"tool":"task_inbox","args":{}}],"reply":"nothing to do","exit":true}]}`,
}

// flowAgents adds 002's agents to srv's workspace, each on a different
// channel: dede on stream-json, duc over ACP, rev in a terminal (typed).
func flowAgents(t testing.TB, srv *server) (promptLog string) {
	t.Helper()
	return flowAgentsWith(t, srv, flow002)
}

// flowAgentsWith is flowAgents with scripts of the test's own.
func flowAgentsWith(t testing.TB, srv *server, scripts map[string]string) (promptLog string) {
	t.Helper()
	dir := t.TempDir()
	promptLog = filepath.Join(dir, "prompts.jsonl")
	repo := newRepo(t)
	modes := map[string][2]string{"dede": {"stream-json", "stream-json"}, "duc": {"acp", "acp"}, "rev": {"pty", "pty"}}
	for agent, script := range scripts {
		path := filepath.Join(dir, agent+".json")
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		m := modes[agent]
		if out, errOut, code := srv.cli(t, nil, "agent", "add", agent, "--command", scriptAgent, "--arg", "--mode", "--arg", m[0], "--wake", m[1],
			"--env", "SCRIPTAGENT_SCRIPT="+path, "--env", "SCRIPTAGENT_LOG="+promptLog, "--repo", repo); code != 0 {
			t.Fatalf("agent add %s: %d\n%s%s", agent, code, out, errOut)
		}
	}
	if out, errOut, code := srv.cli(t, nil, "handoff", "set", "phase=plan", "rev", "--next-phase", "review"); code != 0 {
		t.Fatalf("handoff set: %d\n%s%s", code, out, errOut)
	}
	return promptLog
}

// startFlow creates the task, assigned to dede in phase plan: that wakes dede.
func startFlow(t testing.TB, cs *mcp.ClientSession) int64 {
	t.Helper()
	task := structured(t, callTool(t, cs, "task_create", map[string]any{"title": "Add user authentication", "phase": "plan", "assignee": "dede"}))
	return int64(task["task"].(map[string]any)["number"].(float64))
}

// waitThread waits until the task's thread has a comment by rev (the flow's
// last step), and returns the thread.
func waitThread(t *testing.T, cs *mcp.ClientSession, n int64, within time.Duration) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		res := structured(t, callTool(t, cs, "task_get_comments", map[string]any{"issue_number": n}))
		list, _ := res["comments"].([]any)
		var out []map[string]any
		done := false
		for _, c := range list {
			m := c.(map[string]any)
			out = append(out, m)
			done = done || m["author"] == "rev"
		}
		if done {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the flow did not reach rev in %s; thread: %v", within, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deliveries lists every delivery of srv's workspace, with its history.
func deliveries(t *testing.T, srv *server) []map[string]any {
	t.Helper()
	out, errOut, code := srv.cli(t, nil, "agent", "deliveries", "--json", "--limit", "500")
	if code != 0 {
		t.Fatalf("agent deliveries: %d\n%s", code, errOut)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("agent deliveries --json: %v\n%s", err, out)
	}
	for i, d := range list {
		id := strconv.FormatInt(int64(d["id"].(float64)), 10)
		out, errOut, code := srv.cli(t, nil, "agent", "delivery", id)
		if code != 0 {
			t.Fatalf("agent delivery %s: %d\n%s", id, code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &list[i]); err != nil {
			t.Fatal(err)
		}
	}
	return list
}

// ackedOnce checks that every delivery ended acknowledged, exactly once.
func ackedOnce(t *testing.T, list []map[string]any) {
	t.Helper()
	if len(list) == 0 {
		t.Fatal("no deliveries")
	}
	for _, d := range list {
		acks := 0
		hist, _ := d["history"].([]any)
		for _, h := range hist {
			if h.(map[string]any)["state"] == "acknowledged" {
				acks++
			}
		}
		if d["state"] != "acknowledged" || acks != 1 {
			t.Errorf("delivery %v to @%v (%v) is %v, acknowledged %d times; history %v", d["id"], d["agent"], d["what"], d["state"], acks, hist)
		}
	}
}

// prompts reads what each agent was told, from the scripted CLI's log.
func prompts(t testing.TB, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var p struct{ Agent, Prompt string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		out[p.Agent] = append(out[p.Agent], p.Prompt)
	}
	return out
}

// 002's example flow runs unattended: the task assigned to dede starts
// dede's session; dede writes the plan and asks duc; duc's session starts
// and answers; dede, still running, is woken with the answer as a message
// and completes; the hand-off rule starts rev. The thread reads as 002's,
// and every delivery is acknowledged once.
func TestHandoffFlowOf002(t *testing.T) {
	srv := startServe(t, "")
	log := flowAgents(t, srv)
	cs := connectHTTP(t, srv.MCP(), srv.createToken(t, "ada", "", "writer"), "")
	n := startFlow(t, cs)
	thread := waitThread(t, cs, n, 90*time.Second)
	var got []string
	for _, c := range thread {
		got = append(got, c["author"].(string)+" "+c["type"].(string))
	}
	want := "dede question|duc answer|dede completion|rev note"
	if strings.Join(got, "|") != want {
		t.Errorf("the thread reads %q, want %q", strings.Join(got, "|"), want)
	}
	if body := thread[2]["body"].(string); !strings.Contains(body, "@rev Ready for next phase.") {
		t.Errorf("the completion: %q", body)
	}
	ackedOnce(t, deliveries(t, srv))
	told := prompts(t, log)
	// dede: its first prompt, then the answer as a message into the same
	// session (stream-json), not a new session.
	if len(told["dede"]) != 2 || !strings.Contains(told["dede"][0], "You are @dede") || !strings.Contains(told["dede"][1], "[Atrium] New for you, @dede") ||
		!strings.Contains(told["dede"][1], "@duc answered your question") {
		t.Errorf("dede was told %q", told["dede"])
	}
	if len(told["duc"]) != 1 || !strings.Contains(told["duc"][0], "@dede asked you a question") {
		t.Errorf("duc was told %q", told["duc"])
	}
	if len(told["rev"]) != 1 || !strings.Contains(told["rev"][0], "handed the task to you") {
		t.Errorf("rev was told %q", told["rev"])
	}
	// The task moved on to rev's phase; the plan dede wrote is a page.
	task := structured(t, callTool(t, cs, "task_get_context", map[string]any{"issue_number": n}))
	if iss := task["issue"].(map[string]any); iss["phase"] != "review" || iss["assignee"] != "rev" {
		t.Errorf("the task after the hand-off: %v", iss)
	}
	if res := callTool(t, cs, "read_page", map[string]any{"path": "plans/" + strconv.FormatInt(n, 10) + ".md"}); res.IsError {
		t.Errorf("dede's plan: %v", res.Content)
	}
	// Sessions say how they ended.
	list, _ := structured(t, callTool(t, cs, "agent_sessions", nil))["sessions"].([]any)
	for _, s := range list {
		m := s.(map[string]any)
		if m["status"] != "complete" && m["state"] != "running" {
			t.Errorf("session %v of @%v: status %v, state %v (%v)", m["session_id"], m["agent"], m["status"], m["state"], m["reason"])
		}
	}
}

// kill -9 of Atrium at random moments during 002's flow, ten times: the flow
// still ends, and every delivery is acknowledged exactly once.
func TestReliabilityHandoffsSurviveKill9(t *testing.T) {
	rounds := 10
	if testing.Short() {
		rounds = 3
	}
	srv := startServe(t, "")
	flowAgents(t, srv)
	token := srv.createToken(t, "ada", "", "writer")
	cs := connectHTTP(t, srv.MCP(), token, "")
	n := startFlow(t, cs)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("deliveries:\n%v\nserver log:\n%s", deliveries(t, srv), srv.stderr.String())
		}
	})
	for i := range rounds {
		time.Sleep(time.Duration(200+rand.IntN(1800)) * time.Millisecond)
		srv.kill(t)
		srv.restart(t)
		t.Logf("round %d: killed and restarted", i+1)
	}
	cs = connectHTTP(t, srv.MCP(), token, "")
	waitThread(t, cs, n, 4*time.Minute)
	// rev's comment is the last step, but rev reads the context first: its
	// acknowledgement is in before its comment.
	list := deliveries(t, srv)
	ackedOnce(t, list)
	// Atrium's own deaths are no attempt of a delivery's: ten of them leave
	// every delivery on its first attempts, far from being given up.
	for _, d := range list {
		if n := d["attempts"].(float64); n > 3 {
			t.Errorf("delivery %v to @%v is on attempt %v after %d kills of Atrium: %v", d["id"], d["agent"], n, rounds, d["history"])
		}
	}
}

// An agent at work when Atrium ends goes on when Atrium is back. dede has
// read @duc's answer (its delivery is acknowledged, and will not wake it
// again) and is thinking before it completes the phase when Atrium is
// killed, or stopped, and its session with it: started again, Atrium wakes
// dede again on the task with what it had read, and the flow runs to rev.
// Without the resume, dede's work is lost and the task waits on nobody for
// good.
func TestAnAgentCutShortByAtriumsEndGoesOn(t *testing.T) {
	for _, end := range []string{"kill -9", "SIGTERM"} {
		t.Run(end, func(t *testing.T) { agentCutShort(t, end) })
	}
}

func agentCutShort(t *testing.T, end string) {
	scripts := maps.Clone(flow002)
	scripts["dede"] = strings.Replace(flow002["dede"], `{"tool":"task_inbox","args":{}},`, `{"tool":"task_inbox","args":{}}, {"sleep_ms":3000},`, 1)
	if scripts["dede"] == flow002["dede"] {
		t.Fatal("dede's script has no pause")
	}
	srv := startServe(t, "")
	flowAgentsWith(t, srv, scripts)
	cs := connectHTTP(t, srv.MCP(), srv.createToken(t, "ada", "", "writer"), "")
	n := startFlow(t, cs)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("deliveries:\n%v\nserver log:\n%s", deliveries(t, srv), srv.stderr.String())
		}
	})
	// Killed while dede pauses between reading the answer and completing.
	deadline := time.Now().Add(40 * time.Second)
	for !slices.ContainsFunc(deliveries(t, srv), func(d map[string]any) bool {
		return d["agent"] == "dede" && d["kind"] == "answer" && d["state"] == "acknowledged"
	}) {
		if time.Now().After(deadline) {
			t.Fatalf("dede never read the answer: %v", deliveries(t, srv))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if end == "kill -9" {
		srv.kill(t)
	} else {
		srv.stop(t)
	}
	srv.restart(t)
	cs = connectHTTP(t, srv.MCP(), srv.createToken(t, "ada2", "", "writer"), "")
	waitThread(t, cs, n, time.Minute)
	list := deliveries(t, srv)
	ackedOnce(t, list)
	resumed := 0
	for _, d := range list {
		if d["kind"] == "resume" {
			resumed++
			if d["agent"] != "dede" || !strings.Contains(fmt.Sprint(d["what"]), "after you had read this: @duc answered your question") || !strings.Contains(fmt.Sprint(d["text"]), "Server-side sessions") {
				t.Errorf("resume %v: to @%v, %q with %q; want dede's, saying it had read duc's answer, with the answer", d["id"], d["agent"], d["what"], d["text"])
			}
		}
	}
	if resumed != 1 {
		t.Errorf("%d resumes, want 1: %v", resumed, list)
	}
}

// Two replicas on one PostgreSQL share the deliveries: flows started on
// both run to their end, each delivery is claimed and delivered by one
// replica, once, and acknowledged once.
func TestHandoffsAcrossTwoReplicas(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	a := startServe(t, dsn, "--max-sessions", "32")
	b := startServe(t, dsn, "--max-sessions", "32")
	log := flowAgents(t, a)
	for _, agent := range []string{"dede", "duc", "rev"} {
		// Room for every flow at once, on either replica.
		if out, errOut, code := a.cli(t, nil, "agent", "add", agent, "--command", scriptAgent, "--max-sessions", "16", "--arg", "--mode", "--arg", map[string]string{"dede": "stream-json", "duc": "acp", "rev": "pty"}[agent],
			"--wake", map[string]string{"dede": "stream-json", "duc": "acp", "rev": "pty"}[agent], "--env", "SCRIPTAGENT_SCRIPT="+filepath.Join(filepath.Dir(log), agent+".json"), "--env", "SCRIPTAGENT_LOG="+log); code != 0 {
			t.Fatalf("agent add %s: %d\n%s%s", agent, code, out, errOut)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			out, _, _ := a.cli(t, nil, "agent", "deliveries", "--json")
			t.Logf("deliveries:\n%s", out)
			t.Logf("replica a:\n%s\nreplica b:\n%s", a.stderr.String(), b.stderr.String())
		}
	})
	token := a.createToken(t, "ada", "", "writer")
	clients := []*mcp.ClientSession{connectHTTP(t, a.MCP(), token, ""), connectHTTP(t, b.MCP(), token, "")}
	const flows = 6
	tasks := make([]int64, flows)
	for i := range tasks {
		tasks[i] = startFlow(t, clients[i%2])
	}
	for i, n := range tasks {
		waitThread(t, clients[(i+1)%2], n, 40*time.Second)
	}
	list := deliveries(t, a)
	ackedOnce(t, list)
	replicas := map[string]bool{}
	for _, d := range list {
		delivered := 0
		for _, h := range d["history"].([]any) {
			m := h.(map[string]any)
			switch m["state"] {
			case "delivered":
				delivered++
			case "waking":
				replicas[strings.TrimPrefix(m["note"].(string), "claimed by replica ")] = true
			}
		}
		if delivered != 1 {
			t.Errorf("delivery %v was delivered %d times: %v", d["id"], delivered, d["history"])
		}
	}
	if len(replicas) != 2 {
		t.Errorf("deliveries were claimed by %d replicas, want both: %v", len(replicas), replicas)
	}
	told := prompts(t, log)
	if len(told["duc"]) != flows || len(told["rev"]) != flows || len(told["dede"]) != 2*flows {
		t.Errorf("prompts: dede %d, duc %d, rev %d; want %d, %d, %d", len(told["dede"]), len(told["duc"]), len(told["rev"]), 2*flows, flows, flows)
	}
}

// An agent whose inbox is long (a first page of older items) still
// acknowledges what its session was given by reading its inbox: the
// session's own deliveries, not only the page's items.
func TestAFullInboxStillAcknowledges(t *testing.T) {
	srv := startServe(t, "")
	if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "duc", "--kind", "agent", "--workspace", "default"); code != 0 { // duc exists, not yet with a preset
		t.Fatalf("token create: %d\n%s", code, errOut)
	}
	ada := connectHTTP(t, srv.MCP(), srv.createToken(t, "ada", "", "writer"), "")
	old := structured(t, callTool(t, ada, "task_create", map[string]any{"title": "Old"}))
	oldN := int64(old["task"].(map[string]any)["number"].(float64))
	for i := range 60 {
		callTool(t, ada, "task_post_comment", map[string]any{"issue_number": oldN, "comment": "@duc note " + strconv.Itoa(i)})
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "duc.json")
	if err := os.WriteFile(script, []byte(`{"rules":[{"match":"","calls":[{"tool":"task_inbox","args":{}}],"reply":"read","exit":true}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := srv.cli(t, nil, "agent", "add", "duc", "--command", scriptAgent, "--arg", "--mode", "--arg", "stream-json", "--wake", "stream-json",
		"--env", "SCRIPTAGENT_SCRIPT="+script); code != 0 {
		t.Fatalf("agent add: %d\n%s%s", code, out, errOut)
	}
	task := structured(t, callTool(t, ada, "task_create", map[string]any{"title": "New"}))
	n := int64(task["task"].(map[string]any)["number"].(float64))
	callTool(t, ada, "task_ask_question", map[string]any{"issue_number": n, "target": "duc", "question": "Seen this?"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		list := deliveries(t, srv)
		if len(list) == 1 && list[0]["state"] == "acknowledged" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delivery was not acknowledged: %v", list)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
