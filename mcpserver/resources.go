package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
)

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
			a, err := s.Actor(ctx, req, ws)
			if err != nil {
				return nil, RPCError(err)
			}
			ctx = atrium.NewContextWithActor(ctx, a)
			out := *list
			for _, ts := range s.toolsets {
				if ts.ListResources == nil {
					continue
				}
				more, err := ts.ListResources(ctx)
				if err != nil {
					return nil, RPCError(s.callerError("resources/list", a, err))
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
		return nil, s.resourceNotFound(rr, atrium.Errorf(atrium.ENotFound, "nothing at %s", rr.Params.URI))
	}
}

// resourceNotFound is the spec's resource-not-found error for the version
// the session negotiated: -32002 until 2025-11-25, Invalid Params (-32602)
// from 2026-07-28 (SEP-2164), with the URI in its data either way. Its message
// says why, with a toolset's hint at what the caller likely meant.
func (s *Server) resourceNotFound(req *mcp.ReadResourceRequest, err error) error {
	code := int64(jsonrpc.CodeInvalidParams)
	if v := req.ProtocolVersion(); v != "" && v < "2026-07-28" {
		code = -32002
	}
	msg := "Resource not found: " + atrium.ErrorMessage(err)
	for _, ts := range s.toolsets {
		if ts.NotFoundHint == nil {
			continue
		}
		if hint := ts.NotFoundHint(req.Params.URI); hint != "" {
			msg += " (" + hint + ")"
			break
		}
	}
	data, _ := json.Marshal(map[string]string{"uri": req.Params.URI})
	return &jsonrpc.Error{Code: code, Message: msg, Data: data}
}

// watch turns store events into resource notifications: a change made through
// any surface (another session, REST, the browser, the folder mirror,
// another process) reaches the subscribers of the workspace it happened in,
// and no other. Which resources an event changed, each toolset says
// (Toolset.Updates).
func (s *Server) watch(events <-chan atrium.Event) {
	for ev := range events {
		if activity.ChangesAccess(ev.Kind) {
			s.mu.Lock()
			hooks := slices.Clone(s.onAccess)
			s.mu.Unlock()
			for _, fn := range hooks {
				fn()
			}
		}
		var updates []ResourceUpdate
		for _, ts := range s.toolsets {
			if ts.Updates != nil {
				updates = append(updates, ts.Updates(ev)...)
			}
		}
		if len(updates) == 0 {
			continue
		}
		s.mu.Lock()
		ms := s.servers[ev.WorkspaceID]
		s.mu.Unlock()
		if ms == nil {
			continue // nobody of that workspace is connected
		}
		for _, u := range updates {
			if err := ms.ResourceUpdated(s.ctx, &mcp.ResourceUpdatedNotificationParams{URI: u.URI, Meta: u.Meta}); err != nil && s.ctx.Err() == nil {
				s.log.Debug("resource notification", "uri", u.URI, "err", err)
			}
		}
	}
}

// PathUpdates are the updates of the resources of paths under prefix, by
// every URI clients may subscribe to them with: as written, and
// percent-escaped where that differs.
func PathUpdates(prefix string, paths ...string) []ResourceUpdate {
	var out []ResourceUpdate
	for _, p := range paths {
		if p == "" {
			continue
		}
		raw, esc := prefix+p, prefix+EscapePath(p)
		out = append(out, ResourceUpdate{URI: raw})
		if esc != raw {
			out = append(out, ResourceUpdate{URI: esc})
		}
	}
	return out
}

// EventPaths reads the paths an event is about from its payload: the page
// (path), the page a thread is on (doc_path), and where a page moved from.
func EventPaths(ev atrium.Event) (path, docPath, from string) {
	var p struct {
		Path    string `json:"path"`
		DocPath string `json:"doc_path"`
		From    string `json:"from"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil {
		return "", "", ""
	}
	return p.Path, p.DocPath, p.From
}

// EscapePath percent-escapes each segment of a page path for a URI.
func EscapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// UnescapePath undoes percent-escapes a client may have put in the path.
func UnescapePath(p string) string {
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

// LooksUnencoded reports a URI path with characters a URI must
// percent-encode: spaces, non-ASCII, or a % that starts no escape.
func LooksUnencoded(p string) bool {
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
