package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// The task tools' rules, over HTTP: the same shapes, the same codes.
func TestTasksAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		s := mustServer(t, e)
		for _, c := range []call{
			{name: "create", method: "POST", url: "/api/tasks", token: s.writer, body: `{"title":"Ship the board","body":"details","labels":["web"],"specs":["Specs/Board.md"]}`,
				status: 201, contains: []string{`"number":1`, `"status":"open"`, `"creator":"wendy"`, `"url":"/tasks/1"`, `"revision":1`}},
			{name: "create a second", method: "POST", url: "/api/tasks", token: s.writer, body: `{"title":"Write the docs","assignee":"duc","blocked_by":[1]}`, status: 201, contains: []string{`"number":2`, `"assignee":"duc"`, `"blocked_by":[1]`}},
			{name: "create without title", method: "POST", url: "/api/tasks", token: s.writer, body: `{"body":"x"}`, status: 400, contains: []string{"title is required"}},
			{name: "create with base", method: "POST", url: "/api/tasks", token: s.writer, body: `{"title":"x","base_revision":3}`, status: 400},
			{name: "create with a wrong type", method: "POST", url: "/api/tasks", token: s.writer, body: `{"title":42,"labels":"x"}`, status: 400, contains: []string{"title"}, notContains: []string{"FieldsInput", "taskBody", "Go "}},
			{name: "create unknown field", method: "POST", url: "/api/tasks", token: s.writer, body: `{"titel":"x"}`, status: 400, contains: []string{"titel"}},
			{name: "reader cannot create", method: "POST", url: "/api/tasks", token: s.reader, body: `{"title":"x"}`, status: 403, contains: []string{`"code":"permission_denied"`}},
			{name: "anonymous cannot list", method: "GET", url: "/api/tasks", status: 401},
			{name: "other workspace sees none", method: "GET", url: "/api/tasks", token: s.other, status: 200, contains: []string{`"tasks":[]`}},
			{name: "other workspace cannot get", method: "GET", url: "/api/tasks/1", token: s.other, status: 404},
			{name: "list", method: "GET", url: "/api/tasks", token: s.reader, status: 200, contains: []string{`"title":"Ship the board"`, `"title":"Write the docs"`}, notContains: []string{`"body"`}},
			{name: "list by status, comma", method: "GET", url: "/api/tasks?status=open,done&fields=number,title,revision", token: s.reader, status: 200, contains: []string{`"revision":1`}},
			{name: "list by status, repeated", method: "GET", url: "/api/tasks?status=done&status=blocked", token: s.reader, status: 200, contains: []string{`"tasks":[]`}},
			{name: "bad status", method: "GET", url: "/api/tasks?status=todo", token: s.reader, status: 400, contains: []string{`"code":"invalid_argument"`}},
			{name: "bad field", method: "GET", url: "/api/tasks?fields=secret", token: s.reader, status: 400, contains: []string{"unknown field"}},
			{name: "by assignee", method: "GET", url: "/api/tasks?assignee=duc", token: s.reader, status: 200, contains: []string{"Write the docs"}, notContains: []string{"Ship"}},
			{name: "by label", method: "GET", url: "/api/tasks?label=web", token: s.reader, status: 200, contains: []string{"Ship"}, notContains: []string{"docs"}},
			{name: "by text", method: "GET", url: "/api/tasks?text=docs", token: s.reader, status: 200, contains: []string{"Write the docs"}, notContains: []string{"Ship"}},
			{name: "paged", method: "GET", url: "/api/tasks?limit=1", token: s.reader, status: 200, contains: []string{`"next_cursor":"n2"`, "Write the docs"}},
			{name: "next page", method: "GET", url: "/api/tasks?limit=1&cursor=n2", token: s.reader, status: 200, contains: []string{"Ship"}, notContains: []string{"next_cursor"}},
			{name: "bad cursor", method: "GET", url: "/api/tasks?cursor=zz", token: s.reader, status: 400},
			{name: "ready: #2 waits on #1", method: "GET", url: "/api/tasks/ready", token: s.reader, status: 200, contains: []string{"Ship"}, notContains: []string{"docs"}},
			{name: "context", method: "GET", url: "/api/tasks/1", token: s.reader, status: 200, contains: []string{`"issue":{`, `"specs":[{"path":"Specs/Board.md","content":"","missing":true}]`, `"comments":[]`, `"waiting_for":[]`}},
			{name: "context by #", method: "GET", url: "/api/tasks/%231", token: s.reader, status: 200, contains: []string{`"number":1`}},
			{name: "no such task", method: "GET", url: "/api/tasks/99", token: s.reader, status: 404},
			{name: "not a number", method: "GET", url: "/api/tasks/abc", token: s.reader, status: 400, contains: []string{"number"}},
			{name: "update", method: "PATCH", url: "/api/tasks/1", token: s.writer, body: `{"base_revision":1,"phase":"build","progress":10}`, status: 200, contains: []string{`"phase":"build"`, `"revision":2`}},
			{name: "stale update", method: "PATCH", url: "/api/tasks/1", token: s.writer, body: `{"base_revision":1,"title":"lost"}`, status: 409, contains: []string{`"code":"conflict"`, `"current_revision":2`}},
			{name: "stale via If-Match", method: "PATCH", url: "/api/tasks/1", token: s.writer, headers: map[string]string{"If-Match": `"1"`}, body: `{"title":"lost"}`, status: 409},
			{name: "bad status update", method: "PATCH", url: "/api/tasks/1", token: s.writer, body: `{"status":"finished"}`, status: 400},
			{name: "cycle", method: "PATCH", url: "/api/tasks/1", token: s.writer, body: `{"blocked_by":[2]}`, status: 400, contains: []string{"cycle"}},
			{name: "reader cannot update", method: "PATCH", url: "/api/tasks/1", token: s.reader, body: `{"title":"x"}`, status: 403},
			{name: "claim", method: "POST", url: "/api/tasks/1/claim", token: s.agent, status: 200, contains: []string{`"assignee":"duc"`, `"status":"in_progress"`}},
			{name: "claim held", method: "POST", url: "/api/tasks/1/claim", token: s.writer, status: 409, contains: []string{"already claimed by @duc"}},
			{name: "claim blocked", method: "POST", url: "/api/tasks/2/claim", token: s.agent, status: 409, contains: []string{"blocked by #1"}},
			{name: "note", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"body":"Looking at it, @wendy"}`, status: 201, contains: []string{`"type":"note"`, `"url":"/tasks/1#comment-1"`}},
			{name: "typed body", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"type":"clarification","body":"Meaning the web board"}`, status: 201, contains: []string{`"body":"🔍 Meaning the web board"`}},
			{name: "unknown mention", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"body":"ask @nobody"}`, status: 400, contains: []string{"@nobody"}},
			{name: "question", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"type":"question","target":"wendy","question":"Which columns?"}`, status: 201,
				contains: []string{`"body":"❓ @wendy Question: Which columns?"`, `"waiting_for":"wendy"`}},
			{name: "question with body too", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"type":"question","target":"wendy","body":"x"}`, status: 400, contains: []string{"not both"}},
			{name: "question with another type's field", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"type":"question","target":"wendy","question":"q","reason":"r"}`, status: 400, contains: []string{"not reason"}},
			{name: "note with a tool field", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"target":"wendy","body":"x"}`, status: 400, contains: []string{"body only"}},
			{name: "bad type", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"type":"praise","body":"x"}`, status: 400, contains: []string{"comment_type"}},
			{name: "waits on wendy", method: "GET", url: "/api/tasks/1", token: s.reader, status: 200, contains: []string{`"waiting_for":["wendy"]`}},
			{name: "inbox of wendy", method: "GET", url: "/api/inbox", token: s.writer, status: 200, contains: []string{`"kind":"mention"`, `"kind":"question"`, `"from":"duc"`, `"from_type":"ai"`, `"unread":2`, `"ack_cursor":"i`}},
			{name: "inbox anonymous", method: "GET", url: "/api/inbox", status: 401},
			{name: "ack needs a cursor", method: "POST", url: "/api/inbox/ack", token: s.writer, body: `{}`, status: 400},
			{name: "bad ack", method: "POST", url: "/api/inbox/ack", token: s.writer, body: `{"ack":"7"}`, status: 400},
			{name: "answer", method: "POST", url: "/api/tasks/1/comments", token: s.writer, body: `{"type":"answer","target":"duc","answer":"Four."}`, status: 201, contains: []string{`"body":"💬 @duc Answer: Four."`}},
			{name: "no longer waits", method: "GET", url: "/api/tasks/1", token: s.reader, status: 200, contains: []string{`"waiting_for":[]`}},
			{name: "status", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"type":"status","status":"Building columns","progress":40}`, status: 201,
				contains: []string{`"body":"📍 Status: Building columns"`, `"status_text":"Building columns"`, `"progress":40`}},
			{name: "blocked", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"type":"blocked","reason":"No design","waiting_for":"wendy"}`, status: 201,
				contains: []string{`"label_added":"blocked:agent"`, `"status":"blocked"`, `Blocked: No design.\n\nWaiting on @wendy.`}},
			{name: "complete", method: "POST", url: "/api/tasks/1/comments", token: s.agent, body: `{"type":"completion","summary":"Board done","artifact_path":"web/tasks.go"}`, status: 201,
				contains: []string{`"next_agent":"wendy"`, `"status":"done"`, "See `web/tasks.go`.", "@wendy Ready for next phase."}},
			{name: "reader cannot comment", method: "POST", url: "/api/tasks/1/comments", token: s.reader, body: `{"body":"x"}`, status: 403},
			{name: "comments from duc since the start", method: "GET", url: "/api/tasks/1/comments?from_agent=duc&since=2000-01-01T00:00:00Z", token: s.reader, status: 200,
				contains: []string{"❓ @wendy", "✅ Board done"}, notContains: []string{"Four."}},
			{name: "comments after", method: "GET", url: "/api/tasks/1/comments?after=1", token: s.reader, status: 200, notContains: []string{"Looking at it"}},
			{name: "bad since", method: "GET", url: "/api/tasks/1/comments?since=yesterday", token: s.reader, status: 400, contains: []string{"RFC 3339"}},
			{name: "ready now: #2 is free but assigned", method: "GET", url: "/api/tasks/ready", token: s.reader, status: 200, contains: []string{`"tasks":[]`}},
		} {
			s.do(t, c)
		}
		// Acknowledging with the cursor marks those items read, once.
		var in struct {
			Unread    int    `json:"unread"`
			AckCursor string `json:"ack_cursor"`
		}
		if err := json.Unmarshal([]byte(s.do(t, call{name: "inbox", method: "GET", url: "/api/inbox", token: s.writer, status: 200})), &in); err != nil || in.Unread == 0 {
			t.Fatalf("inbox: %+v %v", in, err)
		}
		s.do(t, call{name: "ack", method: "POST", url: "/api/inbox/ack", token: s.writer, body: jsonBody(map[string]any{"ack": in.AckCursor}), status: 200, contains: []string{`"unread":0`, `"acked":`}})
		s.do(t, call{name: "read after ack", method: "GET", url: "/api/inbox", token: s.writer, status: 200, contains: []string{`"items":[]`}})
		body := s.do(t, call{name: "read items", method: "GET", url: "/api/inbox?include_read=true", token: s.writer, status: 200, contains: []string{`"read_at":`}})
		if strings.Contains(body, `"unread":1`) {
			t.Errorf("still unread: %s", body)
		}
		// A reader acknowledges their own inbox: it is their read state.
		s.do(t, call{name: "reader acks", method: "POST", url: "/api/inbox/ack", token: s.reader, body: `{"ack":"i1"}`, status: 200, contains: []string{`"unread":0`}})
	})
}
