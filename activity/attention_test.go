package activity_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// What the mirror could not do is listed for people: each conflict and each
// file left alone once, the newest first, with why (issue 23.8).
func TestNeedsAttentionListsMirrorTrouble(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		w := newWorkspace(t, e)
		ada := w.as(t, "ada", atrium.RoleWriter)
		w.write(t, ada, "Notes.md", 1) // not trouble
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(w.docs.RecordMirrorSkipped(ada, "what?.md", "names cannot contain ?"))
		must(w.docs.RecordMirrorConflict(ada, "Plan.md", "Plan.conflict-20260102T030405Z.md"))
		must(w.docs.RecordMirrorSkipped(ada, "what?.md", "names cannot contain ?")) // again: listed once
		got, err := w.act.NeedsAttention(w.as(t, "bob", atrium.RoleReader), 0)
		if err != nil {
			t.Fatal(err)
		}
		type item struct{ Kind, Path, KeptAs, Why, Actor string }
		var items []item
		for _, a := range got {
			items = append(items, item{a.Kind, a.Path, a.KeptAs, a.Why, a.Actor})
		}
		want := []item{
			{"mirror.skipped", "what?.md", "", "names cannot contain ?", "ada"},
			{"mirror.conflict", "Plan.md", "Plan.conflict-20260102T030405Z.md", "", "ada"},
		}
		if diff := cmp.Diff(want, items); diff != "" {
			t.Errorf("needs attention (-want +got):\n%s", diff)
		}
		// Behind three windows of other events (skipped in the database,
		// never read out) the trouble is still found.
		w.write(t, ada, "Busy.md", 600)
		got, err = w.act.NeedsAttention(w.as(t, "bob", atrium.RoleReader), 0)
		if err != nil || len(got) != 2 || got[0].Kind != "mirror.skipped" || got[1].Kind != "mirror.conflict" {
			t.Errorf("needs attention behind 600 writes: %+v, %v", got, err)
		}
	})
}
