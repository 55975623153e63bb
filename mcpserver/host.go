package mcpserver

import (
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/services"
)

// What a toolset may ask of the registry it is built for.

// Services are the services the toolsets' calls go through. Nil until the
// store is open (see Config.Open): calls wait for it, so a tool's handler
// always has them; a server built to list its tools never does.
func (s *Server) Services() *services.Services { return s.cfg.Services }

// LocalActor is the fixed caller of a local server, nil on HTTP.
func (s *Server) LocalActor() *atrium.Actor { return s.cfg.Actor }

// LocalFiles is the folder local callers may attach files from; empty on HTTP.
func (s *Server) LocalFiles() string { return s.cfg.LocalFiles }

// Where names the store of a local server, nil on HTTP (whoami says it).
func (s *Server) Where() *services.Where {
	if !s.cfg.Local || s.cfg.Services == nil {
		return nil
	}
	return &s.cfg.Services.Where
}

// Logger is where toolsets log.
func (s *Server) Logger() *slog.Logger { return s.log }

// ReadOnly reports whether the server serves only read-only tools.
func (s *Server) ReadOnly() bool { return s.cfg.ReadOnly }

// HasTool reports whether name is one of the registry's own tools.
func (s *Server) HasTool(name string) bool { return s.toolNames[name] }

// EachServer calls fn with every MCP server built so far and its workspace
// (LocalWorkspace for the local server).
func (s *Server) EachServer(fn func(ms *mcp.Server, ws int64)) {
	type built struct {
		ms *mcp.Server
		ws int64
	}
	s.mu.Lock()
	all := make([]built, 0, len(s.servers)+1)
	for ws, ms := range s.servers {
		if ms != s.local {
			all = append(all, built{ms, ws})
		}
	}
	if s.local != nil {
		all = append(all, built{s.local, LocalWorkspace})
	}
	s.mu.Unlock()
	for _, b := range all {
		fn(b.ms, b.ws)
	}
}

// ErrorResult is the tool result of a failed call: {error, code} as
// structured content and as its JSON text.
func ErrorResult(err error) *mcp.CallToolResult { return errorResult(err) }

// JSONText is v as JSON text, for a resource's contents.
func JSONText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// Reads is the annotation set of a tool that only reads Atrium's own data.
func Reads(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)}
}

// Writes is the annotation set of a tool that changes Atrium's own data.
func Writes(title string, idempotent, destructive bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: false, IdempotentHint: idempotent, DestructiveHint: new(destructive), OpenWorldHint: new(false)}
}

// Opening reports, without waiting, whether the server is still opening its
// store or could not: what needs the store must not be done yet.
func (s *Server) Opening() bool {
	select {
	case <-s.opened:
		return s.openErr != nil
	default:
		return true
	}
}
