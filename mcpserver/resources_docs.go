package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// PageURIPrefix starts the URI of every page resource: atrium://pages/{path}.
const PageURIPrefix = "atrium://pages/"

// pageResource serves pages as resources, readable and subscribable: a
// subscriber is told when the page changes, from any surface (see watch).
func pageResource(d *docsRef) ResourceTemplate {
	return ResourceTemplate{
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
			r, err := d.get().ReadPage(ctx, pages.ReadRequest{Path: unescapeURIPath(path)})
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: r.Content}}}, nil
		},
	}
}

// unescapeURIPath undoes percent-escapes a client may have put in the path.
func unescapeURIPath(p string) string {
	if !strings.Contains(p, "%") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && i+2 < len(p) {
			if v, ok := unhex(p[i+1]); ok {
				if w, ok := unhex(p[i+2]); ok {
					b.WriteByte(v<<4 | w)
					i += 2
					continue
				}
			}
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// completePagePath completes the path of a page resource from its prefix.
func completePagePath(d *docsRef) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, bool, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, bool, error) {
		ref := req.Params.Ref
		if ref == nil || ref.Type != "ref/resource" || !strings.HasPrefix(ref.URI, PageURIPrefix) || req.Params.Argument.Name != "path" {
			return nil, false, nil
		}
		paths, total, err := d.get().CompletePaths(ctx, req.Params.Argument.Value, 100)
		if err != nil {
			return nil, true, err
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: paths, Total: total, HasMore: total > len(paths)}}, true, nil
	}
}
