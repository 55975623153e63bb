package pages_test

import (
	"context"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// Children walks a folder a window at a time, whatever the names: folders
// whose names sort before "/" ("b c", "b-2") and pages named like a folder
// come in key order, each once, and the anonymous see no private page nor a
// folder of private pages only.
func TestChildrenWindowsAndAccess(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		pub := "---\naccess: public\n---\nhi"
		for _, p := range []string{"a.md", "b.md", "b/x.md", "b c/x.md", "b-2/x.md", "c/_index.md", "c/y.md", "Secret/x.md", "z.md"} {
			v.write(t, p, pub)
		}
		v.write(t, "hidden.md", "private")
		v.write(t, "Secret/y.md", "private")
		v.write(t, "Priv/only.md", "private")

		walk := func(ctx context.Context, folder string, limit int) []string {
			t.Helper()
			var out []string
			cursor := ""
			for range 100 {
				res, err := v.svc.Children(ctx, pages.ChildrenRequest{Folder: folder, Cursor: cursor, Limit: limit})
				if err != nil {
					t.Fatalf("children of %q after %q: %v", folder, cursor, err)
				}
				if len(res.Children) > limit {
					t.Fatalf("%d children in a window of %d", len(res.Children), limit)
				}
				for _, c := range res.Children {
					s := c.Name
					if c.Folder != "" {
						s = c.Folder + "/"
						if c.Page != nil {
							s += " " + c.Page.Path
						}
					}
					out = append(out, s)
				}
				if cursor = res.NextCursor; cursor == "" {
					return out
				}
			}
			t.Fatal("the walk does not end")
			return nil
		}
		all := []string{"a.md", "b/", "b c/", "b-2/", "b.md", "c/ c/_index.md", "hidden.md", "Priv/", "Secret/", "z.md"}
		for _, limit := range []int{1, 2, 3, 50} {
			if diff := cmp.Diff(all, walk(v.ctx, "", limit)); diff != "" {
				t.Errorf("member, windows of %d (-want +got):\n%s", limit, diff)
			}
		}
		anon := []string{"a.md", "b/", "b c/", "b-2/", "b.md", "c/ c/_index.md", "Secret/", "z.md"}
		if diff := cmp.Diff(anon, walk(v.anon, "", 2)); diff != "" {
			t.Errorf("anonymous (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"x.md"}, walk(v.anon, "Secret", 1)); diff != "" {
			t.Errorf("anonymous in Secret (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"_index.md", "y.md"}, walk(v.ctx, "c/_index.md", 5)); diff != "" {
			t.Errorf("a folder named by its own page (-want +got):\n%s", diff)
		}
		_, err := v.svc.Children(v.anon, pages.ChildrenRequest{Folder: "Priv"})
		wantCode(t, err, atrium.ENotFound)
		_, err = v.svc.Children(v.ctx, pages.ChildrenRequest{Folder: "Nowhere"})
		wantCode(t, err, atrium.ENotFound)
		_, err = v.svc.Children(v.ctx, pages.ChildrenRequest{Cursor: "!!"})
		wantCode(t, err, atrium.EInvalid)
		_, err = v.svc.Children(v.ctx, pages.ChildrenRequest{Limit: -1})
		wantCode(t, err, atrium.EInvalid)

		// A window up to another child: what lies between, and no cursor past it.
		window := func(limit int) pages.ChildrenResult {
			t.Helper()
			res, err := v.svc.Children(v.ctx, pages.ChildrenRequest{Cursor: pages.ChildCursor("a.md", false), Until: pages.ChildCursor("b-2", true), Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if res := window(5); len(res.Children) != 2 || res.Children[1].Folder != "b c" || res.NextCursor != "" {
			t.Fatalf("window between a.md and b-2/: %+v", res)
		}
		if res := window(1); len(res.Children) != 1 || res.NextCursor != pages.ChildCursor("b", true) {
			t.Fatalf("window of 1 of 2 before b-2/: %+v", res)
		}
		if res := window(2); len(res.Children) != 2 || res.NextCursor != "" {
			t.Fatalf("window of 2 of 2 before b-2/: %+v", res)
		}
	})
}
