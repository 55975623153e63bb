// Package skilltools serves Agent Skills over MCP: the skills extension
// (io.modelcontextprotocol/skills, SEP-2640). Two kinds of skill are served:
//
//   - the generated skill, atrium, which `atrium skill` writes: its SKILL.md
//     at skill://atrium/SKILL.md, its tool reference at
//     skill://atrium/references/TOOLS.md;
//   - the skills people author in the workspace, as pages under its skills
//     folder (Skills/<name>/SKILL.md and the other pages of that folder), at
//     skill://workspace/<name>/<file>: reviewed, versioned and restored like
//     any page, and read as the caller may read them.
//
// The methods skills/list, skills/get and resources/directory/read are
// registered on each server as custom methods (the SDK otherwise refuses them
// before any middleware runs); every file is a resource read with
// resources/read.
package skilltools

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/skills"
)

// Name is the toolset's name.
const Name = "skills"

// Extension is the identifier of the skills extension.
const Extension = "io.modelcontextprotocol/skills"

// Method names of the extension.
const (
	MethodList          = "skills/list"
	MethodGet           = "skills/get"
	MethodDirectoryRead = "resources/directory/read"
)

// URIs of the skills.
const (
	Scheme = "skill://"
	// GeneratedName is the generated skill's name, and its skill path.
	GeneratedName = "atrium"
	// WorkspacePrefix is the skill path prefix of the workspace's skills.
	WorkspacePrefix = "workspace"
	directoryMIME   = "inode/directory"
	markdownMIME    = "text/markdown"
)

// Options configure the toolset.
type Options struct {
	// Folder is the workspace folder skills are authored in (default
	// skills.DefaultFolder); "-" serves none.
	Folder string
}

// New returns the skills toolset for the given options.
func New(o Options) mcpserver.NewToolset {
	folder := strings.Trim(o.Folder, "/")
	switch folder {
	case "":
		folder = skills.DefaultFolder
	case "-":
		folder = ""
	}
	return func(s *mcpserver.Server) *mcpserver.Toolset {
		t := &toolset{s: s, folder: folder}
		t.generated = sync.OnceValues(t.generate)
		return &mcpserver.Toolset{
			Name:          Name,
			Description:   "Agent skills over MCP (the skills extension): the generated atrium skill and the skills authored in the workspace's " + displayFolder(folder) + " folder.",
			Default:       true,
			Extensions:    map[string]map[string]any{Extension: {"directoryRead": true}},
			Templates:     []mcpserver.ResourceTemplate{t.template()},
			ListResources: t.listResources,
			Receiving:     t.receiving,
			Added:         t.added,
		}
	}
}

func displayFolder(f string) string {
	if f == "" {
		return "(none)"
	}
	return f + "/"
}

type toolset struct {
	s         *mcpserver.Server
	folder    string
	generated func() (skills.Skill, error)
}

// generate builds the generated skill from the registry, once.
func (t *toolset) generate() (skills.Skill, error) {
	manifest, reference := t.s.SkillFiles()
	return skills.New(GeneratedName, []skills.File{
		{Path: skills.Manifest, Content: manifest},
		{Path: mcpserver.SkillReference, Content: reference},
	})
}

// A served skill: where it is, and what it holds.
type served struct {
	path  string // skill path: atrium, workspace/<name>
	skill skills.Skill
}

func (sv served) uri(file string) string {
	return Scheme + sv.path + "/" + mcpserver.EscapePath(file)
}

func (sv served) dir() string { return Scheme + sv.path }

func (t *toolset) catalog() skills.Catalog {
	c := skills.Catalog{Folder: t.folder}
	if svc := t.s.Services(); svc != nil {
		c.Pages = svc.Pages
	} else {
		c.Folder = ""
	}
	return c
}

// all is every skill the caller may use: the generated one first.
func (t *toolset) all(ctx context.Context) ([]served, error) {
	gen, err := t.generated()
	if err != nil {
		return nil, err
	}
	out := []served{{path: GeneratedName, skill: gen}}
	list, invalid, err := t.catalog().List(ctx)
	if err != nil {
		return nil, err
	}
	for name, why := range invalid {
		t.s.Logger().Debug("skill not served", "skill", name, "why", why)
	}
	for _, sk := range list {
		out = append(out, served{path: WorkspacePrefix + "/" + sk.Name, skill: sk})
	}
	return out, nil
}

// lookup finds the skill a skill path names; not_found when none is served.
func (t *toolset) lookup(ctx context.Context, path string) (served, error) {
	if path == GeneratedName {
		gen, err := t.generated()
		return served{path: path, skill: gen}, err
	}
	if name, ok := strings.CutPrefix(path, WorkspacePrefix+"/"); ok && !strings.Contains(name, "/") {
		sk, err := t.catalog().Get(ctx, name)
		if err != nil {
			if c := atrium.ErrorCode(err); c == atrium.EInvalid || c == atrium.ETooLarge {
				t.s.Logger().Debug("skill not served", "skill", name, "why", err)
				err = atrium.Errorf(atrium.ENotFound, "no skill is served at %s%s", Scheme, path)
			}
			return served{}, err
		}
		return served{path: path, skill: sk}, nil
	}
	return served{}, atrium.Errorf(atrium.ENotFound, "no skill is served at %s%s", Scheme, path)
}

// splitURI splits a skill file URI into its skill path and file path.
func splitURI(uri string) (skillPath, file string, ok bool) {
	rest, ok := strings.CutPrefix(uri, Scheme)
	if !ok {
		return "", "", false
	}
	rest = mcpserver.UnescapePath(rest)
	if f, ok := strings.CutPrefix(rest, GeneratedName+"/"); ok {
		return GeneratedName, f, f != ""
	}
	if r, ok := strings.CutPrefix(rest, WorkspacePrefix+"/"); ok {
		name, f, ok := strings.Cut(r, "/")
		return WorkspacePrefix + "/" + name, f, ok && f != ""
	}
	return "", "", false
}

// template serves every file of every skill.
func (t *toolset) template() mcpserver.ResourceTemplate {
	return mcpserver.ResourceTemplate{
		Def: &mcp.ResourceTemplate{
			Name:        "skill-file",
			Title:       "Skill file",
			Description: "A file of an agent skill: skill://atrium/SKILL.md (the generated skill), skill://workspace/<name>/SKILL.md and the other files of a skill authored in the workspace. skills/list gives every file with its digest.",
			MIMEType:    markdownMIME,
			URITemplate: Scheme + "{+path}",
		},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			path, file, ok := splitURI(req.Params.URI)
			if !ok {
				return nil, atrium.Errorf(atrium.ENotFound, "no skill file at %s", req.Params.URI)
			}
			sv, err := t.lookup(ctx, path)
			if err != nil {
				return nil, err
			}
			f, ok := sv.skill.File(file)
			if !ok {
				return nil, atrium.Errorf(atrium.ENotFound, "skill %s has no file %s", sv.skill.Name, file)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: markdownMIME, Text: f.Content}}}, nil
		},
	}
}

// listResources lists each skill's SKILL.md, named and described from its
// frontmatter.
func (t *toolset) listResources(ctx context.Context) ([]*mcp.Resource, error) {
	all, err := t.all(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*mcp.Resource, 0, len(all))
	for _, sv := range all {
		out = append(out, &mcp.Resource{URI: sv.uri(skills.Manifest), Name: sv.skill.Name, Description: sv.skill.Description, MIMEType: markdownMIME, Size: int64(len(sv.skill.Files[0].Content))})
	}
	return out, nil
}

// SkillResource is one file of a skill entry.
type SkillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// Skill is a skill entry, as skills/list and skills/get return it.
type Skill struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []SkillResource `json:"resources"`
}

func entry(sv served) *Skill {
	e := &Skill{URI: sv.uri(skills.Manifest), Frontmatter: sv.skill.Frontmatter, Resources: make([]SkillResource, 0, len(sv.skill.Files))}
	for _, f := range sv.skill.Files {
		e.Resources = append(e.Resources, SkillResource{URI: sv.uri(f.Path), Digest: f.Digest(), Size: len(f.Content)})
	}
	return e
}

// cacheable are the fields of a result cacheable from 2026-07-28 on.
type cacheable struct {
	ResultType string `json:"resultType,omitempty"`
	TTLMs      *int   `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// complete fills them in for a session of 2026-07-28 or later: a skill is
// read as its caller may read it, so the scope is private, and it changes
// whenever its pages do, so it is stale at once.
func complete(ctx context.Context) cacheable {
	if v, _ := ctx.Value(versionKey{}).(string); v < "2026-07-28" {
		return cacheable{}
	}
	zero := 0
	return cacheable{ResultType: "complete", TTLMs: &zero, CacheScope: "private"}
}

// ListSkillsParams are skills/list's.
type ListSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ListSkillsResult is skills/list's answer: every skill in one page.
type ListSkillsResult struct {
	mcp.ResultBase
	cacheable
	Skills     []*Skill `json:"skills"`
	NextCursor string   `json:"nextCursor,omitempty"`
}

// GetSkillParams are skills/get's.
type GetSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

// GetSkillResult is skills/get's answer.
type GetSkillResult struct {
	mcp.ResultBase
	cacheable
	Skill *Skill `json:"skill"`
}

// DirectoryReadParams are resources/directory/read's.
type DirectoryReadParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// DirectoryReadResult lists a directory's direct children.
type DirectoryReadResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType,omitempty"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

type versionKey struct{}

// isOurs reports whether method is one of the extension's.
func isOurs(method string) bool {
	return method == MethodList || method == MethodGet || method == MethodDirectoryRead
}

// receiving gives the extension's methods what other handlers get from the
// registry: the store open, the caller in the context (and refused if of
// another workspace), and the request's protocol version. Custom methods'
// handlers see only their params.
func (t *toolset) receiving(ws int64) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if !isOurs(method) {
				return next(ctx, method, req)
			}
			if err := t.s.Opened(ctx); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, mcpserver.RPCError(atrium.Errorf(atrium.EUnavailable, "Atrium could not open its store: %v", err))
			}
			a, err := t.s.Actor(ctx, req, ws)
			if err != nil {
				return nil, mcpserver.RPCError(err)
			}
			ctx = atrium.NewContextWithActor(ctx, a)
			if v, ok := req.(interface{ ProtocolVersion() string }); ok {
				ctx = context.WithValue(ctx, versionKey{}, v.ProtocolVersion())
			}
			return next(ctx, method, req)
		}
	}
}

// added registers the extension's methods on a server.
func (t *toolset) added(ms *mcp.Server, _ int64) {
	must := func(err error) {
		if err != nil {
			panic(err) // a name the SDK serves itself: a programming error
		}
	}
	must(mcp.AddReceivingCustomMethod(ms, MethodList, func(ctx context.Context, _ *mcp.ServerSession, p *ListSkillsParams) (*ListSkillsResult, error) {
		res, err := t.list(ctx, p)
		return res, rpc(err)
	}))
	must(mcp.AddReceivingCustomMethod(ms, MethodGet, func(ctx context.Context, _ *mcp.ServerSession, p *GetSkillParams) (*GetSkillResult, error) {
		res, err := t.get(ctx, p)
		return res, rpc(err)
	}))
	must(mcp.AddReceivingCustomMethod(ms, MethodDirectoryRead, func(ctx context.Context, _ *mcp.ServerSession, p *DirectoryReadParams) (*DirectoryReadResult, error) {
		res, err := t.readDirectory(ctx, p)
		return res, rpc(err)
	}))
}

func rpc(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*jsonrpc.Error); ok {
		return err
	}
	return mcpserver.RPCError(err)
}

func (t *toolset) list(ctx context.Context, p *ListSkillsParams) (*ListSkillsResult, error) {
	if p != nil && p.Cursor != "" {
		return nil, atrium.Errorf(atrium.EInvalid, "invalid cursor: skills/list answers in one page")
	}
	all, err := t.all(ctx)
	if err != nil {
		return nil, err
	}
	res := &ListSkillsResult{cacheable: complete(ctx), Skills: make([]*Skill, 0, len(all))}
	for _, sv := range all {
		res.Skills = append(res.Skills, entry(sv))
	}
	return res, nil
}

func (t *toolset) get(ctx context.Context, p *GetSkillParams) (*GetSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, atrium.Errorf(atrium.EInvalid, "skills/get needs the uri of a skill's SKILL.md")
	}
	path, file, ok := splitURI(p.URI)
	if !ok || file != skills.Manifest {
		return nil, atrium.Errorf(atrium.EInvalid, "no skill is served at %s: a skill is named by the URI of its SKILL.md, such as %s%s/SKILL.md", p.URI, Scheme, GeneratedName)
	}
	sv, err := t.lookup(ctx, path)
	if err != nil {
		if atrium.ErrorCode(err) == atrium.ENotFound {
			return nil, atrium.Errorf(atrium.EInvalid, "no skill is served at %s", p.URI)
		}
		return nil, err
	}
	return &GetSkillResult{cacheable: complete(ctx), Skill: entry(sv)}, nil
}

// readDirectory lists a directory of the skill namespace: skill://atrium,
// skill://workspace, a workspace skill's folder, or a folder within a skill.
func (t *toolset) readDirectory(ctx context.Context, p *DirectoryReadParams) (*DirectoryReadResult, error) {
	if p == nil || p.URI == "" {
		return nil, atrium.Errorf(atrium.EInvalid, "resources/directory/read needs the uri of a directory")
	}
	if p.Cursor != "" {
		return nil, atrium.Errorf(atrium.EInvalid, "invalid cursor: a directory is listed in one page")
	}
	notDir := atrium.Errorf(atrium.EInvalid, "%s is not a directory resource", p.URI)
	rest, ok := strings.CutPrefix(strings.TrimSuffix(p.URI, "/"), Scheme)
	if !ok {
		return nil, notDir
	}
	rest = mcpserver.UnescapePath(rest)
	res := &DirectoryReadResult{ResultType: complete(ctx).ResultType, Resources: []*mcp.Resource{}}
	if rest == WorkspacePrefix {
		list, _, err := t.catalog().List(ctx)
		if err != nil {
			return nil, err
		}
		for _, sk := range list {
			res.Resources = append(res.Resources, &mcp.Resource{URI: Scheme + WorkspacePrefix + "/" + sk.Name, Name: sk.Name, MIMEType: directoryMIME})
		}
		return res, nil
	}
	var skillPath, sub string
	switch {
	case rest == GeneratedName || strings.HasPrefix(rest, GeneratedName+"/"):
		skillPath, sub = GeneratedName, strings.TrimPrefix(strings.TrimPrefix(rest, GeneratedName), "/")
	case strings.HasPrefix(rest, WorkspacePrefix+"/"):
		name, s, _ := strings.Cut(strings.TrimPrefix(rest, WorkspacePrefix+"/"), "/")
		skillPath, sub = WorkspacePrefix+"/"+name, s
	default:
		return nil, notDir
	}
	sv, err := t.lookup(ctx, skillPath)
	if err != nil {
		if atrium.ErrorCode(err) == atrium.ENotFound {
			return nil, notDir
		}
		return nil, err
	}
	children, ok := directory(sv.skill.Files, sub)
	if !ok {
		return nil, notDir
	}
	for _, c := range children {
		r := &mcp.Resource{URI: sv.uri(joinPath(sub, c.name)), Name: c.name, MIMEType: markdownMIME}
		if c.dir {
			r.URI = sv.dir() + "/" + mcpserver.EscapePath(joinPath(sub, c.name))
			r.MIMEType = directoryMIME
		} else {
			r.Size = int64(c.size)
		}
		res.Resources = append(res.Resources, r)
	}
	return res, nil
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

type child struct {
	name string
	dir  bool
	size int
}

// directory lists the direct children of folder dir ("" for the skill's
// root) among files; ok is false when dir is no folder of the skill.
func directory(files []skills.File, dir string) (children []child, ok bool) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	seen := map[string]bool{}
	for _, f := range files {
		rel, in := strings.CutPrefix(f.Path, prefix)
		if !in {
			continue
		}
		ok = true
		name, _, isDir := strings.Cut(rel, "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		c := child{name: name, dir: isDir}
		if !isDir {
			c.size = len(f.Content)
		}
		children = append(children, c)
	}
	slices.SortFunc(children, func(a, b child) int { return strings.Compare(a.name, b.name) })
	return children, ok
}
