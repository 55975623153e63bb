package mcpserver

import (
	"context"
	"encoding/json"
	"io/fs"
	"path"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Each toolset keeps the definitions of its tools as tools/list sends them,
// one file per tool, in its defs/ (Toolset.Defs). Its golden test
// (mcptest.Golden) keeps them equal to the definitions inferred from the code
// (go test ./mcptools/... -run Golden -update rewrites them); they are also
// what reviewers read to see a tool's contract change.

// storedDef is the definition of the named tool in defs, or nil. Decoding
// one takes some 50 µs, where inferring and encoding its schemas takes 400.
func storedDef(defs fs.FS, name string) *mcp.Tool {
	if defs == nil {
		return nil
	}
	b, err := fs.ReadFile(defs, path.Join("defs", name+".json"))
	if err != nil {
		return nil
	}
	var in, out json.RawMessage
	d := &mcp.Tool{InputSchema: &in, OutputSchema: &out}
	if err := json.Unmarshal(b, d); err != nil || len(in) == 0 {
		return nil // listedDefs infers what it cannot find here
	}
	// Indented as stored: the encoder compacts raw JSON as it writes it.
	d.InputSchema, d.OutputSchema = in, nil
	if len(out) > 0 {
		d.OutputSchema = out
	}
	return d
}

// listedDefs returns the definitions of the server's tools as tools/list sends
// them, by name: from defs/ where the stored one matches the code's name,
// title, description and annotations, otherwise inferred and encoded here.
func (s *Server) listedDefs() map[string]*mcp.Tool {
	stored := map[string]fs.FS{}
	for _, ts := range s.toolsets {
		stored[ts.Name] = ts.Defs
	}
	defs := make(map[string]*mcp.Tool, len(s.tools))
	for _, t := range s.tools {
		if d := storedDef(stored[t.Toolset], t.Name()); d != nil && sameText(d, t.spec) {
			defs[d.Name] = withIcon(d)
			continue
		}
		s.log.Warn("a tool's stored definition is missing or stale; inferring it (go test ./mcptools/... -run Golden -update rewrites defs/)", "tool", t.Name())
		d := *t.Def()
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
		defs[d.Name] = withIcon(&d)
	}
	return defs
}

// Icon is Atrium's icon, on the server and on its own tools (the tools a
// gateway serves from other servers are not listed from here: they keep
// their own).
var Icon = mcp.Icon{Source: "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCA2NCA2NCI+PHJlY3Qgd2lkdGg9IjY0IiBoZWlnaHQ9IjY0IiByeD0iMTQiIGZpbGw9IiMyZjRiN2MiLz48cGF0aCBkPSJNMzIgMTIgNTAgNTJoLThsLTQtOUgyNmwtNCA5aC04em0wIDE0LTQgMTBoOHoiIGZpbGw9IiNmZmYiLz48L3N2Zz4=", MIMEType: "image/svg+xml", Sizes: []string{"any"}}

func withIcon(d *mcp.Tool) *mcp.Tool {
	if len(d.Icons) > 0 {
		return d
	}
	c := *d
	c.Icons = []mcp.Icon{Icon}
	return &c
}

// sameText reports whether a stored definition describes spec: same name,
// title, description, annotations and icons.
func sameText(stored, spec *mcp.Tool) bool {
	return stored.Name == spec.Name && stored.Title == spec.Title && stored.Description == spec.Description &&
		reflect.DeepEqual(stored.Annotations, spec.Annotations) && reflect.DeepEqual(stored.Icons, spec.Icons) && reflect.DeepEqual(stored.Meta, spec.Meta)
}

// listTools answers tools/list with each tool's whole definition — schemas,
// output schema with its {error, code} branch — where the SDK holds only
// what it needs to route a call (see registration).
func (s *Server) listTools(next mcp.MethodHandler) mcp.MethodHandler {
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
