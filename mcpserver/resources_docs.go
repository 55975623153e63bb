package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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

// maxListedPages bounds the pages resources/list names.
const maxListedPages = 100

// listPageResources names the first pages of the workspace (the root and one
// level below, in path order) as resources, so that a client that reads only
// resources/list, not templates, finds pages to open.
func listPageResources(d *docsRef) func(ctx context.Context) ([]*mcp.Resource, error) {
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

// listResources adds the toolsets' listed resources of the caller's
// workspace to the first page of resources/list. The SDK lists only the
// resources registered with it, the same for every caller; pages differ by
// workspace and caller. A server whose store is not open yet lists what it
// has rather than keep the client waiting.
func (s *Server) listResources(ws int64) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			list, ok := res.(*mcp.ListResourcesResult)
			if err != nil || !ok {
				return res, err
			}
			if p, _ := req.GetParams().(*mcp.ListResourcesParams); p != nil && p.Cursor != "" {
				return res, nil
			}
			select {
			case <-s.opened:
			default:
				return res, nil
			}
			if s.openErr != nil {
				return res, nil
			}
			a, err := s.actor(ctx, req, ws)
			if err != nil {
				return nil, rpcError(err)
			}
			ctx = atrium.NewContextWithActor(ctx, a)
			out := *list
			for _, ts := range s.toolsets {
				if ts.ListResources == nil {
					continue
				}
				more, err := ts.ListResources(ctx)
				if err != nil {
					return nil, rpcError(s.callerError("resources/list", a, err))
				}
				out.Resources = append(out.Resources, more...)
			}
			return &out, nil
		}
	}
}

// readResources gives resources/read's not-found errors the spec's code for
// the session's version, the SDK's own included (a URI no template matches,
// such as one with an unencoded space, never reaches a handler).
func (s *Server) readResources(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		rr, ok := req.(*mcp.ReadResourceRequest)
		var rpc *jsonrpc.Error
		if !ok || !errors.As(err, &rpc) || !strings.HasPrefix(rpc.Message, "Resource not found") || rr.Params == nil {
			return res, err
		}
		if strings.HasPrefix(rpc.Message, "Resource not found: ") {
			return res, err // ours (resourceNotFound)
		}
		return nil, resourceNotFound(rr, atrium.Errorf(atrium.ENotFound, "nothing at %s", rr.Params.URI))
	}
}

// resourceNotFound is the spec's resource-not-found error for the version
// the session negotiated: -32002 until 2025-11-25, Invalid Params (-32602)
// from 2026-07-28 (SEP-2164), with the URI in its data either way. Its message
// says why, and hints at percent-encoding when the URI holds characters that
// a URI must encode (a client may have cut the path at # or ?).
func resourceNotFound(req *mcp.ReadResourceRequest, err error) error {
	code := int64(jsonrpc.CodeInvalidParams)
	if v := req.ProtocolVersion(); v != "" && v < "2026-07-28" {
		code = -32002
	}
	msg := "Resource not found: " + atrium.ErrorMessage(err)
	if path, ok := strings.CutPrefix(req.Params.URI, PageURIPrefix); ok && looksUnencoded(path) {
		msg += fmt.Sprintf(" (page URIs percent-encode each path segment: %s)", PageURI(unescapeURIPath(path)))
	}
	data, _ := json.Marshal(map[string]string{"uri": req.Params.URI})
	return &jsonrpc.Error{Code: code, Message: msg, Data: data}
}

// looksUnencoded reports a URI path with characters a URI must
// percent-encode: spaces, non-ASCII, or a % that starts no escape.
func looksUnencoded(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\\' || c == '^' || c == '`' || c == '{' || c == '|' || c == '}':
			return true
		case c == '%':
			if i+2 >= len(p) {
				return true
			}
			if _, ok := unhex(p[i+1]); !ok {
				return true
			}
			if _, ok := unhex(p[i+2]); !ok {
				return true
			}
		}
	}
	return false
}
