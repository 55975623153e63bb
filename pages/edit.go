package pages

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/store"
)

// Edit operations.
const (
	OpAppend         = "append"
	OpPrepend        = "prepend"
	OpFindReplace    = "find_replace"
	OpReplaceSection = "replace_section"
	OpSetFrontmatter = "set_frontmatter"
)

// maxOps bounds the operations of one edit.
const maxOps = 100

// An EditOp is one change of an edit. Which fields count depends on Op.
type EditOp struct {
	Op            string
	Text          string         // append, prepend: the text to add
	Section       string         // append, prepend: optional section to add it to; replace_section: the section
	Find          string         // find_replace
	Replace       string         // find_replace
	ExpectedCount int            // find_replace: how many occurrences must be found (0 means 1)
	Content       string         // replace_section: the section's new content (below its heading)
	Frontmatter   map[string]any // set_frontmatter: keys to set; a nil value removes the key
}

// EditRequest changes part of a page.
type EditRequest struct {
	Path string
	// BaseRevision, when given, must be the current revision; without it the
	// operations apply to whatever is current (they are all-or-nothing anyway).
	BaseRevision int64
	Ops          []EditOp
}

// EditPage applies the operations in order to the page, all or nothing: the
// first that cannot apply fails the edit and nothing is saved.
func (s *Service) EditPage(ctx context.Context, r EditRequest) (WriteResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	path, err := NormalizePath(r.Path)
	if err != nil {
		return WriteResult{}, err
	}
	switch {
	case len(r.Ops) == 0:
		return WriteResult{}, atrium.Errorf(atrium.EInvalid, "operations is empty: give at least one of append, prepend, find_replace, replace_section, set_frontmatter")
	case len(r.Ops) > maxOps:
		return WriteResult{}, atrium.Errorf(atrium.EInvalid, "%d operations; at most %d per edit", len(r.Ops), maxOps)
	}
	var res WriteResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.PageByPath(ctx, a.Workspace.ID, path)
		if err != nil {
			return err
		}
		if r.BaseRevision > 0 {
			if err := checkBase(cur, r.BaseRevision, false); err != nil {
				return err
			}
		}
		content, err := applyOps(cur.Path, cur.Content, r.Ops)
		if err != nil {
			return err
		}
		res.Page = cur
		if content == cur.Content {
			return nil
		}
		pc, err := parse(cur.Path, content)
		if err != nil {
			return err
		}
		res.Changed = true
		pc.apply(&res.Page, content)
		if err := tx.UpdatePage(ctx, &res.Page, pc.index(cur.Path), a.Principal.ID); err != nil {
			return err
		}
		return s.emit(ctx, tx, a, EventPageUpdated, res.Page, "")
	})
	if err != nil {
		return WriteResult{}, err
	}
	return res, nil
}

// applyOps returns content with every operation applied, or the error of the
// first that cannot apply, naming it.
func applyOps(path, content string, ops []EditOp) (string, error) {
	for i, op := range ops {
		next, err := applyOp(path, content, op)
		if err != nil {
			return "", prefixError(fmt.Sprintf("operation %d (%s): ", i+1, op.Op), err)
		}
		content = next
	}
	return content, nil
}

func prefixError(prefix string, err error) error {
	var e *atrium.Error
	if errors.As(err, &e) {
		return &atrium.Error{Code: e.Code, Message: prefix + e.Message, Details: e.Details}
	}
	return err
}

func applyOp(path, content string, op EditOp) (string, error) {
	fm, body, doc := markdown.ParsePage(content)
	switch op.Op {
	case OpAppend, OpPrepend:
		if op.Text == "" {
			return "", atrium.Errorf(atrium.EInvalid, "text is required")
		}
		start, end := 0, len(body)
		if op.Section != "" {
			h, err := doc.Section(op.Section)
			if err != nil {
				return "", sectionError(path, err)
			}
			start, end = h.ContentStart, h.End
		}
		if op.Op == OpAppend {
			return markdown.Join(fm, insertAt(body, end, op.Text, true)), nil
		}
		return markdown.Join(fm, insertAt(body, start, op.Text, false)), nil
	case OpFindReplace:
		if op.Find == "" {
			return "", atrium.Errorf(atrium.EInvalid, "find is required")
		}
		want := op.ExpectedCount
		if want == 0 {
			want = 1
		}
		if want < 0 {
			return "", atrium.Errorf(atrium.EInvalid, "expected_count must be 1 or more, not %d", want)
		}
		if n := strings.Count(body, op.Find); n != want {
			return "", atrium.Errorf(atrium.EConflict, "found %d occurrence(s) of %q in %s, expected %d; nothing was changed. Read the page and adjust find or expected_count.", n, clip(op.Find), path, want).
				WithDetails(map[string]any{"found": n, "expected": want})
		}
		return markdown.Join(fm, strings.ReplaceAll(body, op.Find, op.Replace)), nil
	case OpReplaceSection:
		if op.Section == "" {
			return "", atrium.Errorf(atrium.EInvalid, "section is required")
		}
		h, err := doc.Section(op.Section)
		if err != nil {
			return "", sectionError(path, err)
		}
		repl := op.Content
		if repl != "" && !strings.HasSuffix(repl, "\n") && h.End < len(body) {
			repl += "\n"
		}
		if h.End < len(body) && !strings.HasSuffix(repl, "\n\n") {
			repl += "\n" // keep a blank line before the next heading
		}
		return markdown.Join(fm, body[:h.ContentStart]+leadingBreak(repl)+body[h.End:]), nil
	case OpSetFrontmatter:
		if len(op.Frontmatter) == 0 {
			return "", atrium.Errorf(atrium.EInvalid, "frontmatter is required: an object of keys to set (null removes a key)")
		}
		nfm, err := markdown.SetFrontmatter(fm, op.Frontmatter)
		if err != nil {
			return "", atrium.Errorf(atrium.EInvalid, "%v", err)
		}
		if fm == "" && body != "" && !strings.HasPrefix(body, "\n") {
			body = "\n" + body
		}
		return markdown.Join(nfm, body), nil
	case "":
		return "", atrium.Errorf(atrium.EInvalid, "op is required: append, prepend, find_replace, replace_section or set_frontmatter")
	}
	return "", atrium.Errorf(atrium.EInvalid, "unknown op %q: use append, prepend, find_replace, replace_section or set_frontmatter", op.Op)
}

// insertAt inserts text at offset i of body as its own line(s).
func insertAt(body string, i int, text string, after bool) string {
	before, rest := body[:i], body[i:]
	if after {
		if before != "" && !strings.HasSuffix(before, "\n") {
			before += "\n"
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if rest != "" && !strings.HasPrefix(rest, "\n") {
			text += "\n"
		}
		return before + text + rest
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return before + text + rest
}

// leadingBreak keeps section content off its heading line.
func leadingBreak(s string) string {
	if s == "" || strings.HasPrefix(s, "\n") {
		return s
	}
	return "\n" + s
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// frontmatterMap decodes frontmatter YAML for callers.
func frontmatterMap(fm string) (map[string]any, error) {
	out := map[string]any{}
	if strings.TrimSpace(fm) == "" {
		return out, nil
	}
	if err := yaml.Unmarshal([]byte(fm), &out); err != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "invalid frontmatter: %v", err)
	}
	return out, nil
}

func asMarkdownError(err error, target **markdown.Error) bool { return errors.As(err, target) }
