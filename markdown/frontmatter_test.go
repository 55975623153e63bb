package markdown_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/atrium-hq/atrium/markdown"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, fm, body string
		ok                      bool
	}{
		{"none", "# Title\n", "", "# Title\n", false},
		{"simple", "---\ntitle: A\n---\n# A\n", "title: A\n", "# A\n", true},
		{"dots close", "---\ntitle: A\n...\nbody", "title: A\n", "body", true},
		{"empty", "---\n---\nbody", "", "body", true},
		{"closing at end", "---\ntitle: A\n---", "title: A\n", "", true},
		{"CRLF", "---\r\ntitle: A\r\ntags: [x]\r\n---\r\nbody\r\n", "title: A\r\ntags: [x]\r\n", "body\r\n", true},
		{"trailing blanks on delimiters", "--- \ntitle: A\n---\t\nbody", "title: A\n", "body", true},
		{"byte order mark", "\ufeff---\ntitle: A\n---\nbody", "title: A\n", "body", true},
		{"unclosed", "---\ntitle: A\nbody\n", "", "---\ntitle: A\nbody\n", false},
		{"not first line", "\n---\ntitle: A\n---\n", "", "\n---\ntitle: A\n---\n", false},
		{"four dashes", "----\ntitle: A\n----\n", "", "----\ntitle: A\n----\n", false},
		{"only a rule", "---", "", "---", false},
		{"body has rules", "---\na: 1\n---\ntext\n---\nmore\n", "a: 1\n", "text\n---\nmore\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fm, body, ok := markdown.Split(tt.content)
			if fm != tt.fm || body != tt.body || ok != tt.ok {
				t.Errorf("Split(%q) = %q, %q, %v; want %q, %q, %v", tt.content, fm, body, ok, tt.fm, tt.body, tt.ok)
			}
		})
	}
}

func TestJoinRoundTrip(t *testing.T) {
	t.Parallel()
	for _, content := range []string{
		"---\ntitle: A\n---\n# A\n",
		"---\ntitle: A\n# comment\nx: [1, 2]\n---\n",
		"---\r\ntitle: A\r\n---\r\nbody\r\n",
		"no frontmatter\n",
		"",
	} {
		fm, body, _ := markdown.Split(content)
		if got := markdown.Join(fm, body); got != content {
			t.Errorf("Join(Split(%q)) = %q", content, got)
		}
	}
	if got := markdown.Join("title: A", "body"); got != "---\ntitle: A\n---\nbody" {
		t.Errorf("Join without a final newline = %q", got)
	}
}

func TestParseFrontmatter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fm   string
		want markdown.Frontmatter
	}{
		{"empty", "", markdown.Frontmatter{}},
		{"only comments", "# nothing yet\n", markdown.Frontmatter{}},
		{"null document", "~\n", markdown.Frontmatter{}},
		{"all known keys", "title: Alpha\nicon: 🚀\ntags: [a, b]\naccess: private\nowner: ann\n", markdown.Frontmatter{
			Title: "Alpha", Icon: "🚀", Tags: []string{"a", "b"}, Access: "private",
			Keys: []string{"title", "icon", "tags", "access", "owner"},
		}},
		{"unknown keys keep order", "z: 1\ntitle: A\nmeta: {x: 1}\n", markdown.Frontmatter{Title: "A", Keys: []string{"z", "title", "meta"}}},
		{"tags as block list", "tags:\n  - ' x '\n  - y\n  - x\n  - ''\n  -\n", markdown.Frontmatter{Tags: []string{"x", "y"}, Keys: []string{"tags"}}},
		{"tags as comma string", "tags: a, b ,,a, c d\n", markdown.Frontmatter{Tags: []string{"a", "b", "c d"}, Keys: []string{"tags"}}},
		{"tags of numbers", "tags: [2024, 1.5]\n", markdown.Frontmatter{Tags: []string{"2024", "1.5"}, Keys: []string{"tags"}}},
		{"null values are unset", "title:\nicon: ~\ntags:\naccess: null\n", markdown.Frontmatter{Keys: []string{"title", "icon", "tags", "access"}}},
		{"access case", "access: Public\n", markdown.Frontmatter{Access: "public", Keys: []string{"access"}}},
		{"scalar title as written", "title: 1984\n", markdown.Frontmatter{Title: "1984", Keys: []string{"title"}}},
		{"quoted and block", "title: \"A: b\"\nicon: >-\n  x\n", markdown.Frontmatter{Title: "A: b", Icon: "x", Keys: []string{"title", "icon"}}},
		{"alias", "base: &t Shared\ntitle: *t\n", markdown.Frontmatter{Title: "Shared", Keys: []string{"base", "title"}}},
		{"CRLF", "title: A\r\ntags: [x]\r\n", markdown.Frontmatter{Title: "A", Tags: []string{"x"}, Keys: []string{"title", "tags"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := markdown.ParseFrontmatter(tt.fm)
			if err != nil {
				t.Fatalf("ParseFrontmatter(%q): %v", tt.fm, err)
			}
			// Texts have a test of their own.
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(markdown.Frontmatter{}, "Texts")); diff != "" {
				t.Errorf("ParseFrontmatter(%q) (-want +got):\n%s", tt.fm, diff)
			}
		})
	}
}

// Search reads every text value of the frontmatter: strings, and the
// strings of lists; numbers, dates, booleans, mappings and blank strings are
// left out without an error.
func TestParseFrontmatterTexts(t *testing.T) {
	t.Parallel()
	fm := "title: Alpha\naliases: [Beta, ' ', 3, Gamma delta]\ndescription: >\n  Folded\n  text\nversion: 2\ndate: 2024-01-02\ndraft: true\nsocial: {cards: false}\nauthors:\n  - ann\n  - [nested]\nnone:\nbase: &b Shared\nagain: *b\n"
	got, err := markdown.ParseFrontmatter(fm)
	if err != nil {
		t.Fatal(err)
	}
	want := []markdown.KeyTexts{
		{Key: "title", Values: []string{"Alpha"}},
		{Key: "aliases", Values: []string{"Beta", "Gamma delta"}},
		{Key: "description", Values: []string{"Folded text\n"}},
		{Key: "authors", Values: []string{"ann"}},
		{Key: "base", Values: []string{"Shared"}},
		{Key: "again", Values: []string{"Shared"}},
	}
	if diff := cmp.Diff(want, got.Texts); diff != "" {
		t.Errorf("Texts (-want +got):\n%s", diff)
	}
}

func TestParseFrontmatterErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, fm string
		msg      []string
	}{
		{"bad indentation", "title: A\n  icon: x\n", []string{"frontmatter line 2: invalid YAML: mapping values are not allowed"}},
		{"unclosed quote", "title: \"A\ntags: [x]\n", []string{"frontmatter line", "invalid YAML"}},
		{"unclosed flow", "tags: [a, b\n", []string{"frontmatter line", "invalid YAML"}},
		{"tab indentation", "tags:\n\t- a\n", []string{"frontmatter line 2", "invalid YAML"}},
		{"a list", "- a\n- b\n", []string{"frontmatter line 1: frontmatter must be a mapping", "not a list"}},
		{"a scalar", "just text\n", []string{"must be a mapping", `not the value "just text"`}},
		{"title list", "title: [a]\n", []string{"frontmatter line 1: title must be a string, not a list"}},
		{"icon mapping", "title: A\nicon:\n  x: 1\n", []string{"frontmatter line 3: icon must be a string, not a mapping"}},
		{"tags mapping", "tags: {a: 1}\n", []string{"frontmatter line 1: tags must be a list of strings", "not a mapping"}},
		{"tags nested list", "tags:\n  - a\n  - [b]\n", []string{"frontmatter line 3: tags must be a list of strings; item 2 is a list"}},
		{"access unknown", "access: secret\n", []string{`frontmatter line 1: access must be "public" or "private", not the value "secret"`}},
		{"access list", "access: [public]\n", []string{"access must be", "not a list"}},
		{"duplicate key", "title: A\nx: 1\ntitle: B\n", []string{`frontmatter line 3: key "title" appears twice (also on line 1)`}},
		{"complex key", "? [a, b]\n: 1\n", []string{"keys must be plain names, not a list"}},
		{"null key", "title: A\n~: x\n", []string{"frontmatter line 2: a key is missing"}},
		{"empty key", "?\n", []string{"frontmatter line 1: a key is missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := markdown.ParseFrontmatter(tt.fm)
			var e *markdown.Error
			if !errors.As(err, &e) || e.Code != markdown.EInvalid {
				t.Fatalf("ParseFrontmatter(%q) error = %v, want code %q", tt.fm, err, markdown.EInvalid)
			}
			for _, m := range tt.msg {
				if !strings.Contains(e.Message, m) {
					t.Errorf("message %q lacks %q", e.Message, m)
				}
			}
		})
	}
}

func TestSetFrontmatter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fm   string
		set  map[string]any
		want string
	}{
		{
			name: "replace keeps everything else byte for byte",
			fm:   "# Page settings\ntitle:   'Old'   # shown in the tree\n\n# who owns it\nowner: ann\ntags:\n- a\n- b\n\nextra: {x: 1}  # flow\n",
			set:  map[string]any{"title": "New"},
			want: "# Page settings\ntitle: 'New' # shown in the tree\n\n# who owns it\nowner: ann\ntags:\n- a\n- b\n\nextra: {x: 1}  # flow\n",
		},
		{
			name: "replace a block list",
			fm:   "tags:\n- a\n- b\n# next\nowner: ann\n",
			set:  map[string]any{"tags": []string{"c", "d"}},
			want: "tags:\n  - c\n  - d\n# next\nowner: ann\n",
		},
		{
			name: "flow list stays flow",
			fm:   "tags: [a, b]\n",
			set:  map[string]any{"tags": []any{"x", 2}},
			want: "tags: [x, 2]\n",
		},
		{
			name: "delete keys",
			fm:   "title: A\nicon: x\n# about the owner\nowner: ann\nnested:\n  a: 1\n  b: [1, 2]\nlast: 1\n",
			set:  map[string]any{"icon": nil, "nested": nil, "missing": nil},
			want: "title: A\n# about the owner\nowner: ann\nlast: 1\n",
		},
		{
			name: "add keys in a stable order",
			fm:   "owner: ann\n",
			set:  map[string]any{"zeta": true, "alpha": 1.5, "access": "public", "title": "T", "icon": "🚀"},
			want: "owner: ann\ntitle: T\nicon: \"🚀\"\naccess: public\nalpha: 1.5\nzeta: true\n",
		},
		{
			name: "empty frontmatter",
			fm:   "",
			set:  map[string]any{"title": "true", "tags": []string{"a"}, "meta": map[string]any{"b": 1, "a": []any{"x"}}, "note": "line 1\nline 2"},
			want: "title: \"true\"\ntags:\n  - a\nmeta:\n  a:\n    - x\n  b: 1\nnote: |-\n  line 1\n  line 2\n",
		},
		{
			name: "no final newline",
			fm:   "title: A",
			set:  map[string]any{"icon": "x"},
			want: "title: A\nicon: x\n",
		},
		{
			name: "comments only",
			fm:   "# to do\n",
			set:  map[string]any{"title": "T"},
			want: "# to do\ntitle: T\n",
		},
		{
			name: "CRLF",
			fm:   "title: A\r\n# c\r\nx: 1\r\n",
			set:  map[string]any{"title": "B", "y": 2},
			want: "title: B\r\n# c\r\nx: 1\r\ny: 2\r\n",
		},
		{
			name: "delete everything",
			fm:   "title: A\n",
			set:  map[string]any{"title": nil},
			want: "",
		},
		{
			name: "flow mapping is re-encoded",
			fm:   "{title: a, b: 1}\n",
			set:  map[string]any{"title": "yes"},
			want: "title: \"yes\"\nb: 1\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := markdown.SetFrontmatter(tt.fm, tt.set)
			if err != nil {
				t.Fatalf("SetFrontmatter: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SetFrontmatter(%q) (-want +got):\n%s", tt.fm, diff)
			}
		})
	}
}

// TestSetFrontmatterInPage edits a whole page the way edit_page does.
func TestSetFrontmatterInPage(t *testing.T) {
	t.Parallel()
	page := "---\r\ntitle: Alpha\r\n# keep me\r\nreviewers: [ann, bob]\r\n---\r\n# Alpha\r\n"
	fm, body, _ := markdown.Split(page)
	fm, err := markdown.SetFrontmatter(fm, map[string]any{"tags": "x, y", "title": "Beta"})
	if err != nil {
		t.Fatal(err)
	}
	want := "---\r\ntitle: Beta\r\n# keep me\r\nreviewers: [ann, bob]\r\ntags: x, y\r\n---\r\n# Alpha\r\n"
	if got := markdown.Join(fm, body); got != want {
		t.Errorf("page = %q, want %q", got, want)
	}
	f, err := markdown.ParseFrontmatter(fm)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(markdown.Frontmatter{Title: "Beta", Tags: []string{"x", "y"}, Keys: []string{"title", "reviewers", "tags"}}, f, cmpopts.IgnoreFields(markdown.Frontmatter{}, "Texts")); diff != "" {
		t.Errorf("frontmatter (-want +got):\n%s", diff)
	}
}

func TestSetFrontmatterErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fm   string
		set  map[string]any
		msg  string
	}{
		{"invalid YAML", "title: [a\n", map[string]any{"x": 1}, "invalid YAML"},
		{"not a mapping", "- a\n", map[string]any{"x": 1}, "must be a mapping"},
		{"bad access", "title: A\n", map[string]any{"access": "secret"}, `access must be "public" or "private", not the value "secret"`},
		{"bad title", "", map[string]any{"title": []string{"a"}}, "title must be a string, not a list"},
		{"bad tags", "", map[string]any{"tags": map[string]any{"a": 1}}, "tags must be a list of strings"},
		{"unsupported type", "", map[string]any{"when": struct{}{}}, `frontmatter key "when": unsupported value type struct {}`},
		{"empty key", "", map[string]any{" ": 1}, "keys must be non-empty text"},
		{"anchor still used", "a: &x 1\nb: *x\n", map[string]any{"a": 2}, "would not be valid after this change"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := markdown.SetFrontmatter(tt.fm, tt.set)
			var e *markdown.Error
			if !errors.As(err, &e) || e.Code != markdown.EInvalid {
				t.Fatalf("SetFrontmatter = %q, %v; want an invalid error", got, err)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q lacks %q", e.Message, tt.msg)
			}
		})
	}
}
