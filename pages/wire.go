package pages

import (
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// The shapes callers see, shared by every surface: MCP tools return them as
// structured content (their schemas are inferred from these types, so the
// jsonschema tags are descriptions written for models), REST as JSON bodies.

// PageEntry is a page or folder in a listing.
type PageEntry struct {
	Path        string `json:"path" jsonschema:"the page path, or a folder path ending in /"`
	Title       string `json:"title"`
	Icon        string `json:"icon,omitempty"`
	PageID      string `json:"page_id,omitempty" jsonschema:"stable ID of the page (empty for a folder without a page)"`
	Access      string `json:"access,omitempty" jsonschema:"public or private"`
	Revision    int64  `json:"revision,omitempty"`
	IsFolder    bool   `json:"is_folder,omitempty" jsonschema:"a folder with no page of its own"`
	HasChildren bool   `json:"has_children" jsonschema:"whether there are pages below it"`
	Content     string `json:"content,omitempty" jsonschema:"the page content, with include_content"`
}

// ListPagesOutput is one page of a listing.
type ListPagesOutput struct {
	Pages         []PageEntry `json:"pages"`
	NextCursor    string      `json:"next_cursor,omitempty" jsonschema:"pass as cursor to get the next entries; absent at the end"`
	HiddenPrivate int         `json:"hidden_private,omitempty" jsonschema:"private pages under path that were left out; pass include_private: true to see them"`
	Note          string      `json:"note,omitempty"`
}

// TreeItem is a folder or page of the tree, as callers see it.
type TreeItem struct {
	Name      string      `json:"name"`
	Path      string      `json:"path"`
	Type      string      `json:"type"`
	Title     string      `json:"title,omitempty"`
	PageID    string      `json:"page_id,omitempty"`
	Icon      string      `json:"icon,omitempty"`
	Access    string      `json:"access,omitempty"`
	Revision  int64       `json:"revision,omitempty"`
	UpdatedAt string      `json:"updated_at,omitempty"`
	Children  []*TreeItem `json:"children,omitempty"`
}

// TreeOutput is a window of the tree.
type TreeOutput struct {
	Tree       []*TreeItem `json:"tree"`
	Pages      int         `json:"pages"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// ReadPageOutput is a page as read.
type ReadPageOutput struct {
	Path        string         `json:"path"`
	PageID      string         `json:"page_id"`
	Title       string         `json:"title"`
	Revision    int64          `json:"revision" jsonschema:"pass as base_revision to write_page or edit_page"`
	Content     string         `json:"content" jsonschema:"the whole page (frontmatter and body), or the section asked for"`
	Frontmatter map[string]any `json:"frontmatter" jsonschema:"the page's YAML frontmatter"`
	Section     string         `json:"section,omitempty" jsonschema:"the full heading path of the section read"`
	Line        int            `json:"line" jsonschema:"the line of the page where content starts"`
	Access      string         `json:"access"`
	Tags        []string       `json:"tags"`
	UpdatedBy   string         `json:"updated_by"`
	UpdatedAt   string         `json:"updated_at"`
}

// WriteOutput says what a write did.
type WriteOutput struct {
	Success  bool   `json:"success"`
	PageID   string `json:"page_id"`
	Path     string `json:"path"`
	Revision int64  `json:"revision" jsonschema:"the page's revision now"`
	Created  bool   `json:"created,omitempty" jsonschema:"the page is new"`
	Changed  bool   `json:"changed" jsonschema:"false when the page already had exactly this content"`
}

// EditOperation is one change of edit_page.
type EditOperation struct {
	Op            string         `json:"op" jsonschema:"append, prepend, find_replace, replace_section or set_frontmatter"`
	Text          string         `json:"text,omitempty" jsonschema:"append/prepend: the text to add"`
	Section       string         `json:"section,omitempty" jsonschema:"replace_section: the section (heading path, e.g. Design > Storage); append/prepend: add inside this section instead of the whole page"`
	Find          string         `json:"find,omitempty" jsonschema:"find_replace: the exact text to find"`
	Replace       string         `json:"replace,omitempty" jsonschema:"find_replace: the replacement"`
	ExpectedCount int            `json:"expected_count,omitempty" jsonschema:"find_replace: how many times find must occur (default 1); otherwise nothing changes"`
	Content       string         `json:"content,omitempty" jsonschema:"replace_section: the section's new content, below its heading"`
	Frontmatter   map[string]any `json:"frontmatter,omitempty" jsonschema:"set_frontmatter: keys to set; null removes a key"`
}

// DeletePageOutput says what was deleted.
type DeletePageOutput struct {
	Deleted            bool   `json:"deleted"`
	PageID             string `json:"page_id"`
	Path               string `json:"path"`
	AttachmentsDeleted int    `json:"attachments_deleted"`
	// Trashed: the page went to the trash with its history, attachments and
	// threads, restorable with restore_page.
	Trashed bool   `json:"trashed"`
	Note    string `json:"note"`
}

// TrashEntry is a page in the trash.
type TrashEntry struct {
	PageID      string `json:"page_id"`
	Path        string `json:"path"`
	Title       string `json:"title"`
	Revision    int64  `json:"revision"`
	DeletedAt   string `json:"deleted_at"`
	DeletedBy   string `json:"deleted_by,omitempty"`
	PurgeAt     string `json:"purge_at,omitempty"`
	Attachments int    `json:"attachments"`
	Threads     int    `json:"threads"`
}

// ListTrashOutput is one page of the trash, most recently deleted first.
type ListTrashOutput struct {
	Pages      []TrashEntry `json:"pages"`
	NextCursor string       `json:"next_cursor,omitempty"`
}

// RestorePageOutput says what a restore brought back.
type RestorePageOutput struct {
	Restored            bool   `json:"restored"`
	PageID              string `json:"page_id"`
	Path                string `json:"path"`
	Revision            int64  `json:"revision"`
	AttachmentsRestored int    `json:"attachments_restored"`
	ThreadsRestored     int    `json:"threads_restored"`
}

// PurgePageOutput says what was deleted for good.
type PurgePageOutput struct {
	Purged bool   `json:"purged"`
	PageID string `json:"page_id"`
	Path   string `json:"path"`
}

// MovedEntry is one moved page.
type MovedEntry struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// MovePageOutput says what a move did.
type MovePageOutput struct {
	Success          bool         `json:"success"`
	NewPath          string       `json:"new_path"`
	Moved            []MovedEntry `json:"moved"`
	PagesChanged     int          `json:"pages_changed" jsonschema:"pages whose links were rewritten to follow the move"`
	LinksRewritten   int          `json:"links_rewritten"`
	AttachmentsMoved int          `json:"attachments_moved"`
}

// SearchHit is one result.
type SearchHit struct {
	Path         string       `json:"path"`
	Title        string       `json:"title"`
	PageID       string       `json:"page_id"`
	MatchLine    int          `json:"match_line" jsonschema:"the best matching line of the page (0 when only the title or tags matched)"`
	MatchContext string       `json:"match_context" jsonschema:"a short excerpt around the match"`
	Score        float64      `json:"score" jsonschema:"BM25 relevance, or with hybrid search the fused score of the lexical and vector ranks (reciprocal rank fusion); higher is better"`
	Explanation  *Explanation `json:"explanation,omitempty" jsonschema:"what made the score, when asked for with explain"`
}

// SearchPagesOutput is one page of results.
type SearchPagesOutput struct {
	Results    []SearchHit `json:"results"`
	Total      int         `json:"total" jsonschema:"how many pages match"`
	NextCursor string      `json:"next_cursor,omitempty"`
	Note       string      `json:"note,omitempty"`
}

// LinkOut is a link written in a page.
type LinkOut struct {
	Kind     string `json:"kind" jsonschema:"wiki or markdown"`
	Target   string `json:"target" jsonschema:"the target as written"`
	Heading  string `json:"heading,omitempty"`
	Line     int    `json:"line"`
	Resolved bool   `json:"resolved" jsonschema:"whether a page exists for it"`
	Path     string `json:"path,omitempty" jsonschema:"the page it points to"`
	Title    string `json:"title,omitempty"`
}

// LinkIn is a link to the page from another.
type LinkIn struct {
	Path  string `json:"path" jsonschema:"the page that links here"`
	Title string `json:"title"`
	Kind  string `json:"kind"`
	Line  int    `json:"line"`
}

// PageLinksOutput lists a page's links.
type PageLinksOutput struct {
	Path     string    `json:"path"`
	Outgoing []LinkOut `json:"outgoing"`
	Incoming []LinkIn  `json:"incoming"`
}

// AddAttachmentOutput says where the attachment went.
type AddAttachmentOutput struct {
	RelativePath   string `json:"relative_path" jsonschema:"the path to use in the page, e.g. ./assets/image.png"`
	MarkdownSyntax string `json:"markdown_syntax" jsonschema:"ready to paste: ![image.png](./assets/image.png)"`
	Path           string `json:"path" jsonschema:"the attachment's path in the workspace"`
	Size           int64  `json:"size"`
	MIMEType       string `json:"mime_type"`
}

// RevisionEntry is one revision.
type RevisionEntry struct {
	Revision  int64  `json:"revision"`
	Path      string `json:"path" jsonschema:"where the page was at that revision"`
	Size      int    `json:"size" jsonschema:"bytes of content"`
	Author    string `json:"author"`
	CreatedAt string `json:"created_at"`
}

// RevisionsOutput is one page of history, newest first.
type RevisionsOutput struct {
	Path            string          `json:"path"`
	CurrentRevision int64           `json:"current_revision"`
	Revisions       []RevisionEntry `json:"revisions"`
	NextCursor      string          `json:"next_cursor,omitempty"`
}

func (e Entry) output() PageEntry {
	return PageEntry{Path: e.Path, Title: e.Title, Icon: e.Icon, PageID: e.PageID, Access: string(e.Access), Revision: e.Revision, IsFolder: e.Folder, HasChildren: e.HasChildren, Content: e.Content}
}

// TreeSchema is written out because the tree is recursive, which schema
// inference cannot express.
func TreeSchema() *jsonschema.Schema {
	// Every node of a schema must be its own value (the SDK resolves it as a tree).
	str := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "string"} }
	node := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"name":       str(),
			"path":       {Type: "string", Description: "page path, or folder path ending in /"},
			"type":       {Type: "string", Enum: []any{"folder", "page"}},
			"title":      str(),
			"page_id":    str(),
			"icon":       str(),
			"access":     {Type: "string", Enum: []any{"public", "private"}},
			"revision":   {Type: "integer"},
			"updated_at": str(),
			"children":   {Type: "array", Items: &jsonschema.Schema{Ref: "#/$defs/node"}},
		},
		Required:             []string{"name", "path", "type"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	return &jsonschema.Schema{
		Type: "object",
		Defs: map[string]*jsonschema.Schema{"node": node},
		Properties: map[string]*jsonschema.Schema{
			"tree":        {Type: "array", Items: &jsonschema.Schema{Ref: "#/$defs/node"}, Description: "top-level folders and pages; a folder's own page (_index.md) is its title and page_id"},
			"pages":       {Type: "integer", Description: "pages in this answer"},
			"next_cursor": {Type: "string", Description: "pass as cursor for the next pages; absent at the end"},
		},
		Required:             []string{"tree", "pages"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

func treeItems(ns []*TreeNode) []*TreeItem {
	out := make([]*TreeItem, 0, len(ns))
	for _, n := range ns {
		t := &TreeItem{Name: n.Name, Path: n.Path, Type: "page", Children: treeItems(n.Children)}
		if n.Folder {
			t.Type = "folder"
		}
		if len(t.Children) == 0 {
			t.Children = nil
		}
		if p := n.Page; p != nil {
			t.Title, t.PageID, t.Icon, t.Access, t.Revision = p.Title, p.PageID, p.Icon, string(p.Access), p.Revision
			if !p.UpdatedAt.IsZero() {
				t.UpdatedAt = p.UpdatedAt.Format(time.RFC3339)
			}
		}
		out = append(out, t)
	}
	return out
}

// Output is the result of a write as callers see it.
func (r WriteResult) Output() WriteOutput {
	return WriteOutput{Success: true, PageID: r.Page.UID, Path: r.Page.Path, Revision: r.Page.Revision, Created: r.Created, Changed: r.Changed}
}

// Output is a listing as callers see it.
func (r ListResult) Output() ListPagesOutput {
	out := ListPagesOutput{NextCursor: r.NextCursor, HiddenPrivate: r.HiddenPrivate, Note: r.Note, Pages: []PageEntry{}}
	for _, e := range r.Entries {
		out.Pages = append(out.Pages, e.output())
	}
	return out
}

// Output is a tree window as callers see it.
func (r TreeResult) Output() TreeOutput {
	return TreeOutput{Tree: treeItems(r.Root), Pages: r.Pages, NextCursor: r.NextCursor}
}

// Output is a page as read, as callers see it.
func (r ReadResult) Output() ReadPageOutput {
	p := r.Page
	return ReadPageOutput{Path: p.Path, PageID: p.UID, Title: p.Title, Revision: p.Revision, Content: r.Content, Frontmatter: r.Frontmatter,
		Section: r.Section, Line: r.Line, Access: string(p.Access), Tags: p.Tags, UpdatedBy: p.UpdatedBy, UpdatedAt: p.UpdatedAt.Format(time.RFC3339)}
}

// Ops turns the operations callers send into edit operations.
func Ops(in []EditOperation) []EditOp {
	ops := make([]EditOp, len(in))
	for i, o := range in {
		ops[i] = EditOp(o)
	}
	return ops
}

// Output is a delete as callers see it.
func (r DeleteResult) Output() DeletePageOutput {
	return DeletePageOutput{Deleted: true, PageID: r.Page.UID, Path: r.Page.Path, AttachmentsDeleted: r.Attachments, Trashed: true,
		Note: "The page is in the trash with its history, attachments and threads; restore_page brings it back."}
}

// Output is the trash as callers see it.
func (r TrashResult) Output() ListTrashOutput {
	out := ListTrashOutput{Pages: []TrashEntry{}, NextCursor: r.NextCursor}
	for _, t := range r.Pages {
		e := TrashEntry{PageID: t.Page.UID, Path: t.Page.Path, Title: t.Page.Title, Revision: t.Page.Revision, DeletedAt: t.TrashedAt.Format(time.RFC3339),
			DeletedBy: t.TrashedBy, Attachments: t.Attachments, Threads: t.Threads}
		if r.PurgeAfter > 0 {
			e.PurgeAt = t.TrashedAt.Add(r.PurgeAfter).Format(time.RFC3339)
		}
		out.Pages = append(out.Pages, e)
	}
	return out
}

// Output is a restore as callers see it.
func (r RestoreResult) Output() RestorePageOutput {
	return RestorePageOutput{Restored: true, PageID: r.Page.UID, Path: r.Page.Path, Revision: r.Page.Revision, AttachmentsRestored: r.Attachments, ThreadsRestored: r.Threads}
}

// Output is a move as callers see it.
func (r MoveResult) Output() MovePageOutput {
	out := MovePageOutput{Success: true, NewPath: r.NewPath, PagesChanged: r.PagesChanged, LinksRewritten: r.LinksRewritten, AttachmentsMoved: r.Attachments, Moved: []MovedEntry{}}
	for _, m := range r.Moved {
		out.Moved = append(out.Moved, MovedEntry(m))
	}
	return out
}

// Output is a page of search results as callers see it.
func (r SearchResult) Output() SearchPagesOutput {
	out := SearchPagesOutput{Total: r.Total, NextCursor: r.NextCursor, Note: r.Note, Results: []SearchHit{}}
	for _, h := range r.Hits {
		out.Results = append(out.Results, SearchHit{Path: h.Path, Title: h.Title, PageID: h.PageID, MatchLine: h.MatchLine, MatchContext: h.Context, Score: h.Score, Explanation: h.Explanation})
	}
	return out
}

// Output is a page's links as callers see them.
func (r LinksResult) Output() PageLinksOutput {
	out := PageLinksOutput{Path: r.Page.Path, Outgoing: []LinkOut{}, Incoming: []LinkIn{}}
	for _, l := range r.Outgoing {
		out.Outgoing = append(out.Outgoing, LinkOut{Kind: string(l.Kind), Target: l.Target, Heading: l.Heading, Line: l.Line, Resolved: l.Resolved, Path: l.Path, Title: l.Title})
	}
	for _, l := range r.Incoming {
		out.Incoming = append(out.Incoming, LinkIn{Path: l.Path, Title: l.Title, Kind: string(l.Kind), Line: l.Line})
	}
	return out
}

// Output is an attachment as callers see it.
func (r AttachResult) Output() AddAttachmentOutput {
	return AddAttachmentOutput{RelativePath: r.RelativePath, MarkdownSyntax: r.MarkdownSyntax, Path: r.Attachment.Path, Size: r.Attachment.Size, MIMEType: r.Attachment.MIMEType}
}

// Output is a page's history as callers see it.
func (r RevisionsResult) Output() RevisionsOutput {
	out := RevisionsOutput{Path: r.Page.Path, CurrentRevision: r.Page.Revision, NextCursor: r.NextCursor, Revisions: []RevisionEntry{}}
	for _, rv := range r.Revisions {
		out.Revisions = append(out.Revisions, RevisionEntry{Revision: rv.Revision, Path: rv.Path, Size: rv.Size, Author: rv.Author, CreatedAt: rv.CreatedAt.Format(time.RFC3339)})
	}
	return out
}
