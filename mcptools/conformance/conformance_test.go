package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mcptools"
	"github.com/atrium-hq/atrium/mcptools/conformance"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// mustActor is a local agent in the default workspace of a fresh SQLite store.
func mustActor(tb testing.TB) *atrium.Actor {
	tb.Helper()
	return identitytest.Agent(tb, identitytest.New(tb, storetest.MustOpen(tb, store.SQLite, nil)), "tester", "")
}

// fixtureClient records what the server sends a client on its own initiative
// and answers its sampling and elicitation requests like the conformance
// suite does.
type fixtureClient struct {
	mu        sync.Mutex
	progress  []*mcp.ProgressNotificationParams
	logs      []string
	updated   chan string
	sampled   []string // prompts the server asked the model
	elicited  []*mcp.ElicitParams
	elicitAns map[string]any
}

// answerElicitation sets the form content of the client's next answers.
func (fc *fixtureClient) answerElicitation(content map[string]any) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.elicitAns = content
}

// connectFixtures connects an in-memory client, speaking 2025-11-25 (the
// version whose server-to-client requests the suite grades), to the
// conformance toolset of a server over a real store.
func connectFixtures(t *testing.T) (*mcp.ClientSession, *fixtureClient) {
	t.Helper()
	ctx := t.Context()
	actor := mustActor(t)
	s, err := mcpserver.New(mcpserver.Config{Toolsets: mcptools.All(mcptools.Options{}), Enable: []string{"all", conformance.Name}, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)

	fc := &fixtureClient{updated: make(chan string, 16)}
	client := mcp.NewClient(&mcp.Implementation{Name: "conformance-test", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			fc.mu.Lock()
			defer fc.mu.Unlock()
			fc.progress = append(fc.progress, req.Params)
		},
		//lint:ignore SA1019 protocol logging is deprecated by 2026-07-28 but graded by the conformance suite
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			fc.mu.Lock()
			defer fc.mu.Unlock()
			fc.logs = append(fc.logs, fmt.Sprint(req.Params.Data))
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case fc.updated <- req.Params.URI:
			default:
			}
		},
		//lint:ignore SA1019 sampling is deprecated by 2026-07-28 but graded by the conformance suite
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			fc.mu.Lock()
			defer fc.mu.Unlock()
			for _, m := range req.Params.Messages {
				fc.sampled = append(fc.sampled, m.Content.(*mcp.TextContent).Text)
			}
			if req.Params.MaxTokens != 100 {
				t.Errorf("sampling asked for %d tokens, want 100", req.Params.MaxTokens)
			}
			//lint:ignore SA1019 as above
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", StopReason: "endTurn", Content: &mcp.TextContent{Text: "a sampled answer"}}, nil
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			fc.mu.Lock()
			defer fc.mu.Unlock()
			fc.elicited = append(fc.elicited, req.Params)
			return &mcp.ElicitResult{Action: "accept", Content: fc.elicitAns}, nil
		},
	})
	ms := s.ForWorkspace(actor.Workspace)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := ms.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, fc
}

func callFixture(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatalf("%s: protocol error %v", params.Name, err)
	}
	return res
}

func contentTypes(cs []mcp.Content) []string {
	var out []string
	for _, c := range cs {
		b, _ := json.Marshal(c)
		var wire struct{ Type string }
		_ = json.Unmarshal(b, &wire)
		out = append(out, wire.Type)
	}
	return out
}

func TestConformanceFixturesReturnExactContent(t *testing.T) {
	cs, _ := connectFixtures(t)

	res := callFixture(t, cs, &mcp.CallToolParams{Name: "test_simple_text"})
	if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "This is a simple text response for testing." {
		t.Errorf("test_simple_text: %+v", res)
	}

	res = callFixture(t, cs, &mcp.CallToolParams{Name: "test_image_content", Arguments: map[string]any{}})
	img, ok := res.Content[0].(*mcp.ImageContent)
	if !ok || img.MIMEType != "image/png" {
		t.Fatalf("test_image_content: %+v", res.Content)
	}
	decoded, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatalf("image data is not a PNG: %v", err)
	}
	if r, g, b, a := decoded.At(0, 0).RGBA(); decoded.Bounds().Dx() != 1 || r != 0xffff || g != 0 || b != 0 || a != 0xffff {
		t.Errorf("want one red pixel, got bounds %v, colour %v", decoded.Bounds(), decoded.At(0, 0))
	}

	res = callFixture(t, cs, &mcp.CallToolParams{Name: "test_audio_content"})
	audio, ok := res.Content[0].(*mcp.AudioContent)
	if !ok || audio.MIMEType != "audio/wav" || !bytes.HasPrefix(audio.Data, []byte("RIFF")) || string(audio.Data[8:12]) != "WAVE" {
		t.Errorf("test_audio_content: want a WAV file as audio/wav, got %+v", res.Content)
	}

	res = callFixture(t, cs, &mcp.CallToolParams{Name: "test_embedded_resource"})
	if er, ok := res.Content[0].(*mcp.EmbeddedResource); !ok || er.Resource.URI != "test://embedded-resource" || er.Resource.MIMEType != "text/plain" || er.Resource.Text == "" {
		t.Errorf("test_embedded_resource: %+v", res.Content)
	}

	res = callFixture(t, cs, &mcp.CallToolParams{Name: "test_multiple_content_types"})
	if got, want := contentTypes(res.Content), []string{"text", "image", "resource"}; !slices.Equal(got, want) {
		t.Errorf("test_multiple_content_types: content types %v, want %v", got, want)
	}
}

// A failing fixture fails like every Atrium tool: a result, not a protocol
// error, with the structured {error, code}.
func TestConformanceErrorFixtureIsAToolResult(t *testing.T) {
	cs, _ := connectFixtures(t)
	res := callFixture(t, cs, &mcp.CallToolParams{Name: "test_error_handling"})
	if !res.IsError {
		t.Fatalf("isError not set: %+v", res)
	}
	var got mcpserver.ToolError
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := mcpserver.ToolError{Error: "This tool intentionally returns an error for testing", Code: atrium.EUnavailable}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("structured error (-want +got):\n%s", diff)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, want.Error) {
		t.Errorf("text content %q lacks the message", text)
	}
}

func TestConformanceProgressAndLogging(t *testing.T) {
	cs, fc := connectFixtures(t)

	params := &mcp.CallToolParams{Name: "test_tool_with_progress"}
	params.SetProgressToken("progress-1")
	callFixture(t, cs, params)
	// Without a token the tool still runs, and reports nothing.
	callFixture(t, cs, &mcp.CallToolParams{Name: "test_tool_with_progress"})

	//lint:ignore SA1019 protocol logging is deprecated by 2026-07-28 but graded by the conformance suite
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	callFixture(t, cs, &mcp.CallToolParams{Name: "test_tool_with_logging"})

	// Notifications precede the result on the wire, but their handlers run
	// on their own: wait for them a little.
	deadline := time.Now().Add(5 * time.Second)
	for {
		fc.mu.Lock()
		np, nl := len(fc.progress), len(fc.logs)
		fc.mu.Unlock()
		if np >= 3 && nl >= 3 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	var steps []float64
	for _, p := range fc.progress {
		if p.ProgressToken != "progress-1" || p.Total != 100 {
			t.Errorf("progress %+v: want token progress-1 out of 100", p)
		}
		steps = append(steps, p.Progress)
	}
	if want := []float64{0, 50, 100}; !slices.Equal(steps, want) {
		t.Errorf("progress steps %v, want %v", steps, want)
	}
	if want := []string{"Tool execution started", "Tool processing data", "Tool execution completed"}; !slices.Equal(fc.logs, want) {
		t.Errorf("log messages %q, want %q", fc.logs, want)
	}
}

func TestConformanceSamplingAndElicitation(t *testing.T) {
	cs, fc := connectFixtures(t)

	res := callFixture(t, cs, &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "say hi"}})
	if res.IsError {
		t.Fatalf("test_sampling failed: %+v", res.Content)
	}
	var sampled struct{ Response, Model string }
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &sampled)
	if sampled.Response != "a sampled answer" || sampled.Model != "test-model" {
		t.Errorf("test_sampling answered %s", b)
	}

	fc.answerElicitation(map[string]any{"username": "dede", "email": "dede@example.com"})
	res = callFixture(t, cs, &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "Who are you?"}})
	if res.IsError {
		t.Fatalf("test_elicitation failed: %+v", res.Content)
	}
	var elicited struct {
		Action  string
		Content map[string]any
	}
	b, _ = json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &elicited)
	if want := map[string]any{"username": "dede", "email": "dede@example.com"}; elicited.Action != "accept" || !cmp.Equal(elicited.Content, want) {
		t.Errorf("test_elicitation answered %s", b)
	}

	// A form that does not match the requested schema is refused, not passed on.
	fc.answerElicitation(map[string]any{"username": "dede"})
	if res := callFixture(t, cs, &mcp.CallToolParams{Name: "test_elicitation"}); !res.IsError {
		t.Errorf("an answer without the required email was accepted: %+v", res.StructuredContent)
	}

	fc.mu.Lock()
	defer fc.mu.Unlock()
	if !slices.Equal(fc.sampled, []string{"say hi"}) {
		t.Errorf("the model was asked %q, want the prompt", fc.sampled)
	}
	if len(fc.elicited) == 0 || fc.elicited[0].Message != "Who are you?" {
		t.Fatalf("elicitation requests: %+v", fc.elicited)
	}
	var schema struct{ Required []string }
	b, _ = json.Marshal(fc.elicited[0].RequestedSchema)
	_ = json.Unmarshal(b, &schema)
	if !slices.Equal(schema.Required, []string{"username", "email"}) {
		t.Errorf("requested schema %s: want username and email required", b)
	}
}

// The 2020-12 schema reaches clients as written, and is enforced.
func TestConformanceJSONSchemaFixture(t *testing.T) {
	cs, _ := connectFixtures(t)
	var found *mcp.Tool
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name == "json_schema_2020_12_tool" {
			found = tool
		}
	}
	if found == nil {
		t.Fatal("json_schema_2020_12_tool is not listed")
	}
	var schema map[string]any
	b, _ := json.Marshal(found.InputSchema)
	_ = json.Unmarshal(b, &schema)
	defs, _ := schema["$defs"].(map[string]any)
	address, _ := defs["address"].(map[string]any)
	if schema["$schema"] != "https://json-schema.org/draft/2020-12/schema" || address["$anchor"] != "addressDef" || schema["additionalProperties"] != false ||
		schema["allOf"] == nil || schema["if"] == nil || schema["then"] == nil || schema["else"] == nil {
		t.Errorf("listed schema lost 2020-12 keywords: %s", b)
	}

	args := map[string]any{"name": "Dede", "address": map[string]any{"street": "1 Main St", "city": "Lyon"}, "contactMethod": "phone", "phone": "555"}
	res := callFixture(t, cs, &mcp.CallToolParams{Name: "json_schema_2020_12_tool", Arguments: args})
	got, _ := json.Marshal(res.StructuredContent)
	want, _ := json.Marshal(args)
	if res.IsError || string(got) != string(want) {
		t.Errorf("echo %s (isError %v), want %s", got, res.IsError, want)
	}
	// if/then: the phone is required when it is the contact method.
	res = callFixture(t, cs, &mcp.CallToolParams{Name: "json_schema_2020_12_tool", Arguments: map[string]any{"contactMethod": "phone", "email": "d@example.org"}})
	if !res.IsError {
		t.Errorf("a phone contact without a phone was accepted: %v", res.StructuredContent)
	}
	res = callFixture(t, cs, &mcp.CallToolParams{Name: "json_schema_2020_12_tool", Arguments: map[string]any{"nickname": "D", "email": "d@example.org"}})
	if !res.IsError {
		t.Error("an unknown property passed additionalProperties: false")
	}
}

func TestConformanceResourcesPromptsAndCompletion(t *testing.T) {
	cs, fc := connectFixtures(t)
	ctx := t.Context()

	bin, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-binary"})
	if err != nil {
		t.Fatal(err)
	}
	if c := bin.Contents[0]; c.MIMEType != "image/png" || !bytes.HasPrefix(c.Blob, []byte("\x89PNG")) {
		t.Errorf("static-binary: %+v", c)
	}
	data, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/a%20b/data"})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ ID string }
	if err := json.Unmarshal([]byte(data.Contents[0].Text), &doc); err != nil || doc.ID != "a b" {
		t.Errorf("template read %q (%v): want id %q", data.Contents[0].Text, err, "a b")
	}

	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "hello", "arg2": "world"}})
	if err != nil {
		t.Fatal(err)
	}
	if text := p.Messages[0].Content.(*mcp.TextContent).Text; text != "Prompt with arguments: arg1='hello', arg2='world'" {
		t.Errorf("prompt text %q", text)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "test_prompt_with_arguments"},
		Argument: mcp.CompleteParamsArgument{Name: "arg1", Value: "PA"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"paris", "park", "party"}; !slices.Equal(comp.Completion.Values, want) || comp.Completion.Total != len(want) {
		t.Errorf("completion %+v, want %v", comp.Completion, want)
	}

	// The watched resource changes on a timer; a subscriber is told.
	before, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://watched-resource"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-fc.updated:
		if uri != "test://watched-resource" {
			t.Errorf("update for %q", uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated within 10s")
	}
	after, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://watched-resource"})
	if err != nil {
		t.Fatal(err)
	}
	if before.Contents[0].Text == after.Contents[0].Text {
		t.Errorf("the watched resource did not change: %q", after.Contents[0].Text)
	}
}
