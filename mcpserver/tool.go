package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// A Tool is one MCP tool as data: its definition (with the schemas inferred from
// its input and output types), the role a caller needs, and how to add it to a
// server. Toolsets are lists of Tools; the registry filters them.
type Tool struct {
	Def     *mcp.Tool
	Toolset string
	Need    atrium.Role
	add     func(s *Server, ms *mcp.Server, ws int64)
}

// ReadOnly reports whether the tool changes nothing.
func (t *Tool) ReadOnly() bool { return t.Def.Annotations != nil && t.Def.Annotations.ReadOnlyHint }

// Handler is the typed body of a tool: the caller's Actor is in ctx, the
// arguments have been validated against In's schema. A returned *atrium.Error
// reaches the caller as {error, code}; any other error is logged and reported as
// internal.
type Handler[In, Out any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (Out, error)

// newTool builds a Tool from a definition and a typed handler. need is the
// least role that may call it; read-only tools need reader, others writer
// unless they say more.
func newTool[In, Out any](def *mcp.Tool, need atrium.Role, h Handler[In, Out]) *Tool {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", def.Name, err))
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", def.Name, err))
	}
	d := *def
	if d.InputSchema == nil {
		d.InputSchema = in
	}
	if d.OutputSchema == nil {
		d.OutputSchema = out
	}
	t := &Tool{Def: &d, Need: need}
	t.add = func(s *Server, ms *mcp.Server, ws int64) {
		mcp.AddTool(ms, t.Def, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, out Out, err error) {
			defer func() {
				if p := recover(); p != nil {
					s.log.Error("tool panicked", "tool", t.Def.Name, "panic", p, "stack", string(debug.Stack()))
					err = atrium.Errorf(atrium.EInternal, "internal error")
				}
			}()
			actor, err := s.actor(ctx, req, ws)
			if err != nil {
				return nil, out, err
			}
			if !actor.Role.Allows(t.Need) {
				return nil, out, atrium.Errorf(atrium.EPermission, "%s is %s in workspace %s; %s needs %s", actor.Principal.Handle, actor.Role, actor.Workspace.Name, t.Def.Name, t.Need)
			}
			out, err = h(atrium.NewContextWithActor(ctx, actor), req, in)
			if err != nil {
				return nil, out, s.callerError(t.Def.Name, actor, err)
			}
			return nil, out, nil
		})
	}
	return t
}

// callerError logs an internal error and replaces it with one safe to show.
func (s *Server) callerError(tool string, actor *atrium.Actor, err error) error {
	if atrium.ErrorCode(err) != atrium.EInternal {
		return err
	}
	s.log.Error("tool failed", "tool", tool, "actor", actor.String(), "err", err)
	return atrium.Errorf(atrium.EInternal, "internal error")
}

// ToolError is the structured content of a failed tool call.
type ToolError struct {
	Error   string         `json:"error"`
	Code    string         `json:"code"`
	Details map[string]any `json:"details,omitempty"`
}

// structuredErrors gives every failed tools/call result the structured
// {error, code} content of DESIGN.md. Errors from Atrium's handlers keep their
// code; the only other errors in a result are the SDK's own argument checks,
// which are the caller's mistakes: invalid_argument.
func structuredErrors(log *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			r, ok := res.(*mcp.CallToolResult)
			if err != nil || !ok || !r.IsError || r.StructuredContent != nil {
				return res, err
			}
			te := ToolError{Code: atrium.EInvalid}
			switch cause := r.GetError(); {
			case cause == nil:
				// A result a handler built itself; leave it as it is.
				return res, err
			case atrium.ErrorCode(cause) != atrium.EInternal:
				te = ToolError{Error: atrium.ErrorMessage(cause), Code: atrium.ErrorCode(cause), Details: atrium.ErrorDetails(cause)}
			case isAtriumError(cause):
				te = ToolError{Error: atrium.ErrorMessage(cause), Code: atrium.EInternal}
			default:
				te.Error = "invalid arguments: " + cause.Error()
			}
			text, jerr := json.Marshal(te)
			if jerr != nil {
				log.Error("marshal tool error", "err", jerr)
				return res, err
			}
			return &mcp.CallToolResult{IsError: true, StructuredContent: te, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}, nil
		}
	}
}

func isAtriumError(err error) bool {
	_, ok := err.(*atrium.Error)
	return ok
}
