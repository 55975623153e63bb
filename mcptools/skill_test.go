package mcptools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mcpserver/mcptest"
	"github.com/atrium-hq/atrium/mcptools/reviewtools"
)

// The skill is generated from the registry; the golden file shows every change
// to it in review (rewrite with -update), and it never names a URL or a token.
func TestSkillGolden(t *testing.T) {
	s, err := mcpserver.New(mcpserver.Config{Toolsets: all})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var b strings.Builder
	if err := s.WriteSkill(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, banned := range []string{"http://", "https://", "curl", "Bearer", "atr_", "ATRIUM_TOKEN", "Authorization"} {
		if strings.Contains(got, banned) {
			t.Errorf("the skill mentions %q", banned)
		}
	}
	for _, tool := range s.Tools() {
		name := tool.Def().Name
		for _, want := range []string{"`" + name + "`", "atrium call " + name, "mcporter call atrium." + name} {
			if !strings.Contains(got, want) {
				t.Errorf("the skill lacks %q", want)
			}
		}
	}
	// Nested fields are documented: an agent cannot build the argument otherwise.
	for _, field := range []string{"quote.exact", "quote.prefix", "quote.suffix", "operations[].op", "operations[].text",
		"operations[].section", "operations[].find", "operations[].replace", "operations[].expected_count",
		"operations[].content", "operations[].frontmatter"} {
		if !strings.Contains(got, "| `"+field+"` |") {
			t.Errorf("the skill does not list the field %s", field)
		}
	}
	for _, r := range reviewtools.Recipes {
		if !strings.Contains(got, r.Title) {
			t.Errorf("the skill lacks the recipe %q", r.Title)
		}
	}
	path := filepath.Join("testdata", "SKILL.md")
	if *mcptest.Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no golden skill (go test ./mcptools -run Skill -update): %v", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("SKILL.md changed (-golden +now); run with -update if intended:\n%s", diff)
	}
}
