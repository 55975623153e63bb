package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// 001's example 3 over REST: a person's todo, then its progress, the plan,
// the progress log and the desk that holds them; readers and other
// workspaces are refused.
func TestDeskOverREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		s := mustServer(t, e)
		for _, c := range []call{
			{name: "create todo", method: "POST", url: "/api/todos", token: s.writer, body: `{"title":"Test Task","description":"Write it"}`, status: http.StatusCreated, contains: []string{`"id":"todo_1"`}},
			{name: "reader may not", method: "POST", url: "/api/todos", token: s.reader, body: `{"title":"x"}`, status: http.StatusForbidden},
			{name: "bad field", method: "POST", url: "/api/todos", token: s.writer, body: `{"titel":"x"}`, status: http.StatusBadRequest},
			{name: "update", method: "PATCH", url: "/api/todos/todo_1", token: s.writer, body: `{"progress":75,"statusDesc":"Implemented API endpoints"}`, status: http.StatusOK, contains: []string{`"progress":75`}},
			{name: "bad progress", method: "PATCH", url: "/api/todos/todo_1", token: s.writer, body: `{"progress":150}`, status: http.StatusBadRequest},
			{name: "other workspace", method: "PATCH", url: "/api/todos/todo_1", token: s.other, body: `{"progress":1}`, status: http.StatusNotFound},
			{name: "file", method: "POST", url: "/api/todos/todo_1/files?name=notes.txt", token: s.writer, body: "hello", status: http.StatusCreated, contains: []string{`"name":"notes.txt"`}},
			{name: "plan", method: "PUT", url: "/api/desk/plan", token: s.writer, body: `{"content":"# Plan"}`, status: http.StatusOK, contains: []string{`"path":"Desks/wendy/Plan.md"`}},
			{name: "progress", method: "POST", url: "/api/desk/progress", token: s.writer, body: `{"description":"Shipped"}`, status: http.StatusCreated},
			{name: "desk", method: "GET", url: "/api/desk", token: s.writer, status: http.StatusOK, contains: []string{`"statusDesc":"Implemented API endpoints"`, `"content":"# Plan"`, `"description":"Shipped"`, `"notes.txt"`}},
			{name: "a reader reads wendy's desk", method: "GET", url: "/api/desk/wendy", token: s.reader, status: http.StatusOK, contains: []string{"Test Task"}},
			{name: "another workspace cannot", method: "GET", url: "/api/desk/wendy", token: s.other, status: http.StatusNotFound, notContains: []string{"Test Task"}},
			{name: "archive", method: "POST", url: "/api/desk/progress/archive", token: s.writer, status: http.StatusOK, contains: []string{`"archived":1`}},
		} {
			s.do(t, c)
		}
	})
}

// A todo's files are downloaded as they were uploaded; todos say where they
// are shown; the todo routes change only todos, and only on the caller's
// own desk.
func TestTodoFilesAndRulesOverREST(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		s := mustServer(t, e)
		s.do(t, call{name: "todo", method: "POST", url: "/api/todos", token: s.writer, body: `{"title":"Wendy's"}`, status: http.StatusCreated})
		up := s.do(t, call{name: "file", method: "POST", url: "/api/todos/todo_1/files?name=page.html", token: s.writer,
			headers: map[string]string{"Content-Type": "text/html"}, body: "<script>alert(1)</script>", status: http.StatusCreated,
			contains: []string{`"uri":"atrium://todos/todo_1/files/file_`, `"url":"/api/todos/todo_1/files/file_`}})
		var added struct {
			File struct{ ID, URL string } `json:"file"`
		}
		if err := json.Unmarshal([]byte(up), &added); err != nil || added.File.ID == "" {
			t.Fatalf("upload answered %s (%v)", up, err)
		}
		h, body := s.doStatus(t, call{name: "download", method: "GET", url: added.File.URL, token: s.reader, status: http.StatusOK})
		if body != "<script>alert(1)</script>" || h.Get("Content-Type") != "text/html" ||
			!strings.HasPrefix(h.Get("Content-Disposition"), "attachment") || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
			t.Fatalf("download: %q %v", body, h)
		}
		s.do(t, call{name: "task", method: "POST", url: "/api/tasks", token: s.agent, body: `{"title":"A plain task"}`, status: http.StatusCreated})
		for _, c := range []call{
			{name: "desk urls", method: "GET", url: "/api/desk", token: s.writer, status: http.StatusOK, contains: []string{`"url":"/tasks/1"`}},
			{name: "todos urls", method: "GET", url: "/api/todos", token: s.writer, status: http.StatusOK, contains: []string{`"url":"/tasks/1"`}},
			{name: "another workspace's download", method: "GET", url: added.File.URL, token: s.other, status: http.StatusNotFound},
			{name: "an unknown file", method: "GET", url: "/api/todos/todo_1/files/file_none", token: s.writer, status: http.StatusNotFound},
			{name: "a task is no todo", method: "PATCH", url: "/api/todos/todo_2", token: s.agent, body: `{"progress":5}`, status: http.StatusBadRequest, contains: []string{"todo_2 is task #2, not a todo"}},
			{name: "a task has no todo files", method: "POST", url: "/api/todos/todo_2/files?name=x.txt", token: s.agent, body: "x", status: http.StatusBadRequest},
			{name: "another's todo", method: "PATCH", url: "/api/todos/todo_1", token: s.agent, body: `{"progress":5}`, status: http.StatusForbidden, contains: []string{"@wendy's desk"}},
			{name: "another's todo file", method: "DELETE", url: added.File.URL, token: s.agent, status: http.StatusForbidden},
			{name: "the owner's", method: "DELETE", url: added.File.URL, token: s.writer, status: http.StatusOK},
		} {
			s.do(t, c)
		}
	})
}
