package mcpserver

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteSkill writes the agent skill (SKILL.md) from the live registry: every
// enabled tool with its parameters and an example call through `atrium call`
// and mcporter, the recipes, and how the toolsets fit together. Generated, it
// cannot drift from the code; it names no URL and no token — agents reach
// Atrium through their MCP configuration only.
func (s *Server) WriteSkill(w io.Writer) error {
	_, err := io.WriteString(w, s.skillGuide()+"\n## Tools\n"+s.skillTools())
	return err
}

// SkillReference is where the generated skill, served as files (SkillFiles),
// keeps its tool reference.
const SkillReference = "references/TOOLS.md"

// SkillFiles is the generated skill as a folder, as MCP serves it (the skills
// extension): SKILL.md holds what WriteSkill writes before the tool
// reference, which is in its own file, read when needed (the progressive
// disclosure the Agent Skills format recommends).
func (s *Server) SkillFiles() (manifest, reference string) {
	manifest = s.skillGuide() + "\n## Tools\n\nEvery tool of this server, with its parameters and an example call, is in\n[" + SkillReference + "](" + SkillReference + ").\n"
	reference = "# Atrium tools\n\nThe tools of the atrium skill, by toolset.\n" + s.skillTools()
	return manifest, reference
}

// skillGuide is the skill before its tool reference.
func (s *Server) skillGuide() string {
	var b strings.Builder
	b.WriteString(`---
name: atrium
description: Work in Atrium, the shared workspace of Markdown pages and review threads, through its MCP tools. Use it to find, read and edit workspace pages, and to review documents — comment, reply, submit, resolve — without a browser.
---

# Atrium

Atrium is the MCP server ` + "`atrium`" + ` in your configuration. Every call acts as you, in your
workspace; call ` + "`whoami`" + ` to see who and where you are and what your role allows.

## Calling the tools

- From your MCP client: call the tool by name with its arguments.
- From a shell: ` + "`atrium call TOOL key=value …`" + ` prints the result as JSON (values are typed by
  the tool's schema: arrays as JSON or ` + "`a,b`" + `, objects as JSON; ` + "`key=@FILE`" + ` takes a value from a file, for
  long pages), or ` + "`mcporter call atrium.TOOL key=value …`" + `.
- ` + "`read_page`" + `'s text answer is the page's Markdown under one header line (path, revision); every other
  tool's text is the JSON of its structured result. Nested fields are listed as ` + "`quote.exact`" + ` and
  ` + "`operations[].op`" + `.
- A failed call returns ` + "`{\"error\": …, \"code\": …}`" + `; the message says what to change. Codes:
  ` + "`invalid_argument`, `not_found`, `conflict`, `permission_denied`, `unauthenticated`, `too_large`,\n  `unavailable`, `internal`" + `. On ` + "`conflict`" + `, read again and retry your change.
- Lists are paginated: pass ` + "`next_cursor`" + ` back as ` + "`cursor`" + `.
- The examples run in order on a page ` + "`Projects/Alpha.md`" + ` with a section ` + "`Design > Storage`" + `;
  ` + "`VAR=$(atrium call … | jq -r …)`" + ` keeps an id that later examples pass as ` + "`$VAR`" + `.
`)
	names := s.ToolsetNames()
	enabled := func(ts string) bool { return slices.Contains(names, ts) }
	for _, ts := range s.toolsets {
		if ts.Skill != nil {
			b.WriteString(ts.Skill(enabled))
		}
	}
	return b.String()
}

// skillTools is the tool reference of the skill, a section per toolset.
func (s *Server) skillTools() string {
	var b strings.Builder
	for _, ts := range s.toolsets {
		var tools []*Tool
		for _, t := range s.tools {
			if t.Toolset == ts.Name {
				tools = append(tools, t)
			}
		}
		if len(tools) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s — %s\n", ts.Name, ts.Description)
		for _, t := range tools {
			writeToolDoc(&b, t)
		}
	}
	return b.String()
}

// param is a tool parameter as the skill documents it.
type param struct {
	name, typ, desc string
	required        bool
	within          string // a nested field required only when this parent is given
}

func params(schema any) []param {
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var s propSchema
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return s.params("", true)
}

// propSchema is the part of a JSON schema the skill documents.
type propSchema struct {
	Type        any                    `json:"type"`
	Description string                 `json:"description"`
	Properties  map[string]*propSchema `json:"properties"`
	Items       *propSchema            `json:"items"`
	Required    []string               `json:"required"`
}

// params lists an object's properties under prefix, each followed by its
// own fields (quote.exact, operations[].op): an agent must know them to
// build the argument, and the top-level table alone does not say them.
// A nested field is required only when it and every object above it are.
func (s *propSchema) params(prefix string, parentRequired bool) []param {
	var out []param
	for name, p := range s.Properties {
		typ := fmt.Sprint(p.Type)
		if p.Type == nil {
			typ = "any"
		}
		req := slices.Contains(s.Required, name)
		within := ""
		if req && !parentRequired {
			req, within = false, strings.TrimSuffix(strings.TrimSuffix(prefix, "."), "[]")
		}
		out = append(out, param{name: prefix + name, typ: typ, desc: p.Description, required: req, within: within})
	}
	// Required first, then by name: the order a reader needs them.
	slices.SortFunc(out, func(x, y param) int {
		if x.required != y.required {
			if x.required {
				return -1
			}
			return 1
		}
		return strings.Compare(x.name, y.name)
	})
	var all []param
	for _, p := range out {
		all = append(all, p)
		sub := s.Properties[strings.TrimPrefix(p.name, prefix)]
		switch {
		case sub.Items != nil && len(sub.Items.Properties) > 0:
			all = append(all, sub.Items.params(p.name+"[].", p.required)...)
		case len(sub.Properties) > 0:
			all = append(all, sub.params(p.name+".", p.required)...)
		}
	}
	return all
}

func writeToolDoc(b *strings.Builder, t *Tool) {
	d := t.Def()
	kind := "changes data"
	switch a := d.Annotations; {
	case a.ReadOnlyHint:
		kind = "read-only"
	case a.DestructiveHint != nil && *a.DestructiveHint:
		kind = "destructive"
	}
	fmt.Fprintf(b, "\n#### `%s` — %s (%s)\n\n%s\n", d.Name, d.Title, kind, d.Description)
	ps := params(d.InputSchema)
	if len(ps) > 0 {
		b.WriteString("\n| parameter | type | required | description |\n|---|---|---|---|\n")
		for _, p := range ps {
			req := ""
			switch {
			case p.required:
				req = "yes"
			case p.within != "":
				req = "with `" + p.within + "`"
			}
			fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", p.name, p.typ, req, strings.ReplaceAll(p.desc, "|", "\\|"))
		}
	}
	ex, ok := toolExamples[d.Name]
	if !ok {
		var args []string
		for _, p := range ps {
			if p.required && !strings.ContainsAny(p.name, ".[") {
				args = append(args, p.name+"="+shellQuote(example(p)))
			}
		}
		ex.args = strings.Join(args, " ")
	}
	call := strings.TrimSpace(d.Name + " " + ex.args)
	b.WriteString("\n```sh\n")
	for _, l := range ex.before {
		b.WriteString(l + "\n")
	}
	if ex.keep != "" {
		fmt.Fprintf(b, "%s=$(atrium call %s | jq -r %s)\n", ex.keep, call, ex.path)
	} else {
		fmt.Fprintf(b, "atrium call %s\n", call)
	}
	fmt.Fprintf(b, "mcporter call atrium.%s\n```\n", call)
}

// toolExample is the example call of a tool. The examples of the skill run
// in order as printed, on a workspace with the page Projects/Alpha.md (a
// section Design > Storage, a person's submitted thread on it, an abandoned
// draft of yours) and you an admin: e2e's TestSkillExamplesRun runs them so.
// Ids go from one example to the next in shell variables, never as made-up
// values that exist nowhere.
type toolExample struct {
	args   string   // key=value …, quoted for a shell
	keep   string   // the shell variable that keeps an id of the result
	path   string   // where the id is in the result, for jq
	before []string // what must run first (atrium call lines)
}

var toolExamples = map[string]toolExample{
	"whoami":                {},
	"list_pages":            {args: "path=Projects"},
	"get_tree":              {},
	"read_page":             {args: "path=Projects/Alpha.md"},
	"write_page":            {args: "path=Notes/Today.md content='# Today'"},
	"edit_page":             {args: `path=Projects/Alpha.md operations='[{"op":"append","section":"Design > Storage","text":"- backups run hourly"}]'`},
	"create_page":           {args: "title=Beta parent_path=Projects"},
	"delete_page":           {args: "path=Projects/Beta.md"},
	"move_page":             {args: "source_path=Notes/Today.md destination_path=Archive/Today.md"},
	"search_pages":          {args: "query='where do we store data'"},
	"get_page_links":        {args: "path=Projects/Alpha.md"},
	"add_attachment":        {args: "page_path=Projects/Alpha.md file_name=notes.txt content_base64=aGVsbG8K"},
	"list_page_revisions":   {args: "path=Projects/Alpha.md"},
	"restore_page_revision": {args: "path=Projects/Alpha.md revision=1"},
	"list_trash":            {},
	"restore_page":          {args: "path=Projects/Beta.md"},
	"purge_page": {args: "page_id=$PAGE",
		before: []string{"PAGE=$(atrium call delete_page path=Archive/Today.md | jq -r .page_id)"}},
	"list_annotations":   {args: "doc_path=Projects/Alpha.md"},
	"get_annotation":     {args: "annotation_id=$ANN"},
	"create_annotation":  {args: "doc_path=Projects/Alpha.md section='Design > Storage' quote='{\"exact\":\"SQLite first\"}' content='Could we say why?'"},
	"edit_annotation":    {args: "annotation_id=$ANN content='Why SQLite first, and when PostgreSQL?'"},
	"resolve_annotation": {args: "annotation_id=$ANN"},
	"reopen_annotation":  {args: "annotation_id=$ANN"},
	"delete_annotation":  {args: "annotation_id=$ANN"},
	"submit_review":      {args: "doc_path=Projects/Alpha.md summary='Second pass'", keep: "REV", path: ".review.id"},
	"list_reviews":       {args: "doc_path=Projects/Alpha.md"},
	"get_review":         {args: "review_id=$REV"},
	"complete_review":    {args: "review_id=$REV summary='All addressed'"},
	"task_create":        {args: `title='Add user authentication' phase=PLANS specs='["Projects/Alpha.md"]'`, keep: "TASK", path: ".task.number"},
	"task_get_context":   {args: "issue_number=$TASK"},
	"task_claim":         {args: "issue_number=$TASK"},
	"task_update_status": {args: "issue_number=$TASK status='Analyzing the spec' progress=10"},
	"task_post_comment":  {args: "issue_number=$TASK comment='Found the storage section.' comment_type=note"},
	"task_ask_question": {args: "issue_number=$TASK target=$ME question='REST or GraphQL?'",
		before: []string{"ME=$(atrium call whoami | jq -r .principal.handle)"}},
	"task_post_answer":     {args: "issue_number=$TASK target=$ME answer='GraphQL.'"},
	"task_signal_blocked":  {args: "issue_number=$TASK reason='Missing the users schema' waiting_for=$ME"},
	"task_get_comments":    {args: "issue_number=$TASK from_agent=$ME"},
	"task_update":          {args: "issue_number=$TASK status=in_progress labels='[\"backend\"]'"},
	"task_list":            {args: "assignee=me fields='[\"number\",\"title\",\"status\"]'"},
	"task_ready":           {},
	"task_inbox":           {},
	"task_signal_complete": {args: "issue_number=$TASK artifact_path=Projects/Alpha.md summary='Plan written.'"},
	"get_desk":             {},
	"create_todo":          {args: "title='Write the API' description='Endpoints and tests'", keep: "TODO", path: ".todo.id"},
	"update_todo":          {args: "id=$TODO progress=75 status=in_progress statusDesc='Implemented API endpoints'"},
	"add_todo_file":        {args: `id=$TODO file='{"name":"notes.txt","content":"hello"}'`, keep: "FILE", path: ".file.id"},
	"remove_todo_file":     {args: "id=$TODO fileId=$FILE"},
	"archive_todo":         {args: "id=$TODO"},
	"update_draft":         {args: "content='Dear team,'"},
	"update_plan":          {args: "content='# Plan'"},
	"add_progress_item":    {args: "description='Implemented API endpoints'"},
	"archive_progress":     {},
}

// example is a plausible value of a parameter, for a tool with no example
// of its own.
func example(p param) string {
	switch p.name {
	case "path", "doc_path", "page_path":
		return "Projects/Alpha.md"
	case "content":
		return "Project details."
	case "query":
		return "how do we back up the database"
	}
	switch p.typ {
	case "integer", "number":
		return "1"
	case "boolean":
		return "true"
	case "array":
		return `["x"]`
	case "object":
		return `{}`
	}
	return "…"
}

// shellQuote quotes a value for a POSIX shell when it needs it.
func shellQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n'\"$`\\|&;<>()[]{}*?#~!") {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
