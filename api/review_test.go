package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

func idOf(t *testing.T, body, key string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	obj, _ := m[key].(map[string]any)
	id, _ := obj["id"].(string)
	if id == "" {
		t.Fatalf("no %s.id in %s", key, body)
	}
	return id
}

// Foundry E9's acceptance criteria, over HTTP, with the rules of the MCP tools.
func TestReviewAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		s := mustServer(t, e)
		s.do(t, call{name: "page", method: "PUT", url: "/api/pages/Docs/Design.md", token: s.writer, body: jsonBody(map[string]any{"content": "# Design\n\n## Storage\n\nSQLite first.\n"}), status: 201})
		root := idOf(t, s.do(t, call{name: "create", method: "POST", url: "/api/annotations", token: s.writer,
			body:   jsonBody(map[string]any{"doc_path": "Docs/Design.md", "section": "Storage", "content": "Why SQLite?", "quote": map[string]any{"exact": "SQLite first"}}),
			status: 201, contains: []string{`"status":"draft"`, `"author_type":"human"`, `"section":"Design > Storage"`}}), "annotation")
		s.do(t, call{name: "dedup", method: "POST", url: "/api/annotations", token: s.writer,
			body:   jsonBody(map[string]any{"doc_path": "Docs/Design.md", "section": "Storage", "content": "Why SQLite?", "quote": map[string]any{"exact": "SQLite first"}}),
			status: 200, contains: []string{`"deduplicated":true`, root}})
		review := idOf(t, s.do(t, call{name: "submit", method: "POST", url: "/api/reviews", token: s.writer, body: `{"doc_path":"Docs/Design.md","summary":"first"}`,
			status: 201, contains: []string{`"status":"submitted"`, root}}), "review")
		var replies []string
		for _, text := range []string{"first reply", "second reply"} {
			replies = append(replies, idOf(t, s.do(t, call{name: "reply", method: "POST", url: "/api/annotations", token: s.writer,
				body: jsonBody(map[string]any{"parent_id": root, "content": text}), status: 201, contains: []string{`"review_id":"` + review + `"`}}), "annotation"))
		}
		body := s.do(t, call{name: "get with replies", method: "GET", url: "/api/annotations/" + root, token: s.reader, status: 200})
		if strings.Index(body, "first reply") > strings.Index(body, "second reply") {
			t.Errorf("replies not oldest first: %s", body)
		}
		s.do(t, call{name: "get a reply", method: "GET", url: "/api/annotations/" + replies[0], token: s.reader, status: 200, contains: []string{`"replies":[]`}})
		for _, c := range []call{
			{name: "get 404", method: "GET", url: "/api/annotations/ann_nope", token: s.reader, status: 404},
			{name: "anonymous may not read threads", method: "GET", url: "/api/annotations?doc_path=Docs/Design.md", status: 401},
			{name: "list by doc", method: "GET", url: "/api/annotations?doc_path=Docs/Design.md", token: s.reader, status: 200, contains: []string{`"reply_count":2`, "first reply"}},
			{name: "list by review", method: "GET", url: "/api/annotations?review_id=" + review, token: s.reader, status: 200, contains: []string{root}},
			{name: "combined filters", method: "GET", url: "/api/annotations?doc_path=Docs/Design.md&review_id=" + review + "&status=resolved", token: s.reader, status: 200, contains: []string{`"annotations":[]`}},
			{name: "bad status filter", method: "GET", url: "/api/annotations?status=open", token: s.reader, status: 400},
			{name: "edit", method: "PATCH", url: "/api/annotations/" + root, token: s.writer, body: `{"content":"Why SQLite, really?"}`, status: 200, contains: []string{"really"}},
			{name: "edit by someone else", method: "PATCH", url: "/api/annotations/" + root, token: s.other, body: `{"content":"x"}`, status: 404},
			{name: "resolve", method: "PATCH", url: "/api/annotations/" + root, token: s.writer, body: `{"status":"resolved"}`, status: 200, contains: []string{`"status":"resolved"`}},
			{name: "resolve a reply", method: "PATCH", url: "/api/annotations/" + replies[0], token: s.writer, body: `{"status":"resolved"}`, status: 400, contains: []string{"root"}},
			{name: "reopen", method: "PATCH", url: "/api/annotations/" + root, token: s.writer, body: `{"status":"submitted"}`, status: 200, contains: []string{`"status":"submitted"`}},
			{name: "patch 404", method: "PATCH", url: "/api/annotations/ann_nope", token: s.writer, body: `{"status":"resolved"}`, status: 404},
			{name: "list reviews", method: "GET", url: "/api/reviews?doc_path=Docs/Design.md", token: s.reader, status: 200, contains: []string{review}},
			{name: "list reviews by status", method: "GET", url: "/api/reviews?doc_path=Docs/Design.md&status=completed", token: s.reader, status: 200, contains: []string{`"reviews":[]`}},
			{name: "get review", method: "GET", url: "/api/reviews/" + review, token: s.reader, status: 200, contains: []string{root, "first reply"}},
			{name: "review 404", method: "GET", url: "/api/reviews/rev_nope", token: s.reader, status: 404},
			{name: "complete", method: "PATCH", url: "/api/reviews/" + review, token: s.writer, body: `{"status":"completed"}`, status: 200, contains: []string{`"status":"completed"`}},
			{name: "bad transition", method: "PATCH", url: "/api/reviews/" + review, token: s.writer, body: `{"status":"draft"}`, status: 400},
			{name: "reader cannot comment", method: "POST", url: "/api/annotations", token: s.reader, body: `{"doc_path":"Docs/Design.md","content":"x"}`, status: 403},
			{name: "access", method: "GET", url: "/api/access", token: s.reader, status: 200, contains: []string{`"role":"reader"`, `"write":false`, `"read_private":true`}},
			{name: "access anonymous", method: "GET", url: "/api/access", status: 200, contains: []string{`"authenticated":false`, `"read_private":false`}},
		} {
			s.do(t, c)
		}
		// Delete cascades and cleans up the review.
		h, _ := s.doStatus(t, call{name: "delete", method: "DELETE", url: "/api/annotations/" + root, token: s.writer, status: 204})
		if h.Get("X-Replies-Deleted") != "2" {
			t.Errorf("X-Replies-Deleted = %q", h.Get("X-Replies-Deleted"))
		}
		s.do(t, call{name: "reply gone", method: "GET", url: "/api/annotations/" + replies[1], token: s.reader, status: 404})
		s.do(t, call{name: "review gone", method: "GET", url: "/api/reviews/" + review, token: s.reader, status: 404})
		s.do(t, call{name: "delete 404", method: "DELETE", url: "/api/annotations/" + root, token: s.writer, status: 404})
	})
}
