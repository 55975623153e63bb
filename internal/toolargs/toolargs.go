// Package toolargs types the arguments of a tool call given on a command
// line (atrium call TOOL key=value …) by the tool's JSON input schema:
// numbers, booleans, objects as JSON, arrays as JSON or as a comma list
// (tags=a,b), a value from a file (key=@FILE) or stdin (key=@-), and one
// JSON object of arguments (--json). It knows nothing of MCP or Atrium: the
// schema is plain JSON Schema, the result a map for the call.
package toolargs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium/internal/jsonerr"
)

// Build merges --json and key=value pairs into a tool's arguments, typing
// each value by the property's type in schema (the tool's input schema, as
// JSON or as any value that marshals to it). A --json of @FILE or - reads the object from a
// file or stdin; a value @FILE (or @- for stdin) is that file's content, so
// that a page of any size can be written from a shell (an argument is capped
// at 128 KB by the kernel); @@ starts a value with a literal @.
func Build(schema any, pairs []string, jsonArgs string, stdin io.Reader) (map[string]any, error) {
	in := &inputs{stdin: stdin}
	args := map[string]any{}
	if jsonArgs != "" {
		raw := []byte(jsonArgs)
		if jsonArgs == "-" || strings.HasPrefix(jsonArgs, "@") {
			var err error
			if raw, err = in.read(strings.TrimPrefix(jsonArgs, "@")); err != nil {
				return nil, fmt.Errorf("--json: %w", err)
			}
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, fmt.Errorf("--json must be a JSON object of named arguments: %s", jsonerr.Describe(err))
		}
		if args == nil { // null
			args = map[string]any{}
		}
	}
	props := map[string]any{}
	if m, ok := asMap(schema); ok {
		props, _ = asMap(m["properties"])
	}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q: want key=value", p)
		}
		switch {
		case strings.HasPrefix(v, "@@"):
			v = v[1:]
		case strings.HasPrefix(v, "@"):
			b, err := in.read(v[1:])
			if err != nil {
				return nil, fmt.Errorf("argument %s: %w", k, err)
			}
			v = string(b)
		}
		prop, _ := asMap(props[k])
		val, err := coerce(prop, v)
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", k, err)
		}
		args[k] = val
	}
	return args, nil
}

// inputs reads the files and the one stdin that arguments name.
type inputs struct {
	stdin     io.Reader
	stdinUsed bool
}

func (in *inputs) read(name string) ([]byte, error) {
	if name == "-" {
		if in.stdinUsed || in.stdin == nil {
			return nil, fmt.Errorf("stdin can be read once only")
		}
		in.stdinUsed = true
		return io.ReadAll(in.stdin)
	}
	if name == "" {
		return nil, fmt.Errorf("@ must be followed by a file name, or - for stdin")
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, errors.Unwrap(err))
	}
	return b, nil
}

func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case nil:
		return nil, false
	default:
		// A typed schema (from an in-process server): go through JSON.
		b, err := json.Marshal(m)
		if err != nil {
			return nil, false
		}
		var out map[string]any
		return out, json.Unmarshal(b, &out) == nil
	}
}

// types lists the JSON types a property allows.
func types(prop map[string]any) []string {
	switch t := prop["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// coerce types a command-line value by its property's schema: the first of
// the allowed types it parses as, strings last; an untyped property takes JSON
// if it parses, else the text. An array may also be given as a,b,c, each item
// typed by the array's items.
func coerce(prop map[string]any, v string) (any, error) {
	allowed := types(prop)
	if len(allowed) == 0 {
		var x any
		if json.Unmarshal([]byte(v), &x) == nil {
			return x, nil
		}
		return v, nil
	}
	for _, t := range allowed {
		switch t {
		case "integer":
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n, nil
			}
		case "number":
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				return f, nil
			}
		case "boolean":
			if b, err := strconv.ParseBool(v); err == nil {
				return b, nil
			}
		case "object":
			var x map[string]any
			if err := json.Unmarshal([]byte(v), &x); err == nil && x != nil {
				return x, nil
			}
		case "array":
			var x []any
			if err := json.Unmarshal([]byte(v), &x); err == nil && x != nil {
				return x, nil
			}
			if strings.HasPrefix(strings.TrimSpace(v), "[") {
				continue // meant as JSON, and not valid: say so below
			}
			if x, err := commaList(prop, v); err == nil {
				return x, nil
			}
		case "null":
			if v == "null" {
				return nil, nil
			}
		}
	}
	for _, t := range allowed {
		if t == "string" {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%q is not a valid %s", v, strings.Join(allowed, " or "))
}

// commaList is a,b,c as an array, each item typed by the items schema; the
// empty string is the empty array.
func commaList(prop map[string]any, v string) ([]any, error) {
	out := []any{}
	if v == "" {
		return out, nil
	}
	items, _ := asMap(prop["items"])
	for item := range strings.SplitSeq(v, ",") {
		x, err := coerce(items, strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}
