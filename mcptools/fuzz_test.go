package mcptools_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/internal/jsonerr"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
)

// The fuzz targets feed arbitrary input to the real server over a real store
// (SQLite through storetest): the stdio framing, the HTTP framing, and every
// tool's arguments. Run as tests they try their seeds; scripts/fuzz.sh runs
// each under -fuzz for a while. What they hold: no panic, no exit, no hang
// (each input is bounded), every request answered, answers in the API's
// terms (no Go names), and a store that still answers.

// answerWait bounds one input: far above what any answer takes.
const answerWait = 10 * time.Second

// fuzzEnv is one server over one store, shared by every input of a target:
// building a store per input would leave the fuzzer no time to fuzz.
type fuzzEnv struct {
	srv   *mcpserver.Server
	actor *atrium.Actor
	token string
	http  *httptest.Server
}

func newFuzzEnv(tb testing.TB) *fuzzEnv {
	tb.Helper()
	ctx := context.Background()
	svc := servicestest.MustOpen(tb, store.SQLite, nil)
	ids := svc.Identity
	a := servicestest.Agent(tb, svc, "fuzzer", "")
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all, Actor: a, Services: svc})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	token, _, err := ids.CreateToken(ctx, identity.TokenRequest{Principal: "fuzzer", Workspace: "default", Role: atrium.RoleAdmin})
	if err != nil {
		tb.Fatal(err)
	}
	mux := http.NewServeMux()
	srv.HTTP(mcpserver.HTTPOptions{Auth: &authn.Authenticator{Mode: authn.ModeToken, Identity: ids}}).Register(mux)
	hs := httptest.NewServer(mux)
	tb.Cleanup(hs.Close)
	return &fuzzEnv{srv: srv, actor: a, token: token, http: hs}
}

// checkNoGoNames fails if answer names Go internals that input did not
// bring: a tool may rightly echo a path like "a.B" it was given.
func checkNoGoNames(t *testing.T, input, answer []byte) {
	t.Helper()
	for _, m := range jsonerr.GoName.FindAll(answer, -1) {
		if !bytes.Contains(input, m) {
			t.Fatalf("an answer names Go internals (%q): %.2000s", m, answer)
		}
	}
}

// rawID is the canonical text of a JSON-RPC id, for matching answers.
func rawID(v any) string {
	if f, ok := v.(float64); ok {
		v = int64(f) // -0 is 0
	}
	return string(must(json.Marshal(v)))
}

// requestIDs are the ids of the lines of in that are JSON-RPC calls the
// server must answer. A cancelled call may go unanswered, so an input that
// cancels anything promises nothing.
func requestIDs(in []byte) (ids []string) {
	if bytes.Contains(in, []byte("notifications/cancelled")) {
		return nil
	}
	for line := range bytes.SplitSeq(in, []byte("\n")) {
		// JSON must be UTF-8 (Go's decoder would replace bad bytes), and
		// nest no deeper than the SDK reads: such lines are refused.
		if !utf8.Valid(line) || bytes.Count(line, []byte("{"))+bytes.Count(line, []byte("[")) > 1000 {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil || string(m["jsonrpc"]) != `"2.0"` {
			continue
		}
		var method string
		if json.Unmarshal(m["method"], &method) != nil {
			continue
		}
		var id any
		if m["id"] == nil || json.Unmarshal(m["id"], &id) != nil {
			continue
		}
		switch id.(type) {
		case string:
		case float64:
			// MCP ids are integers; beyond 2^53 a float64 would change them.
			n, err := strconv.ParseInt(string(m["id"]), 10, 64)
			if err != nil || n > 1<<53 || n < -(1<<53) {
				continue
			}
		default:
			continue
		}
		ids = append(ids, rawID(id))
	}
	return ids
}

const fuzzInit = `{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

const fuzzEnd = `{"jsonrpc":"2.0","id":"fuzz-end","method":"ping"}`

// FuzzStdio feeds arbitrary bytes, as stdin lines after a handshake, to a
// stdio session of the real server: the session must answer every call in
// them and the ping after them, and end when its input does.
func FuzzStdio(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{bad`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`{"jsonrpc":"1.0","id":2,"method":"ping"}`,
		`{"jsonrpc":2,"id":3,"method":"ping"}`,
		"",
		"\xff\xfe{}",
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		`[]`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":"junk"}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"write_page","arguments":{"path":"F.md","content":"# F"}}}` + "\n" + `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_page","arguments":{"path":"F.md"}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":42}}`,
		`{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":7}}`,
		`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"again","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":11,"method":"tools/list"}` + "\r\n" + `{"jsonrpc":"2.0","id":12,"method":"prompts/list"}`,
		strings.Repeat("[", 1200) + strings.Repeat("]", 1200),
	} {
		f.Add([]byte(seed))
	}
	env := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 1<<20 {
			return // the framing's limit is tested in e2e; here, speed
		}
		outR, outW := io.Pipe()
		inR, inW := io.Pipe()
		ctx, cancel := context.WithTimeout(context.Background(), answerWait)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			done <- env.srv.ForWorkspace(env.actor.Workspace).Run(ctx, mcpserver.Stdio(inR, outW, answerWait))
			outW.Close()
		}()
		go func() {
			// A write fails only once the session has closed stdin, which
			// the checks below report.
			_, _ = io.WriteString(inW, fuzzInit)
			_, _ = inW.Write(in)
			_, _ = io.WriteString(inW, "\n"+fuzzEnd+"\n")
			inW.Close()
		}()
		var out bytes.Buffer
		answered := map[string]bool{}
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			line := sc.Bytes()
			out.Write(line)
			out.WriteByte('\n')
			var batch []map[string]any
			if json.Unmarshal(line, &batch) != nil {
				var m map[string]any
				if err := json.Unmarshal(line, &m); err != nil {
					t.Fatalf("the server wrote a line that is not JSON: %v: %.500s", err, line)
				}
				batch = append(batch, m)
			}
			for _, m := range batch {
				if id, ok := m["id"]; ok && id != nil && (m["result"] != nil || m["error"] != nil) {
					answered[rawID(id)] = true
				}
			}
		}
		outR.Close()
		select {
		case <-done:
		case <-time.After(answerWait):
			t.Fatalf("the session did not end after its input did; wrote:\n%.4000s", out.Bytes())
		}
		if ctx.Err() != nil {
			t.Fatalf("the session took longer than %v; wrote:\n%.4000s", answerWait, out.Bytes())
		}
		for _, id := range append(requestIDs(in), rawID("fuzz-init"), rawID("fuzz-end")) {
			if !answered[id] {
				t.Fatalf("request %s was not answered; wrote:\n%.4000s", id, out.Bytes())
			}
		}
		checkNoGoNames(t, in, out.Bytes())
	})
}

// newProtocolMeta is the _meta of a stateless (2026-07-28) request.
const newProtocolMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"}}`

// FuzzHTTP posts an arbitrary body, with an arbitrary protocol version and
// session header, to the real Streamable HTTP handler: never a 5xx, a
// panic or a hang, a JSON-RPC error in the protocol's terms for a bad
// message, and the handler still serves a good request after.
func FuzzHTTP(f *testing.F) {
	for _, seed := range []struct {
		body, version, session, method string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`, "", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + newProtocolMeta + `}}`, "2026-07-28", "", "tools/list"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":"x","_meta":` + newProtocolMeta + `}}`, "2026-07-28", "", "tools/call"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_page","arguments":{"path":7},"_meta":` + newProtocolMeta + `}}`, "2026-07-28", "", "tools/call"},
		{`{bad`, "", "", ""},
		{`{"jsonrpc":2,"id":1,"method":"ping"}`, "2025-11-25", "nope", "ping"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "2026-07-28", "", "ping"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":[2],"method":"ping"}]`, "2025-03-26", "", ""},
		{`[]`, "", "", ""},
		{"\xff", "", "", ""},
		{``, "", "", ""},
	} {
		f.Add([]byte(seed.body), seed.version, seed.session, seed.method)
	}
	env := newFuzzEnv(f)
	client := &http.Client{Timeout: answerWait}
	post := func(t *testing.T, body []byte, headers map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, env.http.URL+"/mcp", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+env.token)
		for k, v := range headers {
			if v != "" && validHeaderValue(v) {
				req.Header.Set(k, v)
			}
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("no answer (a panic or a hang): %v", err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatalf("answer cut short: %v", err)
		}
		return res, b
	}
	f.Fuzz(func(t *testing.T, body []byte, version, session, method string) {
		res, b := post(t, body, map[string]string{"Mcp-Protocol-Version": version, "Mcp-Session-Id": session, "Mcp-Method": method})
		if res.StatusCode >= 500 {
			t.Fatalf("status %d: %.2000s", res.StatusCode, b)
		}
		checkNoGoNames(t, body, b)
		if res.StatusCode == http.StatusBadRequest && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			var e struct {
				JSONRPC string `json:"jsonrpc"`
				Error   *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if json.Unmarshal(b, &e) != nil || e.JSONRPC != "2.0" || e.Error == nil {
				t.Fatalf("a 400 that is not a JSON-RPC error: %.2000s", b)
			}
		}
		res, b = post(t, []byte(`{"jsonrpc":"2.0","id":"probe","method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":`+newProtocolMeta+`}}`),
			map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "whoami"})
		if res.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("fuzzer")) {
			t.Fatalf("the server no longer serves a good call: %d %.2000s", res.StatusCode, b)
		}
	})
}

// validHeaderValue reports whether the client can send v at all: bytes
// it refuses never reach a server.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < ' ' && b != '\t' || b == 0x7f {
			return false
		}
	}
	return true
}

// fuzzTools is a client session on the env's server, and its tools by name,
// listed from the live registry.
type fuzzTools struct {
	cs    *mcp.ClientSession
	names []string
	defs  map[string]*mcp.Tool
}

func newFuzzTools(tb testing.TB, env *fuzzEnv) *fuzzTools {
	tb.Helper()
	ft := &fuzzTools{cs: connectInMemory(tb, env.srv.ForWorkspace(env.actor.Workspace)), defs: map[string]*mcp.Tool{}}
	for tool, err := range ft.cs.Tools(context.Background(), nil) {
		if err != nil {
			tb.Fatal(err)
		}
		ft.names = append(ft.names, tool.Name)
		ft.defs[tool.Name] = tool
	}
	slices.Sort(ft.names)
	if len(ft.names) < 10 {
		tb.Fatalf("only %d tools listed", len(ft.names))
	}
	return ft
}

// toolSeeds are, for every tool, arguments of every shape its schema does
// not take: each property given a value of each JSON type, and arguments
// that are not an object.
func toolSeeds(ft *fuzzTools) (seeds [][2]string) {
	wrong := []string{`42`, `"s"`, `{}`, `[1]`, `true`, `null`, `-1`, `""`}
	for _, name := range ft.names {
		for _, args := range []string{`{}`, `null`, `[]`, `"x"`, `{"no_such_argument":1}`} {
			seeds = append(seeds, [2]string{name, args})
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(must(json.Marshal(ft.defs[name].InputSchema)), &schema)
		for prop := range schema.Properties {
			for _, v := range wrong {
				seeds = append(seeds, [2]string{name, `{"` + prop + `":` + v + `}`})
			}
		}
	}
	return seeds
}

var codes = []string{string(atrium.EInvalid), string(atrium.ENotFound), string(atrium.EConflict), string(atrium.EPermission), string(atrium.EUnauthenticated), string(atrium.ETooLarge), string(atrium.EUnavailable)}

// FuzzToolArguments calls a tool of the live registry (named, or picked by
// the name's hash, so a new tool is fuzzed without anyone adding it) with
// arbitrary JSON arguments (see checkToolCall). Its seeds are a few shapes
// per tool; TestToolErrorsNameNoGoInternals tries every property of every
// tool with every wrong type.
func FuzzToolArguments(f *testing.F) {
	env := newFuzzEnv(f)
	ft := newFuzzTools(f, env)
	for _, name := range ft.names {
		for _, args := range []string{`{}`, `"x"`, `{"path":42,"content":{}}`} {
			f.Add(name, []byte(args))
		}
	}
	var mu sync.Mutex // one call at a time: inputs must not race each other's pages
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		if !json.Valid(args) {
			return // the SDK client would not send it; FuzzStdio covers bad JSON
		}
		mu.Lock()
		defer mu.Unlock()
		if ft.defs[name] == nil {
			name = ft.names[int(crc32.ChecksumIEEE([]byte(name)))%len(ft.names)]
		}
		checkToolCall(t, ft, name, args)
	})
}

// No tool answer names Go internals (defect 10): every property of every
// listed tool, given a value of each JSON type, and arguments that are not
// an object, get a success or {error, code} in the API's terms.
func TestToolErrorsNameNoGoInternals(t *testing.T) {
	env := newFuzzEnv(t)
	ft := newFuzzTools(t, env)
	seeds := toolSeeds(ft)
	for _, s := range seeds {
		checkToolCall(t, ft, s[0], []byte(s[1]))
	}
	t.Logf("RELIABILITY tool-errors: tools=%d calls=%d", len(ft.names), len(seeds))
}

// checkToolCall calls tool name with args: the answer must be a success, or
// {error, code} with a code that is the caller's to act on (never internal:
// that is a bug), in the API's terms; and the store must still answer after.
func checkToolCall(t *testing.T, ft *fuzzTools, name string, args []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), answerWait)
	defer cancel()
	res, err := ft.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	text := must(json.Marshal(res))
	checkNoGoNames(t, args, text)
	if res.IsError {
		var e mcpserver.ToolError
		if json.Unmarshal(must(json.Marshal(res.StructuredContent)), &e) != nil || e.Error == "" || !slices.Contains(codes, e.Code) {
			t.Fatalf("%s %s: not a caller's {error, code}: %s", name, args, text)
		}
	}
	// The store still serves, as any client would use it.
	for _, probe := range []string{"whoami", "list_pages"} {
		res, err := ft.cs.CallTool(ctx, &mcp.CallToolParams{Name: probe, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("after %s %s, %s fails: %v %s", name, args, probe, err, must(json.Marshal(res)))
		}
	}
}
