package e2e

import (
	"strings"
	"testing"
	"time"
)

// Task and todo urls follow the server's current address: a serve that
// starts again on another port links to that port, and a local agent
// (atrium mcp on the same store) follows it without restarting.
func TestTodoURLsFollowTheServersAddress(t *testing.T) {
	srv := startServe(t, "")
	agent := connectStdio(t, []string{"ATRIUM_AGENT=summ"}, srv.globalArgs()...)
	todoURL := func(title string) string {
		t.Helper()
		res := callTool(t, agent, "create_todo", map[string]any{"title": title})
		if res.IsError {
			t.Fatalf("create_todo: %+v", res.StructuredContent)
		}
		todo, _ := asMap(structured(t, res)["todo"])
		return todo["url"].(string)
	}
	if u := todoURL("first"); !strings.HasPrefix(u, srv.URL+"/tasks/") {
		t.Fatalf("url = %s; want under %s", u, srv.URL)
	}
	first := srv.URL
	srv.stop(t)
	srv.restart(t)
	if srv.URL == first {
		t.Skip("the restarted server got the same port")
	}
	// Over HTTP, from the new serve.
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	res := callTool(t, cs, "task_create", map[string]any{"title": "over HTTP"})
	if res.IsError {
		t.Fatalf("task_create: %+v", res.StructuredContent)
	}
	task, _ := asMap(structured(t, res)["task"])
	if u, _ := task["url"].(string); !strings.HasPrefix(u, srv.URL+"/tasks/") {
		t.Errorf("after a restart on %s, a task's url = %v", srv.URL, task)
	}
	// The local agent that started before the restart.
	var u string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if u = todoURL("again"); strings.HasPrefix(u, srv.URL+"/tasks/") {
			return
		}
	}
	t.Errorf("the local agent's todo url = %s; want under %s (the server's address now)", u, srv.URL)
}
