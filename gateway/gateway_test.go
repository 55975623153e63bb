package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

func names(g *Gateway) []string {
	var out []string
	for _, t := range g.Tools() {
		out = append(out, t.Def.Name)
	}
	return out
}

func TestPrefixedToolsAndDestructiveHeldBack(t *testing.T) {
	h := newHarness(t)
	allow := h.server(nil)
	allow["metadata"] = map[string]any{"allowDestructiveTools": true}
	g := h.start(map[string]any{"alpha": h.server(nil), "beta": allow})

	got := names(g)
	for _, want := range []string{"alpha_echo", "alpha_write_note", "alpha_env", "beta_echo", "beta_wipe", "beta_plain", "beta_delete_note"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not exposed; exposed: %v", want, got)
		}
	}
	for _, held := range []string{"alpha_wipe", "alpha_plain", "alpha_delete_note"} {
		if slices.Contains(got, held) {
			t.Errorf("%s exposed, want it held back", held)
		}
	}
	for _, n := range got {
		if len(n) > MaxName || strings.ContainsFunc(n, func(r rune) bool { return !nameChar(r) }) {
			t.Errorf("name %q breaks the pattern [A-Za-z0-9_-]{1,64}", n)
		}
	}
	long := exposedName("alpha", "a_tool_whose_name_is_far_too_long_for_any_client_to_accept_as_it_is")
	if !slices.Contains(got, long) || len(long) != MaxName {
		t.Errorf("long name %q (%d) not exposed cut to %d", long, len(long), MaxName)
	}

	// Definitions pass through unchanged but for the name.
	tool, ok, _ := g.Lookup("alpha_echo")
	if !ok || tool.Def.Description != "Echoes text." || !tool.ReadOnly || !objectSchema(tool.Def.InputSchema) {
		t.Errorf("alpha_echo listed as %+v", tool.Def)
	}
	if txt, err := h.call("alpha_echo", map[string]string{"text": "hi"}); err != nil || txt != "hi" {
		t.Errorf("alpha_echo: %q, %v", txt, err)
	}

	reasons := map[string]string{}
	for _, hd := range h.status("alpha").Held {
		reasons[hd.Tool] = hd.Reason
	}
	for tool, want := range map[string]string{"wipe": "destructiveHint is true", "plain": "spec takes as destructive", "delete_note": "delete, remove or destroy"} {
		if !strings.Contains(reasons[tool], want) {
			t.Errorf("held reason of %s = %q, want it to say %q", tool, reasons[tool], want)
		}
		_, err := h.call("alpha_"+tool, map[string]any{})
		if atrium.ErrorCode(err) != atrium.EPermission || !strings.Contains(err.Error(), "held back") || !strings.Contains(err.Error(), want) {
			t.Errorf("calling held %s: %v, want permission_denied saying why", tool, err)
		}
	}
	if !strings.Contains(h.logs.String(), "tool held back") || !strings.Contains(h.logs.String(), "tool=wipe") {
		t.Errorf("held-back tools not logged:\n%s", h.logs)
	}
	if txt, err := h.call("beta_wipe", map[string]any{}); err != nil || txt != "wiped" {
		t.Errorf("allowed beta_wipe: %q, %v", txt, err)
	}

	// Prompts are prefixed too.
	res, err := g.GetPrompt(context.Background(), "alpha_greet", map[string]string{"who": "Ada"})
	if err != nil || res.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Ada" {
		t.Errorf("alpha_greet: %v, %v", res, err)
	}
}

func TestCollisionsAreWarningsNotFailures(t *testing.T) {
	h := newHarness(t)
	h.reserved = func(n string) bool { return n == "a_pid" }
	g := h.start(map[string]any{"a": h.server(nil), "a_b": h.server(nil)})
	if _, err := h.call("a_add_tool", map[string]string{"name": "b_echo"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the collision to be seen", func() bool {
		for _, hd := range h.status("a_b").Held {
			if hd.Tool == "echo" {
				return true
			}
		}
		return false
	})
	var reason string
	for _, hd := range h.status("a_b").Held {
		if hd.Tool == "echo" {
			reason = hd.Reason
		}
	}
	if !strings.Contains(reason, "taken by tool b_echo of server a") {
		t.Errorf("collision reason %q does not name the other tool", reason)
	}
	if txt, _ := h.call("a_b_echo", map[string]any{}); txt != "I am b_echo" {
		t.Errorf("a_b_echo answered %q, want server a's tool (first by name)", txt)
	}
	if !strings.Contains(h.logs.String(), "tool name collision") {
		t.Errorf("collision not logged as a warning:\n%s", h.logs)
	}
	if slices.Contains(names(g), "a_pid") {
		t.Error("a tool taking one of Atrium's names is exposed")
	}
	if s := h.status("a_b"); s.State != Ready {
		t.Errorf("a_b is %s after a collision, want ready", s.State)
	}
}

func TestEnvironmentAndVariables(t *testing.T) {
	h := newHarness(t)
	h.env["GW_SET"] = "from-atrium"
	h.env["ATRIUM_TOKEN"] = "atr_secret_token"
	h.env["ATRIUM_DB"] = "postgres://u:pw@host/db"
	h.env["GW_INHERITED"] = "kept"
	ok := h.server(map[string]string{"A": "${GW_SET}", "B": "${GW_UNSET:-fallback}", "C": "pre-${GW_SET}-post", "D": "$${LITERAL}"})
	ok["args"] = []string{"--flag=${GW_SET}"}
	g := h.start(map[string]any{
		"ok":       ok,
		"missing":  h.server(map[string]string{"KEY": "${GW_MISSING}"}),
		"required": h.server(map[string]string{"KEY": "${GW_NEEDED:?set GW_NEEDED to your API key}"}),
	})
	for v, want := range map[string]string{"A": "from-atrium", "B": "fallback", "C": "pre-from-atrium-post", "D": "${LITERAL}",
		"GW_INHERITED": "<unset>", "ATRIUM_TOKEN": "<unset>", "ATRIUM_DB": "<unset>"} {
		if got, err := h.call("ok_env", map[string]string{"name": v}); err != nil || got != want {
			t.Errorf("env %s in the server = %q (%v), want %q", v, got, err, want)
		}
	}
	if s := h.status("missing"); s.State != Failed || !strings.Contains(s.LastError, "GW_MISSING") || !strings.Contains(s.LastError, "env.KEY") {
		t.Errorf("missing variable: state %s, error %q; want failed naming GW_MISSING", s.State, s.LastError)
	}
	if s := h.status("required"); s.State != Failed || !strings.Contains(s.LastError, "set GW_NEEDED to your API key") {
		t.Errorf("${VAR:?message}: state %s, error %q", s.State, s.LastError)
	}
	if _, err := h.call("missing_echo", map[string]any{}); atrium.ErrorCode(err) != atrium.ENotFound {
		t.Errorf("a failed server's tools: %v", err)
	}
	if len(g.Tools()) == 0 {
		t.Error("the other servers did not start")
	}
}

func TestSecretsNeverShown(t *testing.T) {
	h := newHarness(t)
	h.env["GW_KEY"] = "sk-live-0123456789"
	srv := h.server(map[string]string{"API_KEY": "${GW_KEY}", "TESTUP_SAY": "booting with key sk-live-0123456789", "TESTUP_STDERR_LINES": "3000"})
	srv["args"] = []string{"--key=${GW_KEY}"}
	h.start(map[string]any{"s": srv})
	st := h.status("s")
	b, _ := json.Marshal(h.g.Status(atrium.RoleAdmin))
	if strings.Contains(string(b), "sk-live-0123456789") || strings.Contains(h.logs.String(), "sk-live-0123456789") {
		t.Errorf("the secret reached status or logs: %s", b)
	}
	if !strings.Contains(st.Target, redacted) || !slices.Contains(st.EnvKeys, "API_KEY") {
		t.Errorf("target %q, env keys %v", st.Target, st.EnvKeys)
	}
	// 3000 lines of stderr: the tail is bounded.
	if len(st.Stderr) == 0 || len(st.Stderr) > 20 || !strings.HasPrefix(st.Stderr[len(st.Stderr)-1], "noise line 2999") {
		t.Errorf("stderr tail has %d lines, last %q", len(st.Stderr), st.Stderr)
	}
	if h.g.upstreams["s"].stderr.size > 16<<10 {
		t.Errorf("stderr ring holds %d bytes", h.g.upstreams["s"].stderr.size)
	}
}

func TestRestartWithBackoffAndFailFast(t *testing.T) {
	h := newHarness(t)
	g := h.start(map[string]any{
		"flaky": h.server(map[string]string{"TESTUP_CRASH_AFTER": "2"}),
		"dead":  h.server(map[string]string{"TESTUP_CRASH_AT_START": "1"}),
	})
	for i := range 2 {
		if _, err := h.call("flaky_echo", map[string]string{"text": "x"}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if _, err := h.call("flaky_echo", map[string]string{"text": "x"}); err == nil {
		t.Fatal("the call that crashed the server succeeded")
	}
	waitFor(t, "flaky to be noticed down", func() bool { return h.status("flaky").State != Ready })
	// Down: a call fails at once with unavailable and the reason; the tools
	// stay listed meanwhile.
	if _, err := h.call("flaky_echo", map[string]string{"text": "x"}); err == nil {
		// it may already be back: then it must have restarted
		if h.status("flaky").Restarts == 0 {
			t.Fatal("call succeeded while down")
		}
	} else if atrium.ErrorCode(err) != atrium.EUnavailable || !strings.Contains(err.Error(), "flaky") {
		t.Errorf("call while down: %v, want unavailable naming the server", err)
	}
	if !slices.Contains(names(g), "flaky_echo") {
		t.Error("a restarting server's tools were unlisted")
	}
	waitFor(t, "flaky to restart", func() bool { return h.status("flaky").State == Ready })
	if st := h.status("flaky"); st.Restarts < 1 || !strings.Contains(st.LastError, "exited") {
		t.Errorf("after restart: restarts %d, last error %q", st.Restarts, st.LastError)
	}
	if txt, err := h.call("flaky_echo", map[string]string{"text": "back"}); err != nil || txt != "back" {
		t.Errorf("after restart: %q, %v", txt, err)
	}

	st := h.status("dead")
	if st.State != Backoff && st.State != Starting {
		t.Errorf("dead is %s", st.State)
	}
	if !strings.Contains(st.LastError, "exit status 3") || !slices.ContainsFunc(st.Stderr, func(l string) bool { return strings.Contains(l, "crashing at start") }) {
		t.Errorf("dead: last error %q, stderr %q", st.LastError, st.Stderr)
	}
	_, err := h.call("dead_echo", map[string]any{})
	if atrium.ErrorCode(err) != atrium.ENotFound {
		t.Errorf("a server that never started has no tools: %v", err)
	}
	// Backoff grows: attempts 1..n wait base·2^(n-1) with jitter, capped.
	u := g.upstreams["dead"]
	if d1, d4, d9 := u.backoff(1), u.backoff(4), u.backoff(9); d1 > 60*time.Millisecond || d4 < 320*time.Millisecond || d9 > 480*time.Millisecond {
		t.Errorf("backoff 1: %s, 4: %s, 9: %s", d1, d4, d9)
	}
}

func TestHungServerIsKilled(t *testing.T) {
	h := newHarness(t)
	srv := h.server(map[string]string{"TESTUP_HANG": "1", "TESTUP_IGNORE_TERM": "1"})
	srv["timeouts"] = map[string]any{"start": "300ms"}
	h.start(map[string]any{"hang": srv})
	st := h.status("hang")
	if !strings.Contains(st.LastError, "no answer within 300ms") {
		t.Errorf("last error %q", st.LastError)
	}
	// Close must SIGKILL it: it ignores stdin's end and SIGTERM.
}

func TestGrandchildrenNeverOutliveTheirServer(t *testing.T) {
	h := newHarness(t)
	h.env["GW_BIN"] = upstreamBin
	// Three grandchildren: one keeps the environment (and the test's mark),
	// one drops it (env -i): only its process group names it; one leaves
	// the group and the session (setsid): only the mark names it.
	fork := map[string]any{"command": "sh", "args": []string{"-c", "sleep 999 & env -i sleep 998 & setsid sleep 993 & exec \"$GW_BIN\""}, "env": map[string]string{"TESTUP_CRASH_AFTER": "1", "GW_BIN": "${GW_BIN}"}}
	h.start(map[string]any{"fork": fork})
	txt, err := h.call("fork_pid", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	first := strings.Fields(txt)[1]
	sleeps := func(pgid string) int {
		n := 0
		for _, p := range h.marked() {
			if pid, cmd, _ := strings.Cut(p, " "); strings.HasPrefix(cmd, "sleep 999") && procGroup(pid) == pgid {
				n++
			}
		}
		return n
	}
	unmarked := func() bool {
		for _, p := range h.grouped() {
			if strings.Contains(p, " sleep 998 ") {
				return true
			}
		}
		return false
	}
	// The shell starts them in the background: the server may answer
	// before either has run sleep.
	detached := func() bool {
		for _, p := range h.marked() {
			if _, cmd, _ := strings.Cut(p, " "); strings.HasPrefix(cmd, "sleep 993") {
				return true
			}
		}
		return false
	}
	waitFor(t, "the grandchildren to run", func() bool { return sleeps(first) == 1 && unmarked() && detached() })
	// The server dies (its second call): its grandchildren go with it.
	_, _ = h.call("fork_echo", map[string]any{})
	waitFor(t, "the dead server's grandchildren to be killed", func() bool { return sleeps(first) == 0 && !unmarked() && !detached() })
	waitFor(t, "the restart", func() bool { return h.status("fork").State == Ready })
	// And Close (in cleanup) ends the new one and its grandchild.
}

func procGroup(pid string) string {
	st, err := readStat(pid)
	if err != nil {
		return ""
	}
	return st
}

func TestListChangedReachesAtrium(t *testing.T) {
	h := newHarness(t)
	g := h.start(map[string]any{"alpha": h.server(nil)})
	before := h.notes.Load()
	if _, err := h.call("alpha_add_tool", map[string]string{"name": "fresh"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "alpha_fresh to be listed", func() bool { return slices.Contains(names(g), "alpha_fresh") })
	if h.notes.Load() == before {
		t.Error("OnChange was not called")
	}
	if txt, err := h.call("alpha_fresh", map[string]any{}); err != nil || txt != "I am fresh" {
		t.Errorf("alpha_fresh: %q, %v", txt, err)
	}
}

func TestProgressAndCancellationPassThrough(t *testing.T) {
	h := newHarness(t)
	g := h.start(map[string]any{"s": h.server(nil)})
	var got []float64
	res, err := g.CallTool(context.Background(), "s_slow", json.RawMessage(`{"ms":30,"steps":3}`), func(p *mcp.ProgressNotificationParams) {
		got = append(got, p.Progress)
	})
	if err != nil || resultText(res) != "done" {
		t.Fatalf("slow: %v, %v", res, err)
	}
	waitFor(t, "progress", func() bool { return len(got) == 3 })

	// Cancelled once the upstream has the call, not after a guess at when.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if txt, _ := h.call("s_stats", map[string]any{}); strings.Contains(txt, "running=1") {
				return
			}
		}
	}()
	_, err = g.CallTool(ctx, "s_slow", json.RawMessage(`{"ms":60000}`), nil)
	if err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	waitFor(t, "the upstream to see the cancellation", func() bool {
		txt, _ := h.call("s_stats", map[string]any{})
		return strings.Contains(txt, "cancelled=1")
	})
}

func TestHealthCheck(t *testing.T) {
	h := newHarness(t)
	slow := h.server(map[string]string{"TESTUP_SLOW_PING": "300ms"})
	slow["timeouts"] = map[string]any{"slow": "100ms"}
	g := h.start(map[string]any{
		"good": h.server(nil),
		"slow": slow,
		"dead": h.server(map[string]string{"TESTUP_CRASH_AT_START": "1"}),
		"off":  map[string]any{"command": upstreamBin, "disabled": true},
	})
	rep := g.Health(context.Background())
	got := map[string]ServerHealth{}
	for _, s := range rep.Servers {
		got[s.Name] = s
	}
	if got["good"].Health != Healthy || len(got["good"].Probes) != 2 || !got["good"].Probes[0].OK {
		t.Errorf("good: %+v", got["good"])
	}
	if got["slow"].Health != Degraded || !strings.Contains(got["slow"].Reason, "slow") || got["slow"].Probes[0].LatencyMS < 300 {
		t.Errorf("slow: %+v", got["slow"])
	}
	if got["dead"].Health != Unhealthy || !strings.Contains(got["dead"].Reason, "exit status 3") {
		t.Errorf("dead: %+v", got["dead"])
	}
	if _, listed := got["off"]; listed {
		t.Error("a disabled server is in the health report")
	}
	if rep.Overall != Degraded {
		t.Errorf("overall %s, want degraded", rep.Overall)
	}
}

func TestReload(t *testing.T) {
	h := newHarness(t)
	g := h.start(map[string]any{"keep": h.server(nil), "change": h.server(nil), "drop": h.server(nil)})
	pid := func(name string) string {
		txt, err := h.call(name+"_pid", map[string]any{})
		if err != nil {
			t.Fatalf("%s_pid: %v", name, err)
		}
		return strings.Fields(txt)[0]
	}
	keepPID, changePID, dropPID := pid("keep"), pid("change"), pid("drop")
	before := h.notes.Load()

	// An invalid file changes nothing and says where it is wrong.
	if err := writeRaw(h.path, "{\n  \"mcpServers\": {\n    \"keep\": {\"command\": \"x\",}\n  }\n}"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Reload(); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("invalid file: %v, want an error naming line 3", err)
	}

	h.write(map[string]any{"keep": h.server(nil), "change": h.server(map[string]string{"NEW": "1"}), "add": h.server(nil)})
	d, err := g.Reload()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Added, []string{"add"}) || !slices.Equal(d.Removed, []string{"drop"}) || !slices.Equal(d.Changed, []string{"change"}) || !slices.Equal(d.Unchanged, []string{"keep"}) {
		t.Errorf("diff %+v", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Settled(ctx); err != nil {
		t.Fatal(err)
	}
	if pid("keep") != keepPID {
		t.Error("an unchanged server was restarted")
	}
	if pid("change") == changePID {
		t.Error("a changed server was not restarted")
	}
	if txt, _ := h.call("change_env", map[string]string{"name": "NEW"}); txt != "1" {
		t.Errorf("the changed server runs the old config: NEW=%q", txt)
	}
	_ = pid("add")
	for _, p := range append(h.marked(), "") {
		if p != "" && (strings.Fields(p)[0] == changePID || strings.Fields(p)[0] == dropPID) {
			t.Errorf("a replaced or removed server's process is alive: %s", p)
		}
	}
	if slices.Contains(names(g), "drop_echo") {
		t.Error("a removed server's tools are listed")
	}
	if h.notes.Load() == before {
		t.Error("the reload did not tell Atrium its tools changed")
	}
}

func TestResourcesKeepTheirURIs(t *testing.T) {
	h := newHarness(t)
	g := h.start(map[string]any{"a": h.server(nil), "b": h.server(nil)})
	var uris []string
	for _, r := range g.Resources() {
		uris = append(uris, r.Server+" "+r.Def.URI)
	}
	// Both list test://notes/readme: the first server by name keeps it.
	if !slices.Equal(uris, []string{"a test://notes/readme"}) {
		t.Errorf("resources %v", uris)
	}
	if ts := g.ResourceTemplates(); len(ts) != 1 || ts[0].Def.URITemplate != "test://notes/{name}" || ts[0].Server != "a" {
		t.Errorf("templates %+v", ts)
	}
	if st := h.status("a"); !slices.Equal(st.Resources, []string{"test://notes/readme", "test://notes/{name}"}) {
		t.Errorf("a's resources in status: %v", st.Resources)
	}
	ctx := context.Background()
	res, err := g.ReadResource(ctx, "a", "test://notes/readme")
	if err != nil || res.Contents[0].Text != "read me" {
		t.Errorf("read readme: %+v, %v", res, err)
	}
	if res, err := g.ReadResource(ctx, "a", "test://notes/todo"); err != nil || res.Contents[0].Text != "note todo" {
		t.Errorf("read from the template: %+v, %v", res, err)
	}
	if _, err := g.ReadResource(ctx, "a", "test://notes/missing"); atrium.ErrorCode(err) != atrium.ENotFound {
		t.Errorf("a resource the server does not have: %v, want not_found", err)
	}
	if _, err := g.ReadResource(ctx, "nosuch", "test://notes/readme"); atrium.ErrorCode(err) != atrium.ENotFound {
		t.Errorf("a server not in the file: %v", err)
	}
}

func TestStatusShowsRecentErrorsAndStderrToAdminsOnly(t *testing.T) {
	h := newHarness(t)
	h.env["GW_ARG_KEY"] = "argument-secret-42"
	srv := h.server(map[string]string{"TESTUP_CRASH_AFTER": "0", "TESTUP_SAY": "started with argument-secret-42"})
	srv["args"] = []string{"--api-key=${GW_ARG_KEY}"}
	g := h.start(map[string]any{"s": srv, "dead": h.server(map[string]string{"TESTUP_CRASH_AT_START": "1"})})
	changes := g.Watch()
	waitFor(t, "dead to fail three times", func() bool { return len(h.status("dead").Recent) >= 3 })
	select {
	case <-changes:
	default:
		t.Error("Watch's channel was not closed by the failures")
	}
	st := h.status("dead")
	for _, inc := range st.Recent {
		if inc.At.IsZero() || !strings.Contains(inc.Error, "exit status 3") {
			t.Errorf("incident %+v", inc)
		}
	}
	if len(st.Recent) > recentIncidents {
		t.Errorf("%d incidents kept", len(st.Recent))
	}
	for _, role := range []atrium.Role{atrium.RoleReader, atrium.RoleWriter, atrium.RoleAdmin} {
		for _, s := range g.Status(role) {
			if s.Name != "dead" {
				continue
			}
			if got := len(s.Stderr) > 0; got != (role == atrium.RoleAdmin) {
				t.Errorf("%s sees stderr: %v", role, got)
			}
		}
	}
	// A value from Atrium's environment is a secret wherever it lands, an
	// argument included.
	b, _ := json.Marshal(g.Status(atrium.RoleAdmin))
	if strings.Contains(string(b), "argument-secret-42") {
		t.Errorf("a substituted argument reached status: %s", b)
	}
	if s := h.status("s"); !strings.Contains(s.Target, "--api-key="+redacted) {
		t.Errorf("target %q", s.Target)
	}
}

// A server that stops answering mid-life: its calls fail when their own
// timeout ends, with unavailable and why; a call that timed out makes the supervisor
// ping it, and one that answers no ping either is restarted (SIGKILL: it
// ignores SIGTERM), after which it answers again.
func TestServerThatHangsMidLife(t *testing.T) {
	h := newHarness(t)
	srv := h.server(map[string]string{"TESTUP_HANG_AFTER": "1", "TESTUP_IGNORE_TERM": "1"})
	srv["timeouts"] = map[string]any{"call": "300ms", "health": "200ms"}
	g := h.start(map[string]any{"hang": srv, "good": h.server(nil)})
	if txt, err := h.call("hang_echo", map[string]string{"text": "once"}); err != nil || txt != "once" {
		t.Fatalf("the first call: %q, %v", txt, err)
	}
	firstPID := h.status("hang").PID
	start := time.Now()
	_, err := h.call("hang_echo", map[string]string{"text": "twice"})
	if atrium.ErrorCode(err) != atrium.EUnavailable || !strings.Contains(err.Error(), "did not answer within 300ms (timeouts.call)") {
		t.Errorf("a call to a hung server: %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the call took %s, its timeout is 300ms", took)
	}
	// The other server is not held up by it.
	if txt, err := h.call("good_echo", map[string]string{"text": "fine"}); err != nil || txt != "fine" {
		t.Errorf("good_echo: %q, %v", txt, err)
	}
	// The supervisor finds it answers no ping and restarts it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := h.status("hang")
		if st.Restarts >= 1 && st.State == Ready && st.PID != firstPID {
			if !strings.Contains(st.LastError, "stopped answering") {
				t.Errorf("last error %q", st.LastError)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hung server was not restarted: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if txt, err := h.call("hang_echo", map[string]string{"text": "again"}); err != nil || txt != "again" {
		t.Errorf("after its restart: %q, %v", txt, err)
	}
	rep := g.Health(context.Background())
	if rep.Overall != Healthy {
		t.Errorf("after the restart, overall %s: %+v", rep.Overall, rep.Servers)
	}
}

// A server that writes to stderr without pause is drained as it goes: its
// calls answer, and what is kept of its stderr stays bounded.
func TestStderrFloodIsDrainedAndBounded(t *testing.T) {
	h := newHarness(t)
	h.start(map[string]any{"loud": h.server(map[string]string{"TESTUP_STDERR_FLOOD": "1"})})
	for i := range 50 {
		if txt, err := h.call("loud_echo", map[string]string{"text": "heard"}); err != nil || txt != "heard" {
			t.Fatalf("call %d: %q, %v", i, txt, err)
		}
	}
	st := h.status("loud")
	if len(st.Stderr) == 0 || len(st.Stderr) > 20 || !strings.Contains(st.Stderr[len(st.Stderr)-1], "flood ") {
		t.Errorf("stderr tail: %d lines, %q", len(st.Stderr), st.Stderr)
	}
	if size := h.g.upstreams["loud"].stderr.size; size > 16<<10 {
		t.Errorf("the stderr ring holds %d bytes", size)
	}
}

// Servers start in parallel: eight servers that each wait, before they
// serve, for a gate only opened once all eight have been started are all
// started. Started one after another, the first would wait for ever.
func TestServersStartInParallel(t *testing.T) {
	h := newHarness(t)
	gate := filepath.Join(t.TempDir(), "gate")
	servers := map[string]any{}
	for i := range 8 {
		servers[fmt.Sprintf("slow%d", i)] = h.server(map[string]string{"TESTUP_START_GATE": gate})
	}
	allStarted := make(chan bool, 1)
	go func() {
		started := false
		for deadline := time.Now().Add(20 * time.Second); !started && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			h.mu.Lock()
			started = len(h.groups) == 8
			h.mu.Unlock()
		}
		allStarted <- started
		os.WriteFile(gate, nil, 0o600) // let them serve, either way
	}()
	start := time.Now()
	g := h.start(servers)
	if !<-allStarted {
		h.mu.Lock()
		t.Errorf("only %d of 8 servers were started while the first was still starting: not in parallel", len(h.groups))
		h.mu.Unlock()
	}
	for _, s := range g.Status(atrium.RoleAdmin) {
		if s.State != Ready {
			t.Errorf("%s is %s: %s", s.Name, s.State, s.LastError)
		}
	}
	t.Logf("8 servers that wait for a gate: all ready in %s", time.Since(start).Round(time.Millisecond))
}

// A server's health configuration adds calls of its own tools to its
// probes (004's "how are my apps?"): their answers are evidence; a tool the
// server does not list, or one held back, fails its probe uncalled.
func TestHealthProbesCallTools(t *testing.T) {
	h := newHarness(t)
	apps := h.server(nil)
	apps["health"] = []map[string]any{{"tool": "echo", "arguments": map[string]any{"text": "3 deployments, all green"}}}
	odd := h.server(nil)
	odd["health"] = []map[string]any{{"tool": "echo", "arguments": map[string]any{"text": "fine"}}, {"tool": "wipe"}, {"tool": "nosuch"}}
	g := h.start(map[string]any{"apps": apps, "odd": odd})
	got := map[string]ServerHealth{}
	for _, s := range g.Health(context.Background()).Servers {
		got[s.Name] = s
	}
	a := got["apps"]
	if a.Health != Healthy || len(a.Probes) != 3 || a.Probes[2].Name != "tools/call echo" || !a.Probes[2].OK || a.Probes[2].Result != "3 deployments, all green" {
		t.Errorf("apps: %+v", a)
	}
	o := got["odd"]
	if o.Health != Degraded || len(o.Probes) != 5 || !strings.Contains(o.Reason, "tools/call wipe, tools/call nosuch") {
		t.Fatalf("odd: %+v", o)
	}
	if !strings.Contains(o.Probes[3].Error, "not called: wipe is held back") || !strings.Contains(o.Probes[4].Error, "lists no tool nosuch") {
		t.Errorf("odd's failed probes: %+v %+v", o.Probes[3], o.Probes[4])
	}
	if txt, _ := h.call("odd_stats", map[string]any{}); !strings.HasPrefix(txt, "calls=2 ") {
		t.Errorf("the upstream saw %q: want the echo probe and this call only (wipe not called)", txt)
	}
	if _, err := Parse([]byte(`{"a": {"command": "x", "health": [{"arguments": {}}]}}`)); err == nil || !strings.Contains(err.Error(), "health[0]: name the tool") {
		t.Errorf("a probe with no tool: %v", err)
	}
}

// An upstream's answer larger than a message may be (the SDK's frame limit)
// is the upstream's failure — unavailable, saying so — not the caller's
// invalid_argument, and the connection it broke is re-established at once:
// the next call works without waiting for a health probe.
func TestOversizedAnswerIsAnUpstreamErrorAndReconnects(t *testing.T) {
	h := newHarness(t)
	h.start(map[string]any{"up": h.server(nil)})
	if got, err := h.call("up_big", map[string]any{"bytes": 1000}); err != nil || len(got) != 1000 {
		t.Fatalf("a small answer: %d bytes, %v", len(got), err)
	}
	_, err := h.call("up_big", map[string]any{"bytes": 17 << 20})
	if atrium.ErrorCode(err) != atrium.EUnavailable || !strings.Contains(atrium.ErrorMessage(err), "larger than") {
		t.Fatalf("an oversized answer: %v (code %q), want unavailable saying the answer was too large", err, atrium.ErrorCode(err))
	}
	start := time.Now()
	for {
		got, err := h.call("up_echo", map[string]any{"text": "again"})
		if err == nil && strings.Contains(got, "again") {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("calls still fail %s after an oversized answer: %v", time.Since(start), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A reader may not make Atrium call upstream tools through health probes
// (a probe may cost an API's quota): a reader's system_health_check gets
// the last full report, when a writer's or admin's check made one lately,
// and otherwise ping and tools/list alone — no tool call reaches the server.
func TestReadersDoNotTriggerToolProbes(t *testing.T) {
	h := newHarness(t)
	apps := h.server(nil)
	apps["health"] = []map[string]any{{"tool": "echo", "arguments": map[string]any{"text": "3 deployments, all green"}}}
	g := h.start(map[string]any{"apps": apps})
	as := func(role atrium.Role) context.Context {
		return atrium.NewContextWithActor(context.Background(), &atrium.Actor{Principal: atrium.Principal{ID: 7, Handle: "r"}, Workspace: atrium.Workspace{ID: 1, Name: "default"}, Role: role})
	}
	calls := func() string { txt, _ := h.call("apps_stats", map[string]any{}); return strings.Fields(txt)[0] }

	rep := g.Health(as(atrium.RoleReader))
	if s := rep.Servers[0]; len(s.Probes) != 2 || s.Health != Healthy || rep.Cached || !strings.Contains(rep.Note, "writers") {
		t.Errorf("a reader's first check: %+v, want ping and tools/list only, saying why", rep)
	}
	if got := calls(); got != "calls=1" {
		t.Fatalf("a reader's check called the server's tools: %s (this stats call is the 1)", got)
	}
	full := g.Health(as(atrium.RoleWriter))
	if len(full.Servers[0].Probes) != 3 || full.Cached {
		t.Fatalf("a writer's check: %+v", full)
	}
	if got := calls(); got != "calls=3" {
		t.Fatalf("after a writer's check: %s, want the probe and two stats calls", got)
	}
	cached := g.Health(as(atrium.RoleReader))
	if !cached.Cached || !cached.CheckedAt.Equal(full.CheckedAt) || len(cached.Servers[0].Probes) != 3 {
		t.Errorf("a reader after a writer's check: %+v, want the writer's report, marked cached", cached)
	}
	if got := calls(); got != "calls=4" {
		t.Errorf("a reader's check after the writer's called the server's tools: %s", got)
	}
}
