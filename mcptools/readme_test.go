package mcptools_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mcptools/conformance"
)

// readmeTables are the backticked names in the first cell of every row of
// the README's tables, outside parentheses (a row may list parameters).
func readmeTables(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	params := regexp.MustCompile(`\([^)]*\)`)
	name := regexp.MustCompile("`([a-z][a-z0-9]*(?:_[a-z0-9]+)*)`")
	out := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cell := params.ReplaceAllString(strings.Split(line, "|")[1], "")
		for _, m := range name.FindAllStringSubmatch(cell, -1) {
			out[m[1]] = true
		}
	}
	return out
}

// The README's tables name every tool the binary serves, and no tool it
// does not: its toolset table and its tool tables are what people read to
// configure clients. The conformance fixtures are documented as a toolset only.
func TestReadmeNamesEveryTool(t *testing.T) {
	s, err := mcpserver.New(mcpserver.Config{Toolsets: all, Enable: []string{"all", "gateway", "agents", conformance.Name}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	named := readmeTables(t)
	known := map[string]bool{}
	for _, ts := range s.ToolsetNames() {
		known[ts] = true
		if !named[ts] {
			t.Errorf("the README's toolset table lacks %s", ts)
		}
	}
	for _, tool := range s.Tools() {
		if tool.Toolset == conformance.Name {
			continue
		}
		known[tool.Name()] = true
		if !named[tool.Name()] {
			t.Errorf("the README's tables lack the %s tool %s", tool.Toolset, tool.Name())
		}
	}
	var unknown []string
	for n := range named {
		if !known[n] {
			unknown = append(unknown, n)
		}
	}
	slices.Sort(unknown)
	for _, n := range unknown {
		// Not a tool, or a tool that is gone: names in a table's first
		// cell are tools or toolsets, parameters go in parentheses.
		t.Errorf("the README's tables name %s, which is no tool or toolset", n)
	}
}
