package reviewtools

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
)

// A Recipe is a workflow an agent follows with the tools: served as an MCP
// prompt, and written into the agent skill (atrium skill).
type Recipe struct {
	Name        string
	Title       string
	Description string
	Args        []RecipeArg
	// Steps are the instructions, with {arg} placeholders.
	Steps []string
	// Example is the recipe as shell commands, for the skill.
	Example []string
}

// RecipeArg is a placeholder of a recipe.
type RecipeArg struct {
	Name, Description string
	Required          bool
}

// Recipes are the review workflows of Foundry's agent skill (000 S6).
var Recipes = []Recipe{
	{
		Name:        "reply_to_comments",
		Title:       "Reply to open human comments",
		Description: "Answer every open comment people left on a page that no agent has answered yet.",
		Args:        []RecipeArg{{Name: "doc_path", Description: "the page, e.g. Projects/Alpha.md", Required: true}},
		Steps: []string{
			"Call list_annotations with doc_path={doc_path} and status=submitted.",
			"Keep the threads (no parent_id) whose author_type is human; for each, call get_annotation and skip it if a reply with author_type ai already answers it.",
			"For each remaining thread, read what it is about: read_page with path={doc_path} and section set to the thread's section.",
			"Answer with create_annotation, parent_id set to the thread's id and content your reply. Do not resolve threads people opened unless they ask you to.",
		},
		Example: []string{
			"THREAD=$(atrium call list_annotations doc_path=Projects/Alpha.md status=submitted | jq -r '.annotations[0].id')",
			"atrium call get_annotation annotation_id=$THREAD",
			"atrium call read_page path=Projects/Alpha.md section='Design > Storage'",
			"atrium call create_annotation parent_id=$THREAD content='Done: the storage section now says why.'",
		},
	},
	{
		Name:        "review_cycle",
		Title:       "Run a full review cycle",
		Description: "Review a page end to end: comment, submit, verify, answer, resolve, complete.",
		Args:        []RecipeArg{{Name: "doc_path", Description: "the page to review", Required: true}},
		Steps: []string{
			"Read the page: read_page with path={doc_path}.",
			"For each issue, call create_annotation with doc_path={doc_path}, the section (heading path) and, when it is about exact words, a quote {exact: …}. They stay drafts until submitted.",
			"Submit them together: submit_review with doc_path={doc_path} and a summary.",
			"Verify: list_reviews with doc_path={doc_path}, then get_review with the review_id to see its annotations.",
			"Answer replies with create_annotation (parent_id = the thread's id).",
			"When a thread is settled, resolve_annotation its root; reopen_annotation if it comes back.",
			"When every thread is resolved, complete_review with the review_id.",
		},
		Example: []string{
			"atrium call read_page path=Projects/Alpha.md",
			`ANN=$(atrium call create_annotation doc_path=Projects/Alpha.md section='Design > Storage' quote='{"exact":"SQLite first"}' content='Why SQLite first?' | jq -r .annotation.id)`,
			`REV=$(atrium call submit_review doc_path=Projects/Alpha.md annotation_ids="[\"$ANN\"]" summary='First pass' | jq -r .review.id)`,
			"atrium call list_reviews doc_path=Projects/Alpha.md",
			"atrium call get_review review_id=$REV",
			"atrium call create_annotation parent_id=$ANN content='Answered in the text.'",
			"atrium call resolve_annotation annotation_id=$ANN",
			"atrium call reopen_annotation annotation_id=$ANN",
			"atrium call complete_review review_id=$REV",
		},
	},
	{
		Name:        "cleanup_test_data",
		Title:       "Clean up test data",
		Description: "Remove annotations and reviews left over from testing on a page.",
		Args: []RecipeArg{
			{Name: "doc_path", Description: "the page to clean", Required: true},
			{Name: "marker", Description: "text that marks test annotations, e.g. TEST"},
		},
		Steps: []string{
			"Find them: list_annotations with doc_path={doc_path} (and status=draft for abandoned drafts).",
			"Pick the threads that are yours and test data (their content contains {marker}); never delete other people's comments.",
			"delete_annotation each thread root: its replies go with it, and a review left empty is deleted too (the result says so).",
			"Check with list_reviews and list_annotations that nothing is left.",
		},
		Example: []string{
			"DRAFT=$(atrium call list_annotations doc_path=Projects/Alpha.md status=draft | jq -r '.annotations[0].id')",
			"atrium call delete_annotation annotation_id=$DRAFT",
		},
	},
}

// Text renders the recipe's steps with its arguments filled in.
func (r Recipe) Text(args map[string]string) string {
	var b strings.Builder
	b.WriteString(r.Description + "\n\n")
	for i, s := range r.Steps {
		for _, a := range r.Args {
			v := args[a.Name]
			if v == "" {
				v = "<" + a.Name + ">"
			}
			s = strings.ReplaceAll(s, "{"+a.Name+"}", v)
		}
		b.WriteString(strconv.Itoa(i+1) + ". " + s + "\n")
	}
	return b.String()
}

// reviewPrompts serves the recipes as MCP prompts.
func reviewPrompts() []mcpserver.Prompt {
	var out []mcpserver.Prompt
	for _, r := range Recipes {
		var args []*mcp.PromptArgument
		for _, a := range r.Args {
			args = append(args, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		out = append(out, mcpserver.Prompt{
			Def: &mcp.Prompt{Name: r.Name, Title: r.Title, Description: r.Description, Arguments: args},
			Handler: func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				for _, a := range r.Args {
					if a.Required && strings.TrimSpace(req.Params.Arguments[a.Name]) == "" {
						return nil, mcpserver.RPCError(atrium.Errorf(atrium.EInvalid, "argument %s is required", a.Name))
					}
				}
				return &mcp.GetPromptResult{
					Description: r.Description,
					Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: r.Text(req.Params.Arguments)}}},
				}, nil
			},
		})
	}
	return out
}

// skill is the review toolset's part of the agent skill: how the page and
// review tools meet, and the recipes.
func skill(enabled func(string) bool) string {
	var b strings.Builder
	if enabled("docs") {
		b.WriteString(`
## Content and review: which tools for what

- Page content goes through the docs tools: ` + "`search_pages`" + ` and ` + "`list_pages`" + ` to find a page,
  ` + "`read_page`" + ` (whole, or one ` + "`section`" + ` by heading path such as ` + "`Design > Storage`" + `) to read it, ` + "`edit_page`" + `
  to change part of it with the ` + "`revision`" + ` you read as ` + "`base_revision`" + `.
- Review goes through the review tools: an annotation's ` + "`doc_path`" + ` is the page path and its ` + "`section`" + `
  the heading path, exactly as ` + "`read_page`" + ` shows them; quote exact text of the page to anchor a
  comment to it. Comments follow the page when it is edited or moved.
`)
	}
	b.WriteString("\n## Recipes\n")
	for _, r := range Recipes {
		fmt.Fprintf(&b, "\n### %s\n\n%s", r.Title, r.Text(nil))
		if len(r.Example) > 0 {
			fmt.Fprintf(&b, "\n```sh\n%s\n```\n", strings.Join(r.Example, "\n"))
		}
	}
	return b.String()
}
