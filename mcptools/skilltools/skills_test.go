package skilltools_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mcptools"
	"github.com/atrium-hq/atrium/mcptools/skilltools"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/skills"
	"github.com/atrium-hq/atrium/store"
)

// serve builds the default toolsets for actor over svc and connects a client
// that can call the extension's methods.
func serve(t *testing.T, svc *services.Services, actor *atrium.Actor, enable ...string) *mcp.ClientSession {
	t.Helper()
	srv, err := mcpserver.New(mcpserver.Config{Toolsets: mcptools.All(mcptools.Options{}), Enable: enable, Services: svc, Actor: actor})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Local().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	must(t, mcp.AddSendingCustomMethod[*skilltools.ListSkillsParams, *skilltools.ListSkillsResult](c, skilltools.MethodList))
	must(t, mcp.AddSendingCustomMethod[*skilltools.GetSkillParams, *skilltools.GetSkillResult](c, skilltools.MethodGet))
	must(t, mcp.AddSendingCustomMethod[*skilltools.DirectoryReadParams, *skilltools.DirectoryReadResult](c, skilltools.MethodDirectoryRead))
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, svc *services.Services, a *atrium.Actor, path, content string) {
	t.Helper()
	if _, err := svc.Pages.WritePage(atrium.NewContextWithActor(context.Background(), a), pages.WriteRequest{Path: path, Content: content, Overwrite: true}); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}

func list(t *testing.T, cs *mcp.ClientSession) []*skilltools.Skill {
	t.Helper()
	res, err := mcp.CallCustomMethod[*skilltools.ListSkillsParams, *skilltools.ListSkillsResult](context.Background(), cs, skilltools.MethodList, &skilltools.ListSkillsParams{})
	if err != nil {
		t.Fatalf("skills/list: %v", err)
	}
	if res.NextCursor != "" {
		t.Errorf("skills/list gave a cursor %q", res.NextCursor)
	}
	return res.Skills
}

func uris(ss []*skilltools.Skill) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.URI)
	}
	return out
}

func read(t *testing.T, cs *mcp.ClientSession, uri string) (string, error) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	return res.Contents[0].Text, nil
}

const deploySkill = `---
name: deploy
description: Ship a release of the service.
metadata:
  version: 2
  since: 2026-01-02
---

# Deploy

Read [the checklist](references/checklist.md) first.
`

// Every listed file reads back to the bytes its digest and size describe,
// and the entry's frontmatter is the file's.
func TestListGetAndRead(t *testing.T) {
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	a := servicestest.Agent(t, svc, "writer", "")
	write(t, svc, a, "Skills/deploy/SKILL.md", deploySkill)
	write(t, svc, a, "Skills/deploy/references/checklist.md", "---\naccess: public\n---\n- tests green\n")
	write(t, svc, a, "Skills/Bad Name/SKILL.md", "---\nname: bad\ndescription: x\n---\n")
	write(t, svc, a, "Skills/misnamed/SKILL.md", "---\nname: other\ndescription: x\n---\n")
	write(t, svc, a, "Skills/nodesc/SKILL.md", "---\nname: nodesc\n---\n")
	write(t, svc, a, "Skills/_index.md", "# Skills\n")
	cs := serve(t, svc, a)

	got := list(t, cs)
	if want := []string{"skill://atrium/SKILL.md", "skill://workspace/deploy/SKILL.md"}; !slices.Equal(uris(got), want) {
		t.Fatalf("skills/list: %v, want %v", uris(got), want)
	}
	for _, e := range got {
		if e.Resources[0].URI != e.URI {
			t.Errorf("%s: its first resource is %s, not SKILL.md", e.URI, e.Resources[0].URI)
		}
		for _, r := range e.Resources {
			text, err := read(t, cs, r.URI)
			if err != nil {
				t.Fatalf("read %s: %v", r.URI, err)
			}
			if skills.Digest(text) != r.Digest || len(text) != r.Size {
				t.Errorf("%s: read %d bytes %s; listed %d bytes %s", r.URI, len(text), skills.Digest(text), r.Size, r.Digest)
			}
		}
		text, _ := read(t, cs, e.URI)
		fm, err := skills.Frontmatter(text)
		if err != nil || fm["name"] != e.Frontmatter["name"] || fm["description"] != e.Frontmatter["description"] {
			t.Errorf("%s: file frontmatter %v (%v), entry %v", e.URI, fm, err, e.Frontmatter)
		}
	}
	deploy := got[1]
	if len(deploy.Resources) != 2 || deploy.Resources[1].URI != "skill://workspace/deploy/references/checklist.md" {
		t.Errorf("deploy's resources: %+v", deploy.Resources)
	}
	meta, _ := deploy.Frontmatter["metadata"].(map[string]any)
	if meta["since"] != "2026-01-02" || meta["version"] != float64(2) {
		t.Errorf("frontmatter metadata %#v: want the date as written and the number", meta)
	}

	gen, _ := read(t, cs, "skill://atrium/SKILL.md")
	if !strings.Contains(gen, mcpserver.SkillReference) || strings.Contains(gen, "### docs") {
		t.Errorf("the generated SKILL.md should point at its reference and not hold it:\n%.400s", gen)
	}
	ref, _ := read(t, cs, "skill://atrium/"+mcpserver.SkillReference)
	if !strings.Contains(ref, "`read_page`") {
		t.Errorf("the tool reference lacks read_page:\n%.400s", ref)
	}

	g, err := mcp.CallCustomMethod[*skilltools.GetSkillParams, *skilltools.GetSkillResult](context.Background(), cs, skilltools.MethodGet, &skilltools.GetSkillParams{URI: deploy.URI})
	if err != nil || g.Skill.URI != deploy.URI || len(g.Skill.Resources) != 2 || g.Skill.Resources[0].Digest != deploy.Resources[0].Digest {
		t.Errorf("skills/get %s: %+v, %v", deploy.URI, g, err)
	}
	for _, uri := range []string{"skill://workspace/misnamed/SKILL.md", "skill://workspace/nope/SKILL.md", "skill://workspace/deploy/references/checklist.md", "atrium://pages/Skills/deploy/SKILL.md"} {
		_, err := mcp.CallCustomMethod[*skilltools.GetSkillParams, *skilltools.GetSkillResult](context.Background(), cs, skilltools.MethodGet, &skilltools.GetSkillParams{URI: uri})
		if code := rpcCode(err); code != jsonrpc.CodeInvalidParams {
			t.Errorf("skills/get %s: %v (code %d), want invalid params", uri, err, code)
		}
	}
	for _, uri := range []string{"skill://workspace/misnamed/SKILL.md", "skill://workspace/deploy/nope.md", "skill://atrium/nope.md"} {
		if _, err := read(t, cs, uri); err == nil {
			t.Errorf("read %s: no error", uri)
		}
	}

	// resources/list names each SKILL.md from its frontmatter.
	rl, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rl.Resources, func(r *mcp.Resource) bool { return r.URI == deploy.URI })
	if i < 0 || rl.Resources[i].Name != "deploy" || rl.Resources[i].Description != "Ship a release of the service." || rl.Resources[i].MIMEType != "text/markdown" {
		t.Errorf("resources/list lacks deploy's SKILL.md as named: %+v", rl.Resources)
	}

	// An edit shows in the next listing's digest.
	write(t, svc, a, "Skills/deploy/SKILL.md", deploySkill+"\nAlso tag the release.\n")
	if again := list(t, cs); again[1].Resources[0].Digest == deploy.Resources[0].Digest {
		t.Error("the digest did not change with the page")
	}
}

func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestDirectoryRead(t *testing.T) {
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	a := servicestest.Agent(t, svc, "writer", "")
	write(t, svc, a, "Skills/deploy/SKILL.md", deploySkill)
	write(t, svc, a, "Skills/deploy/references/checklist.md", "- tests green\n")
	write(t, svc, a, "Skills/deploy/references/deep/more.md", "more\n")
	cs := serve(t, svc, a)
	dir := func(uri string) ([]string, error) {
		res, err := mcp.CallCustomMethod[*skilltools.DirectoryReadParams, *skilltools.DirectoryReadResult](context.Background(), cs, skilltools.MethodDirectoryRead, &skilltools.DirectoryReadParams{URI: uri})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, r := range res.Resources {
			out = append(out, r.URI+" "+r.MIMEType)
		}
		return out, nil
	}
	for uri, want := range map[string][]string{
		"skill://atrium":                       {"skill://atrium/SKILL.md text/markdown", "skill://atrium/references inode/directory"},
		"skill://atrium/references":            {"skill://atrium/references/TOOLS.md text/markdown"},
		"skill://workspace":                    {"skill://workspace/deploy inode/directory"},
		"skill://workspace/deploy":             {"skill://workspace/deploy/SKILL.md text/markdown", "skill://workspace/deploy/references inode/directory"},
		"skill://workspace/deploy/references/": {"skill://workspace/deploy/references/checklist.md text/markdown", "skill://workspace/deploy/references/deep inode/directory"},
	} {
		got, err := dir(uri)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("directory %s: %v, %v; want %v", uri, got, err, want)
		}
	}
	for _, uri := range []string{"skill://atrium/SKILL.md", "skill://workspace/nope", "skill://elsewhere", "atrium://pages/Skills"} {
		if _, err := dir(uri); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("directory %s: %v, want invalid params", uri, err)
		}
	}
}

// A skill page of one workspace is never served in another, and a private
// page is not served to a caller who may not read it.
func TestIsolationAndPrivacy(t *testing.T) {
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	a := servicestest.Agent(t, svc, "writer", "")
	if _, err := svc.Identity.CreateWorkspace(context.Background(), "beta", ""); err != nil {
		t.Fatal(err)
	}
	b := servicestest.Agent(t, svc, "other", "beta")
	if a.Workspace.ID == b.Workspace.ID {
		t.Fatal("one workspace")
	}
	write(t, svc, a, "Skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Ship it.\naccess: public\n---\n")
	write(t, svc, a, "Skills/deploy/secret.md", "private notes\n") // private: no access key
	write(t, svc, a, "Skills/hidden/SKILL.md", "---\nname: hidden\ndescription: Members only.\n---\n")
	write(t, svc, b, "Skills/beta-only/SKILL.md", "---\nname: beta-only\ndescription: B's.\n---\n")

	if got := uris(list(t, serve(t, svc, b))); !slices.Equal(got, []string{"skill://atrium/SKILL.md", "skill://workspace/beta-only/SKILL.md"}) {
		t.Errorf("workspace beta lists %v", got)
	}
	csA := serve(t, svc, a)
	if got := uris(list(t, csA)); !slices.Equal(got, []string{"skill://atrium/SKILL.md", "skill://workspace/deploy/SKILL.md", "skill://workspace/hidden/SKILL.md"}) {
		t.Errorf("a member of the default workspace lists %v", got)
	}

	// A caller without a role (public pages only) sees the public skill
	// without its private file, and not the private one.
	anon := *a
	anon.Role = ""
	cs := serve(t, svc, &anon)
	got := list(t, cs)
	if !slices.Equal(uris(got), []string{"skill://atrium/SKILL.md", "skill://workspace/deploy/SKILL.md"}) {
		t.Fatalf("an anonymous reader lists %v", uris(got))
	}
	if len(got[1].Resources) != 1 {
		t.Errorf("an anonymous reader is told of the private file: %+v", got[1].Resources)
	}
	for _, uri := range []string{"skill://workspace/deploy/secret.md", "skill://workspace/hidden/SKILL.md"} {
		if _, err := read(t, cs, uri); err == nil {
			t.Errorf("an anonymous reader read %s", uri)
		}
	}
	if _, err := read(t, csA, "skill://workspace/deploy/secret.md"); err != nil {
		t.Errorf("a member cannot read the private file: %v", err)
	}
}

// The extension is declared where it works: by a server with the skills
// toolset, not by one without.
func TestDeclared(t *testing.T) {
	svc := servicestest.MustOpen(t, store.SQLite, nil)
	a := servicestest.Agent(t, svc, "writer", "")
	caps := serve(t, svc, a).InitializeResult().Capabilities
	if s, ok := caps.Extensions[skilltools.Extension].(map[string]any); !ok || s["directoryRead"] != true || caps.Resources == nil {
		t.Errorf("capabilities %+v: want the skills extension with directoryRead, and resources", caps)
	}
	cs := serve(t, svc, a, "docs")
	if _, ok := cs.InitializeResult().Capabilities.Extensions[skilltools.Extension]; ok {
		t.Error("a server without the skills toolset declares the extension")
	}
	if _, err := mcp.CallCustomMethod[*skilltools.ListSkillsParams, *skilltools.ListSkillsResult](context.Background(), cs, skilltools.MethodList, &skilltools.ListSkillsParams{}); err == nil {
		t.Error("a server without the skills toolset answers skills/list")
	}
}
