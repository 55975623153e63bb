package pages_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// Every line number a caller sees counts lines of the file as read_page
// shows it, frontmatter included: a section read, a link, and the heading
// list of a "section not found" or "ambiguous" error.
func TestLineNumbersAreFileLines(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		// Lines:                1    2               3    4          5   6                 7   8          9
		v.write(t, "Notes.md", "---\ntitle: Notes\n---\n# Notes\n\nSee [[Other]].\n\n## Setup\n\n## Setup\n")
		r, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Notes.md", Section: "Setup[2]"})
		if err != nil || r.Line != 10 {
			t.Fatalf("section read at line %d, %v; want 10", r.Line, err)
		}
		links, err := v.svc.Links(v.ctx, "Notes.md")
		if err != nil || len(links.Outgoing) != 1 || links.Outgoing[0].Line != 6 {
			t.Fatalf("link lines = %+v, %v; want line 6", links.Outgoing, err)
		}
		_, err = v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Notes.md", Section: "Missing"})
		wantCode(t, err, atrium.ENotFound)
		for _, want := range []string{"Notes (line 4)", "Notes > Setup (line 8)", "Notes > Setup (line 10)"} {
			if !strings.Contains(atrium.ErrorMessage(err), want) {
				t.Errorf("not-found list lacks %q:\n%s", want, atrium.ErrorMessage(err))
			}
		}
		_, err = v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Notes.md", Section: "Setup"})
		if msg := atrium.ErrorMessage(err); !strings.Contains(msg, "(line 8)") || !strings.Contains(msg, "(line 10)") {
			t.Errorf("ambiguous list counts other lines:\n%s", msg)
		}
		_, err = v.svc.EditPage(v.ctx, pages.EditRequest{Path: "Notes.md", Ops: []pages.EditOp{{Op: pages.OpReplaceSection, Section: "Nowhere", Content: "x"}}})
		if msg := atrium.ErrorMessage(err); !strings.Contains(msg, "Notes > Setup (line 8)") {
			t.Errorf("edit's not-found list counts other lines:\n%s", msg)
		}
	})
}
