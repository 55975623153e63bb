package mcpserver

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// SessionsURI is who is connected now (001's sessions resource).
const SessionsURI = "atrium://sessions"

// presenceEvery is how often an active session's presence is written: often
// enough that a live session never looks gone (tasks.PresenceWindow), rarely
// enough to cost nothing.
const presenceEvery = 30 * time.Second

// presenceSeen remembers when each session's presence was last written.
type presenceSeen struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// presence records, for atrium://sessions, that the caller's session is
// active. It never fails a request: a presence that cannot be written is
// logged.
func (s *Server) presence(ws int64) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call", "resources/read", "resources/subscribe", "subscriptions/listen", "prompts/get":
				s.notePresence(ctx, req, ws)
			}
			return next(ctx, method, req)
		}
	}
}

func (s *Server) notePresence(ctx context.Context, req mcp.Request, ws int64) {
	if s.cfg.Tasks == nil || s.Opened(ctx) != nil {
		return
	}
	a, err := s.actor(ctx, req, ws)
	if err != nil || a.Role == "" {
		return
	}
	transport, key, client := "http", "", ""
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		key = ss.ID()
		if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
			client = p.ClientInfo.Name + " " + p.ClientInfo.Version
		}
	}
	switch {
	case a == s.cfg.Actor:
		transport, key = "stdio", fmt.Sprintf("stdio:%s:%d", hostname, os.Getpid())
	case key == "":
		key = "http:" + a.Principal.Handle // stateless requests: one row per caller
	default:
		key = "http:" + key
	}
	now := time.Now()
	s.seen.mu.Lock()
	if s.seen.last == nil {
		s.seen.last = map[string]time.Time{}
	}
	if now.Sub(s.seen.last[key]) < presenceEvery {
		s.seen.mu.Unlock()
		return
	}
	s.seen.last[key] = now
	// Every HTTP session adds a key: forget those whose throttle has
	// passed, so that a long-running server does not keep one per session
	// it ever had.
	if len(s.seen.last) > 256 {
		for k, t := range s.seen.last {
			if now.Sub(t) >= presenceEvery {
				delete(s.seen.last, k)
			}
		}
	}
	s.seen.mu.Unlock()
	if err := s.cfg.Tasks.Seen(atrium.NewContextWithActor(context.WithoutCancel(ctx), a), key, transport, client); err != nil {
		s.log.Debug("record presence", "err", err)
	}
}

var hostname, _ = os.Hostname()

// sessionsResource lists who is connected to the workspace now.
func sessionsResource(r *tasksRef) Resource {
	return Resource{
		Def: &mcp.Resource{URI: SessionsURI, Name: "sessions", Title: "Sessions", MIMEType: deskMIMEType,
			Description: "Who is connected now, over what, since when. Subscribe to be told when someone connects."},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			sessions, err := r.get().Sessions(ctx)
			if err != nil {
				return nil, err
			}
			text, err := jsonText(map[string]any{"sessions": sessions})
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: SessionsURI, MIMEType: deskMIMEType, Text: text}}}, nil
		},
	}
}
