package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type echoOut struct {
	Text string `json:"text" jsonschema:"the text"`
}

// echoToolset is a toolset of one tool, echo, whose stored definition is
// the one the code infers.
func echoToolset(t *testing.T) NewToolset {
	spec := &mcp.Tool{Name: "echo", Title: "Echo", Description: "Echoes.", Annotations: Reads("Echo")}
	tool := func() *Tool {
		return NewTool(spec, atrium.RoleReader, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (echoOut, error) { return echoOut(in), nil })
	}
	stored, err := json.MarshalIndent(tool().Def(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	defs := fstest.MapFS{"defs/echo.json": {Data: stored}}
	return func(*Server) *Toolset {
		return &Toolset{Name: "echo", Default: true, Tools: []*Tool{tool()}, Defs: defs}
	}
}

// A stored definition is sent as it is stored; one that no longer matches
// the code is not: the tool is listed as the code describes it, schemas
// inferred, until defs/ is rewritten.
func TestStaleStoredDefinitionIsInferred(t *testing.T) {
	s, err := New(Config{Toolsets: []NewToolset{echoToolset(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tool := s.tools[0]
	// Stored definitions are sent as indented in defs/; inferred ones compact.
	if raw, _ := s.listedDefs()[tool.Name()].InputSchema.(json.RawMessage); !strings.Contains(string(raw), "\n") {
		t.Fatalf("listed %s, not the stored definition", raw)
	}
	spec := *tool.spec
	spec.Description = "A description defs/ has never seen."
	tool.spec = &spec
	def := s.listedDefs()[tool.Name()]
	if def.Description != spec.Description {
		t.Fatalf("listed %q, want the code's description", def.Description)
	}
	in, _ := json.Marshal(def.InputSchema)
	stored, _ := json.Marshal(storedDef(s.toolsets[0].Defs, tool.Name()).InputSchema)
	if string(in) != string(stored) {
		t.Errorf("inferred input schema %s, want the stored one %s (the types did not change)", in, stored)
	}
}
