// Package skills reads Agent Skills (agentskills.io) out of a workspace: a
// skill is a folder of pages under the workspace's skills folder (default
// Skills/), Skills/<name>/SKILL.md and whatever else the folder holds, so
// that people review, version and restore a skill like any page. It also
// holds what every skill, authored or generated, must satisfy: a SKILL.md
// that begins with YAML frontmatter naming the skill (the folder's name,
// within the naming rules) and describing it, and the limits of SEP-2640.
//
// Reads go through the pages service as the caller in the context: a private
// page is part of a skill only for those who may read it, and a skill whose
// SKILL.md they may not read is no skill to them.
package skills

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/pages"
)

// Manifest is the file every skill has at its root.
const Manifest = "SKILL.md"

// DefaultFolder is the workspace folder skills are authored in.
const DefaultFolder = "Skills"

// Limits of one skill (SEP-2640): hosts need not load more.
const (
	MaxFiles = 512
	MaxBytes = 16 << 20
)

// File is one file of a skill, at Path relative to the skill's folder.
type File struct {
	Path    string
	Content string
}

// Digest is the SHA-256 of the file's bytes as SEP-2640 writes it.
func (f File) Digest() string { return Digest(f.Content) }

// Digest is sha256:{64 lowercase hex} of content's bytes.
func Digest(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Skill is a skill whose files have been read. Files[0] is SKILL.md; the rest
// follow in path order.
type Skill struct {
	Name        string
	Description string
	// Frontmatter is SKILL.md's frontmatter as a JSON object, every key as
	// written.
	Frontmatter map[string]any
	Files       []File
	// Private says that a file of the skill is a private page (the skill
	// then differs by reader).
	Private bool
}

// File returns the file at path in the skill.
func (s Skill) File(path string) (File, bool) {
	i := slices.IndexFunc(s.Files, func(f File) bool { return f.Path == path })
	if i < 0 {
		return File{}, false
	}
	return s.Files[i], true
}

var nameRule = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// ValidName reports whether name follows the Agent Skills naming rules: 1 to
// 64 lowercase letters, digits and hyphens, no hyphen first, last or twice
// in a row.
func ValidName(name string) bool {
	return nameRule.MatchString(name) && !strings.Contains(name, "--")
}

// New checks the files of the skill in folder name — SKILL.md first — and
// returns the skill: its SKILL.md must begin with frontmatter whose name is
// the folder's and whose description is not empty, and it must stay within
// the limits.
func New(name string, files []File) (Skill, error) {
	if !ValidName(name) {
		return Skill{}, atrium.Errorf(atrium.EInvalid, "skill folder %q is not a skill name: 1 to 64 lowercase letters, digits and single hyphens, not first or last", name)
	}
	i := slices.IndexFunc(files, func(f File) bool { return f.Path == Manifest })
	if i < 0 {
		return Skill{}, atrium.Errorf(atrium.EInvalid, "skill %s has no %s", name, Manifest)
	}
	files = slices.Clone(files)
	manifest := files[i]
	files = slices.Delete(files, i, i+1)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	files = append([]File{manifest}, files...)
	fm, err := Frontmatter(manifest.Content)
	if err != nil {
		return Skill{}, atrium.Errorf(atrium.EInvalid, "skill %s: %v", name, err)
	}
	got, _ := fm["name"].(string)
	if got != name {
		return Skill{}, atrium.Errorf(atrium.EInvalid, "skill %s: its %s names it %q; the name must be the folder's", name, Manifest, got)
	}
	desc, _ := fm["description"].(string)
	if strings.TrimSpace(desc) == "" {
		return Skill{}, atrium.Errorf(atrium.EInvalid, "skill %s: its %s has no description", name, Manifest)
	}
	if len(files) > MaxFiles {
		return Skill{}, atrium.Errorf(atrium.ETooLarge, "skill %s has %d files; a skill may have %d", name, len(files), MaxFiles)
	}
	total := 0
	for _, f := range files {
		total += len(f.Content)
	}
	if total > MaxBytes {
		return Skill{}, atrium.Errorf(atrium.ETooLarge, "skill %s holds %d bytes; a skill may hold %d", name, total, MaxBytes)
	}
	return Skill{Name: name, Description: desc, Frontmatter: fm, Files: files}, nil
}

// Frontmatter reads the YAML frontmatter at the start of a SKILL.md as a JSON
// object, every key as written. Scalars keep the YAML 1.2 core types —
// strings, numbers, booleans, null — and a date stays the string it was
// written as, so that a client parsing the same bytes gets the same object.
func Frontmatter(content string) (map[string]any, error) {
	fm, _, ok := markdown.Split(content)
	if !ok {
		return nil, fmt.Errorf("%s must begin with YAML frontmatter between --- lines", Manifest)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(fm), &doc); err != nil {
		return nil, fmt.Errorf("invalid frontmatter: %v", err)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("the frontmatter is empty; it needs name and description")
	}
	v, err := jsonValue(doc.Content[0], 0)
	if err != nil {
		return nil, fmt.Errorf("invalid frontmatter: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the frontmatter is not a mapping of keys to values")
	}
	return m, nil
}

// jsonValue converts a YAML node to a JSON value.
func jsonValue(n *yaml.Node, depth int) (any, error) {
	if depth > 64 {
		return nil, fmt.Errorf("nested too deep")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return jsonValue(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key must be a plain value", k.Line)
			}
			if k.Tag == "!!merge" {
				return nil, fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			v, err := jsonValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := jsonValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, err
			}
			return b, nil
		case "!!int":
			if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				return i, nil
			}
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, err
			}
			return f, nil
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, err
			}
			return f, nil
		}
		return n.Value, nil // strings, and dates as written
	}
	return nil, fmt.Errorf("line %d: unsupported YAML", n.Line)
}

// Catalog reads the skills authored in a workspace's folder through the
// pages service, as the caller in the context.
type Catalog struct {
	Pages  *pages.Service
	Folder string // e.g. "Skills"; empty: no authored skills
}

// pageLimit is the pages one listing call returns.
const pageLimit = 1000

// List returns the workspace's valid skills, in name order, and the folders
// under the skills folder that are not valid skills, with why.
func (c Catalog) List(ctx context.Context) ([]Skill, map[string]error, error) {
	if c.Folder == "" {
		return nil, nil, nil
	}
	byName := map[string][]string{} // skill folder → page paths relative to it
	cursor := ""
	for {
		r, err := c.Pages.ListPages(ctx, pages.ListRequest{Path: c.Folder, Depth: 64, IncludePrivate: true, Cursor: cursor, Limit: pageLimit})
		if err != nil {
			if atrium.ErrorCode(err) == atrium.ENotFound {
				return nil, nil, nil // no skills folder yet
			}
			return nil, nil, err
		}
		for _, e := range r.Entries {
			if e.Folder {
				continue
			}
			rel, ok := strings.CutPrefix(e.Path, c.Folder+"/")
			if !ok {
				continue
			}
			name, file, ok := strings.Cut(rel, "/")
			if !ok {
				continue // a page of the folder itself, not of a skill
			}
			byName[name] = append(byName[name], file)
		}
		if r.NextCursor == "" {
			break
		}
		cursor = r.NextCursor
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []Skill
	invalid := map[string]error{}
	for _, n := range names {
		if !slices.Contains(byName[n], Manifest) {
			invalid[n] = atrium.Errorf(atrium.EInvalid, "skill %s has no %s", n, Manifest)
			continue
		}
		sk, err := c.read(ctx, n, byName[n])
		if err != nil {
			if code := atrium.ErrorCode(err); code == atrium.EInvalid || code == atrium.ETooLarge || code == atrium.ENotFound {
				invalid[n] = err
				continue
			}
			return nil, nil, err
		}
		out = append(out, sk)
	}
	return out, invalid, nil
}

// Get returns the skill named name, or not_found when the workspace serves
// none by that name (to this caller); an invalid skill is invalid_argument.
func (c Catalog) Get(ctx context.Context, name string) (Skill, error) {
	if c.Folder == "" || !ValidName(name) {
		return Skill{}, atrium.Errorf(atrium.ENotFound, "no skill %s", name)
	}
	dir := c.Folder + "/" + name
	var files []string
	cursor := ""
	for {
		r, err := c.Pages.ListPages(ctx, pages.ListRequest{Path: dir, Depth: 64, IncludePrivate: true, Cursor: cursor, Limit: pageLimit})
		if err != nil {
			if atrium.ErrorCode(err) == atrium.ENotFound {
				return Skill{}, atrium.Errorf(atrium.ENotFound, "no skill %s", name)
			}
			return Skill{}, err
		}
		for _, e := range r.Entries {
			if rel, ok := strings.CutPrefix(e.Path, dir+"/"); ok && !e.Folder {
				files = append(files, rel)
			}
		}
		if r.NextCursor == "" {
			break
		}
		cursor = r.NextCursor
	}
	if !slices.Contains(files, Manifest) {
		return Skill{}, atrium.Errorf(atrium.ENotFound, "no skill %s", name)
	}
	return c.read(ctx, name, files)
}

// read reads the files of the skill folder name and checks them.
func (c Catalog) read(ctx context.Context, name string, paths []string) (Skill, error) {
	if len(paths) > MaxFiles {
		return Skill{}, atrium.Errorf(atrium.ETooLarge, "skill %s has %d files; a skill may have %d", name, len(paths), MaxFiles)
	}
	files := make([]File, 0, len(paths))
	private := false
	for _, p := range paths {
		r, err := c.Pages.ReadPage(ctx, pages.ReadRequest{Path: c.Folder + "/" + name + "/" + p})
		if err != nil {
			if atrium.ErrorCode(err) == atrium.ENotFound {
				continue // gone since the listing
			}
			return Skill{}, err
		}
		if r.Page.Access != atrium.AccessPublic {
			private = true
		}
		files = append(files, File{Path: p, Content: r.Content})
	}
	sk, err := New(name, files)
	sk.Private = private
	return sk, err
}
