package desktools

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/tasks"
)

// A desk's resources (todos, draft, plan, progress) are each subscriber's own
// desk: every subscriber of atrium://todos subscribes to the same URI, and
// only the owner of the desk that changed may hear of it. updates marks each
// desk update with its owner (deskMeta); deskOnly, on the way out, lets it
// through to that owner's sessions only, and takes the mark off.

// deskMeta carries, from updates to deskOnly, whose desk a resource update is
// about. It never reaches a client.
const deskMeta = "atrium.internal/desk"

// deskSubscribers remembers who opened each session that subscribes, so
// that deskOnly can tell whose desk is whose: the SDK keeps subscriptions
// by URI.
type deskSubscribers struct{ m sync.Map } // *mcp.ServerSession → handle

// noteSubscriber records, on the server of workspace ws, who subscribes.
func (d *desk) noteSubscriber(ws int64) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/subscribe" || method == "subscriptions/listen" {
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
					if a, err := d.r.s.Actor(ctx, req, ws); err == nil {
						if _, had := d.subs.m.Swap(ss, a.Principal.Handle); !had {
							go func() {
								_ = ss.Wait()
								d.subs.m.Delete(ss)
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
// only, without the mark updates put on it.
func (d *desk) deskOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		if method != "notifications/resources/updated" || !ok || p == nil {
			return next(ctx, method, req)
		}
		owner, marked := p.Meta[deskMeta].(string)
		if !marked {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if h, _ := d.subs.m.Load(ss); ss == nil || h != owner {
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

// ownedBy is the update of a desk's resource uri, for its owner only.
func ownedBy(uri, owner string) mcpserver.ResourceUpdate {
	return mcpserver.ResourceUpdate{URI: uri, Meta: mcp.Meta{deskMeta: owner}}
}

// updates are the desk resources an event changed: a todo (anyone's to read,
// like any task) and the desks it is on; a desk's progress; its plan or draft,
// which are pages; and who is connected.
func updates(ev atrium.Event) []mcpserver.ResourceUpdate {
	var p struct {
		Path     string `json:"path"`
		From     string `json:"from"`
		Number   int64  `json:"number"`
		Kind     string `json:"kind"`
		Desk     string `json:"desk"`
		FromDesk string `json:"from_desk"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil {
		return nil
	}
	var out []mcpserver.ResourceUpdate
	switch {
	case strings.HasPrefix(ev.Kind, "task.") && p.Kind == "todo":
		for _, d := range []string{p.Desk, p.FromDesk} {
			if d != "" {
				out = append(out, ownedBy(TodosURI, d))
			}
		}
		return append(out, mcpserver.ResourceUpdate{URI: tasks.TodoURI(p.Number)})
	case strings.HasPrefix(ev.Kind, "desk."):
		if p.Desk == "" {
			p.Desk = strings.TrimPrefix(ev.Subject, "@")
		}
		return []mcpserver.ResourceUpdate{ownedBy(ProgressURI, p.Desk)}
	case strings.HasPrefix(ev.Kind, "presence."):
		return []mcpserver.ResourceUpdate{{URI: SessionsURI}}
	case strings.HasPrefix(ev.Kind, "page."):
		for _, path := range []string{p.Path, p.From} {
			if uri, owner, ok := deskURI(path); ok {
				out = append(out, ownedBy(uri, owner))
			}
		}
	}
	return out
}

// deskURI is the resource a desk page is, and whose desk, if path is one.
func deskURI(path string) (uri, owner string, ok bool) {
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
