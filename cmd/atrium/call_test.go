package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildArgsTypesValuesBySchema(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"path":      map[string]any{"type": "string"},
		"depth":     map[string]any{"type": "integer"},
		"score":     map[string]any{"type": "number"},
		"private":   map[string]any{"type": "boolean"},
		"tags":      map[string]any{"type": "array"},
		"meta":      map[string]any{"type": "object"},
		"maybe":     map[string]any{"type": []any{"integer", "string"}},
		"anything":  map[string]any{},
		"numericID": map[string]any{"type": "string"},
	}}
	got, err := buildArgs(schema, []string{
		"path=Projects/Alpha.md", "depth=2", "score=0.5", "private=true", `tags=["a","b"]`,
		`meta={"k":1}`, "maybe=x", "anything=[1]", "numericID=007", "unknown=3", "empty=",
	}, `{"depth": 1, "kept": "yes"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"path": "Projects/Alpha.md", "depth": int64(2), "score": 0.5, "private": true,
		"tags": []any{"a", "b"}, "meta": map[string]any{"k": float64(1)}, "maybe": "x",
		"anything": []any{float64(1)}, "numericID": "007", "unknown": float64(3), "empty": "", "kept": "yes",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

// Arrays are typed by the schema from a comma list as well as from JSON, and
// any value or the whole --json may come from a file or stdin: a page larger
// than the kernel's 128 KB limit on one argument is still writable.
func TestBuildArgsListsFilesAndStdin(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"tags":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"ids":     map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
		"none":    map[string]any{"type": "array"},
		"content": map[string]any{"type": "string"},
		"handle":  map[string]any{"type": "string"},
	}}
	dir := t.TempDir()
	page := strings.Repeat("# A long page\n\nwith \"quotes\" and lines.\n", 40000) // 1.4 MB
	file := filepath.Join(dir, "page.md")
	if err := os.WriteFile(file, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	args := filepath.Join(dir, "args.json")
	if err := os.WriteFile(args, []byte(`{"path": "From/File.md", "tags": ["x"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		pairs []string
		json  string
		stdin string
		want  map[string]any
	}{
		{"comma lists", []string{"tags=a, b", "ids=1,2", "none=x,y"}, "", "", map[string]any{"tags": []any{"a", "b"}, "ids": []any{int64(1), int64(2)}, "none": []any{"x", "y"}}},
		{"JSON arrays", []string{`tags=["a,b"]`, "ids=[3]"}, "", "", map[string]any{"tags": []any{"a,b"}, "ids": []any{float64(3)}}},
		{"one item and none", []string{"tags=solo", "ids="}, "", "", map[string]any{"tags": []any{"solo"}, "ids": []any{}}},
		{"value from a file", []string{"content=@" + file}, "", "", map[string]any{"content": page}},
		{"value from stdin", []string{"content=@-"}, "", page, map[string]any{"content": page}},
		{"a literal @", []string{"handle=@@dede"}, "", "", map[string]any{"handle": "@dede"}},
		{"--json from a file", []string{"tags=y"}, "@" + args, "", map[string]any{"path": "From/File.md", "tags": []any{"y"}}},
		{"--json from stdin", nil, "-", `{"path": "In.md", "content": "x"}`, map[string]any{"path": "In.md", "content": "x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buildArgs(schema, tc.pairs, tc.json, strings.NewReader(tc.stdin))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildArgsRejects(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{"depth": map[string]any{"type": "integer"}, "on": map[string]any{"type": "boolean"},
		"ids": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}, "meta": map[string]any{"type": "object"}}}
	for _, tc := range []struct {
		pairs []string
		json  string
	}{
		{[]string{"depth=two"}, ""},
		{[]string{"on=maybe"}, ""},
		{[]string{"=x"}, ""},
		{[]string{"novalue"}, ""},
		{nil, "[1,2]"},
		{nil, "{"},
		{[]string{"ids=[1,"}, ""},
		{[]string{"ids=1,two"}, ""},
		{[]string{"meta=a,b"}, ""},
		{[]string{"depth=@"}, ""},
		{[]string{"depth=@/no/such/file"}, ""},
		{nil, "@/no/such/file"},
		{[]string{"x=@-"}, "-"}, // stdin twice
	} {
		if _, err := buildArgs(schema, tc.pairs, tc.json, strings.NewReader("{}")); err == nil {
			t.Errorf("buildArgs(%v, %q) succeeded", tc.pairs, tc.json)
		}
	}
}

func TestLocalHandle(t *testing.T) {
	t.Setenv("ATRIUM_AGENT", "claude")
	if h := localHandle(); h != "claude" {
		t.Errorf("with ATRIUM_AGENT: %q", h)
	}
	t.Setenv("ATRIUM_AGENT", "")
	t.Setenv("USER", "Jane Doe")
	if h := localHandle(); h == "" || h != sanitizedOrUser(h) {
		t.Errorf("from the OS user: %q", h)
	}
}

func sanitizedOrUser(h string) string {
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return ""
		}
	}
	return h
}
