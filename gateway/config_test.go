package gateway

import (
	"strings"
	"testing"
	"time"
)

func TestParseForms(t *testing.T) {
	wrapped, err := Parse([]byte(`{"mcpServers": {"a": {"command": "x", "args": ["1"], "alwaysAllow": []}}}`))
	if err != nil || wrapped.Servers["a"].Command != "x" {
		t.Fatalf("mcpServers form: %v %+v", err, wrapped)
	}
	bare, err := Parse([]byte(`{"posthog": {"command": "npx", "env": {"K": "${K}"}, "metadata": {"allowDestructiveTools": true}},
		"remote": {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${T}"}, "timeouts": {"call": "10s", "health": 500}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !bare.Servers["posthog"].Metadata.AllowDestructiveTools || time.Duration(bare.Servers["remote"].Timeouts.Health) != 500*time.Millisecond {
		t.Errorf("bare form: %+v %+v", bare.Servers["posthog"], bare.Servers["remote"])
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{\n \"a\": {\"command\": \"x\"},\n \"b\": {\"command\": \"y\",}\n}", "line 3"},
		{"{\n \"a\": {\"command\": \"x\"}", "ends early, at line 2"},
		{"{\n \"a\": {\n  \"command\": 42\n }\n}", "line 3"},
		{`{"a": {}}`, `give "command"`},
		{`{"a": {"command": "x", "url": "http://h"}}`, "not both"},
		{`{"a b": {"command": "x"}}`, "only letters, digits"},
		{`{"a": {"command": "x", "timeouts": {"call": "soon"}}}`, "not a duration"},
		{`{"a": {"command": "x", "type": "ws"}}`, "use stdio, http or sse"},
	} {
		_, err := Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.in, err, c.want)
		}
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"SET": "v", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for in, want := range map[string]string{
		"${SET}": "v", "a${SET}b${SET}": "avbv", "${UNSET:-d}": "d", "${EMPTY:-d}": "d", "${EMPTY}": "",
		"$HOME": "$HOME", "$${SET}": "${SET}", "${SET:?x}": "v", "cost $5": "cost $5",
	} {
		if got, err := expand(in, lookup); err != nil || got != want {
			t.Errorf("expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"${UNSET}": "UNSET is not set", "${EMPTY:?give it}": "EMPTY is not set: give it", "${SET": "no closing", "${1X}": "not a variable name", "${SET:+x}": "use ${SET}",
	} {
		if _, err := expand(in, lookup); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("expand(%q): %v, want %q", in, err, want)
		}
	}
}

func TestExposedNames(t *testing.T) {
	if n := exposedName("fs", "read.file:v2"); n != "fs_read_file_v2" {
		t.Errorf("got %q", n)
	}
	a := exposedName("server", strings.Repeat("x", 80)+"a")
	b := exposedName("server", strings.Repeat("x", 80)+"b")
	if len(a) != MaxName || a == b || a != exposedName("server", strings.Repeat("x", 80)+"a") {
		t.Errorf("long names %q %q: want distinct, deterministic, %d long", a, b, MaxName)
	}
}
