// Package conformance holds the fixtures of the official MCP conformance
// suite (@modelcontextprotocol/conformance): the tools, resources and prompts
// it calls by exact name, in the shapes its scenarios check. They exist only
// so that the suite can grade Atrium's MCP surface; none of them touches
// Atrium's data, so every tool needs only the reader role.
//
// The toolset stays off unless named: atrium serve --toolsets all,conformance.
package conformance

import (
	"bytes"
	"context"
	"embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
)

// URIs of the conformance resources.
const (
	staticTextURI   = "test://static-text"
	staticBinaryURI = "test://static-binary"
	watchedURI      = "test://watched-resource"
	dataTemplateURI = "test://template/{id}/data"
)

// watchInterval is how often test://watched-resource changes and its
// subscribers are told.
const watchInterval = 2 * time.Second

// errorFixtureMessage is the message of test_error_handling's failure.
const errorFixtureMessage = "This tool intentionally returns an error for testing"

// Name is the toolset's name, as --toolsets takes it.
const Name = "conformance"

//go:embed defs/*.json
var defs embed.FS

// New holds the fixtures of the official MCP conformance suite. It is off
// unless named: --toolsets all,conformance.
func New(*mcpserver.Server) *mcpserver.Toolset {
	// revision counts the changes of test://watched-resource, so that a client
	// that reads it again after an update sees new content.
	var revision atomic.Int64
	return &mcpserver.Toolset{
		Name:        Name,
		Description: "Fixtures of the official MCP conformance suite; for testing only.",
		Defs:        defs,
		Tools: append([]*mcpserver.Tool{
			contentTool("test_simple_text", "Simple text", "Returns one text block. A conformance-suite fixture.",
				&mcp.TextContent{Text: "This is a simple text response for testing."}),
			contentTool("test_image_content", "Image content", "Returns one image block: a 1×1 red PNG. A conformance-suite fixture.",
				&mcp.ImageContent{Data: fixturePNG(), MIMEType: "image/png"}),
			contentTool("test_audio_content", "Audio content", "Returns one audio block: a short silent WAV. A conformance-suite fixture.",
				&mcp.AudioContent{Data: fixtureWAV(), MIMEType: "audio/wav"}),
			contentTool("test_embedded_resource", "Embedded resource", "Returns one embedded text resource. A conformance-suite fixture.",
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}),
			contentTool("test_multiple_content_types", "Mixed content", "Returns a text, an image and an embedded JSON resource in one result. A conformance-suite fixture.",
				&mcp.TextContent{Text: "Multiple content types test:"},
				&mcp.ImageContent{Data: fixturePNG(), MIMEType: "image/png"},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}}),
			loggingFixture(),
			progressFixture(),
			errorFixture(),
			samplingFixture(),
			elicitationFixture("test_elicitation", "Elicitation",
				"Asks the user, through the client (elicitation/create), for a username and an email address, and returns the answer. Takes the message to show. A conformance-suite fixture.",
				usernameEmailSchema),
			elicitationFixture("test_elicitation_sep1034_defaults", "Elicitation with defaults",
				"Asks the user, through the client, to fill a form whose string, integer, number, enum and boolean fields all have defaults (SEP-1034), and returns the answer. A conformance-suite fixture.",
				defaultsSchema),
			elicitationFixture("test_elicitation_sep1330_enums", "Elicitation with enums",
				"Asks the user, through the client, to choose in each of the five enum forms of SEP-1330 (untitled, titled, legacy enumNames, and single and multiple selection), and returns the answer. A conformance-suite fixture.",
				enumsSchema),
			schemaFixture(),
			reconnectionFixture(),
			slowFixture(),
		}, protocol2026Tools()...),
		Resources: []mcpserver.Resource{
			{Def: &mcp.Resource{URI: staticTextURI, Name: "static-text", Title: "Static text", Description: "A fixed text resource. A conformance-suite fixture.", MIMEType: "text/plain"},
				Handler: func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return textResource(req.Params.URI, "text/plain", "This is the content of the static text resource."), nil
				}},
			{Def: &mcp.Resource{URI: staticBinaryURI, Name: "static-binary", Title: "Static binary", Description: "A fixed binary resource: a 1×1 red PNG. A conformance-suite fixture.", MIMEType: "image/png"},
				Handler: func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: fixturePNG()}}, Cacheable: public}, nil
				}},
			{Def: &mcp.Resource{URI: watchedURI, Name: "watched-resource", Title: "Watched resource", Description: fmt.Sprintf("A text resource that changes every %s; subscribe to be told. A conformance-suite fixture.", watchInterval), MIMEType: "text/plain"},
				Handler: func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return textResource(req.Params.URI, "text/plain", fmt.Sprintf("Watched resource content, revision %d", revision.Load())), nil
				}},
		},
		Templates: []mcpserver.ResourceTemplate{
			{Def: &mcp.ResourceTemplate{URITemplate: dataTemplateURI, Name: "template-data", Title: "Templated data", Description: "JSON data for any id: test://template/ID/data. A conformance-suite fixture.", MIMEType: "application/json"},
				Handler: readTemplateData},
		},
		Prompts:  fixturePrompts(),
		Complete: completeFixturePrompt,
		Start: func(ctx context.Context, ms *mcp.Server, _ atrium.Workspace) {
			tick := time.NewTicker(watchInterval)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					revision.Add(1)
					// The SDK notifies only the sessions subscribed to the URI;
					// its error is always nil in v1.8.0, and a lost
					// notification is retried by the next tick anyway.
					_ = ms.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: watchedURI})
				}
			}
		},
	}
}

// noInput is the input of fixtures that take no arguments.
type noInput struct{}

// fixtureSchema is the input schema of raw fixtures without arguments.
var fixtureSchema = &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}}

// contentTool is a fixture that returns content verbatim: raw, because the
// suite checks the exact content blocks, which a typed result would replace
// with its JSON.
func contentTool(name, title, description string, content ...mcp.Content) *mcpserver.Tool {
	return mcpserver.NewRawTool(&mcp.Tool{Name: name, Title: title, Description: description, InputSchema: fixtureSchema, Annotations: readOnly(title)},
		atrium.RoleReader, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: content}, nil
		})
}

// LoggingOutput is what test_tool_with_logging answers.
type LoggingOutput struct {
	Messages []string `json:"messages" jsonschema:"the log messages sent, at level info, in order; a client that has not set a log level receives none"`
}

func loggingFixture() *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "test_tool_with_logging",
		Title:       "Logging",
		Description: "Sends three info log notifications (notifications/message), 50 ms apart, while it runs. Set a log level first (logging/setLevel) to receive them. A conformance-suite fixture.",
		Annotations: readOnly("Logging"),
	}, atrium.RoleReader, func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (LoggingOutput, error) {
		// The delays let a client see the messages arrive while the call is
		// still running, which is what the suite checks.
		out := LoggingOutput{Messages: []string{"Tool execution started", "Tool processing data", "Tool execution completed"}}
		for i, msg := range out.Messages {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return out, err
				}
			}
			if err := logInfo(ctx, req.Session, msg); err != nil {
				return out, atrium.Errorf(atrium.EUnavailable, "sending log message %q: %v", msg, err)
			}
		}
		return out, nil
	})
}

// logInfo sends msg to the session as an info log notification. The SDK drops
// it unless the client has set a log level.
func logInfo(ctx context.Context, ss *mcp.ServerSession, msg string) error {
	//lint:ignore SA1019 protocol logging is deprecated by 2026-07-28 (SEP-2577) but 2025-era clients and the conformance suite still use it
	return ss.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "conformance", Data: msg})
}

// ProgressOutput is what test_tool_with_progress answers.
type ProgressOutput struct {
	Steps         []float64 `json:"steps" jsonschema:"the progress values passed, out of 100"`
	ProgressToken any       `json:"progress_token,omitempty" jsonschema:"the request's progress token; without one no notifications are sent"`
}

func progressFixture() *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "test_tool_with_progress",
		Title:       "Progress",
		Description: "Reports progress 0, 50 and 100 out of 100 (notifications/progress), 50 ms apart, when the call carries _meta.progressToken. A conformance-suite fixture.",
		Annotations: readOnly("Progress"),
	}, atrium.RoleReader, func(ctx context.Context, req *mcp.CallToolRequest, _ noInput) (ProgressOutput, error) {
		const total = 100
		token := req.Params.GetProgressToken()
		out := ProgressOutput{Steps: []float64{0, 50, 100}, ProgressToken: token}
		for i, step := range out.Steps {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return out, err
				}
			}
			if token == nil {
				continue // the caller asked for no progress
			}
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      step,
				Total:         total,
				Message:       fmt.Sprintf("step %d of %d", i+1, len(out.Steps)),
			})
			if err != nil {
				return out, atrium.Errorf(atrium.EUnavailable, "sending progress: %v", err)
			}
		}
		return out, nil
	})
}

// errorFixture fails on every call. It fails the way every Atrium tool does —
// a result with isError and {error, code}, not a JSON-RPC error — so that the
// suite grades Atrium's real error path.
func errorFixture() *mcpserver.Tool {
	return mcpserver.NewRawTool(&mcp.Tool{
		Name:        "test_error_handling",
		Title:       "Error handling",
		Description: "Always fails: returns a tool result with isError set and the structured {error, code} of every failed Atrium call. A conformance-suite fixture.",
		InputSchema: fixtureSchema,
		Annotations: readOnly("Error handling"),
	}, atrium.RoleReader, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &atrium.Error{Code: atrium.EUnavailable, Message: errorFixtureMessage}
	})
}

// readOnly is the annotation set of a fixture that changes nothing and
// answers the same each time.
func readOnly(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)}
}

// interactive is the annotation set of a fixture that asks the client — its
// model or its user — for an answer: it changes nothing, but its answer comes
// from outside and may differ each time.
func interactive(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: false, DestructiveHint: new(false), OpenWorldHint: new(true)}
}

// SamplingInput is what test_sampling takes.
type SamplingInput struct {
	Prompt string `json:"prompt" jsonschema:"the prompt to send to the client's model"`
}

// SamplingOutput is what test_sampling answers.
type SamplingOutput struct {
	Response   string `json:"response" jsonschema:"the text the client's model answered"`
	Model      string `json:"model" jsonschema:"the model that answered, as the client names it"`
	StopReason string `json:"stop_reason,omitempty" jsonschema:"why the model stopped, if the client said"`
}

func samplingFixture() *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "test_sampling",
		Title:       "Sampling",
		Description: "Asks the client's model to answer a prompt (sampling/createMessage, at most 100 tokens) and returns its answer. Needs a 2025-era session with a client that declares the sampling capability. A conformance-suite fixture.",
		Annotations: interactive("Sampling"),
	}, atrium.RoleReader, func(ctx context.Context, req *mcp.CallToolRequest, in SamplingInput) (SamplingOutput, error) {
		if !clientSamples(req) {
			return SamplingOutput{}, atrium.Errorf(atrium.EInvalid, "test_sampling needs a client that declares the sampling capability")
		}
		out, err := sample(ctx, req.Session, in.Prompt)
		if err != nil {
			return out, atrium.Errorf(atrium.EUnavailable, "the client did not answer the sampling request: %v", err)
		}
		return out, nil
	})
}

// clientSamples reports whether the caller's client declared sampling.
func clientSamples(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	//lint:ignore SA1019 sampling is deprecated by 2026-07-28 (SEP-2577) but 2025-era clients and the conformance suite still use it
	return caps != nil && caps.Sampling != nil
}

// sample asks the client's model to answer prompt. The deprecated sampling API
// is confined here.
func sample(ctx context.Context, ss *mcp.ServerSession, prompt string) (SamplingOutput, error) {
	//lint:ignore SA1019 sampling is deprecated by 2026-07-28 (SEP-2577) but 2025-era clients and the conformance suite still use it
	params := &mcp.CreateMessageParams{MaxTokens: 100, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}}
	//lint:ignore SA1019 as above
	res, err := ss.CreateMessage(ctx, params)
	if err != nil {
		return SamplingOutput{}, err
	}
	out := SamplingOutput{Model: res.Model, StopReason: res.StopReason}
	if text, ok := res.Content.(*mcp.TextContent); ok {
		out.Response = text.Text
	} else {
		out.Response = fmt.Sprintf("(a %T answer, not text)", res.Content)
	}
	return out, nil
}

// ElicitationInput is what the elicitation fixtures take.
type ElicitationInput struct {
	Message string `json:"message,omitempty" jsonschema:"the message to show the user; a default is used when empty"`
}

// ElicitationOutput is what the elicitation fixtures answer.
type ElicitationOutput struct {
	Action  string         `json:"action" jsonschema:"what the user did: accept, decline or cancel"`
	Content map[string]any `json:"content,omitempty" jsonschema:"the answers, when the user accepted"`
}

// The requested schemas are literal JSON: the suite checks their exact
// keywords (default, enum, oneOf, anyOf, enumNames), which must reach the
// client as written.
var (
	usernameEmailSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"username": {"type": "string", "description": "User's response"},
			"email": {"type": "string", "description": "User's email address"}
		},
		"required": ["username", "email"]
	}`)
	defaultsSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"name": {"type": "string", "description": "User name", "default": "John Doe"},
			"age": {"type": "integer", "description": "User age", "default": 30},
			"score": {"type": "number", "description": "User score", "default": 95.5},
			"status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
			"verified": {"type": "boolean", "description": "Verification status", "default": true}
		}
	}`)
	enumsSchema = json.RawMessage(`{
		"type": "object",
		"properties": {
			"untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
			"titledSingle": {"type": "string", "oneOf": [
				{"const": "value1", "title": "First Option"},
				{"const": "value2", "title": "Second Option"},
				{"const": "value3", "title": "Third Option"}
			]},
			"legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
			"untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
			"titledMulti": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"anyOf": [
				{"const": "value1", "title": "First Choice"},
				{"const": "value2", "title": "Second Choice"},
				{"const": "value3", "title": "Third Choice"}
			]}}
		}
	}`)
)

// elicitationFixture asks the user, through the client, to fill the form
// schema describes, and returns what the user did.
func elicitationFixture(name, title, description string, schema json.RawMessage) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{Name: name, Title: title, Description: description, Annotations: interactive(title)},
		atrium.RoleReader, func(ctx context.Context, req *mcp.CallToolRequest, in ElicitationInput) (ElicitationOutput, error) {
			if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
				return ElicitationOutput{}, atrium.Errorf(atrium.EInvalid, "%s needs a client that declares the elicitation capability", name)
			}
			msg := in.Message
			if msg == "" {
				msg = title + ": please answer the form"
			}
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: schema})
			if err != nil {
				return ElicitationOutput{}, atrium.Errorf(atrium.EUnavailable, "the client did not answer the elicitation request: %v", err)
			}
			return ElicitationOutput{Action: res.Action, Content: res.Content}, nil
		})
}

// PostalAddress is the $defs entry of json_schema_2020_12_tool's schema.
type PostalAddress struct {
	Street string `json:"street,omitempty"`
	City   string `json:"city,omitempty"`
}

// SchemaFixtureInput is what json_schema_2020_12_tool takes.
type SchemaFixtureInput struct {
	Name          string         `json:"name,omitempty"`
	Address       *PostalAddress `json:"address,omitempty"`
	ContactMethod string         `json:"contactMethod,omitempty"`
	Phone         string         `json:"phone,omitempty"`
	Email         string         `json:"email,omitempty"`
}

// schemaFixture advertises the suite's reference JSON Schema 2020-12 input
// schema — $schema, $defs with an $anchor and a $ref to it, allOf/anyOf,
// if/then/else, additionalProperties false — which clients must receive
// unchanged (SEP-1613, SEP-2106). Being typed, the SDK also enforces it: a
// call needs a phone or an email, the phone when contactMethod is phone.
func schemaFixture() *mcpserver.Tool {
	// A schema must be a tree: every node is its own value.
	str := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }
	required := func(names ...string) *jsonschema.Schema { return &jsonschema.Schema{Required: names} }
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "json_schema_2020_12_tool",
		Title:       "JSON Schema 2020-12",
		Description: "Takes a name, an address and a way to be contacted (a phone or an email; the phone when contactMethod is phone), described with JSON Schema 2020-12 keywords ($schema, $defs, $anchor, $ref, allOf, anyOf, if/then/else, additionalProperties), and echoes them. A conformance-suite fixture.",
		Annotations: readOnly("JSON Schema 2020-12"),
		InputSchema: &jsonschema.Schema{
			Schema: "https://json-schema.org/draft/2020-12/schema",
			Type:   "object",
			Defs: map[string]*jsonschema.Schema{
				"address": {Anchor: "addressDef", Type: "object", Properties: map[string]*jsonschema.Schema{"street": str(), "city": str()}},
			},
			Properties: map[string]*jsonschema.Schema{
				"name":          str(),
				"address":       {Ref: "#/$defs/address"},
				"contactMethod": {Type: "string", Enum: []any{"phone", "email"}},
				"phone":         str(),
				"email":         str(),
			},
			AllOf: []*jsonschema.Schema{{AnyOf: []*jsonschema.Schema{required("phone"), required("email")}}},
			If: &jsonschema.Schema{
				Properties: map[string]*jsonschema.Schema{"contactMethod": {Const: jsonschema.Ptr[any]("phone")}},
				Required:   []string{"contactMethod"},
			},
			Then:                 required("phone"),
			Else:                 required("email"),
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		},
	}, atrium.RoleReader, func(_ context.Context, _ *mcp.CallToolRequest, in SchemaFixtureInput) (SchemaFixtureInput, error) {
		return in, nil
	})
}

// reconnectionFixture is the tool the suite calls to see whether the server
// closes the SSE stream of a call mid-way and lets the client resume it with
// Last-Event-ID (SEP-1699). Resuming needs an event store, and Atrium's
// Streamable HTTP keeps none: a closed stream would lose the result and leave
// the client waiting. So this fixture answers on the stream it was called
// on, which the suite reports as information, not as a failure.
func reconnectionFixture() *mcpserver.Tool {
	return mcpserver.NewRawTool(&mcp.Tool{
		Name:        "test_reconnection",
		Title:       "Reconnection",
		Description: "Answers after a short delay on the stream of the call; Atrium keeps no event store, so it does not close the stream mid-call (SEP-1699). A conformance-suite fixture.",
		InputSchema: fixtureSchema,
		Annotations: readOnly("Reconnection"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Reconnection test completed: the result came on the original stream."}}}, nil
	})
}

// sleep waits d, or until ctx ends (the client cancelled the call).
// SlowInput is how long test_slow takes.
type SlowInput struct {
	MS int `json:"ms" jsonschema:"how long to take, in milliseconds (at most 10000)"`
}

// SlowOutput reports how long test_slow took.
type SlowOutput struct {
	SleptMS int `json:"slept_ms" jsonschema:"the milliseconds slept"`
}

// slowFixture is not the suite's: it is Atrium's own fixture for what only a
// call in flight shows — graceful shutdown, cancellation, timeouts.
func slowFixture() *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "test_slow",
		Title:       "Slow call",
		Description: "Takes ms milliseconds (at most 10000) to answer, or stops when cancelled; with _meta.progressToken it reports progress 0 as it begins. For testing shutdown, cancellation and timeouts.",
		Annotations: readOnly("Slow call"),
	}, atrium.RoleReader, func(ctx context.Context, req *mcp.CallToolRequest, in SlowInput) (SlowOutput, error) {
		if in.MS < 0 || in.MS > 10000 {
			return SlowOutput{}, atrium.Errorf(atrium.EInvalid, "ms must be between 0 and 10000, not %d", in.MS)
		}
		// A caller learns the call has begun, not merely been sent: a
		// request written out may still wait in the listener's queue.
		if token := req.Params.GetProgressToken(); token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 0, Total: float64(in.MS), Message: "begun"})
			if err != nil {
				return SlowOutput{}, atrium.Errorf(atrium.EUnavailable, "sending progress: %v", err)
			}
		}
		if err := sleep(ctx, time.Duration(in.MS)*time.Millisecond); err != nil {
			return SlowOutput{}, err
		}
		return SlowOutput{SleptMS: in.MS}, nil
	})
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return atrium.Errorf(atrium.EUnavailable, "cancelled: %v", ctx.Err())
	case <-t.C:
		return nil
	}
}

// public is the cacheScope of the fixture resources: unlike Atrium's own,
// they are the same for every caller.
var public = mcp.Cacheable{CacheScope: "public"}

func textResource(uri, mimeType, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeType, Text: text}}, Cacheable: public}
}

// readTemplateData reads test://template/{id}/data. The SDK has matched the
// URI against the template but hands over only the URI, so the id is cut out
// here.
func readTemplateData(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	raw, ok := strings.CutPrefix(uri, "test://template/")
	if ok {
		raw, ok = strings.CutSuffix(raw, "/data")
	}
	id, err := url.PathUnescape(raw)
	if !ok || err != nil || id == "" || strings.Contains(raw, "/") {
		return nil, atrium.Errorf(atrium.ENotFound, "no resource %s: use test://template/ID/data", uri)
	}
	data, err := json.Marshal(struct {
		ID           string `json:"id"`
		TemplateTest bool   `json:"templateTest"`
		Data         string `json:"data"`
	}{id, true, "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return textResource(uri, "application/json", string(data)), nil
}

func fixturePrompts() []mcpserver.Prompt {
	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	return []mcpserver.Prompt{
		{Def: &mcp.Prompt{Name: "test_simple_prompt", Title: "Simple prompt", Description: "A prompt without arguments. A conformance-suite fixture."},
			Handler: func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Description: "A simple prompt", Messages: []*mcp.PromptMessage{
					user(&mcp.TextContent{Text: "This is a simple prompt for testing."}),
				}}, nil
			}},
		{Def: &mcp.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt with arguments", Description: "A prompt that quotes its two arguments; both complete (completion/complete). A conformance-suite fixture.",
			Arguments: []*mcp.PromptArgument{
				{Name: "arg1", Title: "First argument", Description: "First test argument", Required: true},
				{Name: "arg2", Title: "Second argument", Description: "Second test argument", Required: true},
			}},
			Handler: func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				args := req.Params.Arguments
				return &mcp.GetPromptResult{Description: "A prompt with arguments", Messages: []*mcp.PromptMessage{
					user(&mcp.TextContent{Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])}),
				}}, nil
			}},
		{Def: &mcp.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt with embedded resource", Description: "A prompt that embeds a text resource under the URI it is given. A conformance-suite fixture.",
			Arguments: []*mcp.PromptArgument{
				{Name: "resourceUri", Title: "Resource URI", Description: "URI of the resource to embed", Required: true},
			}},
			Handler: func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				uri := req.Params.Arguments["resourceUri"]
				if uri == "" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resourceUri is required"}
				}
				return &mcp.GetPromptResult{Description: "A prompt with an embedded resource", Messages: []*mcp.PromptMessage{
					user(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."}}),
					user(&mcp.TextContent{Text: "Please process the embedded resource above."}),
				}}, nil
			}},
		{Def: &mcp.Prompt{Name: "test_prompt_with_image", Title: "Prompt with image", Description: "A prompt that carries an image (a 1×1 red PNG). A conformance-suite fixture."},
			Handler: func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Description: "A prompt with an image", Messages: []*mcp.PromptMessage{
					user(&mcp.ImageContent{Data: fixturePNG(), MIMEType: "image/png"}),
					user(&mcp.TextContent{Text: "Please analyze the image above."}),
				}}, nil
			}},
		{Def: &mcp.Prompt{Name: "test_input_required_result_prompt", Title: "Prompt needing input", Description: "A prompt that first asks the user, through an input request (key user_context), what context to use. A conformance-suite fixture."},
			Handler: inputPrompt},
	}
}

// promptCompletions are the values offered for test_prompt_with_arguments'
// arguments.
var promptCompletions = map[string][]string{
	"arg1": {"paris", "park", "party", "testValue1"},
	"arg2": {"hello", "testValue2", "world"},
}

// completeFixturePrompt completes the arguments of test_prompt_with_arguments
// by prefix, ignoring case; it leaves every other reference to other toolsets.
func completeFixturePrompt(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, bool, error) {
	p := req.Params
	if p == nil || p.Ref == nil || p.Ref.Type != "ref/prompt" || p.Ref.Name != "test_prompt_with_arguments" {
		return nil, false, nil
	}
	values := []string{} // never null on the wire
	for _, v := range promptCompletions[p.Argument.Name] {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(p.Argument.Value)) {
			values = append(values, v)
		}
	}
	slices.Sort(values)
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}, true, nil
}

// fixturePNG and fixtureWAV are the smallest media the fixtures return: made
// here rather than stored, so that they are visibly what they claim to be, and
// on first use, since the PNG encoder alone allocates most of a megabyte.
var (
	fixturePNG = sync.OnceValue(redPixelPNG)
	fixtureWAV = sync.OnceValue(func() []byte { return silentWAV(8000, 80) }) // 10 ms
)

// redPixelPNG encodes a 1×1 red image.
func redPixelPNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.NRGBA{R: 0xff, A: 0xff})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // cannot happen writing to memory
	}
	return b.Bytes()
}

// silentWAV is a mono 16-bit PCM WAV file of n silent samples at rate Hz.
func silentWAV(rate, n uint32) []byte {
	const channels, bits = 1, 16
	dataSize := n * channels * bits / 8
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) } // a bytes.Buffer never fails
	b.WriteString("RIFF")
	w(36 + dataSize)
	b.WriteString("WAVEfmt ")
	w(uint32(16))                  // size of the fmt chunk
	w(uint16(1))                   // PCM
	w(uint16(channels))            // channels
	w(rate)                        // sample rate
	w(rate * channels * bits / 8)  // byte rate
	w(uint16(channels * bits / 8)) // block align
	w(uint16(bits))                // bits per sample
	b.WriteString("data")
	w(dataSize)
	b.Write(make([]byte, dataSize))
	return b.Bytes()
}
