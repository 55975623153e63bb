package pages_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// The desk rule: another member's desk plan and draft are refused to a
// writer on every kind of page write; their owner and admins may.
func TestDeskPagesAreTheirOwners(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		dan := v.withRole(t, "dan", atrium.RoleWriter)
		eve := v.withRole(t, "eve", atrium.RoleWriter)
		boss := v.withRole(t, "boss", atrium.RoleAdmin)
		const plan, draft = "Desks/dan/Plan.md", "Desks/dan/Draft.md"
		if _, err := v.svc.WritePage(dan, pages.WriteRequest{Path: "Projects/Alpha.md", Content: "# Alpha\n"}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{plan, draft} {
			if _, err := v.svc.WritePage(dan, pages.WriteRequest{Path: p, Content: "# Mine\n\nSee [[Projects/Alpha]].\n"}); err != nil {
				t.Fatalf("the owner writes %s: %v", p, err)
			}
		}
		// A second revision of the plan, so that restoring the first changes it.
		if _, err := v.svc.WritePage(dan, pages.WriteRequest{Path: plan, Content: "# Mine, again\n\nSee [[Projects/Alpha]].\n", Overwrite: true}); err != nil {
			t.Fatal(err)
		}
		denied := func(t *testing.T, what string, err error) {
			t.Helper()
			if atrium.ErrorCode(err) != atrium.EPermission || !strings.Contains(atrium.ErrorMessage(err), "desk rule") {
				t.Fatalf("%s: %v (code %q), want permission_denied naming the desk rule", what, err, atrium.ErrorCode(err))
			}
		}
		_, err := v.svc.WritePage(eve, pages.WriteRequest{Path: plan, Content: "# Eve's now\n", Overwrite: true})
		denied(t, "overwrite", err)
		_, err = v.svc.WritePage(eve, pages.WriteRequest{Path: "desks/DAN/draft.md", Content: "# Eve's now\n", Overwrite: true})
		denied(t, "overwrite by another case", err)
		_, err = v.svc.EditPage(eve, pages.EditRequest{Path: draft, Ops: []pages.EditOp{{Op: pages.OpAppend, Text: "more"}}})
		denied(t, "edit", err)
		_, err = v.svc.MovePage(eve, plan, "Elsewhere/Plan.md")
		denied(t, "move away", err)
		_, err = v.svc.MovePage(eve, "Desks/dan", "Old/dan")
		denied(t, "move the desk folder", err)
		_, err = v.svc.MovePage(eve, "Projects/Alpha.md", "Desks/fay/Plan.md")
		denied(t, "move onto another's desk", err)
		_, err = v.svc.WritePage(eve, pages.WriteRequest{Path: "Desks/fay/Draft.md", Content: "# Fay's?\n"})
		denied(t, "create on another's desk", err)
		_, err = v.svc.DeletePage(eve, plan)
		denied(t, "delete", err)
		_, err = v.svc.RestoreRevision(eve, plan, 1, 0)
		denied(t, "restore a revision", err)
		res, err := v.svc.Import(eve, slices.Values([]pages.File{{Path: draft, Content: "# Imported\n"}, {Path: "Notes/Eve.md", Content: "# Eve\n"}}), pages.ImportOptions{})
		if err != nil || res.Created != 1 || len(res.Failed) != 1 || !strings.Contains(res.Failed[0].Error, "desk rule") {
			t.Fatalf("import of another's draft: %+v, %v; want it failed by the desk rule and the other file created", res, err)
		}
		for p, rev := range map[string]int64{plan: 2, draft: 1} {
			if r := v.read(t, p); r.Page.Revision != rev || !strings.Contains(r.Content, "Mine") {
				t.Fatalf("%s changed: revision %d %q", p, r.Page.Revision, r.Content)
			}
		}

		// A move of a page the plan links to rewrites the plan's link: that
		// keeps it working, and is not an edit of the plan.
		if _, err := v.svc.MovePage(eve, "Projects/Alpha.md", "Projects/Beta.md"); err != nil {
			t.Fatalf("moving a page a desk links to: %v", err)
		}
		if r := v.read(t, plan); !strings.Contains(r.Content, "Projects/Beta") {
			t.Fatalf("the plan's link was not rewritten: %q", r.Content)
		}

		// Trashed by its owner, another cannot bring it back.
		if _, err := v.svc.DeletePage(dan, draft); err != nil {
			t.Fatal(err)
		}
		_, err = v.svc.RestorePage(eve, pages.RestoreRequest{Path: draft})
		denied(t, "restore from the trash", err)

		// Their own desk, and an admin's, may.
		if _, err := v.svc.WritePage(eve, pages.WriteRequest{Path: "Desks/eve/Plan.md", Content: "# Eve's plan\n"}); err != nil {
			t.Fatalf("eve writes her own plan: %v", err)
		}
		if _, err := v.svc.WritePage(boss, pages.WriteRequest{Path: plan, Content: "# Fixed by an admin\n", Overwrite: true}); err != nil {
			t.Fatalf("an admin writes dan's plan: %v", err)
		}
		if _, err := v.svc.RestorePage(boss, pages.RestoreRequest{Path: draft}); err != nil {
			t.Fatalf("an admin restores dan's draft: %v", err)
		}
		if _, err := v.svc.MovePage(dan, plan, "Desks/dan/Old plan.md"); err != nil {
			t.Fatalf("dan moves his own plan: %v", err)
		}
		// Pages beside the desk's plan and draft are not the desk's.
		if _, err := v.svc.WritePage(eve, pages.WriteRequest{Path: "Desks/dan/Notes.md", Content: "# Shared notes\n"}); err != nil {
			t.Fatalf("a page beside the desk: %v", err)
		}
	})
}
