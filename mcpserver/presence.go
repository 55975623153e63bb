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
	mu    sync.Mutex
	last  map[string]time.Time
	local string // the stdio session's key, once recorded
	// watched are the HTTP sessions whose end is awaited, to record it.
	watched sync.Map // *mcp.ServerSession → struct{}
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
	actx := atrium.NewContextWithActor(context.WithoutCancel(ctx), a)
	if err := s.cfg.Tasks.Seen(actx, key, transport, client); err != nil {
		s.log.Debug("record presence", "err", err)
	}
	// A session that closes leaves at once (one that vanishes leaves when
	// expirePresence finds it silent): the stdio session when the server
	// closes, an HTTP session when it ends. Stateless requests have no end.
	switch ss, _ := req.GetSession().(*mcp.ServerSession); {
	case transport == "stdio":
		s.seen.mu.Lock()
		s.seen.local = key
		s.seen.mu.Unlock()
	case ss != nil && ss.ID() != "":
		if _, had := s.seen.watched.LoadOrStore(ss, struct{}{}); !had {
			go func() {
				_ = ss.Wait()
				s.seen.watched.Delete(ss)
				s.leave(actx, key, transport)
			}()
		}
	}
}

// leave records that session key closed.
func (s *Server) leave(ctx context.Context, key, transport string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.cfg.Tasks.Left(ctx, key, transport); err != nil {
		s.log.Debug("record a session's end", "err", err)
	}
}

// leaveLocal records that the stdio session ended, if it was recorded.
func (s *Server) leaveLocal() {
	s.seen.mu.Lock()
	key := s.seen.local
	s.seen.local = ""
	s.seen.mu.Unlock()
	if key != "" && s.cfg.Tasks != nil && s.cfg.Actor != nil {
		s.leave(atrium.NewContextWithActor(context.Background(), s.cfg.Actor), key, "stdio")
	}
}

// expirePresence, now and then, ends the sessions nobody has seen for the
// presence window, so that atrium://sessions subscribers hear that a
// process killed without a goodbye is gone.
func (s *Server) expirePresence() {
	t := time.NewTicker(presenceEvery)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			if _, err := s.cfg.Tasks.ExpirePresence(s.ctx); err != nil && s.ctx.Err() == nil {
				s.log.Debug("expire presence", "err", err)
			}
		}
	}
}

var hostname, _ = os.Hostname()

// sessionsResource lists who is connected to the workspace now.
func sessionsResource(r *tasksRef) Resource {
	return Resource{
		Def: &mcp.Resource{URI: SessionsURI, Name: "sessions", Title: "Sessions", MIMEType: deskMIMEType,
			Description: "Who is connected now, over what, since when. Subscribe to be told when someone connects or leaves."},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			sessions, err := r.get().Sessions(ctx)
			if err != nil {
				return nil, err
			}
			text, err := jsonText(sessions)
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: SessionsURI, MIMEType: deskMIMEType, Text: text}}}, nil
		},
	}
}
