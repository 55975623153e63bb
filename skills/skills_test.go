package skills

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
)

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"deploy": true, "a": true, "pdf-processing": true, "x9": true, strings.Repeat("a", 64): true,
		"": false, "Deploy": false, "-x": false, "x-": false, "a--b": false, "a_b": false, strings.Repeat("a", 65): false, "a b": false,
	} {
		if ValidName(name) != want {
			t.Errorf("ValidName(%q) = %v", name, !want)
		}
	}
}

func TestFrontmatterIsJSON(t *testing.T) {
	fm, err := Frontmatter("---\nname: x\ndescription: \"d: e\"\nlicense: Apache-2.0\nmetadata:\n  since: 2026-01-02\n  n: 3\n  f: 1.5\n  ok: true\n  none: null\n  tags: [a, b]\n---\nbody\n")
	if err != nil {
		t.Fatal(err)
	}
	m := fm["metadata"].(map[string]any)
	if fm["description"] != "d: e" || m["since"] != "2026-01-02" || m["n"] != int64(3) || m["f"] != 1.5 || m["ok"] != true || m["none"] != nil || len(m["tags"].([]any)) != 2 {
		t.Errorf("frontmatter %#v", fm)
	}
	for _, bad := range []string{"no frontmatter\n", "---\n- a list\n---\n", "---\na: [\n---\n", "---\n---\n"} {
		if _, err := Frontmatter(bad); err == nil {
			t.Errorf("Frontmatter(%q): no error", bad)
		}
	}
}

func TestNew(t *testing.T) {
	ok := File{Path: Manifest, Content: "---\nname: deploy\ndescription: Ship.\n---\n"}
	sk, err := New("deploy", []File{{Path: "z.md", Content: "z"}, {Path: "b/a.md", Content: "a"}, ok})
	if err != nil {
		t.Fatal(err)
	}
	if sk.Files[0].Path != Manifest || sk.Files[1].Path != "b/a.md" || sk.Files[2].Path != "z.md" || sk.Description != "Ship." {
		t.Errorf("skill %+v", sk)
	}
	if d := Digest("abc"); d != "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("Digest(abc) = %s", d)
	}
	for _, c := range []struct {
		name  string
		files []File
		code  string
	}{
		{"Deploy", []File{ok}, atrium.EInvalid},
		{"deploy", []File{{Path: "x.md"}}, atrium.EInvalid},
		{"other", []File{ok}, atrium.EInvalid},
		{"deploy", []File{{Path: Manifest, Content: "---\nname: deploy\n---\n"}}, atrium.EInvalid},
		{"deploy", []File{ok, {Path: "big.md", Content: strings.Repeat("x", MaxBytes)}}, atrium.ETooLarge},
	} {
		if _, err := New(c.name, c.files); atrium.ErrorCode(err) != c.code {
			t.Errorf("New(%s, %d files): %v, want %s", c.name, len(c.files), err, c.code)
		}
	}
}
