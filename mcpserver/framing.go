package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/internal/jsonerr"
)

// Atrium reads each JSON-RPC message itself before the SDK sees it, on stdio
// and over HTTP. The SDK's stdio transport ends the session on the first line
// it cannot decode, without an answer, dropping the calls already read; and
// on both transports its messages name its Go types ("Go struct field
// jsonrpc2.wireDecode.jsonrpc"). Here a bad message gets a JSON-RPC error in
// the protocol's own terms, and only messages the SDK will take reach it.

// MaxMessageBytes bounds one MCP message, a line on stdio or a request body
// over HTTP: enough for add_attachment to carry, in base64, a file of the
// 25 MiB that attachments may be (pages.Service.MaxAttachmentBytes, the
// most REST takes too): 33.4 MiB, and the rest of the call.
const MaxMessageBytes = 35 << 20

// maxMessage bounds one message on stdio.
const maxMessage = MaxMessageBytes

// maxDepth is the deepest nesting the SDK decodes.
const maxDepth = 1000

// A rejection is the error a bad message gets. id is the message's, when it
// had a usable one; the zero ID is answered as null.
type rejection struct {
	id      jsonrpc.ID
	code    int64
	message string
	quiet   bool // a notification's: nothing answers it
}

func reject(id jsonrpc.ID, code int64, format string, args ...any) *rejection {
	return &rejection{id: id, code: code, message: fmt.Sprintf(format, args...)}
}

// wireError is a JSON-RPC error response; ID is null when the message's id
// could not be read.
type wireError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r *rejection) response() wireError {
	e := wireError{JSONRPC: "2.0", ID: json.RawMessage("null")}
	if r.id.IsValid() {
		e.ID, _ = json.Marshal(r.id.Raw())
	}
	e.Error.Code, e.Error.Message = r.code, r.message
	return e
}

// parseMessage reads one message: a request, notification or response the
// SDK can take, or the rejection to answer. A notification with bad params
// is rejected quietly: nothing answers a notification. A message that is
// not a request or response at all is answered with a null id.
func parseMessage(data []byte) (jsonrpc.Message, *rejection) {
	// An object is read once, into the map (whose decoder checks its syntax
	// first, with the error a bare check gives), not checked, then read,
	// then decoded once more: a 3 KB write_page spent a tenth of its CPU so.
	if r := checkUTF8(data); r != nil {
		return nil, r
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) == 0 || trimmed[0] != '{' {
		if r := checkJSON(data); r != nil {
			return nil, r
		}
		return nil, reject(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: a message must be a JSON object")
	}
	var fields map[string]json.RawMessage // keys match exactly, as the SDK's decoder's do
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, parseError(err)
	}
	if r := checkDepth(data); r != nil {
		return nil, r
	}
	id, idErr := readID(fields["id"])
	if idErr != "" {
		return nil, reject(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: %s", idErr)
	}
	if v, ok := fields["jsonrpc"]; !ok || string(v) != `"2.0"` {
		return nil, reject(id, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if method, isRequest := fields["method"]; isRequest {
		var name string
		if json.Unmarshal(method, &name) != nil {
			return nil, reject(id, jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a string`)
		}
		if r := checkParams(id, name, fields["params"]); r != nil {
			return nil, r
		}
		// What jsonrpc.DecodeMessage would make of it, without reading the
		// message a third time.
		return &jsonrpc.Request{ID: id, Method: name, Params: fields["params"]}, nil
	}
	// A response to a request of ours: it needs our id, and a result or an
	// error object.
	_, hasResult := fields["result"]
	e, hasError := fields["error"]
	if !id.IsValid() || hasResult == hasError || (hasError && !isWireError(e)) {
		return nil, reject(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, `invalid request: a request needs a "method"; a response needs an "id" and a "result" or an "error" object`)
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil { // what the checks above let through, the SDK should take
		return nil, reject(id, jsonrpc.CodeInvalidRequest, "invalid request")
	}
	return msg, nil
}

// checkJSON rejects what is not one well-formed JSON value: invalid UTF-8
// (which Go's decoder would quietly replace), a syntax error, or nesting
// deeper than the SDK decodes.
func checkJSON(data []byte) *rejection {
	if r := checkUTF8(data); r != nil {
		return r
	}
	if !json.Valid(data) {
		var v json.RawMessage
		return parseError(json.Unmarshal(data, &v))
	}
	return checkDepth(data)
}

// checkUTF8 rejects invalid UTF-8, which Go's decoder would quietly replace.
func checkUTF8(data []byte) *rejection {
	if utf8.Valid(data) {
		return nil
	}
	at := 0
	for at < len(data) {
		r, n := utf8.DecodeRune(data[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	return reject(jsonrpc.ID{}, jsonrpc.CodeParseError, "parse error: the message is not valid UTF-8 (byte %d)", at+1)
}

func parseError(err error) *rejection {
	return reject(jsonrpc.ID{}, jsonrpc.CodeParseError, "parse error: %s", jsonerr.Describe(err))
}

// checkDepth rejects well-formed JSON nested deeper than the SDK decodes.
func checkDepth(data []byte) *rejection {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > maxDepth {
				return reject(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: the message nests deeper than %d levels", maxDepth)
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return nil
}

// readID reads a request's id: absent (a notification), a string, or an
// integer. MCP forbids null; a fraction, or an integer beyond what a float64
// holds exactly, would come back changed in the answer (the SDK reads ids as
// float64).
func readID(raw json.RawMessage) (jsonrpc.ID, string) {
	const idMust = `"id" must be a string or an integer`
	if raw == nil {
		return jsonrpc.ID{}, ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return jsonrpc.ID{}, idMust
		}
		id, _ := jsonrpc.MakeID(s)
		return id, ""
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n > 1<<53 || n < -(1<<53) {
			return jsonrpc.ID{}, idMust + " of at most 2^53"
		}
		id, _ := jsonrpc.MakeID(float64(n))
		return id, ""
	}
	return jsonrpc.ID{}, idMust
}

func isWireError(raw json.RawMessage) bool {
	var e struct {
		Code    *json.Number `json:"code"`
		Message *string      `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Code == nil || e.Message == nil {
		return false
	}
	_, err := e.Code.Int64()
	return err == nil
}

// checkParams decodes the params of a method the SDK serves into the type
// the SDK will decode them into, so that a mistake is told in the request's
// terms (field name: expected a string) rather than the SDK's Go types.
// Methods the SDK does not serve are left to it (method not found).
func checkParams(id jsonrpc.ID, method string, raw json.RawMessage) *rejection {
	newParams, ok := methodParams[method]
	if !ok || raw == nil || string(raw) == "null" {
		return nil
	}
	if raw[0] != '{' {
		r := reject(id, jsonrpc.CodeInvalidParams, `invalid params: "params" must be a JSON object`)
		r.quiet = !id.IsValid()
		return r
	}
	if err := json.Unmarshal(raw, newParams()); err != nil {
		r := reject(id, jsonrpc.CodeInvalidParams, "invalid params for %s: %s", method, jsonerr.Describe(err))
		r.quiet = !id.IsValid()
		return r
	}
	return nil
}

// methodParams are the params types of the methods the SDK serves.
var methodParams = map[string]func() any{
	"initialize":               func() any { return new(mcp.InitializeParams) },
	"ping":                     func() any { return new(mcp.PingParams) },
	"server/discover":          func() any { return new(mcp.DiscoverParams) },
	"tools/list":               func() any { return new(mcp.ListToolsParams) },
	"tools/call":               func() any { return new(mcp.CallToolParamsRaw) },
	"resources/list":           func() any { return new(mcp.ListResourcesParams) },
	"resources/templates/list": func() any { return new(mcp.ListResourceTemplatesParams) },
	"resources/read":           func() any { return new(mcp.ReadResourceParams) },
	"resources/subscribe":      func() any { return new(mcp.SubscribeParams) },
	"resources/unsubscribe":    func() any { return new(mcp.UnsubscribeParams) },
	"subscriptions/listen":     func() any { return new(mcp.SubscriptionsListenParams) },
	"prompts/list":             func() any { return new(mcp.ListPromptsParams) },
	"prompts/get":              func() any { return new(mcp.GetPromptParams) },
	"completion/complete":      func() any { return new(mcp.CompleteParams) },
	//lint:ignore SA1019 deprecated by 2026-07-28 (SEP-2577), but the SDK still serves it to 2025-era clients
	"logging/setLevel":          func() any { return new(mcp.SetLoggingLevelParams) },
	"notifications/initialized": func() any { return new(mcp.InitializedParams) },
	"notifications/cancelled":   func() any { return new(mcp.CancelledParams) },
	"notifications/progress":    func() any { return new(mcp.ProgressNotificationParams) },
	//lint:ignore SA1019 deprecated by 2026-07-28 (SEP-2577), but the SDK still serves it to 2025-era clients
	"notifications/roots/list_changed": func() any { return new(mcp.RootsListChangedParams) },
}

// parseBatch answers a JSON-RPC batch: Atrium does not take batches (MCP
// dropped them in 2025-06-18), so each call in it gets an error, under its
// own id where it has one.
func parseBatch(data []byte) []wireError {
	var elems []json.RawMessage
	if json.Unmarshal(data, &elems) != nil || len(elems) == 0 {
		return []wireError{reject(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: an empty batch").response()}
	}
	var out []wireError
	for _, e := range elems {
		var fields map[string]json.RawMessage
		var id jsonrpc.ID
		if json.Unmarshal(e, &fields) == nil {
			id, _ = readID(fields["id"])
		}
		out = append(out, reject(id, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported; send one message per line").response())
	}
	return out
}

// isBatch reports whether data (if it is valid JSON) is an array.
func isBatch(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '['
}

// checked reads a POSTed JSON-RPC body before the SDK does and answers a bad
// message itself, with HTTP 400 and a JSON-RPC error. The SDK would answer
// 400 too, but in plain text naming its Go types. Batches are left to the
// SDK (it takes them from clients older than 2025-06-18) once each message
// in them is well formed.
func (h *HTTPHandler) checked(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); r.Method != http.MethodPost || err != nil || mt != "application/json" {
			next.ServeHTTP(w, r) // the SDK says what is wrong with the method or type
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeTooLarge(w, body, mbe.Limit)
				return
			}
			http.Error(w, "failed to read the request body", http.StatusBadRequest)
			return
		}
		if len(bytes.TrimSpace(body)) > 0 {
			if rej := checkBody(body); rej != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_ = json.NewEncoder(w).Encode(rej.response())
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		id, method := peekCall(body)
		if method == "tools/call" && h.stepUp(w, r, body) {
			return
		}
		if id.IsValid() {
			// The SDK answers a method it does not serve in a session with a
			// plain-text 400, which clients report as a failed transport:
			// answer it as JSON-RPC, under the request's id.
			w = &notHandled{ResponseWriter: w, id: id, method: method}
			defer w.(*notHandled).finish()
		}
		next.ServeHTTP(w, r)
	})
}

// stepUp refuses a tools/call that needs a role the caller's OAuth grant
// holds it below, though its membership reaches it: HTTP 403
// insufficient_scope, on which a client asks the person for more
// (step-up), rather than a tool error it could only show. It reports
// whether it answered.
func (h *HTTPHandler) stepUp(w http.ResponseWriter, r *http.Request, body []byte) bool {
	a := atrium.ActorFromContext(r.Context())
	if a == nil || a.Capped == "" {
		return false
	}
	var call struct {
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &call) != nil {
		return false
	}
	t := h.s.tool(call.Params.Name)
	if t == nil || a.Role.Allows(t.Need) || !a.Capped.Allows(t.Need) {
		return false
	}
	h.opts.Auth.RefuseScope(w, r, t.Need)
	return true
}

// writeTooLarge answers a body over the limit, of which prefix was read: a
// tools/call gets a too_large tool result under its id (a model sees it and
// can send less); any other request a JSON-RPC error under its id. Both are
// HTTP 200, so that clients hand them to the caller rather than fail the
// transport; a message whose id cannot be read gets 413 and a null id.
func writeTooLarge(w http.ResponseWriter, prefix []byte, limit int64) {
	id, method := peekCall(prefix)
	msg := fmt.Sprintf("the request is larger than %d bytes (%d MiB), the most one MCP message may be", limit, limit>>20)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Connection", "close") // the rest of the body is not read
	if !id.IsValid() {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_ = json.NewEncoder(w).Encode(reject(id, jsonrpc.CodeInvalidRequest, "invalid request: %s", msg).response())
		return
	}
	rawID, _ := json.Marshal(id.Raw())
	if method == "tools/call" {
		res := errorResult(atrium.Errorf(atrium.ETooLarge, "%s: send less in one call (a page in parts with edit_page; a larger file over REST)", msg))
		out := struct {
			JSONRPC string              `json:"jsonrpc"`
			ID      json.RawMessage     `json:"id"`
			Result  *mcp.CallToolResult `json:"result"`
		}{"2.0", rawID, res}
		w.WriteHeader(http.StatusOK)
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(reject(id, jsonrpc.CodeInvalidRequest, "invalid request: %s", msg).response())
}

// peekCall reads the id and method of a request from the start of its body,
// which may be cut short: the members before the cut are enough when, as
// clients write them, id and method come before params. A batch or a
// response has neither.
func peekCall(data []byte) (id jsonrpc.ID, method string) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return jsonrpc.ID{}, ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		key, _ := t.(string)
		switch key {
		case "id", "method":
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return id, method
			}
			if key == "id" {
				id, _ = readID(raw)
			} else {
				_ = json.Unmarshal(raw, &method)
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return id, method
			}
		}
		if id.IsValid() && method != "" {
			break
		}
	}
	return id, method
}

// notHandled turns the SDK's plain-text answer to a method it does not serve
// ("JSON RPC not handled: … unsupported", HTTP 400) into a JSON-RPC error,
// method not found, under the request's id. Every other answer passes.
type notHandled struct {
	http.ResponseWriter
	id       jsonrpc.ID
	method   string
	held     bool // the SDK's plain-text answer, kept back
	hijacked bytes.Buffer
}

func (n *notHandled) WriteHeader(code int) {
	if code == http.StatusBadRequest && strings.HasPrefix(n.Header().Get("Content-Type"), "text/plain") && !n.held {
		n.held = true
		return
	}
	n.ResponseWriter.WriteHeader(code)
}

func (n *notHandled) Write(b []byte) (int, error) {
	if n.held {
		return n.hijacked.Write(b)
	}
	return n.ResponseWriter.Write(b)
}

// Flush lets streamed answers through.
func (n *notHandled) Flush() {
	if f, ok := n.ResponseWriter.(http.Flusher); ok && !n.held {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (n *notHandled) Unwrap() http.ResponseWriter { return n.ResponseWriter }

// finish writes the held answer: as method not found when it was one,
// otherwise as the SDK wrote it.
func (n *notHandled) finish() {
	if !n.held {
		return
	}
	text := strings.TrimSpace(n.hijacked.String())
	if !strings.HasPrefix(text, "JSON RPC not handled") {
		n.ResponseWriter.WriteHeader(http.StatusBadRequest)
		_, _ = n.ResponseWriter.Write(n.hijacked.Bytes())
		return
	}
	n.Header().Set("Content-Type", "application/json")
	n.Header().Del("X-Content-Type-Options")
	n.ResponseWriter.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(n.ResponseWriter).Encode(reject(n.id, jsonrpc.CodeMethodNotFound, "method not found: %s is not a method this server serves", n.method).response())
}

// checkBody is the rejection of a POSTed body, or nil when the SDK may
// take it.
func checkBody(body []byte) *rejection {
	if !isBatch(body) {
		if _, r := parseMessage(body); r != nil && !r.quiet {
			return r
		}
		return nil
	}
	if r := checkJSON(body); r != nil {
		return r
	}
	var elems []json.RawMessage
	if json.Unmarshal(body, &elems) != nil || len(elems) == 0 {
		return reject(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: an empty batch")
	}
	for i, e := range elems {
		if _, r := parseMessage(e); r != nil && !r.quiet {
			r.message = fmt.Sprintf("batch message %d: %s", i+1, r.message)
			return r
		}
	}
	return nil
}
