package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// The lines of Claude Code's stream-json output (claude -p --output-format
// stream-json --verbose), with the field names of its Agent SDK messages
// (SDKSystemMessage, SDKAssistantMessage, SDKUserMessage, SDKResultMessage).
// Costs and token counts are zero: there is no model.

type sjInit struct {
	Type           string     `json:"type"`    // system
	Subtype        string     `json:"subtype"` // init
	CWD            string     `json:"cwd"`
	SessionID      string     `json:"session_id"`
	Tools          []string   `json:"tools"`
	MCPServers     []sjServer `json:"mcp_servers"`
	Model          string     `json:"model"`
	PermissionMode string     `json:"permissionMode"`
	APIKeySource   string     `json:"apiKeySource"`
	UUID           string     `json:"uuid"`
}

type sjServer struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// sjChat is an assistant message, or a user message carrying tool results.
type sjChat struct {
	Type            string  `json:"type"` // assistant, user
	Message         sjBody  `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"` // null: no subagent
	SessionID       string  `json:"session_id"`
	UUID            string  `json:"uuid"`
}

// sjBody is the Messages API message inside: the assistant's has id, type,
// model, stop_reason and usage; a user message has only role and content.
type sjBody struct {
	ID         string           `json:"id,omitempty"`
	Type       string           `json:"type,omitempty"`
	Role       string           `json:"role"`
	Model      string           `json:"model,omitempty"`
	Content    []map[string]any `json:"content"`
	StopReason string           `json:"stop_reason,omitempty"`
	Usage      *sjUsage         `json:"usage,omitempty"`
}

type sjUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type sjResult struct {
	Type              string  `json:"type"`    // result
	Subtype           string  `json:"subtype"` // success
	IsError           bool    `json:"is_error"`
	DurationMS        int64   `json:"duration_ms"`
	DurationAPIMS     int64   `json:"duration_api_ms"`
	NumTurns          int     `json:"num_turns"`
	Result            string  `json:"result"`
	SessionID         string  `json:"session_id"`
	TotalCostUSD      float64 `json:"total_cost_usd"`
	Usage             sjUsage `json:"usage"`
	PermissionDenials []any   `json:"permission_denials"`
	UUID              string  `json:"uuid"`
}

// runStreamJSON speaks stream-json on in and out until in ends or a rule
// exits. A prompt on the command line is the first user turn.
func runStreamJSON(ctx context.Context, a *agent, session, prompt string, in io.Reader, out io.Writer) error {
	// One Encode is one write of one line, and out (stdout) is unbuffered:
	// each line reaches the reader as soon as it is made.
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var werr error
	emit := func(v any) {
		if err := enc.Encode(v); err != nil && werr == nil {
			werr = err
		}
	}
	cwd, _ := os.Getwd()
	emit(sjInit{Type: "system", Subtype: "init", CWD: cwd, SessionID: session, Tools: scriptTools(a.rules),
		MCPServers: []sjServer{{Name: "atrium", Status: "connected"}}, Model: "scripted",
		PermissionMode: "bypassPermissions", APIKeySource: "none", UUID: newUUID()})

	assistant := func(content map[string]any, stop string) {
		emit(sjChat{Type: "assistant", SessionID: session, UUID: newUUID(), Message: sjBody{
			ID: newID("msg_"), Type: "message", Role: "assistant", Model: "scripted",
			Content: []map[string]any{content}, StopReason: stop, Usage: &sjUsage{}}})
	}
	// handle answers one user turn; its result is whether to exit.
	handle := func(text string) bool {
		start := time.Now()
		t := a.respond(ctx, session, text,
			func(s *step) {
				assistant(map[string]any{"type": "tool_use", "id": s.id, "name": s.tool, "input": s.args}, "tool_use")
			},
			func(s *step) {
				emit(sjChat{Type: "user", SessionID: session, UUID: newUUID(), Message: sjBody{Role: "user",
					Content: []map[string]any{{"type": "tool_result", "tool_use_id": s.id, "content": s.text, "is_error": s.failed}}}})
			})
		if t.reply != "" {
			assistant(map[string]any{"type": "text", "text": t.reply}, "end_turn")
		}
		emit(sjResult{Type: "result", Subtype: "success", DurationMS: time.Since(start).Milliseconds(),
			NumTurns: t.calls + 1, Result: t.reply, SessionID: session, PermissionDenials: []any{}, UUID: newUUID()})
		return t.exit
	}

	if prompt != "" && handle(prompt) {
		return werr
	}
	r := bufio.NewReader(in) // no line limit: a first prompt carries a task's whole context
	for werr == nil {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			text, ok, perr := userTurn(line)
			if perr != nil {
				fmt.Fprintf(a.stderr, "scriptagent: skipped a line that is not JSON: %v\n", perr)
			} else if ok && handle(text) {
				break
			}
		}
		if err != nil { // io.EOF: the driver closed stdin, the normal end
			break
		}
	}
	return werr
}

// userTurn is the text of a stream-json user message: content is a string
// or an array of blocks, whose text blocks are joined. Other messages
// (control requests, …) are not turns.
func userTurn(line []byte) (string, bool, error) {
	var m struct {
		Type    string `json:"type"`
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return "", false, err
	}
	if m.Type != "user" {
		return "", false, nil
	}
	var s string
	if json.Unmarshal(m.Message.Content, &s) == nil {
		return s, true, nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Message.Content, &blocks); err != nil {
		return "", false, err
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n"), true, nil
}

// scriptTools are the tools the script calls, for the init line.
func scriptTools(rules []rule) []string {
	tools := []string{}
	for _, r := range rules {
		for _, c := range r.Calls {
			if !slices.Contains(tools, c.Tool) {
				tools = append(tools, c.Tool)
			}
		}
	}
	return tools
}
