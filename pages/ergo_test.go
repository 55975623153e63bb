package pages_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store/storetest"
)

// A depth or limit out of range is the caller's mistake, said plainly, not
// quietly mended into another listing.
func TestListingsValidateDepthAndLimit(t *testing.T) {
	for _, e := range storetest.Engines {
		t.Run(string(e), func(t *testing.T) {
			v := mustEnv(t, e)
			v.write(t, "A/B.md", "# B")
			for _, r := range []pages.ListRequest{{Depth: -1}, {Depth: 65}, {Limit: -1}, {Limit: 1001}} {
				_, err := v.svc.ListPages(v.ctx, r)
				wantCode(t, err, atrium.EInvalid)
				if !strings.Contains(err.Error(), "must be from 1 to") {
					t.Errorf("%+v: %v", r, err)
				}
			}
			for _, r := range []pages.TreeRequest{{Limit: -5}, {Limit: 2001}} {
				_, err := v.svc.Tree(v.ctx, r)
				wantCode(t, err, atrium.EInvalid)
			}
			for _, r := range []pages.ListRequest{{IncludePrivate: true}, {Depth: 64, Limit: 1000, IncludePrivate: true}} {
				if res, err := v.svc.ListPages(v.ctx, r); err != nil || len(res.Entries) == 0 {
					t.Errorf("%+v: %v %+v", r, err, res)
				}
			}
		})
	}
}

// Names Windows keeps for devices are refused for new pages, folders and
// destinations, as ':' is: the folder mirror could not write them there.
func TestWindowsDeviceNamesRefused(t *testing.T) {
	v := mustEnv(t, storetest.Engines[0])
	for _, p := range []string{"CON.md", "con.md", "Notes/nul.md", "aux.draft.md", "COM1.md", "lpt9.md", "Prn/Page.md", "Com3.x/Page.md"} {
		_, err := v.svc.WritePage(v.ctx, pages.WriteRequest{Path: p, Content: "x"})
		wantCode(t, err, atrium.EInvalid)
		if !strings.Contains(err.Error(), "device name on Windows") {
			t.Errorf("%s: %v", p, err)
		}
	}
	_, err := v.svc.CreatePage(v.ctx, pages.CreateRequest{Title: "CON"})
	wantCode(t, err, atrium.EInvalid)
	v.write(t, "Notes/Ok.md", "x")
	_, err = v.svc.MovePage(v.ctx, "Notes/Ok.md", "Aux/Ok.md")
	wantCode(t, err, atrium.EInvalid)
	for _, p := range []string{"Console.md", "Cons/x.md", "COM10.md", "LPT0.md", "Null.md", "Contact.md"} {
		v.write(t, p, "fine")
	}
}
