package pages_test

import (
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

const spec = `---
title: Spec
---
# Spec

Intro.

## Design

### Storage

SQLite first.

## Ops

### Storage

Backups nightly.

## Notes 🚀

Launch notes.

## ` + "`code` heading" + `

Code notes.

` + "```" + `
## Not a heading
` + "```" + `

## Notes

First plain notes.

## Notes

Second plain notes.
`

func TestReadSectionByHeadingPath(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Spec.md", spec)
		cases := []struct{ section, want, full string }{
			{"Design > Storage", "SQLite first.", "Spec > Design > Storage"},
			{"Ops > Storage", "Backups nightly.", "Spec > Ops > Storage"},
			{"Notes 🚀", "Launch notes.", "Spec > Notes 🚀"},
			{"code heading", "Code notes.", "Spec > code heading"},
			{"Notes[2]", "Second plain notes.", "Spec > Notes"},
		}
		for _, c := range cases {
			r, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Spec.md", Section: c.section})
			if err != nil {
				t.Fatalf("%s: %v", c.section, err)
			}
			if !strings.Contains(r.Content, c.want) || r.Section != c.full {
				t.Errorf("%s: content %q section %q", c.section, r.Content, r.Section)
			}
			if lines := strings.Split(spec, "\n"); !strings.HasPrefix(r.Content, lines[r.Line-1]) {
				t.Errorf("%s: line %d is %q, content starts %q", c.section, r.Line, lines[r.Line-1], r.Content)
			}
		}
		// A section that does not exist, or is ambiguous, is an error — never a no-op.
		_, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Spec.md", Section: "Deployment"})
		wantCode(t, err, atrium.ENotFound)
		_, err = v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Spec.md", Section: "Storage"})
		wantCode(t, err, atrium.EInvalid)
		if !strings.Contains(atrium.ErrorMessage(err), "Design > Storage") {
			t.Errorf("ambiguity should list the candidates: %s", atrium.ErrorMessage(err))
		}
		_, err = v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Spec.md", Section: "Not a heading"})
		wantCode(t, err, atrium.ENotFound)
	})
}

func TestEditOperations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		base := v.write(t, "Spec.md", spec).Page.Revision
		r, err := v.svc.EditPage(v.ctx, pages.EditRequest{Path: "Spec.md", BaseRevision: base, Ops: []pages.EditOp{
			{Op: pages.OpReplaceSection, Section: "Ops > Storage", Content: "Backups hourly, kept 30 days."},
			{Op: pages.OpAppend, Section: "Design > Storage", Text: "PostgreSQL to scale."},
			{Op: pages.OpFindReplace, Find: "Intro.", Replace: "Introduction."},
			{Op: pages.OpSetFrontmatter, Frontmatter: map[string]any{"status": "draft", "tags": []any{"spec"}}},
			{Op: pages.OpPrepend, Text: "> Draft"},
			{Op: pages.OpAppend, Text: "The end."},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Page.Revision != base+1 || !r.Changed {
			t.Fatalf("edit = %+v", r)
		}
		got := v.read(t, "Spec.md")
		for _, want := range []string{"Backups hourly, kept 30 days.", "SQLite first.\n", "PostgreSQL to scale.", "Introduction.", "status: draft", "> Draft\n# Spec", "The end.\n", "title: Spec"} {
			if !strings.Contains(got.Content, want) {
				t.Errorf("content lacks %q:\n%s", want, got.Content)
			}
		}
		if strings.Contains(got.Content, "Backups nightly") {
			t.Error("replace_section kept the old content")
		}
		storage, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: "Spec.md", Section: "Design > Storage"})
		if err != nil || !strings.Contains(storage.Content, "SQLite first.") || !strings.Contains(storage.Content, "PostgreSQL to scale.") {
			t.Fatalf("append to a section put it elsewhere: %q %v", storage.Content, err)
		}
		if got.Page.Tags[0] != "spec" {
			t.Errorf("tags = %v", got.Page.Tags)
		}
	})
}

// One failing operation fails the whole edit, and says which and why.
func TestEditIsAllOrNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v := mustEnv(t, e)
		v.write(t, "Spec.md", spec)
		cases := []struct {
			ops  []pages.EditOp
			code string
			says string
		}{
			{[]pages.EditOp{{Op: pages.OpAppend, Text: "x"}, {Op: pages.OpReplaceSection, Section: "Nope", Content: "y"}}, atrium.ENotFound, "operation 2"},
			{[]pages.EditOp{{Op: pages.OpFindReplace, Find: "Notes", Replace: "N"}}, atrium.EConflict, "found 3"},
			{[]pages.EditOp{{Op: pages.OpFindReplace, Find: "absent", Replace: "N"}}, atrium.EConflict, "found 0"},
			{[]pages.EditOp{{Op: "rewrite"}}, atrium.EInvalid, "unknown op"},
			{[]pages.EditOp{{Op: pages.OpSetFrontmatter, Frontmatter: map[string]any{"access": "everyone"}}}, atrium.EInvalid, "access"},
			{nil, atrium.EInvalid, "operations is empty"},
		}
		for _, c := range cases {
			_, err := v.svc.EditPage(v.ctx, pages.EditRequest{Path: "Spec.md", Ops: c.ops})
			wantCode(t, err, c.code)
			if !strings.Contains(atrium.ErrorMessage(err), c.says) {
				t.Errorf("message %q should say %q", atrium.ErrorMessage(err), c.says)
			}
		}
		if got := v.read(t, "Spec.md"); got.Content != spec || got.Page.Revision != 1 {
			t.Fatalf("a failed edit changed the page (revision %d)", got.Page.Revision)
		}
		// find_replace with the right expected count replaces them all.
		r, err := v.svc.EditPage(v.ctx, pages.EditRequest{Path: "Spec.md", Ops: []pages.EditOp{{Op: pages.OpFindReplace, Find: "Storage", Replace: "Persistence", ExpectedCount: 2}}})
		if err != nil || strings.Contains(v.read(t, "Spec.md").Content, "Storage") {
			t.Fatalf("find_replace x2: %+v %v", r, err)
		}
		// A stale base revision is a conflict.
		_, err = v.svc.EditPage(v.ctx, pages.EditRequest{Path: "Spec.md", BaseRevision: 1, Ops: []pages.EditOp{{Op: pages.OpAppend, Text: "late"}}})
		wantCode(t, err, atrium.EConflict)
	})
}
