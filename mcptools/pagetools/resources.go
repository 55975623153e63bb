package pagetools

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/pages"
)

// PageURIPrefix starts the URI of every page resource: atrium://pages/{path}.
const PageURIPrefix = "atrium://pages/"

// pageResource serves pages as resources, readable and subscribable: a
// subscriber is told when the page changes, from any surface (see watch).
func pageResource(d *pagesRef) mcpserver.ResourceTemplate {
	return mcpserver.ResourceTemplate{
		Def: &mcp.ResourceTemplate{
			Name:        "page",
			Title:       "Page",
			Description: "A page of the knowledge base, by path (atrium://pages/Projects/Alpha.md). Subscribe to be told when it changes.",
			MIMEType:    "text/markdown",
			URITemplate: PageURIPrefix + "{+path}",
		},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			path, ok := strings.CutPrefix(req.Params.URI, PageURIPrefix)
			if !ok {
				return nil, atrium.Errorf(atrium.ENotFound, "not a page URI: %s", req.Params.URI)
			}
			r, err := d.get().ReadPage(ctx, pages.ReadRequest{Path: mcpserver.UnescapePath(path)})
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: r.Content}}}, nil
		},
	}
}

// completePagePath completes the path of a page resource from its prefix.
func completePagePath(d *pagesRef) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, bool, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, bool, error) {
		ref := req.Params.Ref
		if !completesPagePath(ref, req.Params.Argument.Name) {
			return nil, false, nil
		}
		paths, total, err := d.get().CompletePaths(ctx, req.Params.Argument.Value, 100)
		if err != nil {
			return nil, true, err
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: paths, Total: total, HasMore: total > len(paths)}}, true, nil
	}
}

// completesPagePath reports whether a completion asks for a page path: the
// path of the page template, or a prompt's argument that names a page
// (doc_path, the name every prompt of Atrium gives a page, as the tools do).
func completesPagePath(ref *mcp.CompleteReference, arg string) bool {
	switch {
	case ref == nil:
		return false
	case ref.Type == "ref/resource":
		return strings.HasPrefix(ref.URI, PageURIPrefix) && arg == "path"
	case ref.Type == "ref/prompt":
		return arg == "doc_path"
	}
	return false
}

// maxListedPages bounds the pages resources/list names.
const maxListedPages = 100

// listPageResources names the first pages of the workspace (the root and one
// level below, in path order) as resources, so that a client that reads only
// resources/list, not templates, finds pages to open.
func listPageResources(d *pagesRef) func(ctx context.Context) ([]*mcp.Resource, error) {
	return func(ctx context.Context) ([]*mcp.Resource, error) {
		r, err := d.get().ListPages(ctx, pages.ListRequest{Depth: 2, IncludePrivate: true, Limit: maxListedPages})
		if err != nil {
			return nil, err
		}
		var out []*mcp.Resource
		for _, e := range r.Entries {
			if e.Folder {
				continue
			}
			out = append(out, &mcp.Resource{URI: PageURI(e.Path), Name: e.Path, Title: e.Title, MIMEType: "text/markdown"})
		}
		return out, nil
	}
}

// notFoundHint hints at percent-encoding when a page URI holds characters
// that a URI must encode (a client may have cut the path at # or ?).
func notFoundHint(uri string) string {
	path, ok := strings.CutPrefix(uri, PageURIPrefix)
	if !ok || !mcpserver.LooksUnencoded(path) {
		return ""
	}
	return "page URIs percent-encode each path segment: " + PageURI(mcpserver.UnescapePath(path))
}

// PageURI is the resource URI of a page.
func PageURI(path string) string { return PageURIPrefix + mcpserver.EscapePath(path) }

// updates are the page resources an event changed: the page (where it was
// and where it is, after a move), and the page a thread is on — threads are
// part of the page, as its readers see it.
func updates(ev atrium.Event) []mcpserver.ResourceUpdate {
	path, docPath, from := mcpserver.EventPaths(ev)
	switch {
	case strings.HasPrefix(ev.Kind, "page."):
		return mcpserver.PathUpdates(PageURIPrefix, path, from)
	case strings.HasPrefix(ev.Kind, "annotation."), strings.HasPrefix(ev.Kind, "review."):
		return mcpserver.PathUpdates(PageURIPrefix, docPath, from)
	}
	return nil
}
