package pagetools

import (
	"context"
	"embed"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/pages"
)

// Name is the toolset's name as --toolsets and clients' configurations name
// it: "docs", from the seed it came from; in Go it is the pages toolset.
const Name = "docs"

//go:embed defs/*.json
var defs embed.FS

// New is the pages toolset: the Markdown knowledge base.
func New(s *mcpserver.Server) *mcpserver.Toolset {
	// The tools are defined without the service (atrium tools lists them with
	// no store); calls go through it.
	p := &pagesRef{s}
	return &mcpserver.Toolset{
		Name:        Name,
		Description: "The Markdown knowledge base: pages, sections, links, history, attachments, search.",
		Default:     true,
		Tools: []*mcpserver.Tool{
			listPagesTool(p).WithAliases(seedNames), getTreeTool(p), readPageTool(p), writePageTool(p), editPageTool(p),
			createPageTool(p).WithAliases(seedNames), deletePageTool(p), movePageTool(p).WithAliases(seedNames),
			searchPagesTool(p), getPageLinksTool(p), addAttachmentTool(p).WithAliases(seedNames),
			listPageRevisionsTool(p), restorePageRevisionTool(p), listTrashTool(p), restorePageTool(p), purgePageTool(p),
		},
		Templates:     []mcpserver.ResourceTemplate{pageResource(p)},
		ListResources: listPageResources(p),
		Complete:      completePagePath(p),
		Defs:          defs,
		Updates:       updates,
		NotFoundHint:  notFoundHint,
	}
}

// seedNames are the parameters as 003's agents write them (camelCase), taken
// as aliases of the tools' own names; unlisted in the schemas, they cost no
// tokens. Only the tools that have a parameter get its alias.
var seedNames = map[string]string{
	"includeContent":  "include_content",
	"parentPath":      "parent_path",
	"sourcePath":      "source_path",
	"destinationPath": "destination_path",
	"pagePath":        "page_path",
	"filePath":        "file_path",
	"fileName":        "file_name",
}

// ListPagesInput lists a folder.
type ListPagesInput struct {
	Path           string `json:"path,omitempty" jsonschema:"folder to list, e.g. Projects (or its page Projects/_index.md); empty for the root"`
	Depth          int    `json:"depth,omitempty" jsonschema:"how many levels below path to include: 1 to 64 (default 1)"`
	IncludeContent bool   `json:"include_content,omitempty" jsonschema:"include each page's content"`
	IncludePrivate bool   `json:"include_private,omitempty" jsonschema:"include private pages (default false; pages are private unless their frontmatter says access: public)"`
	Cursor         string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer, to continue"`
	Limit          int    `json:"limit,omitempty" jsonschema:"entries per answer: 1 to 1000 (default 100)"`
}

func listPagesTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "list_pages",
		Title:       "List pages",
		Description: "Lists the pages and folders under a folder, in path order, with title, icon, access level and whether they have children. Default: the root, one level deep, public pages only, no content. Paginated: pass next_cursor back as cursor.",
		Annotations: mcpserver.Reads("List pages"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in ListPagesInput) (pages.ListPagesOutput, error) {
		r, err := d.get().ListPages(ctx, pages.ListRequest{Path: in.Path, Depth: in.Depth, IncludeContent: in.IncludeContent, IncludePrivate: in.IncludePrivate, Cursor: in.Cursor, Limit: in.Limit})
		if err != nil {
			return pages.ListPagesOutput{}, err
		}
		return r.Output(), nil
	})
}

// GetTreeInput asks for the page tree.
type GetTreeInput struct {
	IncludeMetadata bool   `json:"include_metadata,omitempty" jsonschema:"include page_id, icon, access, revision and updated_at of each page"`
	Cursor          string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer, to continue"`
	Limit           int    `json:"limit,omitempty" jsonschema:"pages per answer: 1 to 2000 (default 500)"`
}

func getTreeTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:         "get_tree",
		Title:        "Page tree",
		Description:  "Returns the page hierarchy as nested folders and pages (the sidebar tree), for an overview of the knowledge base. Paginated by pages in path order: pass next_cursor back as cursor.",
		Annotations:  mcpserver.Reads("Page tree"),
		OutputSchema: pages.TreeSchema(),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in GetTreeInput) (pages.TreeOutput, error) {
		r, err := d.get().Tree(ctx, pages.TreeRequest{IncludeMetadata: in.IncludeMetadata, Cursor: in.Cursor, Limit: in.Limit})
		if err != nil {
			return pages.TreeOutput{}, err
		}
		return r.Output(), nil
	})
}

// ReadPageInput reads a page.
type ReadPageInput struct {
	Path     string `json:"path" jsonschema:"the page path, e.g. Projects/Alpha.md"`
	Section  string `json:"section,omitempty" jsonschema:"only this section, by heading path: Design > Storage (add [2] to pick the 2nd of same-named headings)"`
	Revision int64  `json:"revision,omitempty" jsonschema:"an earlier revision to read (see list_page_revisions)"`
}

func readPageTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewRenderedTool(&mcp.Tool{
		Name:        "read_page",
		Title:       "Read page",
		Description: "Reads a page's Markdown: its content (frontmatter and body), parsed frontmatter and revision. Give section to read only one section by heading path (Design > Storage), or revision to read an earlier one. Keep the revision to change the page with edit_page or write_page.",
		Annotations: mcpserver.Reads("Read page"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in ReadPageInput) (pages.ReadPageOutput, error) {
		r, err := d.get().ReadPage(ctx, pages.ReadRequest{Path: in.Path, Section: in.Section, Revision: in.Revision})
		if err != nil {
			return pages.ReadPageOutput{}, err
		}
		return r.Output(), nil
	}, pageText)
}

// pageText is read_page's answer as a model reads it: one header line (path,
// revision, and the section and its first line when one was asked for), a
// blank line, then the Markdown as written.
func pageText(p pages.ReadPageOutput) string {
	var b strings.Builder
	b.Grow(len(p.Path) + len(p.Section) + len(p.Content) + 64)
	b.WriteString(p.Path)
	if p.Section != "" {
		b.WriteString(" § ")
		b.WriteString(p.Section)
		b.WriteString(" (from line ")
		b.WriteString(strconv.Itoa(p.Line))
		b.WriteString(")")
	}
	b.WriteString(" · revision ")
	b.WriteString(strconv.FormatInt(p.Revision, 10))
	if p.Access != "" {
		b.WriteString(" · ")
		b.WriteString(p.Access)
	}
	b.WriteString("\n\n")
	b.WriteString(p.Content)
	return b.String()
}

// WritePageInput writes a whole page.
type WritePageInput struct {
	Path         string `json:"path" jsonschema:"the page path, e.g. Projects/Alpha.md"`
	Content      string `json:"content" jsonschema:"the whole page: optional YAML frontmatter between --- lines, then Markdown"`
	BaseRevision int64  `json:"base_revision,omitempty" jsonschema:"the revision you read; required to replace an existing page"`
	Overwrite    bool   `json:"overwrite,omitempty" jsonschema:"replace an existing page without a base_revision (discards changes you have not seen)"`
}

func writePageTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "write_page",
		Title:       "Write page",
		Description: "Creates a page with the given content, or replaces an existing one — only with the base_revision you read (or overwrite: true); a stale base_revision is a conflict naming both revisions, never a silent overwrite. To change part of a page, prefer edit_page.",
		Annotations: mcpserver.Writes("Write page", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in WritePageInput) (pages.WriteOutput, error) {
		r, err := d.get().WritePage(ctx, pages.WriteRequest{Path: in.Path, Content: in.Content, BaseRevision: in.BaseRevision, Overwrite: in.Overwrite})
		if err != nil {
			return pages.WriteOutput{}, err
		}
		return r.Output(), nil
	})
}

// EditPageInput changes part of a page.
type EditPageInput struct {
	Path         string                `json:"path" jsonschema:"the page path"`
	BaseRevision int64                 `json:"base_revision,omitempty" jsonschema:"the revision you read; if given and the page changed since, the edit is a conflict"`
	Operations   []pages.EditOperation `json:"operations" jsonschema:"changes applied in order, all or nothing"`
}

func editPageTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "edit_page",
		Title:       "Edit page",
		Description: "Changes part of a page without resending it: append or prepend text (to the page or a section), find_replace with an expected count, replace_section by heading path, set_frontmatter keys. Operations apply in order, all or nothing; a missing section or an unexpected count changes nothing and says why.",
		Annotations: mcpserver.Writes("Edit page", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in EditPageInput) (pages.WriteOutput, error) {
		r, err := d.get().EditPage(ctx, pages.EditRequest{Path: in.Path, BaseRevision: in.BaseRevision, Ops: pages.Ops(in.Operations)})
		if err != nil {
			return pages.WriteOutput{}, err
		}
		return r.Output(), nil
	})
}

// CreatePageInput creates a page from a title.
type CreatePageInput struct {
	Title      string `json:"title" jsonschema:"the page title; the file name is made from it"`
	ParentPath string `json:"parent_path,omitempty" jsonschema:"the folder to create it in (e.g. Projects); empty for the root"`
	Content    string `json:"content,omitempty" jsonschema:"the Markdown body; frontmatter (title, icon) is generated"`
	Icon       string `json:"icon,omitempty" jsonschema:"an emoji or icon name"`
}

func createPageTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "create_page",
		Title:       "Create page",
		Description: "Creates a page from a title in a folder, generating its frontmatter (title, icon) and its path (Projects/Beta.md for title Beta in Projects). Fails with conflict if that path is taken.",
		Annotations: mcpserver.Writes("Create page", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in CreatePageInput) (pages.WriteOutput, error) {
		r, err := d.get().CreatePage(ctx, pages.CreateRequest{Title: in.Title, ParentPath: in.ParentPath, Content: in.Content, Icon: in.Icon})
		if err != nil {
			return pages.WriteOutput{}, err
		}
		return r.Output(), nil
	})
}

// PathInput names a page.
type PathInput struct {
	Path string `json:"path" jsonschema:"the page path, e.g. Projects/Alpha.md"`
}

func deletePageTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "delete_page",
		Title:       "Delete page",
		Description: "Deletes a page: it goes to the trash with its history, attachments and review threads, restorable with restore_page until purged (after 30 days by default). Its path is free at once. Links to it from other pages stay, as unresolved links.",
		Annotations: mcpserver.Writes("Delete page", true, true),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in PathInput) (pages.DeletePageOutput, error) {
		r, err := d.get().DeletePage(ctx, in.Path)
		if err != nil {
			return pages.DeletePageOutput{}, err
		}
		return r.Output(), nil
	})
}

// MovePageInput moves a page or a folder.
type MovePageInput struct {
	SourcePath      string `json:"source_path" jsonschema:"the page (Projects/Alpha.md) or folder (Projects/Old) to move"`
	DestinationPath string `json:"destination_path" jsonschema:"the new page path (Archive/Alpha.md, or Alpha/_index.md to make it a folder page), or a folder to move into (Archive/)"`
}

func movePageTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "move_page",
		Title:       "Move page",
		Description: "Moves a page (or a whole folder) and rewrites every wikilink and relative Markdown link that pointed at it, and its own relative links, so nothing breaks; reports how many pages changed. Its attachments move with it.",
		Annotations: mcpserver.Writes("Move page", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in MovePageInput) (pages.MovePageOutput, error) {
		r, err := d.get().MovePage(ctx, in.SourcePath, in.DestinationPath)
		if err != nil {
			return pages.MovePageOutput{}, err
		}
		return r.Output(), nil
	})
}

// SearchPagesInput searches pages.
type SearchPagesInput struct {
	Query   string   `json:"query" jsonschema:"words or a question; every word counts toward the rank. \"exact phrase\" and +word are required, -word excluded, arch* a prefix"`
	Path    string   `json:"path,omitempty" jsonschema:"only pages under this folder"`
	Tags    []string `json:"tags,omitempty" jsonschema:"only pages with all these tags"`
	Limit   int      `json:"limit,omitempty" jsonschema:"results per answer (default 20, at most 100)"`
	Cursor  string   `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer"`
	Explain bool     `json:"explain,omitempty" jsonschema:"say for each result what made its score: the terms it holds, in which fields, through which of the workspace's synonyms, and the signals the score adds up (with hybrid search: the lexical and vector ranks, and the section nearest the question)"`
}

func searchPagesTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "search_pages",
		Title:       "Search pages",
		Description: "Ranked full-text search (BM25) over every field a page declares: title, aliases, tags, headings, description, body and other frontmatter text. Plain-language questions work: every word counts toward the rank, none is required unless quoted or prefixed with +; the workspace's synonyms (page Settings/Synonyms.md) widen a question's words. When the server has an embeddings endpoint (--embedder), a question of plain words is also matched by meaning against page sections, and the two rankings are fused. Returns path, title, best matching line and context, and the total number of matches; with explain, what made each result's score.",
		Annotations: mcpserver.Reads("Search pages"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in SearchPagesInput) (pages.SearchPagesOutput, error) {
		r, err := d.get().Search(ctx, pages.SearchRequest{Query: in.Query, Path: in.Path, Tags: in.Tags, Limit: in.Limit, Cursor: in.Cursor, Explain: in.Explain})
		if err != nil {
			return pages.SearchPagesOutput{}, err
		}
		return r.Output(), nil
	})
}

func getPageLinksTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "get_page_links",
		Title:       "Page links",
		Description: "Returns a page's outgoing links ([[wikilinks]] and relative Markdown links, each resolved to a page or marked unresolved) and its incoming links (backlinks from other pages).",
		Annotations: mcpserver.Reads("Page links"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in PathInput) (pages.PageLinksOutput, error) {
		r, err := d.get().Links(ctx, in.Path)
		if err != nil {
			return pages.PageLinksOutput{}, err
		}
		return r.Output(), nil
	})
}

// AddAttachmentInput attaches a file to a page.
type AddAttachmentInput struct {
	PagePath      string `json:"page_path" jsonschema:"the page the file belongs to"`
	FilePath      string `json:"file_path,omitempty" jsonschema:"a local file to copy (stdio only; relative to, and inside, the server's working folder)"`
	ContentBase64 string `json:"content_base64,omitempty" jsonschema:"the file's bytes in base64 (for remote callers)"`
	FileName      string `json:"file_name,omitempty" jsonschema:"the name to store it under (default: the file_path's name)"`
}

func addAttachmentTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "add_attachment",
		Title:       "Add attachment",
		Description: "Stores a file in the assets folder beside a page and returns the relative path and the Markdown to link it. Give file_path (a local file, stdio callers only) or content_base64. The same file twice is stored once.",
		Annotations: mcpserver.Writes("Add attachment", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in AddAttachmentInput) (pages.AddAttachmentOutput, error) {
		data, name, err := d.attachmentBytes(in)
		if err != nil {
			return pages.AddAttachmentOutput{}, err
		}
		r, err := d.get().AddAttachment(ctx, pages.AttachRequest{PagePath: in.PagePath, FileName: name, Data: data})
		if err != nil {
			return pages.AddAttachmentOutput{}, err
		}
		return r.Output(), nil
	})
}

// attachmentBytes reads an attachment from the input: base64 content, or a
// local file confined to the server's working folder.
func (d *pagesRef) attachmentBytes(in AddAttachmentInput) ([]byte, string, error) {
	switch {
	case in.FilePath != "" && in.ContentBase64 != "":
		return nil, "", atrium.Errorf(atrium.EInvalid, "give file_path or content_base64, not both")
	case in.ContentBase64 != "":
		if in.FileName == "" {
			return nil, "", atrium.Errorf(atrium.EInvalid, "file_name is required with content_base64")
		}
		data, err := base64.StdEncoding.DecodeString(in.ContentBase64)
		if err != nil {
			return nil, "", atrium.Errorf(atrium.EInvalid, "content_base64 is not valid base64: %v", err)
		}
		return data, in.FileName, nil
	case in.FilePath != "":
		data, base, err := readLocalFile(d.s.LocalFiles(), in.FilePath, d.get().MaxAttachmentBytes)
		if err != nil {
			return nil, "", err
		}
		if in.FileName == "" {
			in.FileName = base
		}
		return data, in.FileName, nil
	}
	return nil, "", atrium.Errorf(atrium.EInvalid, "give file_path (a local file) or content_base64 (the bytes)")
}

// RevisionsInput lists a page's history.
type RevisionsInput struct {
	Path   string `json:"path" jsonschema:"the page path"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer"`
	Limit  int    `json:"limit,omitempty" jsonschema:"revisions per answer (default 20, at most 200)"`
}

func listPageRevisionsTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "list_page_revisions",
		Title:       "Page history",
		Description: "Lists a page's revisions, newest first, with author, time and size. Read one with read_page and revision; bring one back with restore_page_revision.",
		Annotations: mcpserver.Reads("Page history"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in RevisionsInput) (pages.RevisionsOutput, error) {
		r, err := d.get().Revisions(ctx, in.Path, in.Cursor, in.Limit)
		if err != nil {
			return pages.RevisionsOutput{}, err
		}
		return r.Output(), nil
	})
}

// RestoreInput brings back an earlier revision.
type RestoreInput struct {
	Path         string `json:"path" jsonschema:"the page path"`
	Revision     int64  `json:"revision" jsonschema:"the revision whose content becomes current again"`
	BaseRevision int64  `json:"base_revision,omitempty" jsonschema:"the current revision you saw; if the page changed since, it is a conflict"`
}

func restorePageRevisionTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "restore_page_revision",
		Title:       "Restore revision",
		Description: "Makes an earlier revision's content current again, as a new revision (history is never rewritten). The page keeps its current path.",
		Annotations: mcpserver.Writes("Restore revision", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in RestoreInput) (pages.WriteOutput, error) {
		if in.Revision <= 0 {
			return pages.WriteOutput{}, atrium.Errorf(atrium.EInvalid, "revision is required (see list_page_revisions)")
		}
		r, err := d.get().RestoreRevision(ctx, in.Path, in.Revision, in.BaseRevision)
		if err != nil {
			return pages.WriteOutput{}, err
		}
		return r.Output(), nil
	})
}

// pagesRef reaches the pages service of a server when a tool is called.
type pagesRef struct{ s *mcpserver.Server }

// get returns the service; a server built without one (a tools listing)
// has no store to call, and a call panics into an internal error.
func (r *pagesRef) get() *pages.Service {
	if r.s.Services() == nil {
		panic("pagetools: page tool called on a server built without services")
	}
	return r.s.Services().Pages
}

// ListTrashInput lists the trash.
type ListTrashInput struct {
	Path   string `json:"path,omitempty" jsonschema:"only pages deleted from this path"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer, to continue"`
	Limit  int    `json:"limit,omitempty" jsonschema:"pages per answer (default 50, at most 500)"`
}

func listTrashTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "list_trash",
		Title:       "List trash",
		Description: "Lists deleted pages in the trash, most recently deleted first: page_id, path, who deleted it and when, when it will be purged, and how many attachments and threads it keeps.",
		Annotations: mcpserver.Reads("List trash"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in ListTrashInput) (pages.ListTrashOutput, error) {
		r, err := d.get().Trash(ctx, pages.TrashRequest{Path: in.Path, Cursor: in.Cursor, Limit: in.Limit})
		if err != nil {
			return pages.ListTrashOutput{}, err
		}
		return r.Output(), nil
	})
}

// RestorePageInput takes a page out of the trash.
type RestorePageInput struct {
	PageID  string `json:"page_id,omitempty" jsonschema:"the deleted page, from list_trash or delete_page"`
	Path    string `json:"path,omitempty" jsonschema:"or the path it was deleted from (the most recently deleted page there)"`
	NewPath string `json:"new_path,omitempty" jsonschema:"where to restore it, when another page now has its path (default: where it was)"`
}

func restorePageTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "restore_page",
		Title:       "Restore page",
		Description: "Brings a deleted page back from the trash with its history, attachments and review threads. If another page now has its path, pass new_path.",
		Annotations: mcpserver.Writes("Restore page", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in RestorePageInput) (pages.RestorePageOutput, error) {
		r, err := d.get().RestorePage(ctx, pages.RestoreRequest{PageID: in.PageID, Path: in.Path, To: in.NewPath})
		if err != nil {
			return pages.RestorePageOutput{}, err
		}
		return r.Output(), nil
	})
}

// PurgePageInput deletes a page in the trash for good.
type PurgePageInput struct {
	PageID string `json:"page_id" jsonschema:"the page in the trash, from list_trash"`
}

func purgePageTool(d *pagesRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "purge_page",
		Title:       "Purge page",
		Description: "Deletes a page in the trash for good, with its history, attachments and threads. Admins only; it cannot be undone.",
		Annotations: mcpserver.Writes("Purge page", true, true),
	}, atrium.RoleAdmin, func(ctx context.Context, _ *mcp.CallToolRequest, in PurgePageInput) (pages.PurgePageOutput, error) {
		p, err := d.get().PurgePage(ctx, in.PageID)
		if err != nil {
			return pages.PurgePageOutput{}, err
		}
		return pages.PurgePageOutput{Purged: true, PageID: p.UID, Path: p.Path}, nil
	})
}
