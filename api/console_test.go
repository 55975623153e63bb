package api_test

import (
	"net/http"
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
