package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
)

// The examples of the generated SKILL.md run as printed: every atrium call
// line of it, in order, in bash (with jq for the ids kept in variables), on a
// store seeded as the skill says (Projects/Alpha.md with a section Design >
// Storage, a person's submitted thread, an abandoned draft of the agent, who
// is an admin). Each must succeed; an mcporter line must be the same call as
// the atrium call line before it.
func TestSkillExamplesRun(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("ATRIUM_REQUIRE_TOOLS") == "1" {
				t.Fatalf("the skill's examples need %s, required (ATRIUM_REQUIRE_TOOLS=1) but missing: %v", tool, err)
			}
			t.Skipf("the skill's examples need %s: %v", tool, err)
		}
	}
	dir := t.TempDir()
	seedSkillWorkspace(t, dir)
	env := []string{"ATRIUM_DATA_DIR=" + dir, "ATRIUM_AGENT=agent", "ATRIUM_LOG_LEVEL=warn"}
	skill, stderr, code := runAtrium(t, env, "skill")
	if code != 0 {
		t.Fatalf("atrium skill: exit %d: %s", code, stderr)
	}
	lines := skillExamples(skill)
	if len(lines) < 40 {
		t.Fatalf("only %d example lines in the skill:\n%s", len(lines), skill)
	}
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "atrium")); err != nil {
		t.Fatal(err)
	}
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	vars := map[string]string{}
	keep := regexp.MustCompile(`^([A-Z_]+)=\$\((.*)\)$`)
	last := ""
	for _, line := range lines {
		if call, ok := strings.CutPrefix(line, "mcporter call atrium."); ok {
			if !strings.Contains(last, "atrium call "+call) {
				t.Errorf("%q is not the call of the line before it, %q", line, last)
			}
			continue
		}
		last = line
		name, cmd := "", line
		if m := keep.FindStringSubmatch(line); m != nil {
			name, cmd = m[1], m[2]
		}
		out := runExample(t, env, vars, cmd)
		switch {
		case name != "":
			id := strings.TrimSpace(out)
			if id == "" || id == "null" || strings.ContainsAny(id, " \n") {
				t.Fatalf("%s\nkept %q, not one id", line, id)
			}
			vars[name] = id
		case !json.Valid([]byte(out)):
			t.Fatalf("%s\nprinted no JSON: %s", line, out)
		}
	}
	for _, name := range []string{"THREAD", "ANN", "REV", "DRAFT", "PAGE"} {
		if vars[name] == "" {
			t.Errorf("no example kept $%s", name)
		}
	}
}

// The same examples run with mcporter, the CLI agents use: each printed
// mcporter line as is, and every atrium call line without one (the recipes)
// as the same call through mcporter; a line that keeps an id runs its call
// through mcporter with --output json. Each must succeed (mcporter exits 1 on
// an isError result), on a store seeded the same way.
func TestSkillExamplesRunWithMcporter(t *testing.T) {
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the skill's examples need %s: %v", tool, err)
		}
	}
	nodes := nodeBin(t)
	dir := t.TempDir()
	seedSkillWorkspace(t, dir)
	env := []string{"ATRIUM_DATA_DIR=" + dir, "ATRIUM_AGENT=agent", "ATRIUM_LOG_LEVEL=warn"}
	skill, stderr, code := runAtrium(t, env, "skill")
	if code != 0 {
		t.Fatalf("atrium skill: exit %d: %s", code, stderr)
	}
	lines := skillExamples(skill)
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "atrium")); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "mcporter.json")
	conf, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"atrium": map[string]any{
		"command": binary, "args": []string{"mcp"},
		"env": map[string]string{"ATRIUM_DATA_DIR": dir, "ATRIUM_AGENT": "agent", "ATRIUM_LOG_LEVEL": "warn"},
	}}, "imports": []string{}})
	if err := os.WriteFile(cfg, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+nodes+string(os.PathListSeparator)+os.Getenv("PATH"),
		"MCPORTER_CONFIG="+cfg, "NO_COLOR=1")
	vars := map[string]string{}
	keep := regexp.MustCompile(`^([A-Z_]+)=\$\((.*)\)$`)
	call := regexp.MustCompile(`atrium call ([a-z_]+)((?: [^|]*)?)`)
	ran := 0
	for i, line := range lines {
		if strings.HasPrefix(line, "mcporter call ") {
			continue // run in place of the atrium call line before it
		}
		if m := keep.FindStringSubmatch(line); m != nil {
			cmd := call.ReplaceAllString(m[2], "mcporter call atrium.$1$2 --output json ")
			id := strings.TrimSpace(runExample(t, env, vars, cmd))
			if id == "" || id == "null" || strings.ContainsAny(id, " \n") {
				t.Fatalf("%s\nkept %q through mcporter, not one id", cmd, id)
			}
			vars[m[1]] = id
			ran++
			continue
		}
		cmd := line
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "mcporter call ") {
			cmd = lines[i+1]
		} else {
			cmd = call.ReplaceAllString(line, "mcporter call atrium.$1$2")
		}
		runExample(t, env, vars, cmd)
		ran++
	}
	if ran < 40 {
		t.Fatalf("only %d examples ran through mcporter", ran)
	}
}

// skillExamples returns the lines of the sh blocks of a skill, in order.
func skillExamples(skill string) []string {
	var out []string
	in := false
	for line := range strings.SplitSeq(skill, "\n") {
		switch {
		case line == "```sh":
			in = true
		case line == "```":
			in = false
		case in && strings.TrimSpace(line) != "":
			out = append(out, line)
		}
	}
	return out
}

// runExample runs one line in bash, failing the test unless it succeeds.
func runExample(t *testing.T, env []string, vars map[string]string, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", line)
	cmd.Env = append(cleanEnv(), env...)
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s\nfailed (%v):\n%s%s", line, err, out.String(), errb.String())
	}
	return out.String()
}

// seedSkillWorkspace makes the workspace the skill's examples assume.
func seedSkillWorkspace(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "atrium.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ids := identity.New(db, nil)
	defer ids.Close()
	if _, err := ids.Bootstrap(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := ids.IssueToken(ctx, identity.TokenRequest{Principal: "agent", Kind: atrium.KindAgent, Role: atrium.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	person, err := ids.LocalActor(ctx, "ada", "", atrium.KindHuman)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := ids.LocalActor(ctx, "agent", "", atrium.KindAgent)
	if err != nil {
		t.Fatal(err)
	}
	docs := pages.New(db, nil)
	rv := review.New(db, docs, nil)
	as := atrium.NewContextWithActor(ctx, person)
	if _, err := docs.WritePage(as, pages.WriteRequest{Path: "Projects/Alpha.md",
		Content: "---\ntitle: Alpha\n---\n# Alpha\n\n## Design\n\n### Storage\n\nWe keep everything in SQLite first.\n"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rv.Create(as, review.CreateRequest{DocPath: "Projects/Alpha.md", Section: "Design > Storage",
		Content: "Why not PostgreSQL?", Status: atrium.StatusSubmitted}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rv.Create(atrium.NewContextWithActor(ctx, agent), review.CreateRequest{DocPath: "Projects/Alpha.md",
		Content: "TEST: scratch"}); err != nil {
		t.Fatal(err)
	}
}
