package main

import (
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
	}, `{"depth": 1, "kept": "yes"}`)
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

func TestBuildArgsRejects(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{"depth": map[string]any{"type": "integer"}, "on": map[string]any{"type": "boolean"}}}
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
	} {
		if _, err := buildArgs(schema, tc.pairs, tc.json); err == nil {
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
