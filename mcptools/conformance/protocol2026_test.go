package conformance_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mcptools"
	"github.com/atrium-hq/atrium/mcptools/conformance"
)

// connect2026 connects an in-memory client speaking 2026-07-28, declaring
// caps, to the conformance toolset. With manual set, the client returns
// input-required results instead of answering them itself.
func connect2026(t *testing.T, caps *mcp.ClientCapabilities, manual bool) *mcp.ClientSession {
	return connectEra(t, "2026-07-28", caps, manual)
}

// connectEra is connect2026 at any protocol version.
func connectEra(t *testing.T, version string, caps *mcp.ClientCapabilities, manual bool) *mcp.ClientSession {
	t.Helper()
	actor := mustActor(t)
	s, err := mcpserver.New(mcpserver.Config{Toolsets: mcptools.All(mcptools.Options{}), Enable: []string{"all", conformance.Name}, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "conformance-2026", Version: "1"}, &mcp.ClientOptions{
		Capabilities:   caps,
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: manual},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "color": "green", "ok": true, "context": "tests"}}, nil
		},
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.ForWorkspace(actor.Workspace).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Input requests (SEP-2322) are answered by the client and the call goes on,
// in both protocol eras: in 2025 the SDK turns them into real requests.
func TestConformanceInputRequiredRoundTrips(t *testing.T) {
	elicit := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			cs := connectEra(t, era, elicit, false)
			for tool, want := range map[string]string{
				"test_input_required_result_elicitation":    "Hello, Ada!",
				"test_input_required_result_multi_round":    "Multi-round complete: Ada likes green",
				"test_input_required_result_request_state":  "state-ok",
				"test_input_required_result_tampered_state": "state-ok",
				"test_streaming_elicitation":                "Confirmation answered: accept",
			} {
				res := callFixture(t, cs, &mcp.CallToolParams{Name: tool})
				if got := resultText(t, res); res.IsError || !strings.Contains(got, want) {
					t.Errorf("%s = %q (isError %v), want %q", tool, got, res.IsError, want)
				}
			}
			prompt, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
			if err != nil || len(prompt.Messages) != 1 || prompt.Messages[0].Content.(*mcp.TextContent).Text != "Context: tests" {
				t.Errorf("test_input_required_result_prompt = %+v, %v", prompt, err)
			}
		})
	}
}

// The request state comes back signed: an altered one is refused with
// invalid params, and an intact one is accepted.
func TestConformanceRequestStateIsSigned(t *testing.T) {
	cs := connect2026(t, &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, true)
	const tool = "test_input_required_result_tampered_state"
	first := callFixture(t, cs, &mcp.CallToolParams{Name: tool})
	if !first.NeedsInput() || first.RequestState == "" || first.InputRequests["confirm"] == nil {
		t.Fatalf("first round = %+v, want an input request with a request state", first)
	}
	answers := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}}
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, InputResponses: answers, RequestState: first.RequestState + "-TAMPERED"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("tampered state: err %v, want invalid params", err)
	}
	// A state made for another tool is refused too.
	other := callFixture(t, cs, &mcp.CallToolParams{Name: "test_input_required_result_request_state"})
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, InputResponses: answers, RequestState: other.RequestState}); !errors.As(err, &rpcErr) {
		t.Fatalf("another tool's state: err %v, want invalid params", err)
	}
	res := callFixture(t, cs, &mcp.CallToolParams{Name: tool, InputResponses: answers, RequestState: first.RequestState})
	if !strings.Contains(resultText(t, res), "state-ok") {
		t.Fatalf("intact state: %q", resultText(t, res))
	}
}

// A fixture that needs a capability the client did not declare says which,
// with MissingRequiredClientCapabilityError (SEP-2575), not a tool result.
func TestConformanceMissingCapability(t *testing.T) {
	cs := connect2026(t, &mcp.ClientCapabilities{}, true)
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "test_missing_capability"})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(string(rpcErr.Data), `"sampling":{}`) {
		t.Fatalf("err = %v (data %s), want -32021 naming sampling", err, dataOf(rpcErr))
	}
	// Only the kinds of input the client declared are asked for.
	cs = connect2026(t, &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}, true)
	res := callFixture(t, cs, &mcp.CallToolParams{Name: "test_input_required_result_capabilities"})
	if len(res.InputRequests) != 1 || res.InputRequests["user_name"] == nil {
		t.Fatalf("input requests %v, want user_name only", res.InputRequests)
	}
}

func dataOf(e *jsonrpc.Error) string {
	if e == nil {
		return ""
	}
	return string(e.Data)
}

// The triggers change the lists of the caller's server, and its sessions are
// told (notifications/*/list_changed).
func TestConformanceTriggersChangeTheLists(t *testing.T) {
	cs := connect2026(t, nil, true)
	names := func() (tools, prompts []string) {
		for tool, err := range cs.Tools(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, tool.Name)
		}
		for p, err := range cs.Prompts(t.Context(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			prompts = append(prompts, p.Name)
		}
		return tools, prompts
	}
	has := func(list []string, name string) bool {
		for _, n := range list {
			if n == name {
				return true
			}
		}
		return false
	}
	for round, want := range []bool{true, false} {
		callFixture(t, cs, &mcp.CallToolParams{Name: "test_trigger_tool_change"})
		callFixture(t, cs, &mcp.CallToolParams{Name: "test_trigger_prompt_change"})
		tools, prompts := names()
		if has(tools, "test_transient_tool") != want || has(prompts, "test_transient_prompt") != want {
			t.Errorf("after %d trigger(s): transient tool listed %v, prompt %v; want %v", round+1, has(tools, "test_transient_tool"), has(prompts, "test_transient_prompt"), want)
		}
	}
}
