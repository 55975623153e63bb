package desktools

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
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
func (d *desk) presence(ws int64) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/call", "resources/read", "resources/subscribe", "subscriptions/listen", "prompts/get":
				d.notePresence(ctx, req, ws)
			}
			return next(ctx, method, req)
		}
	}
}

func (d *desk) notePresence(ctx context.Context, req mcp.Request, ws int64) {
	s := d.r.s
	if s.Opened(ctx) != nil || s.Services() == nil {
		return
	}
	a, err := s.Actor(ctx, req, ws)
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
	case a == s.LocalActor():
		transport, key = "stdio", fmt.Sprintf("stdio:%s:%d", hostname, os.Getpid())
	case key == "":
		key = "http:" + a.Principal.Handle // stateless requests: one row per caller
	default:
		key = "http:" + key
	}
	now := time.Now()
	d.seen.mu.Lock()
	if d.seen.last == nil {
		d.seen.last = map[string]time.Time{}
	}
	if now.Sub(d.seen.last[key]) < presenceEvery {
		d.seen.mu.Unlock()
		return
	}
	d.seen.last[key] = now
	// Every HTTP session adds a key: forget those whose throttle has
	// passed, so that a long-running server does not keep one per session
	// it ever had.
	if len(d.seen.last) > 256 {
		for k, t := range d.seen.last {
			if now.Sub(t) >= presenceEvery {
				delete(d.seen.last, k)
			}
		}
	}
	d.seen.mu.Unlock()
	actx := atrium.NewContextWithActor(context.WithoutCancel(ctx), a)
	if err := d.r.get().Seen(actx, key, transport, client); err != nil {
		s.Logger().Debug("record presence", "err", err)
	}
	// A session that closes leaves at once (one that vanishes leaves when
	// expirePresence finds it silent): the stdio session when the server
	// closes, an HTTP session when it ends. Stateless requests have no end.
	switch ss, _ := req.GetSession().(*mcp.ServerSession); {
	case transport == "stdio":
		d.seen.mu.Lock()
		d.seen.local = key
		d.seen.mu.Unlock()
	case ss != nil && ss.ID() != "":
		if _, had := d.seen.watched.LoadOrStore(ss, struct{}{}); !had {
			go func() {
				_ = ss.Wait()
				d.seen.watched.Delete(ss)
				d.leave(actx, key, transport)
			}()
		}
	}
}

// leave records that session key closed.
func (d *desk) leave(ctx context.Context, key, transport string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := d.r.get().Left(ctx, key, transport); err != nil {
		d.r.s.Logger().Debug("record a session's end", "err", err)
	}
}

// leaveLocal records that the stdio session ended, if it was recorded.
func (d *desk) leaveLocal() {
	d.seen.mu.Lock()
	key := d.seen.local
	d.seen.local = ""
	d.seen.mu.Unlock()
	if s := d.r.s; key != "" && s.Services() != nil && s.LocalActor() != nil {
		d.leave(atrium.NewContextWithActor(context.Background(), s.LocalActor()), key, "stdio")
	}
}

// expirePresence, now and then, ends the sessions nobody has seen for the
// presence window, so that atrium://sessions subscribers hear that a
// process killed without a goodbye is gone.
func (d *desk) expirePresence(ctx context.Context) {
	t := time.NewTicker(presenceEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := d.r.get().ExpirePresence(ctx); err != nil && ctx.Err() == nil {
				d.r.s.Logger().Debug("expire presence", "err", err)
			}
		}
	}
}

var hostname, _ = os.Hostname()

// sessionsResource lists who is connected to the workspace now.
func sessionsResource(r *tasksRef) mcpserver.Resource {
	return mcpserver.Resource{
		Def: &mcp.Resource{URI: SessionsURI, Name: "sessions", Title: "Sessions", MIMEType: deskMIMEType,
			Description: "Who is connected now, over what, since when. Subscribe to be told when someone connects or leaves."},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			sessions, err := r.get().Sessions(ctx)
			if err != nil {
				return nil, err
			}
			text, err := mcpserver.JSONText(sessions)
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: SessionsURI, MIMEType: deskMIMEType, Text: text}}}, nil
		},
	}
}
