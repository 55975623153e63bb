// Package mcptest holds what every toolset's tests share: the golden check
// of its tool definitions.
package mcptest

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/mcpserver"
)

// Update is -update: rewrite golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite golden files")

// Golden checks that each tool of the toolset build makes has its definition
// in defs/ (beside the test) exactly as tools/list sends it, and that defs/
// holds no file for a tool the toolset lacks: what review shows of a change
// to a name, schema, description or annotation. With -update it rewrites
// them.
func Golden(t *testing.T, build mcpserver.NewToolset) {
	t.Helper()
	s, err := mcpserver.New(mcpserver.Config{Toolsets: []mcpserver.NewToolset{build}, Enable: []string{"all"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := build(s)
	s2, err := mcpserver.New(mcpserver.Config{Toolsets: []mcpserver.NewToolset{build}, Enable: []string{ts.Name}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	const dir = "defs"
	seen := map[string]bool{}
	for _, tool := range s2.Tools() {
		if tool.Toolset != ts.Name {
			continue // core, always on
		}
		name := tool.Def().Name + ".json"
		seen[name] = true
		got, err := json.MarshalIndent(tool.Def(), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, name)
		if *Update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no golden file (run go test -run Golden -update): %v", tool.Def().Name, err)
			continue
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s definition changed (-golden +now); run with -update if intended:\n%s", tool.Def().Name, diff)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !seen[e.Name()] {
			if *Update {
				os.Remove(filepath.Join(dir, e.Name()))
				continue
			}
			t.Errorf("golden file %s has no tool", e.Name())
		}
	}
	if len(seen) == 0 {
		t.Error("the toolset has no tools")
	}
}

// Connect opens a client session to server over in-memory transports,
// closed when tb ends.
func Connect(tb testing.TB, server *mcp.Server) *mcp.ClientSession {
	tb.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}
