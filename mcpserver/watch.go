package mcpserver

import (
	"context"
	"encoding/json"
	"maps"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
)

// watch turns store events into resource notifications: a change made through
// any surface (another session, REST, the browser, the folder mirror,
// another process) reaches the subscribers of the workspace it happened in,
// and no other. A desk's resources (todos, draft, plan, progress) are each
// subscriber's own desk: only the owner of the desk that changed hears of it.
func (s *Server) watch(events <-chan atrium.Event) {
	for ev := range events {
		updates := resourceUpdates(ev)
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
			params := &mcp.ResourceUpdatedNotificationParams{URI: u.uri}
			if u.desk != "" {
				params.Meta = mcp.Meta{deskMeta: u.desk} // for deskOnly, which takes it off
			}
			if err := ms.ResourceUpdated(s.ctx, params); err != nil && s.ctx.Err() == nil {
				s.log.Debug("resource notification", "uri", u.uri, "err", err)
			}
		}
	}
}

// deskMeta carries, from watch to deskOnly, whose desk a resource update is
// about. It never reaches a client.
const deskMeta = "atrium.internal/desk"

// deskSubscribers remembers who opened each session that subscribes, so
// that deskOnly can tell whose desk is whose: the SDK keeps subscriptions
// by URI, and every subscriber of atrium://todos subscribes to the same one.
type deskSubscribers struct{ m sync.Map } // *mcp.ServerSession → handle

// noteSubscriber records, on the server of workspace ws, who subscribes.
func (s *Server) noteSubscriber(ws int64) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/subscribe" || method == "subscriptions/listen" {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
					if a, err := s.actor(ctx, req, ws); err == nil {
						if _, had := s.subs.m.Swap(ss, a.Principal.Handle); !had {
							go func() {
								_ = ss.Wait()
								s.subs.m.Delete(ss)
							}()
						}
					}
				}
			}
			return next(ctx, method, req)
		}
	}
}

// deskOnly lets a desk's resource update through to the owner of that desk
// only, without the mark watch put on it.
func (s *Server) deskOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		if method != "notifications/resources/updated" || !ok || p == nil {
			return next(ctx, method, req)
		}
		desk, marked := p.Meta[deskMeta].(string)
		if !marked {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if h, _ := s.subs.m.Load(ss); ss == nil || h != desk {
			return nil, nil // another's desk
		}
		// A copy: the SDK sends the same params to every legacy session.
		out := &mcp.ResourceUpdatedNotificationParams{URI: p.URI}
		if len(p.Meta) > 1 {
			out.Meta = maps.Clone(p.Meta)
			delete(out.Meta, deskMeta)
		}
		return next(ctx, method, &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{Session: ss, Params: out})
	}
}

// A resourceUpdate is a resource an event changed; desk, for a desk's
// resources, is whose desk.
type resourceUpdate struct{ uri, desk string }

// resourceUpdates are the resources an event changed: for a page, its URI as
// written and percent-escaped (clients subscribe with either); a move changes
// the old and the new.
func resourceUpdates(ev atrium.Event) []resourceUpdate {
	var p struct {
		Path     string `json:"path"`
		DocPath  string `json:"doc_path"`
		From     string `json:"from"`
		Number   int64  `json:"number"`
		Kind     string `json:"kind"`
		Desk     string `json:"desk"`
		FromDesk string `json:"from_desk"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil {
		return nil
	}
	var out []resourceUpdate
	switch {
	case strings.HasPrefix(ev.Kind, "task.") && p.Kind == "todo":
		for _, d := range []string{p.Desk, p.FromDesk} {
			if d != "" {
				out = append(out, resourceUpdate{TodosURI, d})
			}
		}
		// One todo is anyone's to read, like any task.
		return append(out, resourceUpdate{uri: tasks.TodoURI(p.Number)})
	case strings.HasPrefix(ev.Kind, "desk."):
		if p.Desk == "" {
			p.Desk = strings.TrimPrefix(ev.Subject, "@")
		}
		return []resourceUpdate{{ProgressURI, p.Desk}}
	case strings.HasPrefix(ev.Kind, "presence."):
		return []resourceUpdate{{uri: SessionsURI}}
	}
	for _, u := range resourceURIs(ev.Kind, p.Path, p.DocPath, p.From) {
		out = append(out, resourceUpdate{uri: u})
	}
	if strings.HasPrefix(ev.Kind, "page.") {
		// A desk's plan or draft is also its owner's resource.
		for _, path := range []string{p.Path, p.From} {
			if uri, handle, ok := deskURI(path); ok {
				out = append(out, resourceUpdate{uri, handle})
			}
		}
	}
	return out
}

// resourceURIs are the resources of pages and their threads that an event
// of kind changed.
func resourceURIs(kind, path, docPath, from string) (out []string) {
	var prefixes []string
	switch {
	case strings.HasPrefix(kind, "page."):
		// The page, and its threads: their anchors follow it.
		prefixes = []string{PageURIPrefix, AnnotationsURIPrefix}
	case strings.HasPrefix(kind, "annotation."), strings.HasPrefix(kind, "review."):
		// Threads on a page are part of the page, as its readers see it.
		path = docPath
		prefixes = []string{AnnotationsURIPrefix, PageURIPrefix}
	default:
		return nil
	}
	for _, path := range []string{path, from} {
		if path == "" {
			continue
		}
		for _, prefix := range prefixes {
			raw, esc := prefix+path, prefix+escapePath(path)
			out = append(out, raw)
			if esc != raw {
				out = append(out, esc)
			}
		}
	}
	return out
}

// deskURI is the resource a desk page is, and whose desk, if path is one.
func deskURI(path string) (uri, handle string, ok bool) {
	parts := strings.Split(path, "/")
	if len(parts) != 3 || parts[0] != "Desks" {
		return "", "", false
	}
	switch parts[2] {
	case "Plan.md":
		return PlanURI, parts[1], true
	case "Draft.md":
		return DraftURI, parts[1], true
	}
	return "", "", false
}

// escapePath percent-escapes each segment of a page path for a URI.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// PageURI is the resource URI of a page.
func PageURI(path string) string { return PageURIPrefix + escapePath(path) }
