package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
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
	d := *def
	if d.InputSchema == nil {
		in, err := jsonschema.For[In](nil)
		if err != nil {
			panic(fmt.Sprintf("tool %s: input schema: %v", def.Name, err))
		}
		d.InputSchema = portable(in)
	}
	// The SDK checks each result against the schema it is given: the success
	// branch alone, which is all a handler's Out can be. Clients are told the
	// whole contract, error branch included (see advertiseErrors). A tool
	// whose output type is recursive brings its own schema.
	registered := d
	success, _ := d.OutputSchema.(*jsonschema.Schema)
	if success == nil {
		out, err := jsonschema.For[Out](nil)
		if err != nil {
			panic(fmt.Sprintf("tool %s: output schema: %v", def.Name, err))
		}
		success = portable(out)
	}
	// The SDK is given no output schema: it would decode every result back from
	// JSON to check it against the schema inferred from the very type it was
	// encoded from — for read_page, most of the call's cost. Clients still see
	// the schema (advertiseErrors lists Def), and tests check outputs against it.
	registered.OutputSchema = nil
	d.OutputSchema = withErrorBranch(success)
	t := &Tool{Def: &d, Need: need}
	t.add = func(s *Server, ms *mcp.Server, ws int64) {
		mcp.AddTool(ms, &registered, func(ctx context.Context, req *mcp.CallToolRequest, in In) (res *mcp.CallToolResult, result any, err error) {
			var out Out
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
			emptySlices(reflect.ValueOf(&out))
			return nil, out, nil
		})
	}
	return t
}

// newRawTool builds a Tool whose handler shapes the whole result itself (mixed
// content, images, embedded resources). def must carry an input schema. It gets
// the same caller checks and panic recovery as typed tools; a returned error
// becomes {error, code} like theirs.
func newRawTool(def *mcp.Tool, need atrium.Role, h func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)) *Tool {
	if def.InputSchema == nil {
		panic(fmt.Sprintf("tool %s: a raw tool needs an input schema", def.Name))
	}
	t := &Tool{Def: def, Need: need}
	t.add = func(s *Server, ms *mcp.Server, ws int64) {
		ms.AddTool(t.Def, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
			defer func() {
				if p := recover(); p != nil {
					s.log.Error("tool panicked", "tool", t.Def.Name, "panic", p, "stack", string(debug.Stack()))
					res, err = errorResult(atrium.Errorf(atrium.EInternal, "internal error")), nil
				}
			}()
			actor, err := s.actor(ctx, req, ws)
			if err == nil && !actor.Role.Allows(t.Need) {
				err = atrium.Errorf(atrium.EPermission, "%s is %s in workspace %s; %s needs %s", actor.Principal.Handle, actor.Role, actor.Workspace.Name, t.Def.Name, t.Need)
			}
			if err == nil {
				res, err = h(atrium.NewContextWithActor(ctx, actor), req)
			}
			if err != nil {
				return errorResult(s.callerError(t.Def.Name, actor, err)), nil
			}
			return res, nil
		})
	}
	return t
}

// errorResult is the tool result of a failed call: {error, code} as structured
// content and as its JSON text.
func errorResult(err error) *mcp.CallToolResult {
	te := ToolError{Error: atrium.ErrorMessage(err), Code: atrium.ErrorCode(err), Details: atrium.ErrorDetails(err)}
	text, _ := json.Marshal(te)
	return &mcp.CallToolResult{IsError: true, StructuredContent: te, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// errorSchema describes the structured content of a failed call.
var errorSchema = func() *jsonschema.Schema {
	s, err := jsonschema.For[ToolError](nil)
	if err != nil {
		panic(err)
	}
	portable(s)
	s.Description = "A failed call (isError is true): what went wrong, and a code: invalid_argument, not_found, conflict, permission_denied, unauthenticated, too_large, unavailable or internal."
	return s
}()

// withErrorBranch makes an output schema admit the {error, code} of a failed
// call. Clients validate structured content against the output schema even
// on error results (the TypeScript SDK does), so a schema that only described
// success would turn every tool error into a protocol error the model never
// sees.
func withErrorBranch(out *jsonschema.Schema) *jsonschema.Schema {
	// "#/$defs/…" references resolve from the root: the definitions move there.
	success := *out
	success.Defs = nil
	return &jsonschema.Schema{Type: "object", Defs: out.Defs, AnyOf: []*jsonschema.Schema{&success, errorSchema}}
}

// advertiseErrors lists each tool with its whole output schema — success or
// {error, code} — where the SDK holds the success branch it validates against.
func (s *Server) advertiseErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok {
			return res, err
		}
		out := *list
		out.Tools = make([]*mcp.Tool, len(list.Tools))
		for i, t := range list.Tools {
			if def := s.listed()[t.Name]; def != nil {
				t = def
			}
			out.Tools[i] = t
		}
		return &out, nil
	}
}

// encodeDefs returns the definitions of the tools with their schemas
// encoded, as tools/list sends them. jsonschema encodes a schema slowly —
// 8 ms for the whole list, on every tools/list — and the schemas never change.
func (s *Server) encodeDefs() map[string]*mcp.Tool {
	defs := make(map[string]*mcp.Tool, len(s.tools))
	for _, t := range s.tools {
		d := *t.Def
		for _, sch := range []*any{&d.InputSchema, &d.OutputSchema} {
			if *sch == nil {
				continue
			}
			b, err := json.Marshal(*sch)
			if err != nil { // tests encode every schema: this is a bug
				s.log.Error("encode tool schema", "tool", d.Name, "err", err)
				continue
			}
			*sch = json.RawMessage(b)
		}
		defs[d.Name] = &d
	}
	return defs
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
func structuredErrors() mcp.Middleware {
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
			return errorResult(&atrium.Error{Code: te.Code, Message: te.Error, Details: te.Details}), nil
		}
	}
}

func isAtriumError(err error) bool {
	_, ok := err.(*atrium.Error)
	return ok
}
