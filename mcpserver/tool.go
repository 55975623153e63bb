package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/internal/jsonerr"
)

// A Tool is one MCP tool as data: its definition (with the schemas inferred from
// its input and output types), the role a caller needs, and how to add it to a
// server. Toolsets are lists of Tools; the registry filters them.
//
// Inferring and encoding the schemas of every tool takes longer than the rest
// of a cold start, so nothing on the way to the first tools/list does it:
// tools/list sends the definitions stored in defs/ (kept equal to the inferred
// ones by TestToolDefinitionsGolden), and a tool's input schema is resolved
// for validation on its first call.
type Tool struct {
	Toolset string
	Need    atrium.Role
	spec    *mcp.Tool // as declared: schemas only where given by hand
	def     func() *mcp.Tool
	add     func(s *Server, ms *mcp.Server, ws int64)
	aliases map[string]string // other names of parameters → their names (see WithAliases)
}

// WithAliases lets t's callers name top-level parameters as other designs'
// agents write them (parentPath for parent_path): aliases maps each other
// name to the parameter's own. Aliases are not listed in the schema, so they
// cost no tokens; a call that gives a parameter under both names, with
// different values, is refused. Declare them when the tool is built, before
// it serves.
func (t *Tool) WithAliases(aliases map[string]string) *Tool {
	if t.aliases == nil {
		t.aliases = map[string]string{}
	}
	maps.Copy(t.aliases, aliases)
	return t
}

// Name is the tool's name.
func (t *Tool) Name() string { return t.spec.Name }

// Def is the tool's whole definition, schemas included, as tools/list sends it.
func (t *Tool) Def() *mcp.Tool { return t.def() }

// ReadOnly reports whether the tool changes nothing.
func (t *Tool) ReadOnly() bool { return t.spec.Annotations != nil && t.spec.Annotations.ReadOnlyHint }

// Handler is the typed body of a tool: the caller's Actor is in ctx, the
// arguments have been validated against In's schema. A returned *atrium.Error
// reaches the caller as {error, code}; any other error is logged and reported as
// internal.
type Handler[In, Out any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (Out, error)

// NewTool builds a typed tool from a definition and a handler: In's schema is
// inferred and enforced, Out becomes the structured result, a returned
// *atrium.Error reaches the caller as {error, code}. need is the least role
// that may call it; read-only tools need reader, others writer unless they
// say more.
//
// Atrium, not the SDK, decodes the arguments and encodes the result: the SDK's
// typed tools infer and resolve every schema when a server is built (5 ms per
// workspace), where this resolves a tool's input schema once, on first use.
func NewTool[In, Out any](spec *mcp.Tool, need atrium.Role, h Handler[In, Out]) *Tool {
	return NewRenderedTool(spec, need, h, nil)
}

// NewRenderedTool is NewTool for a tool whose answer is a document a model
// reads: its text content block is render(out) rather than the JSON of out,
// which stays whole in structuredContent for programs.
//
// The rule, per tool: the text block is the JSON of the structured result
// (one encoding, nothing to keep in step) unless the answer's substance is
// prose written for people — a page's Markdown — which JSON escaping would
// both obscure and make costlier to read (every newline and quote escaped).
// Only read_page is rendered today; lists, searches and write receipts stay
// JSON, where a model needs the fields. Errors are always {error, code} JSON.
func NewRenderedTool[In, Out any](spec *mcp.Tool, need atrium.Role, h Handler[In, Out], render func(Out) string) *Tool {
	t := &Tool{spec: spec, Need: need}
	t.def = sync.OnceValue(func() *mcp.Tool {
		d := *t.spec
		if d.InputSchema == nil {
			d.InputSchema = portable(mustInfer[In](d.Name, "input"))
		}
		// Clients are told the whole contract, error branch included. A tool
		// whose output type is recursive brings its own schema.
		success, _ := d.OutputSchema.(*jsonschema.Schema)
		if success == nil {
			success = portable(mustInfer[Out](d.Name, "output"))
		}
		d.OutputSchema = withErrorBranch(success)
		return &d
	})
	input := sync.OnceValues(func() (inputSchema, error) {
		in, ok := t.def().InputSchema.(*jsonschema.Schema)
		if !ok {
			return inputSchema{}, fmt.Errorf("tool %s: a typed tool's input schema must be a *jsonschema.Schema", spec.Name)
		}
		r, err := in.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		return inputSchema{r, mayHaveDefaults(in)}, err
	})
	t.add = func(s *Server, ms *mcp.Server, ws int64) {
		ms.AddTool(registration(spec), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.call(ctx, req, ws, t, func(ctx context.Context) (*mcp.CallToolResult, error) {
				schema, err := input()
				if err != nil {
					return nil, err
				}
				in, err := decodeArgs[In](req.Params.Arguments, schema, t.aliases)
				if err != nil {
					return nil, err
				}
				out, err := h(ctx, req, in)
				if err != nil {
					return nil, err
				}
				emptySlices(reflect.ValueOf(&out))
				res, err := structuredResult(out)
				if err == nil && render != nil {
					res.Content = []mcp.Content{&mcp.TextContent{Text: render(out)}}
				}
				return res, err
			})
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
	t := &Tool{spec: def, Need: need, def: func() *mcp.Tool { return def }}
	t.add = func(s *Server, ms *mcp.Server, ws int64) {
		ms.AddTool(registration(def), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.call(ctx, req, ws, t, func(ctx context.Context) (*mcp.CallToolResult, error) { return h(ctx, req) })
		})
	}
	return t
}

// registration is what the SDK is given of a tool: its name and hints, with an
// input schema that only says "object". The SDK would otherwise marshal or
// resolve each schema as it is added, and it uses them for nothing else:
// Atrium validates arguments itself and lists the definitions (listTools).
func registration(spec *mcp.Tool) *mcp.Tool {
	r := *spec
	r.InputSchema, r.OutputSchema = objectSchema, nil
	return &r
}

var objectSchema = &jsonschema.Schema{Type: "object"}

// call runs one call of t on the server of workspace ws: it resolves the
// caller, checks the role t needs, and runs do with the caller in its context.
// A panic is logged and reported as internal; an error becomes {error, code}.
func (s *Server) call(ctx context.Context, req *mcp.CallToolRequest, ws int64, t *Tool, do func(context.Context) (*mcp.CallToolResult, error)) (res *mcp.CallToolResult, err error) {
	var actor *atrium.Actor
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("tool panicked", "tool", t.Name(), "panic", p, "stack", string(debug.Stack()))
			res, err = errorResult(atrium.Errorf(atrium.EInternal, "internal error")), nil
		}
	}()
	actor, err = s.Actor(ctx, req, ws)
	if err == nil && !actor.Role.Allows(t.Need) {
		err = atrium.Errorf(atrium.EPermission, "%s is %s in workspace %s; %s needs %s", actor.Principal.Handle, actor.Role, actor.Workspace.Name, t.Name(), t.Need)
	}
	if err == nil {
		res, err = do(atrium.NewContextWithActor(ctx, actor))
	}
	if err != nil {
		return errorResult(s.callerError(t.Name(), actor, err)), nil
	}
	return res, nil
}

// inputSchema is a tool's resolved input schema, and whether it may fill in
// any default.
type inputSchema struct {
	*jsonschema.Resolved
	defaults bool
}

// mayHaveDefaults reports whether s names a default anywhere; a property
// called "default" makes it say yes, which only costs a call a little time.
func mayHaveDefaults(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err != nil || bytes.Contains(b, []byte(`"default"`))
}

// decodeArgs checks a call's arguments against the tool's input schema, fills
// in its defaults and decodes them into In, as the SDK's typed tools do. A
// mistake is the caller's: invalid_argument, saying what to change. aliases
// (other names of top-level parameters, see Tool.WithAliases) are renamed
// first; an unknown top-level field is named with the nearest known one.
func decodeArgs[In any](raw json.RawMessage, schema inputSchema, aliases map[string]string) (In, error) {
	var in In
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return in, atrium.Errorf(atrium.EInvalid, "invalid arguments: they must be a JSON object of named parameters")
		}
	}
	renamed, err := renameAliases(args, aliases, schema.Schema())
	if err != nil {
		return in, err
	}
	if err := unknownFields(args, schema.Schema(), aliases); err != nil {
		return in, err
	}
	if err := schema.ApplyDefaults(&args); err != nil {
		return in, atrium.Errorf(atrium.EInvalid, "invalid arguments: %s", describeInvalid(err))
	}
	if err := schema.Validate(&args); err != nil {
		return in, atrium.Errorf(atrium.EInvalid, "invalid arguments: %s", describeInvalid(err))
	}
	// The arguments as checked are the arguments as sent, unless an alias was
	// renamed or a default filled in: then In is decoded from the map.
	b := []byte(raw)
	if renamed || schema.defaults || len(raw) == 0 {
		if b, err = json.Marshal(args); err != nil {
			return in, atrium.Errorf(atrium.EInvalid, "invalid arguments: %s", jsonerr.Describe(err))
		}
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return in, atrium.Errorf(atrium.EInvalid, "invalid arguments: %s", jsonerr.Describe(err))
	}
	return in, nil
}

// renameAliases gives each argument named by an alias its parameter's name,
// for the aliases of parameters the tool has (one table may serve several).
func renameAliases(args map[string]any, aliases map[string]string, schema *jsonschema.Schema) (renamed bool, err error) {
	for _, alias := range slices.Sorted(maps.Keys(aliases)) {
		v, ok := args[alias]
		name := aliases[alias]
		if _, has := schema.Properties[name]; !ok || !has {
			continue
		}
		if prev, both := args[name]; both && !reflect.DeepEqual(prev, v) {
			return renamed, atrium.Errorf(atrium.EInvalid, "invalid arguments: %s and %s name the same parameter with different values; give one", alias, name)
		}
		delete(args, alias)
		args[name] = v
		renamed = true
	}
	return renamed, nil
}

// unknownFields refuses a top-level argument the schema does not list, naming
// the nearest parameter ("unknown field parentpath; did you mean
// parent_path?"). Nested ones are left to the schema's own check.
func unknownFields(args map[string]any, schema *jsonschema.Schema, aliases map[string]string) error {
	if schema == nil || schema.Properties == nil || !isFalse(schema.AdditionalProperties) {
		return nil // other fields are allowed
	}
	var unknown []string
	for name := range args {
		if _, ok := schema.Properties[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	parts := make([]string, len(unknown))
	for i, name := range unknown {
		parts[i] = "unknown field " + name
		if near := nearestField(name, schema.Properties, aliases); near != "" {
			parts[i] += "; did you mean " + near + "?"
		}
	}
	return atrium.Errorf(atrium.EInvalid, "invalid arguments: %s", strings.Join(parts, "; "))
}

// isFalse reports whether s is the schema that admits nothing (false).
func isFalse(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// nearestField is the parameter closest to name, compared without case,
// underscores or dashes (so parentPath, parentpath and parent-path all find
// parent_path), within a few typos or as the start of its name; "" when
// none is close.
func nearestField(name string, props map[string]*jsonschema.Schema, aliases map[string]string) string {
	fold := func(s string) string {
		return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
	}
	target := fold(name)
	best, bestD := "", len(target)/3+1
	consider := func(candidate, param string) {
		c := fold(candidate)
		d := editDistance(target, c)
		if len(target) >= 4 && (strings.HasPrefix(c, target) || strings.HasPrefix(target, c)) {
			d = min(d, 1) // source for source_path, page for page_path
		}
		if d < bestD || (d == bestD && best != "" && param < best) {
			best, bestD = param, d
		}
	}
	for _, p := range slices.Sorted(maps.Keys(props)) {
		consider(p, p)
	}
	for alias, p := range aliases {
		if _, ok := props[p]; ok {
			consider(alias, p)
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// structuredResult is a successful call's result: out as structured content,
// and the same JSON as text for clients that read only content (the spec's
// advice).
func structuredResult(out any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(out)
	if err == nil && b[0] != '{' {
		err = fmt.Errorf("%s is not an object", b)
	}
	if err != nil {
		return nil, fmt.Errorf("encode tool result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

// mustInfer is the JSON schema of T; a type without one is a programming error.
func mustInfer[T any](tool, which string) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: %s schema: %v", tool, which, err))
	}
	return s
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
