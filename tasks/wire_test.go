package tasks_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
)

// The desk's and presence's wire formats are the tasks service's own types
// (the store's rows carry no JSON tags): their field names are what MCP and
// REST clients read, so they must not drift.
func TestWireNames(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		v    any
		want string
	}{
		{tasks.File{ID: "f1", Name: "a.txt", MIMEType: "text/plain", Size: 3, SHA256: "ab", CreatedAt: at},
			`{"id":"f1","name":"a.txt","mime_type":"text/plain","size":3,"sha256":"ab","created_at":"2026-01-02T03:04:05Z"}`},
		{tasks.ProgressItem{ID: 1, Description: "did", DoneAt: at},
			`{"id":1,"description":"did","timestamp":"2026-01-02T03:04:05Z"}`},
		{tasks.ProgressItem{ID: 1, Description: "did", DoneAt: at, ArchivedAt: &at},
			`{"id":1,"description":"did","timestamp":"2026-01-02T03:04:05Z","archived_at":"2026-01-02T03:04:05Z"}`},
		{tasks.Presence{Principal: "duc", Kind: atrium.KindAgent, Transport: "stdio", Since: at, LastSeen: at},
			`{"principal":"duc","kind":"agent","transport":"stdio","since":"2026-01-02T03:04:05Z","last_seen":"2026-01-02T03:04:05Z"}`},
		{tasks.FileOut{File: tasks.File{ID: "f1", CreatedAt: at}, URI: "u", URL: "l"},
			`{"id":"f1","name":"","mime_type":"","size":0,"sha256":"","created_at":"2026-01-02T03:04:05Z","uri":"u","url":"l"}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%T as JSON:\n got %s %v\nwant %s", c.v, b, err, c.want)
		}
	}
}
