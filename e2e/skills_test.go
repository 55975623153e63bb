package e2e

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/mcptools/skilltools"
	"github.com/atrium-hq/atrium/skills"
)

// skillsClient is a client that can call the skills extension's methods.
func skillsClient(t *testing.T) *mcp.Client {
	t.Helper()
	c := newClient()
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*skilltools.ListSkillsParams, *skilltools.ListSkillsResult](c, skilltools.MethodList),
		mcp.AddSendingCustomMethod[*skilltools.GetSkillParams, *skilltools.GetSkillResult](c, skilltools.MethodGet),
		mcp.AddSendingCustomMethod[*skilltools.DirectoryReadParams, *skilltools.DirectoryReadResult](c, skilltools.MethodDirectoryRead),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func connectSkills(t *testing.T, transport mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := skillsClient(t).Connect(ctx, transport, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// checkSkills lists the skills of a session, checks that it is the skill URIs
// want, and that every listed file reads back to its digest and size.
func checkSkills(t *testing.T, cs *mcp.ClientSession, want []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, ok := cs.InitializeResult().Capabilities.Extensions[skilltools.Extension]; !ok {
		t.Errorf("the skills extension is not declared: %+v", cs.InitializeResult().Capabilities)
	}
	res, err := mcp.CallCustomMethod[*skilltools.ListSkillsParams, *skilltools.ListSkillsResult](ctx, cs, skilltools.MethodList, &skilltools.ListSkillsParams{})
	if err != nil {
		t.Fatalf("skills/list: %v", err)
	}
	var got []string
	for _, s := range res.Skills {
		got = append(got, s.URI)
		for _, r := range s.Resources {
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
			if err != nil {
				t.Fatalf("read %s: %v", r.URI, err)
			}
			if text := rr.Contents[0].Text; skills.Digest(text) != r.Digest || len(text) != r.Size {
				t.Errorf("%s does not match its listing", r.URI)
			}
		}
		g, err := mcp.CallCustomMethod[*skilltools.GetSkillParams, *skilltools.GetSkillResult](ctx, cs, skilltools.MethodGet, &skilltools.GetSkillParams{URI: s.URI})
		if err != nil || g.Skill.URI != s.URI || len(g.Skill.Resources) != len(s.Resources) {
			t.Errorf("skills/get %s: %+v, %v", s.URI, g, err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("skills/list: %v, want %v", got, want)
	}
	d, err := mcp.CallCustomMethod[*skilltools.DirectoryReadParams, *skilltools.DirectoryReadResult](ctx, cs, skilltools.MethodDirectoryRead, &skilltools.DirectoryReadParams{URI: "skill://atrium"})
	if err != nil || len(d.Resources) != 2 {
		t.Errorf("resources/directory/read skill://atrium: %+v, %v", d, err)
	}
}

// Skills over MCP through the real binary: the generated skill and a skill
// authored as pages, on stdio and on Streamable HTTP in both protocol
// generations and legacy SSE, each workspace seeing its own; and the MCP
// Inspector verifies every digest.
func TestSkillsOverMCP(t *testing.T) {
	srv := startServe(t, "")
	for _, ws := range []string{"alpha", "beta"} {
		if _, errOut, code := srv.cli(t, nil, "workspace", "create", ws); code != 0 {
			t.Fatal(errOut)
		}
	}
	token := func(handle, ws string) string {
		out, errOut, code := srv.cli(t, nil, "token", "create", "--principal", handle, "--workspace", ws, "--role", "admin")
		if code != 0 {
			t.Fatal(errOut)
		}
		return strings.TrimSpace(out)
	}
	alice, bob := token("alice", "alpha"), token("bob", "beta")

	author := connectHTTP(t, srv.URL+"/w/alpha/mcp", alice, "")
	for path, content := range map[string]string{
		"Skills/release-notes/SKILL.md":               "---\nname: release-notes\ndescription: Write the release notes from the merged tasks.\nlicense: MIT\n---\n\n# Release notes\n\nFollow [the template](templates/notes.md).\n",
		"Skills/release-notes/templates/notes.md":     "# Release {{version}}\n",
		"Skills/not-a-skill/README.md":                "no SKILL.md here\n",
		"Projects/Alpha.md":                           "# Alpha\n",
		"Skills/release-notes/templates/extra/old.md": "older\n",
	} {
		if res := callTool(t, author, "write_page", map[string]any{"path": path, "content": content}); res.IsError {
			t.Fatalf("write %s: %+v", path, res.Content)
		}
	}
	alphaSkills := []string{"skill://atrium/SKILL.md", "skill://workspace/release-notes/SKILL.md"}
	betaSkills := []string{"skill://atrium/SKILL.md"}

	t.Run("http 2026-07-28", func(t *testing.T) {
		checkSkills(t, connectSkills(t, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/w/alpha/mcp", HTTPClient: bearer(alice, ""), MaxRetries: -1}, ""), alphaSkills)
	})
	t.Run("http 2025-11-25", func(t *testing.T) {
		checkSkills(t, connectSkills(t, &mcp.StreamableClientTransport{Endpoint: srv.MCP(), HTTPClient: bearer(alice, ""), MaxRetries: -1}, "2025-11-25"), alphaSkills)
	})
	t.Run("sse", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		cs, err := skillsClient(t).Connect(ctx, &mcp.SSEClientTransport{Endpoint: srv.MCP() + "/sse", HTTPClient: bearer(alice, "")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		checkSkills(t, cs, alphaSkills)
	})
	t.Run("another workspace", func(t *testing.T) {
		checkSkills(t, connectSkills(t, &mcp.StreamableClientTransport{Endpoint: srv.MCP(), HTTPClient: bearer(bob, ""), MaxRetries: -1}, ""), betaSkills)
		checkSkills(t, connectSkills(t, &mcp.StreamableClientTransport{Endpoint: srv.MCP(), HTTPClient: bearer(bob, ""), MaxRetries: -1}, "2025-11-25"), betaSkills)
		cs := connectSkills(t, &mcp.StreamableClientTransport{Endpoint: srv.MCP(), HTTPClient: bearer(bob, ""), MaxRetries: -1}, "")
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "skill://workspace/release-notes/SKILL.md"}); err == nil {
			t.Error("beta read alpha's skill")
		}
	})
	t.Run("stdio", func(t *testing.T) {
		cmd := exec.Command(serverBinary, srv.globalArgs("mcp")...)
		cmd.Env = append(cleanEnv(), "ATRIUM_WORKSPACE=alpha", "ATRIUM_AGENT=stdio-agent")
		stderr := &syncBuffer{}
		cmd.Stderr = stderr
		cs := connectSkills(t, &mcp.CommandTransport{Command: cmd}, "")
		t.Cleanup(func() { checkServerLog(t, "atrium mcp", stderr) })
		checkSkills(t, cs, alphaSkills)
	})
	t.Run("inspector verifies", func(t *testing.T) {
		bin := nodeBin(t)
		for _, era := range []string{"legacy", "modern"} {
			out, code := runNode(t, bin, t.TempDir(), nil, "mcp-inspector", "--cli", "-q", srv.URL+"/w/alpha/mcp", "--header", "Authorization: Bearer "+alice, "--protocol-era", era, "--method", "skills/list", "--verify", "--require-digests")
			if code != 0 || strings.Count(out, `"outcome":"verified"`) != 2 || !strings.Contains(out, "skill://workspace/release-notes/references") && !strings.Contains(out, "skill://workspace/release-notes/templates/notes.md") {
				t.Errorf("inspector skills/list --verify (%s) exited %d:\n%s", era, code, out)
			}
		}
	})
}
