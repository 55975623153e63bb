package mcpserver

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
)

// watch turns store events into resource notifications: a change made through
// any surface (another session, REST, the folder mirror, another process)
// reaches the subscribers of the workspace it happened in, and no other.
func (s *Server) watch(events <-chan atrium.Event) {
	for ev := range events {
		uris := resourceURIs(ev)
		if len(uris) == 0 {
			continue
		}
		s.mu.Lock()
		ms := s.servers[ev.WorkspaceID]
		s.mu.Unlock()
		if ms == nil {
			continue // nobody of that workspace is connected
		}
		for _, u := range uris {
			if err := ms.ResourceUpdated(s.ctx, &mcp.ResourceUpdatedNotificationParams{URI: u}); err != nil && s.ctx.Err() == nil {
				s.log.Debug("resource notification", "uri", u, "err", err)
			}
		}
	}
}

// resourceURIs are the resources an event changed: for a page, its URI as
// written and percent-escaped (clients subscribe with either); a move changes
// the old and the new.
func resourceURIs(ev atrium.Event) (out []string) {
	var p struct {
		Path    string `json:"path"`
		DocPath string `json:"doc_path"`
		From    string `json:"from"`
		Number  int64  `json:"number"`
		Kind    string `json:"kind"`
	}
	if json.Unmarshal(ev.Payload, &p) != nil {
		return nil
	}
	var prefixes []string
	switch {
	case strings.HasPrefix(ev.Kind, "task.") && p.Kind == "todo":
		return []string{TodosURI, TodoURIPrefix + tasks.TodoID(p.Number)}
	case strings.HasPrefix(ev.Kind, "desk."):
		return []string{ProgressURI}
	case strings.HasPrefix(ev.Kind, "presence."):
		return []string{SessionsURI}
	case strings.HasPrefix(ev.Kind, "page."):
		// A desk's plan or draft is also its resource.
		var desk []string
		for _, path := range []string{p.Path, p.From} {
			if d, ok := deskURI(path); ok {
				desk = append(desk, d)
			}
		}
		defer func() { out = append(out, desk...) }()
		// The page, and its threads: their anchors follow it.
		prefixes = []string{PageURIPrefix, AnnotationsURIPrefix}
	case strings.HasPrefix(ev.Kind, "annotation."), strings.HasPrefix(ev.Kind, "review."):
		// Threads on a page are part of the page, as its readers see it.
		p.Path = p.DocPath
		prefixes = []string{AnnotationsURIPrefix, PageURIPrefix}
	default:
		return nil
	}
	for _, path := range []string{p.Path, p.From} {
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

// deskURI is the resource a desk page is, if path is one.
func deskURI(path string) (string, bool) {
	parts := strings.Split(path, "/")
	if len(parts) != 3 || parts[0] != "Desks" {
		return "", false
	}
	switch parts[2] {
	case "Plan.md":
		return PlanURI, true
	case "Draft.md":
		return DraftURI, true
	}
	return "", false
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
