package conformance

//lint:file-ignore SA1019 sampling and roots are deprecated by 2026-07-28 (SEP-2577), but the suite grades input requests of both kinds

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
)

// The fixtures of the 2026-07-28 scenarios: stateless requests (SEP-2575),
// multi round-trip requests (SEP-2322) and custom headers (SEP-2243). On a
// 2026-07-28 request a server never calls the client: it answers with an
// InputRequiredResult naming what it needs, and the client calls again with
// the answers. For a 2025-era session the SDK turns the same result into real
// server-to-client requests and calls the handler again, so every fixture
// below works in both eras.

// protocol2026Tools are the tools of the 2026-07-28 scenarios.
func protocol2026Tools() []*mcpserver.Tool {
	return []*mcpserver.Tool{
		missingCapabilityFixture(),
		raw("test_streaming_elicitation", "Streaming elicitation",
			"Asks the user to confirm through an input request (2026-07-28: an InputRequiredResult on the call's own response stream, never a request of its own), and reports the answer. A conformance-suite fixture.",
			interactive, streamingElicitation),
		raw("test_logging_tool", "Logging, gated",
			"Sends one info log notification while it runs; the client receives it only if its request set a log level (2026-07-28: _meta io.modelcontextprotocol/logLevel). A conformance-suite fixture.",
			readOnly, loggingTool),
		triggerFixture("test_trigger_tool_change", "Change the tool list",
			"Adds test_transient_tool to the tool list, or removes it if present, so that subscribers hear notifications/tools/list_changed. A conformance-suite fixture.",
			toggleTransientTool),
		triggerFixture("test_trigger_prompt_change", "Change the prompt list",
			"Adds test_transient_prompt to the prompt list, or removes it if present, so that subscribers hear notifications/prompts/list_changed. A conformance-suite fixture.",
			toggleTransientPrompt),
		raw("test_input_required_result_elicitation", "Input required: elicitation",
			"Asks for the caller's name (an elicitation input request, key user_name) and greets them. Asks again while the answer is missing. A conformance-suite fixture.",
			interactive, inputElicitation),
		raw("test_input_required_result_sampling", "Input required: sampling",
			"Asks the client's model what the capital of France is (a sampling input request, key capital_question) and returns its answer. A conformance-suite fixture.",
			interactive, inputSampling),
		raw("test_input_required_result_list_roots", "Input required: roots",
			"Asks for the client's roots (a roots/list input request, key client_roots) and lists them. A conformance-suite fixture.",
			interactive, inputListRoots),
		raw("test_input_required_result_request_state", "Input required: request state",
			"Asks for a confirmation (key confirm) with a signed requestState, and answers state-ok once both come back intact. A conformance-suite fixture.",
			interactive, inputRequestState),
		raw("test_input_required_result_multiple_inputs", "Input required: several inputs",
			"Asks in one round for a name (user_name), a greeting from the client's model (greeting) and the client's roots (client_roots), with a signed requestState. A conformance-suite fixture.",
			interactive, inputMultiple),
		raw("test_input_required_result_multi_round", "Input required: two rounds",
			"Asks for a name, then for a favourite colour, carrying the first answer in a signed requestState, then answers with both. A conformance-suite fixture.",
			interactive, inputMultiRound),
		raw("test_input_required_result_tampered_state", "Input required: tampered state",
			"Asks for a confirmation with a signed requestState, and refuses (invalid params) a retry whose state was altered. A conformance-suite fixture.",
			interactive, inputTamperedState),
		raw("test_input_required_result_capabilities", "Input required: declared capabilities",
			"Asks only for the kinds of input the client declared it can give: elicitation, sampling, roots. A conformance-suite fixture.",
			interactive, inputCapabilities),
		headerFixture(),
	}
}

// raw builds a fixture without arguments whose handler shapes the result.
func raw(name, title, description string, annotations func(string) *mcp.ToolAnnotations, h mcpserver.RawHandler) *mcpserver.Tool {
	return mcpserver.NewRawTool(&mcp.Tool{Name: name, Title: title, Description: description, InputSchema: fixtureSchema, Annotations: annotations(title)},
		atrium.RoleReader, h)
}

func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func askFor(requests mcp.InputRequestMap, state string) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: requests, RequestState: state}
}

// missingCapabilityFixture needs the sampling capability: a client that did
// not declare it gets MissingRequiredClientCapabilityError (-32021, HTTP 400)
// naming it, as SEP-2575 requires; one that did is asked for a sample.
func missingCapabilityFixture() *mcpserver.Tool {
	return raw("test_missing_capability", "Needs sampling",
		"Needs the sampling capability: refuses a client that did not declare it with MissingRequiredClientCapabilityError (-32021), asks the others' model for a word. A conformance-suite fixture.",
		interactive, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			caps := req.ClientCapabilities()
			if caps == nil || caps.Sampling == nil {
				data, err := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: &mcp.ClientCapabilities{
					Sampling: &mcp.SamplingCapabilities{},
				}})
				if err != nil {
					return nil, err
				}
				return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "test_missing_capability needs the sampling capability, which the client did not declare", Data: data}
			}
			if answer, ok := sampled(req.Params.InputResponses, "word"); ok {
				return text("The client's model answered: %s", answer), nil
			}
			return askFor(mcp.InputRequestMap{"word": sampling("Say one word.", 10)}, ""), nil
		})
}

func streamingElicitation(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if res, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult); ok && res != nil {
		return text("Confirmation answered: %s", res.Action), nil
	}
	return askFor(mcp.InputRequestMap{"confirm": confirmRequest()}, ""), nil
}

func loggingTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	// The SDK drops the message unless the request (2026-07-28) or the
	// session (2025) set a level: that gate is what the suite checks.
	if err := logInfo(ctx, req.Session, "test_logging_tool ran"); err != nil {
		return nil, atrium.Errorf(atrium.EUnavailable, "sending the log message: %v", err)
	}
	return text("Sent one info log message; it reaches clients that set a log level."), nil
}

// triggerFixture is a tool that changes the lists of the MCP server it is
// added to (one per workspace), so that its sessions and subscribers are told.
func triggerFixture(name, title, description string, toggle func(ms *mcp.Server, listed *atomic.Bool) string) *mcpserver.Tool {
	// Not read-only: it changes what the server lists. Nothing of Atrium's.
	annotations := &mcp.ToolAnnotations{Title: title, ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: new(false), OpenWorldHint: new(false)}
	return mcpserver.NewServerTool(&mcp.Tool{Name: name, Title: title, Description: description, InputSchema: fixtureSchema, Annotations: annotations},
		atrium.RoleReader, func(ms *mcp.Server) mcpserver.RawHandler {
			var listed atomic.Bool // whether the transient item is listed now
			return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text("%s", toggle(ms, &listed)), nil
			}
		})
}

func toggleTransientTool(ms *mcp.Server, listed *atomic.Bool) string {
	if listed.CompareAndSwap(true, false) {
		ms.RemoveTools(transientTool)
		return "Removed " + transientTool + " from the tool list."
	}
	listed.Store(true)
	ms.AddTool(&mcp.Tool{Name: transientTool, Title: "Transient tool", Description: "Listed between two calls of test_trigger_tool_change; answers a fixed text. A conformance-suite fixture.",
		InputSchema: fixtureSchema, Annotations: readOnly("Transient tool")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("The transient tool answered."), nil
		})
	return "Added " + transientTool + " to the tool list."
}

func toggleTransientPrompt(ms *mcp.Server, listed *atomic.Bool) string {
	if listed.CompareAndSwap(true, false) {
		ms.RemovePrompts(transientPrompt)
		return "Removed " + transientPrompt + " from the prompt list."
	}
	listed.Store(true)
	ms.AddPrompt(&mcp.Prompt{Name: transientPrompt, Title: "Transient prompt", Description: "Listed between two calls of test_trigger_prompt_change. A conformance-suite fixture."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "This prompt comes and goes."}}}}, nil
		})
	return "Added " + transientPrompt + " to the prompt list."
}

const (
	transientTool   = "test_transient_tool"
	transientPrompt = "test_transient_prompt"
)

// The input requests of the fixtures, in the suite's exact shapes.

func nameRequest(message string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: message, RequestedSchema: objectOf("name", "string")}
}

func confirmRequest() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: objectOf("ok", "boolean")}
}

func sampling(prompt string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{MaxTokens: maxTokens, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}}
}

// objectOf is the schema of a form with one required field.
func objectOf(field, typ string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{field: {Type: typ}}, Required: []string{field}}
}

// accepted is the form content of an accepted elicitation answer, or nil.
func accepted(responses mcp.InputResponseMap, key string) map[string]any {
	res, ok := responses[key].(*mcp.ElicitResult)
	if !ok || res == nil || res.Action != "accept" {
		return nil
	}
	return res.Content
}

// sampled is the text a sampling answer carries.
func sampled(responses mcp.InputResponseMap, key string) (string, bool) {
	switch res := responses[key].(type) {
	case *mcp.CreateMessageWithToolsResult:
		if res == nil {
			return "", false
		}
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				return t.Text, true
			}
		}
		return "(an answer that is not text)", true
	case *mcp.CreateMessageResult:
		if res == nil {
			return "", false
		}
		if t, ok := res.Content.(*mcp.TextContent); ok {
			return t.Text, true
		}
		return "(an answer that is not text)", true
	}
	return "", false
}

func rootsOf(responses mcp.InputResponseMap, key string) ([]string, bool) {
	res, ok := responses[key].(*mcp.ListRootsResult)
	if !ok || res == nil {
		return nil, false
	}
	uris := []string{}
	for _, r := range res.Roots {
		uris = append(uris, r.URI)
	}
	return uris, true
}

func inputElicitation(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if name, _ := accepted(req.Params.InputResponses, "user_name")["name"].(string); name != "" {
		return text("Hello, %s!", name), nil
	}
	// A missing, declined or malformed answer is asked for again (SEP-2322
	// prefers that to an error).
	return askFor(mcp.InputRequestMap{"user_name": nameRequest("What is your name?")}, ""), nil
}

func inputSampling(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if answer, ok := sampled(req.Params.InputResponses, "capital_question"); ok {
		return text("Sampling response: %s", answer), nil
	}
	return askFor(mcp.InputRequestMap{"capital_question": sampling("What is the capital of France?", 100)}, ""), nil
}

func inputListRoots(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if uris, ok := rootsOf(req.Params.InputResponses, "client_roots"); ok {
		return text("The client has %d root(s): %s", len(uris), strings.Join(uris, ", ")), nil
	}
	return askFor(mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}, ""), nil
}

func inputRequestState(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	const tool = "test_input_required_result_request_state"
	if req.Params.RequestState != "" {
		if _, err := openState(tool, req.Params.RequestState); err != nil {
			return nil, err
		}
		if accepted(req.Params.InputResponses, "confirm") != nil {
			return text("state-ok: the requestState came back intact and the confirmation was accepted"), nil
		}
	}
	return askFor(mcp.InputRequestMap{"confirm": confirmRequest()}, sealState(tool, "awaiting confirmation")), nil
}

func inputMultiple(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	const tool = "test_input_required_result_multiple_inputs"
	in := req.Params.InputResponses
	if req.Params.RequestState != "" {
		if _, err := openState(tool, req.Params.RequestState); err != nil {
			return nil, err
		}
		name, _ := accepted(in, "user_name")["name"].(string)
		greeting, sampledOK := sampled(in, "greeting")
		roots, rootsOK := rootsOf(in, "client_roots")
		if name != "" && sampledOK && rootsOK {
			return text("%s %s (%d root(s) visible)", greeting, name, len(roots)), nil
		}
	}
	return askFor(mcp.InputRequestMap{
		"user_name":    nameRequest("What is your name?"),
		"greeting":     sampling("Generate a greeting", 50),
		"client_roots": &mcp.ListRootsParams{},
	}, sealState(tool, "round 1")), nil
}

// multiRoundState is what test_input_required_result_multi_round carries
// between its rounds, in the signed requestState: the server keeps nothing.
type multiRoundState struct {
	Round int    `json:"round"`
	Name  string `json:"name,omitempty"`
}

func inputMultiRound(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	const tool = "test_input_required_result_multi_round"
	var st multiRoundState
	if req.Params.RequestState != "" {
		payload, err := openState(tool, req.Params.RequestState)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(payload), &st); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState is not this tool's"}
		}
	}
	in := req.Params.InputResponses
	switch st.Round {
	case 1:
		if name, _ := accepted(in, "step1")["name"].(string); name != "" {
			return askFor(mcp.InputRequestMap{"step2": &mcp.ElicitParams{
				Message: "Step 2: What is your favorite color?", RequestedSchema: objectOf("color", "string"),
			}}, sealJSON(tool, multiRoundState{Round: 2, Name: name})), nil
		}
	case 2:
		if color, _ := accepted(in, "step2")["color"].(string); color != "" {
			return text("Multi-round complete: %s likes %s", st.Name, color), nil
		}
		return askFor(mcp.InputRequestMap{"step2": &mcp.ElicitParams{
			Message: "Step 2: What is your favorite color?", RequestedSchema: objectOf("color", "string"),
		}}, req.Params.RequestState), nil
	}
	return askFor(mcp.InputRequestMap{"step1": nameRequest("Step 1: What is your name?")}, sealJSON(tool, multiRoundState{Round: 1})), nil
}

func inputTamperedState(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	const tool = "test_input_required_result_tampered_state"
	if req.Params.RequestState != "" {
		if _, err := openState(tool, req.Params.RequestState); err != nil {
			return nil, err
		}
		if accepted(req.Params.InputResponses, "confirm") != nil {
			return text("state-ok: the requestState came back intact and the confirmation was accepted"), nil
		}
	}
	return askFor(mcp.InputRequestMap{"confirm": confirmRequest()}, sealState(tool, "awaiting confirmation")), nil
}

func inputCapabilities(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if len(req.Params.InputResponses) > 0 {
		return text("Received %d answer(s) to the input requests the client's capabilities allowed.", len(req.Params.InputResponses)), nil
	}
	caps := req.ClientCapabilities()
	asks := mcp.InputRequestMap{}
	if caps != nil && caps.Elicitation != nil {
		asks["user_name"] = nameRequest("What is your name?")
	}
	if caps != nil && caps.Sampling != nil {
		asks["greeting"] = sampling("Generate a short greeting", 50)
	}
	if caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged) {
		asks["client_roots"] = &mcp.ListRootsParams{}
	}
	if len(asks) == 0 {
		return text("The client declared no capability that can answer an input request."), nil
	}
	return askFor(asks, ""), nil
}

// inputPrompt is test_input_required_result_prompt: input requests are not
// only for tools (SEP-2322).
func inputPrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	if ctxText, _ := accepted(req.Params.InputResponses, "user_context")["context"].(string); ctxText != "" {
		return &mcp.GetPromptResult{Description: "A prompt with elicited context", Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Context: " + ctxText}},
		}}, nil
	}
	return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": &mcp.ElicitParams{
		Message: "What context should the prompt use?", RequestedSchema: objectOf("context", "string"),
	}}}, nil
}

// Request state. A 2026-07-28 server keeps nothing between the rounds of a
// request: what it needs comes back in requestState, which the client could
// alter. So the state is signed (HMAC-SHA256, with a key made at start and
// bound to the tool's name) and a retry whose state fails the check is
// refused (SEP-2322: "integrity-protected").

var stateKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}()

func stateMAC(tool, payload string) []byte {
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte(tool))
	m.Write([]byte{0})
	m.Write([]byte(payload))
	return m.Sum(nil)
}

func sealState(tool, payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(stateMAC(tool, payload))
}

func sealJSON(tool string, v any) string {
	b, _ := json.Marshal(v) // plain structs
	return sealState(tool, string(b))
}

// openState returns the payload of a state sealState made for tool, or an
// invalid-params error.
func openState(tool, state string) (string, error) {
	enc := base64.RawURLEncoding
	p, m, ok := strings.Cut(state, ".")
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(m)
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(mac, stateMAC(tool, string(payload))) {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState failed its integrity check: send back the requestState of the previous answer unchanged"}
	}
	return string(payload), nil
}

// HeaderInput is what test_x_mcp_header takes.
type HeaderInput struct {
	Region string `json:"region,omitempty"`
	Level  int    `json:"level,omitempty"`
}

// headerFixture mirrors its region argument into the Mcp-Param-Region header
// (x-mcp-header, SEP-2243): the transport checks that header and body agree
// before the call runs.
func headerFixture() *mcpserver.Tool {
	schema := json.RawMessage(`{
		"type": "object",
		"properties": {
			"region": {"type": "string", "description": "the region; clients send it as the Mcp-Param-Region header too", "x-mcp-header": "Region"},
			"level": {"type": "integer", "description": "a level, not mirrored in a header"}
		},
		"additionalProperties": false
	}`)
	return mcpserver.NewRawTool(&mcp.Tool{Name: "test_x_mcp_header", Title: "Custom header",
		Description: "Takes a region that clients also send as the Mcp-Param-Region header (x-mcp-header, SEP-2243), which must agree with the body, and echoes it. A conformance-suite fixture.",
		InputSchema: schema, Annotations: readOnly("Custom header")},
		atrium.RoleReader, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in HeaderInput
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
					return nil, atrium.Errorf(atrium.EInvalid, "invalid arguments: region must be a string and level an integer")
				}
			}
			return text("region=%s level=%d", in.Region, in.Level), nil
		})
}
