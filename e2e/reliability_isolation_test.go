package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/api"
	"github.com/atrium-hq/atrium/store"
)

// Markers of what only alpha's members may see: a private page's words, and
// words a public page had while it was still private.
const (
	privateMarker = "alice-marker"
	earlyMarker   = "alice-early-marker"
)

// TestReliabilityIsolation is the isolation sweep, generated from the tool
// registry (tools/list) and the REST router (api.Routes), so that a new tool or
// route is covered without anyone adding it here. Each is tried, aimed at
// workspace alpha's data, by four callers who may not have it: an admin of
// workspace beta, a reader of alpha (writes), a revoked token of alpha, an
// anonymous caller, and alpha's admin token sent under a wrong scheme. Each is refused or shown only what that caller may
// see, and alpha is unchanged after all of it.
func TestReliabilityIsolation(t *testing.T) {
	eachEngine(t, func(t *testing.T, e store.Engine, db string) {
		srv := startServe(t, db)
		for _, ws := range []string{"alpha", "beta"} {
			if _, errOut, code := srv.cli(t, nil, "workspace", "create", ws); code != 0 {
				t.Fatal(errOut)
			}
		}
		alice := srv.createToken(t, "alice", "alpha", "admin")
		bob := srv.createToken(t, "bob", "beta", "admin")
		rita := srv.createToken(t, "rita", "alpha", "reader")
		rex := srv.createToken(t, "rex", "alpha", "writer")

		as := connectHTTP(t, srv.URL+"/w/alpha/mcp", alice, "2025-11-25")
		mustOK := func(tool string, args map[string]any) map[string]any {
			t.Helper()
			res := callTool(t, as, tool, args)
			if res.IsError {
				t.Fatalf("seed alpha: %s: %+v", tool, res.StructuredContent)
			}
			return structured(t, res)
		}
		mustOK("write_page", map[string]any{"path": "Secret.md", "content": "# Secret\n\n" + privateMarker + " plans, see [[Public]].\n"})
		// Public.md was private at revision 1.
		mustOK("write_page", map[string]any{"path": "Public.md", "content": "# Public\n\n" + earlyMarker + " draft.\n"})
		mustOK("write_page", map[string]any{"path": "Public.md", "base_revision": 1, "content": "---\naccess: public\n---\n# Public\n\nopen notes.\n"})
		att := mustOK("add_attachment", map[string]any{"page_path": "Secret.md", "file_name": "s.txt", "content_base64": "YWxpY2UtbWFya2Vy"})
		thread := mustOK("create_annotation", map[string]any{"doc_path": "Secret.md", "section": "Secret", "content": privateMarker + " thread"})
		annID, _ := thread["annotation"].(map[string]any)["id"].(string)
		rv := mustOK("submit_review", map[string]any{"doc_path": "Secret.md"})
		revID, _ := rv["review"].(map[string]any)["id"].(string)
		attPath := attachmentPath(att)
		// A deleted page waits in the trash, with its private words.
		mustOK("write_page", map[string]any{"path": "Trashed.md", "content": "# Trashed\n\n" + privateMarker + " old plans.\n"})
		mustOK("delete_page", map[string]any{"path": "Trashed.md"})
		var trashID string
		if pages, _ := mustOK("list_trash", nil)["pages"].([]any); len(pages) == 1 {
			trashID, _ = pages[0].(map[string]any)["page_id"].(string)
		}
		if annID == "" || revID == "" || attPath == "" || trashID == "" {
			t.Fatalf("seed alpha: thread %v, review %v, attachment %v, trash %q", thread, rv, att, trashID)
		}
		// A task with a private word, a question and a comment.
		mustOK("task_create", map[string]any{"title": privateMarker + " launch", "body": privateMarker + " details", "specs": []string{"Secret.md"}})
		mustOK("task_ask_question", map[string]any{"issue_number": 1, "target": "rita", "question": privateMarker + " question"})
		todo := mustOK("create_todo", map[string]any{"title": privateMarker + " todo", "files": []map[string]any{{"name": "t.txt", "content": privateMarker}}})
		mustOK("update_plan", map[string]any{"content": privateMarker + " plan"})
		mustOK("update_draft", map[string]any{"content": privateMarker + " draft"})
		mustOK("add_progress_item", map[string]any{"description": privateMarker + " progress"})
		fileID := todoFileID(todo)
		// rex's token worked before it was revoked.
		rexSession := connectHTTP(t, srv.URL+"/w/alpha/mcp", rex, "")
		callTool(t, rexSession, "whoami", nil)
		revokeToken(t, srv, "rex")
		before := alphaState(t, as, annID, revID)

		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var tools []*mcp.Tool
		for tool, err := range as.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, tool)
		}
		aim := aimAt("Secret.md", annID, revID)
		aim["restore_page"] = map[string]any{"page_id": trashID}
		aim["purge_page"] = map[string]any{"page_id": trashID}
		bobSession := connectHTTP(t, srv.URL+"/mcp", bob, "")
		ritaSession := connectHTTP(t, srv.URL+"/w/alpha/mcp", rita, "")
		tried, failed := 0, 0
		bad := func(format string, args ...any) {
			t.Helper()
			failed++
			t.Errorf(format, args...)
		}
		for _, tool := range tools {
			name := tool.Name
			args := aim[name]
			if args == nil {
				args = map[string]any{}
			}
			body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
			mcpHeaders := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}

			// Cross-workspace: beta's admin sees nothing of alpha in beta and
			// cannot reach alpha's server.
			res := callTool(t, bobSession, name, args)
			tried++
			if b, _ := json.Marshal(res); strings.Contains(string(b), privateMarker) || strings.Contains(string(b), "alpha") {
				bad("%s shows workspace alpha to beta's admin: %s", name, b)
			}
			if st := rawPost(t, srv.URL+"/w/alpha/mcp", bob, mcpHeaders, body).StatusCode; st != http.StatusForbidden {
				bad("%s on alpha by beta's admin: status %d, want 403", name, st)
			}
			tried++

			// Wrong role: a reader may call what changes nothing, and nothing
			// else.
			res = callTool(t, ritaSession, name, args)
			tried++
			if !tool.Annotations.ReadOnlyHint {
				if m, _ := asMap(res.StructuredContent); !res.IsError || m["code"] != "permission_denied" {
					bad("%s (changes things) by a reader of alpha: %+v, want permission_denied", name, res.StructuredContent)
				}
			} else if m, _ := asMap(res.StructuredContent); res.IsError && m["code"] == "internal" {
				bad("%s by a reader of alpha: %+v", name, res.StructuredContent)
			}

			// A valid token under another scheme is no credential at all.
			for _, auth := range malformedAuth(alice) {
				if st := rawPost(t, srv.URL+"/w/alpha/mcp", "", mergeHeaders(mcpHeaders, map[string]string{"Authorization": auth}), body).StatusCode; st != http.StatusUnauthorized {
					bad("%s with Authorization %.12q…: status %d, want 401", name, auth, st)
				}
				tried++
			}

			// Revoked and anonymous callers get nothing.
			for who, token := range map[string]string{"a revoked token": rex, "an anonymous caller": ""} {
				for _, path := range []string{"/mcp", "/w/alpha/mcp"} {
					if st := rawPost(t, srv.URL+path, token, mcpHeaders, body).StatusCode; st != http.StatusUnauthorized {
						bad("%s by %s at %s: status %d, want 401", name, who, path, st)
					}
					tried++
				}
			}
		}

		// Resources, from resources/list and resources/templates/list, each
		// template filled with alpha's todo and its file.
		resources := listedResources(t, as, map[string]string{"{id}": "todo_2", "{fileId}": fileID, "{+path}": "Secret.md", "{+doc_path}": "Secret.md"})
		if len(resources) < 8 {
			t.Fatalf("only %d resources listed: %v", len(resources), resources)
		}
		for _, uri := range resources {
			body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": map[string]any{"uri": uri}})
			headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "resources/read", "Mcp-Name": uri}
			// beta's admin: in beta, nothing of alpha; alpha's server refuses.
			if got := readAs(bobSession, uri); strings.Contains(got, privateMarker) || strings.Contains(got, "alpha") {
				bad("%s shows workspace alpha to beta's admin: %s", uri, got)
			}
			if st := rawPost(t, srv.URL+"/w/alpha/mcp", bob, headers, body).StatusCode; st != http.StatusForbidden {
				bad("read %s on alpha by beta's admin: status %d, want 403", uri, st)
			}
			// alpha's reader: their desk is their own, and empty; one todo and
			// its file are a member's to read, like task_get_context.
			if got := readAs(ritaSession, uri); strings.Contains(got, privateMarker) && !strings.HasPrefix(uri, "atrium://todos/") && !strings.HasPrefix(uri, "atrium://pages/") && !strings.HasPrefix(uri, "atrium://annotations/") {
				bad("%s shows alice's desk to a reader of alpha: %s", uri, got)
			}
			// revoked, anonymous, a token under a wrong scheme: nothing.
			for who, token := range map[string]string{"a revoked token": rex, "an anonymous caller": ""} {
				for _, path := range []string{"/mcp", "/w/alpha/mcp"} {
					if st := rawPost(t, srv.URL+path, token, headers, body).StatusCode; st != http.StatusUnauthorized {
						bad("read %s by %s at %s: status %d, want 401", uri, who, path, st)
					}
				}
			}
			for _, auth := range malformedAuth(alice)[:2] {
				if st := rawPost(t, srv.URL+"/w/alpha/mcp", "", mergeHeaders(headers, map[string]string{"Authorization": auth}), body).StatusCode; st != http.StatusUnauthorized {
					bad("read %s with Authorization %.12q…: status %d, want 401", uri, auth, st)
				}
			}
			tried += 9
		}

		routes := api.Routes()
		requests := restRequests(routes, map[string]string{"annotations": annID, "reviews": revID, "trash": trashID, "todos": "todo_2", "files": fileID}, attPath)
		for _, rq := range requests {
			write := rq.method != http.MethodGet
			// beta's admin: refused in alpha; in beta, nothing of alpha.
			if st, b := rq.send(t, srv.URL+"/w/alpha", bob); st != http.StatusForbidden {
				bad("%s /w/alpha%s by beta's admin: %d %s, want 403", rq.method, rq.path, st, b)
			}
			if st, b := rq.send(t, srv.URL, bob); strings.Contains(b, privateMarker) || (st < 300 && strings.Contains(b, "alpha")) {
				bad("%s %s by beta's admin shows alpha: %d %s", rq.method, rq.path, st, b)
			}
			// alpha's reader: reads, never writes — but marks their own
			// inbox read, which changes only their read state.
			ownReadState := rq.path == "/api/inbox/ack"
			for _, base := range []string{srv.URL, srv.URL + "/w/alpha"} {
				if st, b := rq.send(t, base, rita); write && !ownReadState && st != http.StatusForbidden {
					bad("%s %s by a reader of alpha: %d %s, want 403", rq.method, rq.path, st, b)
				}
				// revoked: nothing at all.
				if st, b := rq.send(t, base, rex); st != http.StatusUnauthorized {
					bad("%s %s by a revoked token: %d %s, want 401", rq.method, rq.path, st, b)
				}
				// anonymous: public pages only, and no writes.
				st, b := rq.send(t, base, "")
				if strings.Contains(b, privateMarker) || strings.Contains(b, earlyMarker) || strings.Contains(b, "YWxpY2UtbWFya2Vy") {
					bad("%s %s%s shows an anonymous caller what only members may see: %d %s", rq.method, strings.TrimPrefix(base, srv.URL), rq.path, st, b)
				}
				if write && st != http.StatusUnauthorized && st != http.StatusForbidden {
					bad("%s %s by an anonymous caller: %d %s, want 401 or 403", rq.method, rq.path, st, b)
				}
			}
			tried += 7
			for _, auth := range malformedAuth(alice) {
				if st, b := rq.sendAuth(t, srv.URL+"/w/alpha", auth); st != http.StatusUnauthorized {
					bad("%s /w/alpha%s with Authorization %.12q…: %d %.300s, want 401", rq.method, rq.path, auth, st, b)
				}
				tried++
			}
		}
		if diff := cmp.Diff(before, alphaState(t, as, annID, revID)); diff != "" {
			bad("alpha changed during the sweep (-before +after):\n%s", diff)
		}

		// Subscribed, beta's admin hears nothing of alpha, and alpha's reader
		// nothing of alice's desk, whatever alice changes on it.
		bobSub, bobHeard := subscriberAs(t, srv, bob, "bob")
		ritaSub, ritaHeard := subscriberAs(t, srv, rita, "rita")
		for _, uri := range resources {
			for _, cs := range []*mcp.ClientSession{bobSub, ritaSub} {
				_ = cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri}) // a refused one is no leak
			}
		}
		// What their own sessions did until now (joining their workspace's
		// atrium://sessions, which on PostgreSQL may be heard a moment
		// later) is heard before a page of their own written now: listening
		// starts after it.
		for page, sub := range map[string]struct {
			cs, writer *mcp.ClientSession // rita reads: alice writes hers
			heard      <-chan string
		}{"Bob settled.md": {bobSub, bobSub, bobHeard}, "Rita settled.md": {ritaSub, as, ritaHeard}} {
			if err := sub.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "atrium://pages/" + page}); err != nil {
				t.Fatal(err)
			}
			mustTool(t, sub.writer, "write_page", map[string]any{"path": page, "content": "settled"})
			if _, ok := until(sub.heard, "atrium://pages/"+page); !ok {
				bad("%s was never heard by its own writer", page)
			}
		}
		// Each ends listening with a page of their own workspace written after
		// alice's changes: a leak would have come before it. The page is new
		// then, so that no notification of an earlier write of it (which may
		// reach a subscriber after the write answered) ends the listening
		// early.
		markers := map[string]*mcp.ClientSession{"Bob marker.md": bobSub, "Rita marker.md": as}
		if err := bobSub.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "atrium://pages/Bob marker.md"}); err != nil {
			t.Fatal(err)
		}
		if err := ritaSub.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "atrium://pages/Rita marker.md"}); err != nil {
			t.Fatal(err)
		}
		mustOK("update_todo", map[string]any{"id": "todo_2", "progress": 50, "statusDesc": privateMarker})
		mustOK("update_plan", map[string]any{"content": privateMarker + " plan, again"})
		mustOK("update_draft", map[string]any{"content": privateMarker + " draft, again"})
		mustOK("add_progress_item", map[string]any{"description": privateMarker + " more"})
		mustOK("add_todo_file", map[string]any{"id": "todo_2", "file": map[string]any{"name": "u.txt", "content": "x"}})
		callTool(t, connectHTTP(t, srv.URL+"/w/alpha/mcp", alice, "2025-11-25"), "whoami", nil) // a session joins alpha
		for page, cs := range markers {
			mustTool(t, cs, "write_page", map[string]any{"path": page, "content": "after alice's changes"})
		}
		if heard, ok := until(bobHeard, "atrium://pages/Bob marker.md"); !ok {
			bad("beta's admin never heard of his own marker page: %v", heard)
		} else if len(heard) > 0 {
			bad("beta's admin heard of alpha's changes: %v", heard)
		}
		ritaGot, ok := until(ritaHeard, "atrium://pages/Rita marker.md")
		if !ok {
			bad("alpha's reader never heard of the marker page: %v", ritaGot)
		}
		for _, uri := range ritaGot {
			if uri == "atrium://todos" || uri == "atrium://plan" || uri == "atrium://draft" || uri == "atrium://progress" {
				bad("alpha's reader was notified of %s, which is alice's desk", uri)
			}
		}
		if !slices.Contains(ritaGot, "atrium://todos/todo_2") { // the one todo she follows: notifications do flow
			bad("alpha's reader never heard of atrium://todos/todo_2, which she subscribed to: %v", ritaGot)
		}
		tried += 2
		report(t, "isolation/"+string(e), "tools", len(tools), "resources", len(resources), "routes", len(routes), "requests", len(requests), "attempts", tried, "not_refused_or_leaked", failed)
	})
}

// malformedAuth is a valid token sent the ways a client gets wrong: without
// a scheme, or under a scheme other than Bearer.
func malformedAuth(token string) []string {
	return []string{token, "Token " + token, "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:"+token)), "Bearer", "Bearer  "}
}

// attachmentPath finds the path add_attachment answered with.
func attachmentPath(m map[string]any) string {
	for _, k := range []string{"path", "attachment_path"} {
		if p, ok := m[k].(string); ok {
			return p
		}
	}
	if a, ok := m["attachment"].(map[string]any); ok {
		p, _ := a["path"].(string)
		return p
	}
	return ""
}

var tokenIDRE = regexp.MustCompile(`(?m)^(\d+)\s+(\S+)\s`)

// revokeToken revokes every token of handle.
func revokeToken(t *testing.T, srv *server, handle string) {
	t.Helper()
	out, errOut, code := srv.cli(t, nil, "token", "list", "--principal", handle)
	if code != 0 {
		t.Fatal(errOut)
	}
	n := 0
	for _, m := range tokenIDRE.FindAllStringSubmatch(out, -1) {
		if m[2] != handle {
			continue
		}
		if _, errOut, code := srv.cli(t, nil, "token", "revoke", m[1]); code != 0 {
			t.Fatal(errOut)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no token of %s to revoke in:\n%s", handle, out)
	}
}

// alphaState is what the sweep must leave as it was: the pages, their
// histories, the thread and the review, as alpha's admin sees them.
func alphaState(t *testing.T, cs *mcp.ClientSession, annID, revID string) map[string]any {
	t.Helper()
	get := func(tool string, args map[string]any) any {
		res := callTool(t, cs, tool, args)
		if res.IsError {
			t.Fatalf("%s: %+v", tool, res.Content)
		}
		m := structured(t, res)
		for _, volatile := range []string{"protocol_version"} {
			delete(m, volatile)
		}
		return m
	}
	return map[string]any{
		"secret":      get("read_page", map[string]any{"path": "Secret.md"}),
		"public":      get("read_page", map[string]any{"path": "Public.md"}),
		"secret_revs": get("list_page_revisions", map[string]any{"path": "Secret.md"}),
		"pages":       get("list_pages", map[string]any{"include_private": true, "depth": 10}),
		"thread":      get("get_annotation", map[string]any{"annotation_id": annID}),
		"threads":     get("list_annotations", map[string]any{"doc_path": "Secret.md"}),
		"review":      get("get_review", map[string]any{"review_id": revID}),
		"trash":       get("list_trash", map[string]any{}),
		"task":        get("task_get_context", map[string]any{"issue_number": 1}),
		"tasks":       get("task_list", map[string]any{"fields": []string{"number", "title", "status", "revision", "updated_at"}}),
		"desk":        get("get_desk", nil),
	}
}

// restRequest is one request a route pattern stands for, aimed at alpha's
// data.
type restRequest struct {
	method, path, body, contentType string
}

func (rq restRequest) send(t *testing.T, base, token string) (int, string) {
	t.Helper()
	auth := ""
	if token != "" {
		auth = "Bearer " + token
	}
	return rq.sendAuth(t, base, auth)
}

// sendAuth sends the request with this Authorization header (none if empty).
func (rq restRequest) sendAuth(t *testing.T, base, auth string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), answerBound)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, rq.method, base+rq.path, strings.NewReader(rq.body))
	if err != nil {
		t.Fatal(err)
	}
	if rq.contentType != "" {
		req.Header.Set("Content-Type", rq.contentType)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", rq.method, rq.path, err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil || b.Len() > 1<<20 {
			break
		}
	}
	return res.StatusCode, b.String()
}

// restRequests turns each route pattern into the requests it stands for:
// wildcards filled with alpha's page, attachment, thread and review, each
// page sub-resource and action, and a body that would succeed for a caller
// allowed to make it.
func restRequests(routes []string, ids map[string]string, attPath string) []restRequest {
	annID := ids["annotations"]
	var out []restRequest
	for _, pattern := range routes {
		method, path, _ := strings.Cut(pattern, " ")
		// A desk is alice's, a file her todo's.
		file := ids["files"]
		if file == "" {
			file = "file_unknown"
		}
		path = strings.NewReplacer("{handle}", "alice", "{file}", file).Replace(path)
		add := func(p, body, ct string) {
			if body != "" && ct == "" {
				ct = "application/json"
			}
			out = append(out, restRequest{method, p, body, ct})
		}
		switch {
		case strings.HasPrefix(path, "/api/attachments/"):
			add(strings.Replace(path, "{path...}", attPath, 1), "", "")
		case strings.Contains(path, "{path...}"):
			page := func(sub string) string { return strings.Replace(path, "{path...}", "Secret.md"+sub, 1) }
			switch method {
			case http.MethodGet:
				add(page(""), "", "")
				add(page("?revision=1"), "", "")
				add(strings.Replace(path, "{path...}", "Public.md?revision=1", 1), "", "")
				add(strings.Replace(path, "{path...}", "Public.md/revisions", 1), "", "")
				add(page("/links"), "", "")
				add(page("/revisions"), "", "")
			case http.MethodPut:
				add(page(""), `{"content":"# Taken\n"}`, "")
			case http.MethodPatch:
				add(page(""), `{"operations":[{"op":"append","text":"taken"}]}`, "")
			case http.MethodPost:
				add(page("/move"), `{"destination_path":"Stolen.md"}`, "")
				add(page("/restore"), `{"revision":1}`, "")
				add(page("/attachments?name=x.txt"), "taken", "application/octet-stream")
			default:
				add(page(""), "", "")
			}
		case strings.Contains(path, "{n}"):
			// Task #1 of alpha, which holds the private marker.
			p := strings.Replace(path, "{n}", "1", 1)
			switch {
			case method == http.MethodGet:
				add(p, "", "")
				add(p+"?since=2000-01-01T00:00:00Z&from_agent=alice", "", "")
			case method == http.MethodPatch:
				add(p, `{"title":"taken"}`, "")
				add(p, `{"status":"done","base_revision":1}`, "")
			case strings.HasSuffix(p, "/comments"):
				add(p, `{"body":"taken"}`, "")
				add(p, `{"type":"answer","target":"alice","answer":"taken"}`, "")
				add(p, `{"type":"completion","summary":"taken"}`, "")
			default:
				add(p, "", "")
			}
		case strings.Contains(path, "{id}"):
			// The collection names whose ID fills {id}: /api/reviews/{id} a review.
			collection, _, _ := strings.Cut(strings.TrimPrefix(path, "/api/"), "/")
			id := ids[collection]
			if id == "" {
				id = "unknown" // a collection the sweep has no seed for: auth is still checked
			}
			p := strings.Replace(path, "{id}", id, 1)
			switch method {
			case http.MethodPatch:
				add(p, `{"status":"resolved"}`, "")
				if collection == "annotations" {
					add(p, `{"content":"taken"}`, "")
				} else {
					add(p, `{"status":"completed"}`, "")
				}
			default:
				add(p, "", "")
			}
		default:
			switch method {
			case http.MethodPut:
				add(path, `{"content":"taken"}`, "")
			case http.MethodGet:
				add(path+"?q=alice-marker+plans&include_private=true&depth=10&include_metadata=true&doc_path=Secret.md", "", "")
			case http.MethodPost:
				switch {
				case strings.HasSuffix(path, "/todos"), path == "/api/tasks":
					add(path, `{"title":"taken"}`, "")
					continue
				case strings.HasSuffix(path, "/desk/progress"):
					add(path, `{"description":"taken"}`, "")
					continue
				case path == "/api/inbox/ack":
					add(path, `{"ack":"i1"}`, "")
					continue
				}
				if strings.HasSuffix(path, "/annotations") {
					add(path, `{"doc_path":"Secret.md","section":"Secret","content":"taken"}`, "")
					add(path, fmt.Sprintf(`{"parent_id":%q,"content":"taken"}`, annID), "")
				} else {
					add(path, `{"doc_path":"Secret.md"}`, "")
				}
			default:
				add(path, "", "")
			}
		}
	}
	return out
}

// todoFileID is the id of the first file create_todo answered with.
func todoFileID(created map[string]any) string {
	todo, _ := created["todo"].(map[string]any)
	files, _ := todo["files"].([]any)
	if len(files) == 0 {
		return ""
	}
	f, _ := files[0].(map[string]any)
	id, _ := f["id"].(string)
	return id
}

// listedResources are the URIs of every resource cs lists, and of every
// template with its variables filled from vars.
func listedResources(t *testing.T, cs *mcp.ClientSession, vars map[string]string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.URI)
	}
	for rt, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uri := rt.URITemplate
		for k, v := range vars {
			uri = strings.ReplaceAll(uri, k, v)
		}
		if strings.Contains(uri, "{") {
			t.Fatalf("the sweep cannot fill %s: give it a value", rt.URITemplate)
		}
		out = append(out, uri)
	}
	return out
}

// readAs reads uri through cs and returns what came back, the error's text
// included.
func readAs(cs *mcp.ClientSession, uri string) string {
	ctx, cancel := context.WithTimeout(context.Background(), answerBound)
	defer cancel()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return err.Error()
	}
	return mustJSON(res)
}
