package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/mcpserver"
)

// serveLines serves one stdio session over the given input lines, closed at
// the end as a piping client does, and returns the lines written back.
func serveLines(t *testing.T, drain time.Duration, lines ...string) []string {
	t.Helper()
	actor := mustActor(t)
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Enable: []string{"all", "conformance"}, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	outR, outW := io.Pipe()
	in := io.NopCloser(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	done := make(chan error, 1)
	go func() {
		done <- srv.ForWorkspace(actor.Workspace).Run(context.Background(), mcpserver.Stdio(in, outW, drain))
		outW.Close()
	}()
	var got []string
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the session did not end after its input did")
	}
	return got
}

const initLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}`

// A client that sends its calls and closes stdin still gets every answer.
func TestStdioAnswersEveryCallReadBeforeItsInputEnded(t *testing.T) {
	got := serveLines(t, time.Hour, initLines,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_slow","arguments":{"ms":200}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	ids := map[string]bool{}
	for _, line := range got {
		var m struct {
			ID     any             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if m.ID != nil && m.Result != nil {
			ids[strings.Trim(string(must(json.Marshal(m.ID))), `"`)] = true
		}
	}
	for _, id := range []string{"1", "2", "three"} {
		if !ids[id] {
			t.Errorf("no answer to request %s; got %q", id, got)
		}
	}
}

// A call the client cancelled gets no answer, so the session does not wait
// for one.
func TestStdioDoesNotWaitForACancelledCall(t *testing.T) {
	got := serveLines(t, time.Hour, initLines,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_slow","arguments":{"ms":10000}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"changed my mind"}}`)
	for _, line := range got {
		if strings.Contains(line, `"id":2`) && strings.Contains(line, `"result"`) {
			t.Errorf("the cancelled call was answered: %s", line)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A last line without its newline, CRLF line ends and blank lines are
// framed as a client means them.
func TestStdioFramesLooseLineEnds(t *testing.T) {
	actor := mustActor(t)
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	in := strings.ReplaceAll(initLines, "\n", "\r\n") + "\r\n\r\n  \n" + `{"jsonrpc":"2.0","id":"last","method":"ping"}`
	var out strings.Builder
	w := &lockedWriter{w: &out}
	if err := srv.ForWorkspace(actor.Workspace).Run(context.Background(), mcpserver.Stdio(io.NopCloser(strings.NewReader(in)), w, 10*time.Second)); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	got := w.String()
	if !strings.Contains(got, `"id":1,"result"`) || !strings.Contains(got, `"id":"last","result"`) || strings.Contains(got, `"error"`) {
		t.Fatalf("got:\n%s", got)
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
