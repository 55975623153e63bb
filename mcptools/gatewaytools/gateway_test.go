package gatewaytools_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mcptools"
	"github.com/atrium-hq/atrium/mcptools/gatewaytools"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
)

var testUpstream = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "mcpserver-gw")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "testupstream")
	out, err := exec.Command("go", "build", "-o", bin, "../../gateway/internal/testupstream").CombinedOutput()
	if err != nil {
		return "", &exec.Error{Name: string(out), Err: err}
	}
	return bin, nil
})

// gatewayServer is an Atrium MCP server with a gateway of one test upstream,
// "up", and the audit records it makes.
type gatewayFixture struct {
	gw     *gateway.Gateway
	srv    *mcpserver.Server
	path   string
	bin    string
	mu     sync.Mutex
	audits []gateway.CallRecord
}

func newGatewayFixture(t *testing.T, actor *atrium.Actor, toolsets ...string) *gatewayFixture {
	t.Helper()
	bin, err := testUpstream()
	if err != nil {
		t.Fatal(err)
	}
	f := &gatewayFixture{bin: bin, path: filepath.Join(t.TempDir(), "gateway.json")}
	f.write(t, map[string]any{"up": map[string]any{"command": bin}})
	f.gw, err = gateway.Start(f.path, gateway.Options{BackoffBase: 50 * time.Millisecond, StopGrace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.gw.Close)
	f.gw.SetAudit(func(_ context.Context, c gateway.CallRecord) error {
		f.mu.Lock()
		f.audits = append(f.audits, c)
		f.mu.Unlock()
		return nil
	})
	f.srv, err = mcpserver.New(mcpserver.Config{Toolsets: mcptools.All(mcptools.Options{Gateway: f.gw}), Enable: toolsets, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.srv.Close)
	return f
}

func (f *gatewayFixture) write(t *testing.T, servers map[string]any) {
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	if err := os.WriteFile(f.path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// connectWatching connects to ms and counts the tools/list_changed it hears.
func connectWatching(t *testing.T, ms *mcp.Server, changed chan<- struct{}, progress chan<- float64) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if progress != nil {
				progress <- r.Params.Progress
			}
		},
	}).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func listNames(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool
	}
	return out
}

func callJSON(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return res, strings.Join(parts, "")
}

func TestGatewayToolsThroughAtrium(t *testing.T) {
	actor := mustActor(t)
	admin := *actor
	admin.Role = atrium.RoleAdmin
	actor = &admin
	f := newGatewayFixture(t, actor)
	changed := make(chan struct{}, 1)
	progress := make(chan float64, 10)
	cs := connectWatching(t, f.srv.ForWorkspace(actor.Workspace), changed, progress)

	tools := listNames(t, cs)
	for _, want := range []string{"up_echo", "up_write_note", "get_status", "reload_external_mcps", "system_health_check", "whoami"} {
		if tools[want] == nil {
			t.Errorf("%s not listed", want)
		}
	}
	if tools["up_wipe"] != nil || tools["up_plain"] != nil {
		t.Error("a destructive upstream tool is listed")
	}
	if e := tools["up_echo"]; e == nil || e.Description != "Echoes text." || !e.Annotations.ReadOnlyHint || e.InputSchema.(map[string]any)["properties"] == nil {
		t.Errorf("up_echo not passed through unchanged: %+v", e)
	}

	if _, txt := callJSON(t, cs, "up_echo", map[string]string{"text": "hi"}); txt != "hi" {
		t.Errorf("up_echo: %q", txt)
	}
	res, txt := callJSON(t, cs, "up_wipe", map[string]any{})
	if !res.IsError || !strings.Contains(txt, "permission_denied") || !strings.Contains(txt, "destructiveHint is true") {
		t.Errorf("held tool: %s", txt)
	}
	f.mu.Lock()
	audits := slices.Clone(f.audits)
	f.mu.Unlock()
	if len(audits) != 2 || audits[0].Tool != "up_echo" || audits[0].Server != "up" || audits[0].Upstream != "echo" || audits[0].Outcome != "ok" || audits[1].Outcome != "refused" {
		t.Errorf("audit records: %+v", audits)
	}

	// Progress comes back to the caller.
	params := &mcp.CallToolParams{Name: "up_slow", Arguments: map[string]int{"ms": 30, "steps": 3}}
	params.SetProgressToken("p1")
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		<-progress
	}

	// The upstream's list changes: Atrium's client hears of it.
	select {
	case <-changed: // from the upstream's start, if it came after the client's
	default:
	}
	if _, txt := callJSON(t, cs, "up_add_tool", map[string]string{"name": "fresh"}); txt != "added fresh" {
		t.Fatalf("add_tool: %s", txt)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed reached the client")
	}
	waitList(t, cs, func(tools map[string]*mcp.Tool) bool { return tools["up_fresh"] != nil })

	// Status, health and reload through Atrium's own tools.
	_, txt = callJSON(t, cs, "get_status", map[string]any{})
	if !strings.Contains(txt, `"state":"ready"`) || !strings.Contains(txt, `"up_fresh"`) || !strings.Contains(txt, "destructiveHint is true") {
		t.Errorf("get_status: %s", txt)
	}
	_, txt = callJSON(t, cs, "system_health_check", map[string]any{})
	if !strings.Contains(txt, `"overall":"healthy"`) {
		t.Errorf("system_health_check: %s", txt)
	}
	f.write(t, map[string]any{"other": map[string]any{"command": f.bin}})
	res, txt = callJSON(t, cs, "reload_external_mcps", map[string]any{})
	if res.IsError || !strings.Contains(txt, `"added":["other"]`) || !strings.Contains(txt, `"removed":["up"]`) {
		t.Errorf("reload: %s", txt)
	}
	waitList(t, cs, func(tools map[string]*mcp.Tool) bool { return tools["up_echo"] == nil && tools["other_echo"] != nil })
}

func waitList(t *testing.T, cs *mcp.ClientSession, ok func(map[string]*mcp.Tool) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok(listNames(t, cs)) {
		if time.Now().After(deadline) {
			t.Fatalf("the tool list never became right: %v", slices.Collect(mapKeys(listNames(t, cs))))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestGatewayCallsNeedTheWriterRoleUnlessReadOnly(t *testing.T) {
	actor := mustActor(t)
	reader := *actor
	reader.Role = atrium.RoleReader
	f := newGatewayFixture(t, &reader)
	cs := connectWatching(t, f.srv.ForWorkspace(reader.Workspace), make(chan struct{}, 1), nil)
	if _, txt := callJSON(t, cs, "up_echo", map[string]string{"text": "ok"}); txt != "ok" {
		t.Errorf("a reader calling a read-only upstream tool: %s", txt)
	}
	res, txt := callJSON(t, cs, "up_write_note", map[string]string{"text": "x"})
	if !res.IsError || !strings.Contains(txt, "permission_denied") || !strings.Contains(txt, "needs writer") {
		t.Errorf("a reader calling a writing upstream tool: %s", txt)
	}
	res, txt = callJSON(t, cs, "reload_external_mcps", map[string]any{})
	if !res.IsError || !strings.Contains(txt, "permission_denied") {
		t.Errorf("a reader reloading: %s", txt)
	}
}

// An upstream's resources are listed and read through Atrium under their
// own URIs; a reader sees the status without the stderr tails.
func TestGatewayResourcesAndReaderStatus(t *testing.T) {
	actor := mustActor(t)
	reader := *actor
	reader.Role = atrium.RoleReader
	// Without the docs toolset, which needs a store: the upstream's
	// resources alone.
	f := newGatewayFixture(t, &reader, gatewaytools.Name)
	cs := connectWatching(t, f.srv.ForWorkspace(reader.Workspace), make(chan struct{}, 1), nil)
	ctx := context.Background()
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	if !slices.Contains(uris, "test://notes/readme") {
		t.Errorf("resources/list: %v", uris)
	}
	var templates []string
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, rt.URITemplate)
	}
	if !slices.Equal(templates, []string{"test://notes/{name}"}) {
		t.Errorf("resources/templates/list: %v", templates)
	}
	for uri, want := range map[string]string{"test://notes/readme": "read me", "test://notes/plans": "note plans"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != want {
			t.Errorf("read %s: %+v, %v", uri, res, err)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://notes/missing"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("read a missing upstream resource: %v", err)
	}
	_, txt := callJSON(t, cs, "get_status", map[string]any{})
	if !strings.Contains(txt, `"resources":["test://notes/readme","test://notes/{name}"]`) || strings.Contains(txt, "stderr_tail") {
		t.Errorf("get_status for a reader: %s", txt)
	}
}

// mustActor is a local agent in the default workspace of a fresh SQLite store.
func mustActor(tb testing.TB) *atrium.Actor {
	tb.Helper()
	return servicestest.Agent(tb, servicestest.MustOpen(tb, store.SQLite, nil), "tester", "")
}
