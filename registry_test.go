package atrium_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// server.json, the entry for the MCP registry, holds what the registry
// requires: a reverse-DNS name, a description of at most 100 characters,
// and remotes at the MCP paths Atrium serves, with every {variable} of a
// URL described.
func TestServerJSONForTheRegistry(t *testing.T) {
	b, err := os.ReadFile("server.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Schema      string `json:"$schema"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Version     string `json:"version"`
		Remotes     []struct {
			Type      string                    `json:"type"`
			URL       string                    `json:"url"`
			Variables map[string]map[string]any `json:"variables"`
		} `json:"remotes"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$`).MatchString(s.Name) || len(s.Description) > 100 || s.Version == "" || !strings.Contains(s.Schema, "server.schema.json") {
		t.Errorf("server.json: %+v", s)
	}
	if len(s.Remotes) == 0 {
		t.Fatal("no remotes")
	}
	for _, r := range s.Remotes {
		if r.Type != "streamable-http" || !strings.HasSuffix(r.URL, "/mcp") {
			t.Errorf("remote %+v", r)
		}
		for _, v := range regexp.MustCompile(`\{([a-z_]+)\}`).FindAllStringSubmatch(r.URL, -1) {
			if r.Variables[v[1]]["description"] == nil {
				t.Errorf("%s: variable %s is not described", r.URL, v[1])
			}
		}
	}
}
