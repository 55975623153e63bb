package e2e

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// 001's data flow across processes: an agent in its own `atrium mcp`
// process works its desk; its own subscription, to `atrium serve`, hears of
// each change to its todos, one todo, the plan, the draft and the progress
// log. Another member subscribed to the same URIs hears only of the one todo
// — their atrium://todos is their own desk — and reads summ's desk by asking
// for it. Who is connected shows in atrium://sessions.
func TestConsoleResourcesHearAnotherProcess(t *testing.T) {
	srv := startServe(t, "")
	summToken := srv.createAgentToken(t, "summ")
	mine, mineUpdates := subscriberAs(t, srv, summToken, "summ's subscriber")
	other, otherUpdates := subscriber(t, srv)
	ctx := context.Background()
	desk := []string{"atrium://todos", "atrium://todos/todo_1", "atrium://plan", "atrium://draft", "atrium://progress"}
	for _, uri := range desk {
		for _, cs := range []*mcp.ClientSession{mine, other} {
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
		}
	}
	agent := connectStdio(t, []string{"ATRIUM_AGENT=summ"}, srv.globalArgs()...)
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res := callTool(t, agent, tool, args)
		if res.IsError {
			t.Fatalf("%s: %+v", tool, res.StructuredContent)
		}
		return structured(t, res)
	}
	todo, _ := asMap(call("create_todo", map[string]any{"title": "Test Task", "description": "Write the API.", "files": []map[string]any{{"name": "notes.txt", "content": "hello"}}})["todo"])
	if todo["id"] != "todo_1" || todo["url"] != srv.URL+"/tasks/1" {
		t.Fatalf("create_todo = %v", todo)
	}
	// Its files read back: as a resource, by the uri each carries, and over
	// HTTP, by its url.
	files, _ := todo["files"].([]any)
	file, _ := asMap(files[0])
	text, err := mine.ReadResource(ctx, &mcp.ReadResourceParams{URI: file["uri"].(string)})
	if err != nil || text.Contents[0].Text != "hello" || text.Contents[0].MIMEType != "text/plain; charset=utf-8" {
		t.Fatalf("read %v: %+v %v", file["uri"], text, err)
	}
	bin, _ := asMap(call("add_todo_file", map[string]any{"id": "todo_1", "file": map[string]any{"name": "b.bin", "content_base64": "AAEC"}})["file"])
	blob, err := agent.ReadResource(ctx, &mcp.ReadResourceParams{URI: bin["uri"].(string)})
	if err != nil || string(blob.Contents[0].Blob) != "\x00\x01\x02" {
		t.Fatalf("read %v: %+v %v", bin["uri"], blob, err)
	}
	res, err := bearer(summToken, "").Get(file["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != "hello" {
		t.Fatalf("GET %v: %d %q", file["url"], res.StatusCode, body)
	}
	expect(t, mineUpdates, "atrium://todos", "create_todo")
	call("update_todo", map[string]any{"id": "todo_1", "progress": 75, "statusDesc": "Implemented API endpoints"})
	expect(t, mineUpdates, "atrium://todos/todo_1", "update_todo")
	call("update_plan", map[string]any{"content": "# Plan\n\n1. API\n"})
	expect(t, mineUpdates, "atrium://plan", "update_plan")
	call("update_draft", map[string]any{"content": "Dear team,"})
	expect(t, mineUpdates, "atrium://draft", "update_draft")
	call("add_progress_item", map[string]any{"description": "Implemented API endpoints"})
	expect(t, mineUpdates, "atrium://progress", "add_progress_item")

	// The person's side reads the agent's desk as the agent left it.
	got := mustJSON(structured(t, callTool(t, other, "get_desk", map[string]any{"handle": "summ"})))
	for _, want := range []string{`"statusDesc":"Implemented API endpoints"`, `"progress":75`, `"content":"# Plan\n\n1. API\n"`, `"description":"Implemented API endpoints"`,
		`"url":"` + srv.URL + `/tasks/1"`} {
		if !strings.Contains(got, want) {
			t.Fatalf("summ's desk lacks %s: %s", want, got)
		}
	}
	// The desk resources read the reader's own desk: summ's todos for summ.
	for _, c := range []struct {
		cs   *mcp.ClientSession
		uri  string
		want string
	}{{mine, "atrium://todos", `"title":"Test Task"`}, {mine, "atrium://draft", "Dear team,"}, {mine, "atrium://progress", "Implemented API endpoints"},
		{mine, "atrium://todos/todo_1", `"statusDesc":"Implemented API endpoints"`}, {other, "atrium://todos", "[]"}, {other, "atrium://todos/todo_1", `"title":"Test Task"`}} {
		res, err := c.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.uri})
		if err != nil || !strings.Contains(res.Contents[0].Text, c.want) {
			t.Fatalf("read %s: %+v %v, want %s", c.uri, res, err, c.want)
		}
	}
	// Who is connected: the agent over stdio, the sessions over HTTP.
	sessions, err := other.ReadResource(ctx, &mcp.ReadResourceParams{URI: "atrium://sessions"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"principal":"summ","kind":"agent","transport":"stdio"`, `"principal":"admin","kind":"human","transport":"http","client":"subscriber 1"`} {
		if !strings.Contains(sessions.Contents[0].Text, want) {
			t.Fatalf("atrium://sessions lacks %s: %s", want, sessions.Contents[0].Text)
		}
	}
	// The agent reads its own plan as a resource, as 001's agents do.
	plan, err := agent.ReadResource(ctx, &mcp.ReadResourceParams{URI: "atrium://plan"})
	if err != nil || plan.Contents[0].Text != "# Plan\n\n1. API\n" {
		t.Fatalf("read atrium://plan: %+v %v", plan, err)
	}
	// Of summ's desk, the other member heard of the todo they follow, and of
	// nothing else: their atrium://todos, plan, draft and progress are theirs.
	heard := collect(otherUpdates, time.Second)
	if !slices.Contains(heard, "atrium://todos/todo_1") {
		t.Fatalf("the other member never heard of atrium://todos/todo_1: %v", heard)
	}
	for _, uri := range heard {
		if uri != "atrium://todos/todo_1" {
			t.Fatalf("the other member was notified of %s, which is summ's desk (heard %v)", uri, heard)
		}
	}
}

// A change made over REST or in the browser reaches the MCP subscriber whose
// desk it is, as one made over MCP does — here on the newest protocol, whose
// subscriptions are subscriptions/listen streams — and not another member
// subscribed to the same URIs.
func TestConsoleNotifiesFromRESTAndTheBrowser(t *testing.T) {
	srv := startServe(t, "")
	summToken := srv.createAgentToken(t, "summ")
	mine, updates := subscriberSpeaking(t, srv, summToken, "summ's subscriber", "")
	other, otherUpdates := subscriberSpeaking(t, srv, srv.AdminToken, "admin's subscriber", "")
	ctx := context.Background()
	for _, uri := range []string{"atrium://todos", "atrium://draft", "atrium://progress"} {
		for _, cs := range []*mcp.ClientSession{mine, other} {
			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
				t.Fatal(err)
			}
		}
	}
	send := func(method, path, token, contentType, body string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", contentType)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode >= 400 {
			t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
	}
	send("POST", "/api/todos", summToken, "application/json", `{"title":"From REST"}`)
	expect(t, updates, "atrium://todos", "POST /api/todos")
	send("PUT", "/api/desk/draft", summToken, "application/json", `{"content":"Drafted over REST"}`)
	expect(t, updates, "atrium://draft", "PUT /api/desk/draft")
	// The browser's forms (here with the token a browser session stands for).
	send("POST", "/desk/progress", summToken, "application/x-www-form-urlencoded", url.Values{"description": {"Logged in the browser"}}.Encode())
	expect(t, updates, "atrium://progress", "the desk page's progress form")
	// An admin changing summ's todo is a change to summ's desk.
	send("PATCH", "/api/todos/todo_1", srv.AdminToken, "application/json", `{"progress":30}`)
	expect(t, updates, "atrium://todos", "an admin's PATCH /api/todos/todo_1")
	if heard := collect(otherUpdates, time.Second); len(heard) > 0 {
		t.Fatalf("the admin's subscription heard of summ's desk: %v", heard)
	}
	// The admin's own desk is the admin's to hear of.
	send("POST", "/api/desk/progress", srv.AdminToken, "application/json", `{"description":"admin's own"}`)
	expect(t, otherUpdates, "atrium://progress", "the admin's own progress")
}

// atrium://sessions tells its subscribers when someone connects and when
// they leave; the list then no longer holds them.
func TestSessionsTellWhoCameAndWent(t *testing.T) {
	srv := startServe(t, "")
	sub, updates := subscriber(t, srv)
	ctx := context.Background()
	if err := sub.Subscribe(ctx, &mcp.SubscribeParams{URI: "atrium://sessions"}); err != nil {
		t.Fatal(err)
	}
	drain(updates)
	read := func() string {
		t.Helper()
		res, err := sub.ReadResource(ctx, &mcp.ReadResourceParams{URI: "atrium://sessions"})
		if err != nil {
			t.Fatal(err)
		}
		return res.Contents[0].Text
	}
	agent := connectStdio(t, []string{"ATRIUM_AGENT=visitor"}, srv.globalArgs()...)
	callTool(t, agent, "whoami", nil)
	expect(t, updates, "atrium://sessions", "an agent connected")
	if s := read(); !strings.Contains(s, `"principal":"visitor"`) {
		t.Fatalf("sessions lack the visitor: %s", s)
	}
	agent.Close()
	expect(t, updates, "atrium://sessions", "the agent left")
	if s := read(); strings.Contains(s, `"principal":"visitor"`) {
		t.Fatalf("the visitor is still listed after leaving: %s", s)
	}
	// An HTTP session that ends leaves too.
	other := connectHTTP(t, srv.MCP(), srv.createAgentToken(t, "caller"), "2025-11-25")
	callTool(t, other, "whoami", nil)
	expect(t, updates, "atrium://sessions", "an HTTP session began")
	other.Close()
	expect(t, updates, "atrium://sessions", "the HTTP session ended")
	if s := read(); strings.Contains(s, `"principal":"caller"`) {
		t.Fatalf("the HTTP caller is still listed after leaving: %s", s)
	}
}

// subscriberAs is subscriber for the holder of token.
func subscriberAs(t *testing.T, srv *server, token, name string) (*mcp.ClientSession, <-chan string) {
	t.Helper()
	return subscriberSpeaking(t, srv, token, name, "2025-11-25")
}

// subscriberSpeaking is subscriberAs on protocol version ("" for the newest,
// whose subscriptions are subscriptions/listen streams).
func subscriberSpeaking(t *testing.T, srv *server, token, name, version string) (*mcp.ClientSession, <-chan string) {
	t.Helper()
	updates := make(chan string, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ClientOptions{
		Capabilities:           &mcp.ClientCapabilities{},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updates <- r.Params.URI },
	})
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.MCP(), HTTPClient: bearer(token, ""), MaxRetries: -1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, updates
}

// createAgentToken is a writer's token for agent handle in the default workspace.
func (s *server) createAgentToken(t *testing.T, handle string) string {
	t.Helper()
	out, errOut, code := s.cli(t, nil, "token", "create", "--principal", handle, "--kind", "agent", "--workspace", "default", "--role", "writer")
	if code != 0 {
		t.Fatalf("token for %s: %s", handle, errOut)
	}
	return strings.TrimSpace(out)
}

// expect waits for a notification of uri, passing over others.
func expect(t *testing.T, updates <-chan string, uri, how string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-updates:
			if got == uri {
				return
			}
		case <-deadline:
			t.Fatalf("%s: no notification of %s", how, uri)
		}
	}
}

// collect is every notification that arrived, and arrives within wait.
func collect(updates <-chan string, wait time.Duration) []string {
	var out []string
	deadline := time.After(wait)
	for {
		select {
		case got := <-updates:
			out = append(out, got)
		case <-deadline:
			for { // what had arrived by then, which select may have passed over
				select {
				case got := <-updates:
					out = append(out, got)
				default:
					return out
				}
			}
		}
	}
}

// until collects what arrives on updates before marker (ok), or in 30 s
// without it.
func until(updates <-chan string, marker string) (before []string, ok bool) {
	deadline := time.After(30 * time.Second)
	for {
		select {
		case got := <-updates:
			if got == marker {
				return before, true
			}
			before = append(before, got)
		case <-deadline:
			return before, false
		}
	}
}

// drain empties updates of what arrived so far.
func drain(updates <-chan string) {
	for {
		select {
		case <-updates:
		case <-time.After(300 * time.Millisecond):
			return
		}
	}
}

// A desk with no draft yet reads as an empty document: a valid resource
// (contents carry text), not an error and not an empty contents entry.
func TestConsoleEmptyDraftIsAnEmptyDocument(t *testing.T) {
	srv := startServe(t, "")
	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	for _, uri := range []string{"atrium://draft", "atrium://plan"} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "\n" {
			t.Fatalf("read %s: %+v %v", uri, res, err)
		}
	}
}
