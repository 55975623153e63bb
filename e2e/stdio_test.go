package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// goName is how a Go type, package or decoder leaks into a message.
var goName = regexp.MustCompile(`[a-z][a-z0-9]*\.[A-Z][A-Za-z0-9]+|Go struct|Go value|json: cannot unmarshal|jsonrpc2|wireDecode`)

// badLine is a stdin line that is not a message atrium mcp can run, with the
// error it must get: code, and the id it is answered with (nil: null).
type badLine struct {
	line string
	code int
	id   any
}

// pipedSession is a stdin script of good requests and bad lines.
func pipedSession() (in string, good []float64, bad []badLine) {
	bad = []badLine{
		{`{bad`, -32700, nil},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"1.0","id":101,"method":"ping"}`, -32600, float64(101)},
		{`{"jsonrpc":2,"id":102,"method":"ping"}`, -32600, float64(102)},
		{`{"id":103,"method":"ping"}`, -32600, float64(103)},
		{`{"jsonrpc":"2.0","id":104,"method":42}`, -32600, float64(104)},
		{`{"jsonrpc":"2.0","id":105,"method":"tools/call","params":"junk"}`, -32602, float64(105)},
		{`{"jsonrpc":"2.0","id":106,"method":"tools/call","params":{"name":42}}`, -32602, float64(106)},
		{`{"jsonrpc":"2.0","id":107,"method":"initialize","params":{"protocolVersion":7}}`, -32602, float64(107)},
		{"{\"jsonrpc\":\"2.0\",\"id\":108,\"method\":\"ping\",\"x\":\"\xff\xfe\"}", -32700, nil},
		{`{"jsonrpc":"2.0","id":"huge","method":"ping","pad":"` + strings.Repeat("x", 36<<20) + `"}`, -32600, nil},
		{`[]`, -32600, nil},
		{`[{"jsonrpc":"2.0","id":109,"method":"ping"}]`, -32600, float64(109)},
		{`42`, -32600, nil},
		{`null`, -32600, nil},
		{`"ping"`, -32600, nil},
		{`{"jsonrpc":"2.0","result":{}}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":110,"error":"junk"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":111,"method":"ping","x":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`, -32600, nil},
	}
	call := func(id int, method, params string) string {
		good = append(good, float64(id))
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	}
	lines := []string{
		call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}`),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		call(2, "ping", `{}`),
	}
	for i, b := range bad {
		lines = append(lines, b.line, "", call(10+i, "ping", `{}`))
	}
	lines = append(lines,
		// Notifications and responses with junk get no answer, and end nothing.
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":"junk"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":999,"result":{"junk":true}}`,
		"   ",
		call(3, "tools/call", `{"name":"write_page","arguments":{"path":"AfterBadLines.md","content":"# After bad lines"}}`),
		call(4, "tools/call", `{"name":"whoami","arguments":{}}`))
	return strings.Join(lines, "\n") + "\n", good, bad
}

// checkPipedSession checks what atrium mcp wrote back for pipedSession: an
// answer to every good request, the expected error for every bad line, and
// no Go names anywhere.
func checkPipedSession(t *testing.T, out []byte, good []float64, bad []badLine) {
	t.Helper()
	type wireErr struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	type answer struct {
		ID     any             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *wireErr        `json:"error"`
	}
	results := map[any]bool{}
	errs := map[any]*wireErr{}
	var nullErrs []int
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if m := goName.FindString(line); m != "" {
			t.Errorf("an answer names Go internals (%q): %s", m, line)
		}
		var batch []answer
		if strings.HasPrefix(line, "[") {
			if err := json.Unmarshal([]byte(line), &batch); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
		} else {
			var a answer
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			batch = append(batch, a)
		}
		for _, a := range batch {
			switch {
			case a.Error != nil && a.ID == nil:
				nullErrs = append(nullErrs, a.Error.Code)
			case a.Error != nil:
				errs[a.ID] = a.Error
			case a.Result != nil:
				results[a.ID] = true
			}
		}
	}
	for _, id := range good {
		if !results[id] {
			t.Errorf("request %v was not answered", id)
		}
	}
	var wantNull []int
	for _, b := range bad {
		if b.id == nil {
			wantNull = append(wantNull, b.code)
			continue
		}
		e := errs[b.id]
		if e == nil {
			t.Errorf("no error for %.80s", b.line)
		} else if e.Code != b.code {
			t.Errorf("%.80s: code %d (%s), want %d", b.line, e.Code, e.Message, b.code)
		}
	}
	if fmt.Sprint(nullErrs) != fmt.Sprint(wantNull) {
		t.Errorf("errors with a null id: codes %v, want %v", nullErrs, wantNull)
	}
	if t.Failed() {
		t.Logf("output:\n%.20000s", out)
	}
}

// pipe runs atrium mcp with args over stdin in and returns its stdout.
func pipe(t *testing.T, env []string, in string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append(args, "mcp")...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.Stdin = strings.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("atrium mcp: %v\n%s", err, stderr.String())
	}
	return out
}

// A bad line on stdin gets a JSON-RPC error and the session goes on: every
// request read before and after it is answered, and a write after it happens.
func TestStdioAnswersBadLinesAndGoesOn(t *testing.T) {
	in, good, bad := pipedSession()
	dir := t.TempDir()
	out := pipe(t, []string{"ATRIUM_AGENT=piper"}, in, "--data-dir", dir)
	checkPipedSession(t, out, good, bad)
	got, _, code := runAtrium(t, []string{"ATRIUM_AGENT=piper"}, "--data-dir", dir, "call", "read_page", "path=AfterBadLines.md")
	if code != 0 || !strings.Contains(got, "# After bad lines") {
		t.Fatalf("the write after the bad lines is not there: exit %d, %s", code, got)
	}
}

// atrium mcp --url frames stdin the same way.
func TestStdioProxyAnswersBadLinesAndGoesOn(t *testing.T) {
	srv := startServe(t, "")
	in, good, bad := pipedSession()
	out := pipe(t, []string{"ATRIUM_URL=" + srv.MCP(), "ATRIUM_TOKEN=" + srv.AdminToken}, in, "--data-dir", t.TempDir())
	checkPipedSession(t, out, good, bad)
	got, _, code := srv.cli(t, nil, "call", "read_page", "path=AfterBadLines.md")
	if code != 0 || !strings.Contains(got, "# After bad lines") {
		t.Fatalf("the write after the bad lines is not there: exit %d, %s", code, got)
	}
}

// Over Streamable HTTP (both generations), a bad message gets 400 with a
// JSON-RPC error in the protocol's terms, and REST bodies and tool
// arguments are described as fields and JSON types, never Go's (defect 10:
// "jsonrpc2.wireDecode", "Go struct field putBody.content", "review.QuoteIn").
func TestHTTPErrorsNameNoGoInternals(t *testing.T) {
	srv := startServe(t, "")
	_, _, bad := pipedSession()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, b := range bad {
			if len(b.line) > 1<<20 || strings.HasPrefix(b.line, "[") {
				continue // over the body limit (413), or batches, which HTTP takes from older clients
			}
			res := rawPost(t, srv.MCP(), srv.AdminToken, map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": "ping"}, b.line)
			body, _ := io.ReadAll(res.Body)
			if m := goName.FindString(string(body)); m != "" {
				t.Errorf("%s %.60s: the answer names Go internals (%q): %s", version, b.line, m, body)
			}
			var e struct {
				ID    any `json:"id"`
				Error *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if res.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Error == nil || e.Error.Code != b.code || fmt.Sprint(e.ID) != fmt.Sprint(b.id) {
				t.Errorf("%s %.60s: %d %s; want 400 with error %d, id %v", version, b.line, res.StatusCode, body, b.code, b.id)
			}
		}
	}

	rest := []struct{ method, path, body, want string }{
		{"PUT", "/api/pages/Bad.md", `{"content":42}`, "field content: expected a string, got a number"},
		{"PUT", "/api/pages/Bad.md", `{bad`, "invalid JSON at byte 2"},
		{"PUT", "/api/pages/Bad.md", `{"content":"# Bad"}`, `"revision":1`},
		{"POST", "/api/annotations", `{"doc_path":"Bad.md","content":"c","quote":"text"}`, "field quote: expected an object, got a string"},
	}
	for _, c := range rest {
		req, err := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+srv.AdminToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if m := goName.FindString(string(body)); m != "" || !strings.Contains(string(body), c.want) {
			t.Errorf("%s %s %s: %s; want %q and no Go names", c.method, c.path, c.body, body, c.want)
		}
	}

	cs := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	for _, args := range []map[string]any{
		{"doc_path": "Bad.md", "content": "c", "quote": "text"},
		{"doc_path": "Bad.md", "content": "c", "quote": map[string]any{"exact": 5}},
		{"doc_path": 5},
	} {
		res := callTool(t, cs, "create_annotation", args)
		text := fmt.Sprint(structured(t, res)["error"])
		if !res.IsError || goName.MatchString(text) || !strings.HasPrefix(text, "invalid arguments: field ") {
			t.Errorf("create_annotation %v: %q; want a field named, no Go names", args, text)
		}
	}
}
