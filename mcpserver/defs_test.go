package mcpserver

import (
	"encoding/json"
	"testing"
)

// A stored definition that no longer matches the code is not sent: the tool
// is listed as the code describes it, schemas inferred, until defs/ is
// rewritten.
func TestStaleStoredDefinitionIsInferred(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tool := s.tools[0]
	spec := *tool.spec
	spec.Description = "A description defs/ has never seen."
	tool.spec = &spec
	def := s.listedDefs()[tool.Name()]
	if def.Description != spec.Description {
		t.Fatalf("listed %q, want the code's description", def.Description)
	}
	in, _ := json.Marshal(def.InputSchema)
	stored, _ := json.Marshal(storedDef(tool.Name()).InputSchema)
	if string(in) != string(stored) {
		t.Errorf("inferred input schema %s, want the stored one %s (the types did not change)", in, stored)
	}
}
