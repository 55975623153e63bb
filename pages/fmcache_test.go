package pages_test

import (
	"reflect"
	"testing"

	"github.com/atrium-hq/atrium/store/storetest"
)

// Reads share decoded frontmatter; what one caller does to its map must not
// reach the next read, and a new revision's frontmatter is the one read.
func TestReadFrontmatterIsTheCallersOwn(t *testing.T) {
	for _, e := range storetest.Engines {
		t.Run(string(e), func(t *testing.T) {
			v := mustEnv(t, e)
			v.write(t, "A.md", "---\ntitle: A\ntags: [x, y]\nmeta: {k: v}\n---\n# A\n")
			first := v.read(t, "A.md").Frontmatter
			first["title"] = "changed"
			first["tags"].([]any)[0] = "changed"
			first["meta"].(map[string]any)["k"] = "changed"
			want := map[string]any{"title": "A", "tags": []any{"x", "y"}, "meta": map[string]any{"k": "v"}}
			if got := v.read(t, "A.md").Frontmatter; !reflect.DeepEqual(got, want) {
				t.Fatalf("second read: %v, want %v", got, want)
			}
			v.write(t, "A.md", "---\ntitle: B\n---\n# A\n")
			if got := v.read(t, "A.md").Frontmatter; !reflect.DeepEqual(got, map[string]any{"title": "B"}) {
				t.Fatalf("after a write: %v", got)
			}
		})
	}
}
