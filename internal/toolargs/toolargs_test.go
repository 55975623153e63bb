package toolargs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/internal/toolargs"
)

// schema is a tool's input schema with a property of each kind.
var schema = map[string]any{"type": "object", "properties": map[string]any{
	"path":    map[string]any{"type": "string"},
	"depth":   map[string]any{"type": "integer"},
	"score":   map[string]any{"type": "number"},
	"private": map[string]any{"type": "boolean"},
	"meta":    map[string]any{"type": "object"},
	"tags":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	"ids":     map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
	"list":    map[string]any{"type": "array"},
	"maybe":   map[string]any{"type": []any{"integer", "string"}},
	"limit":   map[string]any{"type": []any{"null", "integer"}},
	"any":     map[string]any{},
}}

// typedSchema is schema as an in-process server gives it: a Go value, not
// decoded JSON.
type typedSchema struct {
	Type       string                    `json:"type"`
	Properties map[string]map[string]any `json:"properties"`
}

// files are a page larger than the kernel's 128 KB cap on one argument, and
// a --json object, in files.
func files(t *testing.T) (page, pageFile, argsFile string) {
	t.Helper()
	dir := t.TempDir()
	page = strings.Repeat("# A long page\n\nwith \"quotes\" and lines.\n", 40000) // 1.4 MB
	pageFile = filepath.Join(dir, "page.md")
	argsFile = filepath.Join(dir, "args.json")
	if err := os.WriteFile(pageFile, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(argsFile, []byte(`{"path": "From/File.md", "tags": ["x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return page, pageFile, argsFile
}

// Each rule, one case: how a value is typed by its property's schema, and
// where values and --json come from.
func TestBuild(t *testing.T) {
	page, pageFile, argsFile := files(t)
	for _, tc := range []struct {
		name   string
		schema any // nil: schema
		pairs  []string
		json   string
		stdin  string
		want   map[string]any
	}{
		{name: "a string is the text", pairs: []string{"path=Projects/Alpha.md"}, want: map[string]any{"path": "Projects/Alpha.md"}},
		{name: "a string that looks like a number stays text", pairs: []string{"path=007"}, want: map[string]any{"path": "007"}},
		{name: "an empty value of a string", pairs: []string{"path="}, want: map[string]any{"path": ""}},
		{name: "a value may hold =", pairs: []string{"path=a=b"}, want: map[string]any{"path": "a=b"}},
		{name: "an integer", pairs: []string{"depth=2"}, want: map[string]any{"depth": int64(2)}},
		{name: "a negative integer", pairs: []string{"depth=-3"}, want: map[string]any{"depth": int64(-3)}},
		{name: "a number", pairs: []string{"score=0.5"}, want: map[string]any{"score": 0.5}},
		{name: "a whole number", pairs: []string{"score=3"}, want: map[string]any{"score": float64(3)}},
		{name: "booleans", pairs: []string{"private=true"}, want: map[string]any{"private": true}},
		{name: "booleans as Go parses them", pairs: []string{"private=0"}, want: map[string]any{"private": false}},
		{name: "an object as JSON", pairs: []string{`meta={"k":1}`}, want: map[string]any{"meta": map[string]any{"k": float64(1)}}},
		{name: "an array as JSON", pairs: []string{`tags=["a,b"]`, "ids=[3]"}, want: map[string]any{"tags": []any{"a,b"}, "ids": []any{float64(3)}}},
		{name: "an array as a comma list, items typed", pairs: []string{"tags=a, b", "ids=1,2"}, want: map[string]any{"tags": []any{"a", "b"}, "ids": []any{int64(1), int64(2)}}},
		{name: "a comma list of untyped items", pairs: []string{"list=x,1"}, want: map[string]any{"list": []any{"x", float64(1)}}},
		{name: "one item, and none", pairs: []string{"tags=solo", "ids="}, want: map[string]any{"tags": []any{"solo"}, "ids": []any{}}},
		{name: "several types: the first that parses", pairs: []string{"maybe=3"}, want: map[string]any{"maybe": int64(3)}},
		{name: "several types: string last", pairs: []string{"maybe=x"}, want: map[string]any{"maybe": "x"}},
		{name: "null where allowed", pairs: []string{"limit=null"}, want: map[string]any{"limit": nil}},
		{name: "an untyped property takes JSON", pairs: []string{"any=[1]"}, want: map[string]any{"any": []any{float64(1)}}},
		{name: "an untyped property takes text", pairs: []string{"any=hello"}, want: map[string]any{"any": "hello"}},
		{name: "a property not in the schema is untyped", pairs: []string{"unknown=3", "other=x"}, want: map[string]any{"unknown": float64(3), "other": "x"}},
		{name: "a schema without properties", schema: map[string]any{"type": "object"}, pairs: []string{"depth=2"}, want: map[string]any{"depth": float64(2)}},
		{name: "no schema", schema: (*typedSchema)(nil), pairs: []string{"depth=2"}, want: map[string]any{"depth": float64(2)}},
		{name: "a typed schema", schema: typedSchema{Type: "object", Properties: map[string]map[string]any{"depth": {"type": "integer"}}}, pairs: []string{"depth=2"}, want: map[string]any{"depth": int64(2)}},
		{name: "a value from a file", pairs: []string{"path=@" + pageFile}, want: map[string]any{"path": page}},
		{name: "a value from stdin", pairs: []string{"path=@-"}, stdin: page, want: map[string]any{"path": page}},
		{name: "a value from a file is typed", pairs: []string{"meta=@-"}, stdin: `{"k": "v"}`, want: map[string]any{"meta": map[string]any{"k": "v"}}},
		{name: "@@ is a literal @", pairs: []string{"path=@@dede"}, want: map[string]any{"path": "@dede"}},
		{name: "--json inline", json: `{"depth": 1, "kept": "yes"}`, want: map[string]any{"depth": float64(1), "kept": "yes"}},
		{name: "pairs override --json", pairs: []string{"depth=2"}, json: `{"depth": 1, "kept": "yes"}`, want: map[string]any{"depth": int64(2), "kept": "yes"}},
		{name: "--json null is no arguments", json: "null", want: map[string]any{}},
		{name: "--json from a file", pairs: []string{"tags=y"}, json: "@" + argsFile, want: map[string]any{"path": "From/File.md", "tags": []any{"y"}}},
		{name: "--json from stdin", json: "-", stdin: `{"path": "In.md"}`, want: map[string]any{"path": "In.md"}},
		{name: "no arguments", want: map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.schema
			if s == nil {
				s = schema
			}
			got, err := toolargs.Build(s, tc.pairs, tc.json, strings.NewReader(tc.stdin))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

// Each refusal says which argument and why.
func TestBuildRefuses(t *testing.T) {
	for _, tc := range []struct {
		pairs []string
		json  string
		want  string
	}{
		{[]string{"depth=two"}, "", `argument depth: "two" is not a valid integer`},
		{[]string{"score=high"}, "", `argument score: "high" is not a valid number`},
		{[]string{"private=maybe"}, "", `argument private: "maybe" is not a valid boolean`},
		{[]string{"meta=a,b"}, "", `argument meta: "a,b" is not a valid object`},
		{[]string{"meta=[1]"}, "", `argument meta: "[1]" is not a valid object`},
		{[]string{"ids=[1,"}, "", `argument ids: "[1," is not a valid array`},
		{[]string{"ids=1,two"}, "", `argument ids: "1,two" is not a valid array`},
		{[]string{"limit=none"}, "", `argument limit: "none" is not a valid null or integer`},
		{[]string{"=x"}, "", `argument "=x": want key=value`},
		{[]string{"novalue"}, "", `argument "novalue": want key=value`},
		{nil, "[1,2]", "--json must be a JSON object of named arguments"},
		{nil, "{", "--json must be a JSON object of named arguments"},
		{[]string{"depth=@"}, "", "argument depth: @ must be followed by a file name, or - for stdin"},
		{[]string{"depth=@/no/such/file"}, "", "argument depth: read /no/such/file: no such file or directory"},
		{nil, "@/no/such/file", "--json: read /no/such/file: no such file or directory"},
		{[]string{"path=@-"}, "-", "argument path: stdin can be read once only"},
	} {
		_, err := toolargs.Build(schema, tc.pairs, tc.json, strings.NewReader("{}"))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Build(%q, %q) = %v, want %q", tc.pairs, tc.json, err, tc.want)
		}
	}
	if _, err := toolargs.Build(schema, []string{"path=@-"}, "", nil); err == nil || err.Error() != "argument path: stdin can be read once only" {
		t.Errorf("with no stdin: %v", err)
	}
}
