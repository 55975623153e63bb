package mcptools_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
)

// everyTool is every tool of every toolset, the opt-in ones included.
func everyTool(t *testing.T) []*mcpserver.Tool {
	t.Helper()
	s, err := mcpserver.New(mcpserver.Config{Toolsets: all, Enable: []string{"all", "conformance", "gateway", "agents"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s.Tools()
}

func TestEveryToolIsDescribedAndAnnotated(t *testing.T) {
	for _, tool := range everyTool(t) {
		d := tool.Def()
		t.Run(d.Name, func(t *testing.T) {
			if d.Description == "" || d.Title == "" {
				t.Errorf("title %q, description %q: both are required", d.Title, d.Description)
			}
			a := d.Annotations
			if a == nil {
				t.Fatal("no annotations")
			}
			if a.DestructiveHint == nil || a.OpenWorldHint == nil {
				t.Errorf("destructiveHint and openWorldHint must be set on purpose: %+v", a)
			}
			if a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint {
				t.Error("a read-only tool cannot be destructive")
			}
			if a.Title == "" {
				t.Error("annotations.title is empty")
			}
			if d.InputSchema == nil {
				t.Error("no input schema")
			}
			if tool.Toolset == "" {
				t.Error("no toolset")
			}
			if !tool.Need.Valid() {
				t.Errorf("needed role %q is not a role", tool.Need)
			}
			if !a.ReadOnlyHint && tool.Need == atrium.RoleReader && tool.Toolset != "conformance" {
				t.Error("a tool that writes must need more than the reader role")
			}
		})
	}
}

func TestToolsetSelection(t *testing.T) {
	names := func(s *mcpserver.Server) []string {
		var out []string
		for _, tool := range s.Tools() {
			out = append(out, tool.Def().Name)
		}
		return out
	}
	def, err := mcpserver.New(mcpserver.Config{Toolsets: all})
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	if !slices.Contains(names(def), "whoami") || slices.Contains(def.ToolsetNames(), "conformance") {
		t.Errorf("default toolsets %v with tools %v: want core on, conformance off", def.ToolsetNames(), names(def))
	}
	withFixtures, err := mcpserver.New(mcpserver.Config{Toolsets: all, Enable: mcpserver.ParseToolsets("all, conformance")})
	if err != nil {
		t.Fatal(err)
	}
	defer withFixtures.Close()
	if !slices.Contains(withFixtures.ToolsetNames(), "conformance") {
		t.Errorf("all,conformance gave %v", withFixtures.ToolsetNames())
	}
	// Core stays on whatever is asked for.
	only, err := mcpserver.New(mcpserver.Config{Toolsets: all, Enable: []string{"conformance"}})
	if err != nil {
		t.Fatal(err)
	}
	defer only.Close()
	if !slices.Contains(names(only), "whoami") {
		t.Errorf("--toolsets conformance dropped whoami: %v", names(only))
	}
	if _, err := mcpserver.New(mcpserver.Config{Toolsets: all, Enable: []string{"nope"}}); atrium.ErrorCode(err) != atrium.EInvalid {
		t.Errorf("unknown toolset: %v, want invalid_argument", err)
	}
	ro, err := mcpserver.New(mcpserver.Config{Toolsets: all, Enable: []string{"all", "conformance"}, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for _, tool := range ro.Tools() {
		if !tool.ReadOnly() {
			t.Errorf("--read-only kept %s", tool.Def().Name)
		}
	}
	if !slices.Contains(names(ro), "whoami") {
		t.Error("--read-only dropped whoami")
	}
}

// Building a server registers every tool with the SDK, and every tool's input
// schema must resolve, as its first call will: better here than at a user's.
func TestEveryToolRegisters(t *testing.T) {
	s, err := mcpserver.New(mcpserver.Config{Toolsets: all, Enable: []string{"all", "conformance", "gateway", "agents"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("registering the tools panicked: %v", p)
		}
	}()
	s.ForWorkspace(atrium.Workspace{ID: 1, Name: "default"})
	for _, tool := range s.Tools() {
		b, err := json.Marshal(tool.Def().InputSchema)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name(), err)
		}
		var in jsonschema.Schema
		if err := json.Unmarshal(b, &in); err != nil {
			t.Fatalf("%s: %v", tool.Name(), err)
		}
		if _, err := in.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
			t.Errorf("%s: input schema does not resolve: %v", tool.Name(), err)
		}
	}
}

// toolBudget is what the names, descriptions and input schemas of every
// default tool may cost an agent's context, in tokens estimated as bytes/4
// (no tokenizer is needed to see a trend). Clients read them all into every
// conversation; the tasks issue set the ceiling at 8,000.
const toolBudget = 8000

func TestDefaultToolsetsStayCheap(t *testing.T) {
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: all})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cs := connectInMemory(t, srv.ForWorkspace(atrium.Workspace{Name: atrium.DefaultWorkspace}))
	bytes, n := 0, 0
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		schema, _ := json.Marshal(tool.InputSchema)
		bytes += len(tool.Name) + len(tool.Description) + len(schema)
		n++
	}
	tokens := bytes / 4
	t.Logf("%d default tools: %d bytes of names, descriptions and input schemas, about %d tokens (budget %d)", n, bytes, tokens, toolBudget)
	if tokens > toolBudget {
		t.Fatalf("the default tools cost about %d tokens of every agent's context; the budget is %d: shorten descriptions and schemas", tokens, toolBudget)
	}
}
