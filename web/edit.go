package web

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/internal/linediff"
	"github.com/atrium-hq/atrium/pages"
)

// editView is the editor of a page.
type editView struct {
	view
	Path     string
	Content  string // what the person is writing
	Base     int64  // the revision it is based on; 0 for a new page
	Preview  template.HTML
	Conflict *atrium.Page // the store's newer version, when saving found one that does not merge
	Diff     []diffRow    // from that version to the person's text
	// LastEvent is the workspace's newest event when the editor opened:
	// its live notices start after it.
	LastEvent int64
}

// edit shows /edit/{path}: the page's Markdown in an editor, or an empty
// one for a page that does not exist yet.
func (h *Handler) edit(w http.ResponseWriter, r *http.Request) {
	path := r.PathValue("path")
	v := editView{Path: path}
	if a := atrium.ActorFromContext(r.Context()); a != nil && a.Role != "" {
		var err error
		if v.LastEvent, err = h.Services.Activity.Latest(r.Context()); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	read, err := h.Services.Pages.ReadPage(r.Context(), pages.ReadRequest{Path: path})
	switch {
	case err == nil:
		v.Path, v.Content, v.Base = read.Page.Path, read.Page.Content, read.Page.Revision
	case atrium.ErrorCode(err) != atrium.ENotFound:
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "edit", &v)
}

// save takes the editor's form and writes it on the revision it was based
// on. A page changed meanwhile (an agent wrote) is a conflict: the person
// sees both versions and keeps their text; saving again is then based on the
// newer revision, on purpose.
func (h *Handler) save(w http.ResponseWriter, r *http.Request) {
	if r.PostFormValue("action") == "preview" {
		// An editor opened before Preview had its own route posts it here.
		http.Redirect(w, r, actionURL("preview", r.PathValue("path")), http.StatusTemporaryRedirect)
		return
	}
	v := editorForm(r)
	ctx := r.Context()
	res, err := h.Services.Pages.WritePage(ctx, pages.WriteRequest{Path: v.Path, Content: v.Content, BaseRevision: v.Base})
	merged := false
	if atrium.ErrorCode(err) == atrium.EConflict {
		if cur, rerr := h.Services.Pages.ReadPage(ctx, pages.ReadRequest{Path: v.Path}); rerr == nil {
			// Someone wrote meanwhile. Their changes and the person's,
			// each from the revision the editor opened, merge when they
			// touch different lines; only a true overlap asks the person.
			if text, ok := h.merge(r, v, cur.Page); ok {
				res, err = h.Services.Pages.WritePage(ctx, pages.WriteRequest{Path: v.Path, Content: text, BaseRevision: cur.Page.Revision})
				merged = err == nil
			}
			if !merged {
				v.Conflict = &cur.Page
				v.Base = cur.Page.Revision
				lines, ok := linediff.Lines(cur.Page.Content, v.Content)
				if ok {
					v.Diff, _ = hunks(lines, diffContext)
				}
			}
		}
	}
	if err != nil {
		h.renderError(w, r, err, "edit", &v)
		return
	}
	to := pageURL(res.Page.Path)
	if merged {
		to += "?merged=" + strconv.FormatInt(v.Base, 10)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// merge merges the person's text with the page as it now is, from the
// revision their editor opened (base); ok false when the two changed the
// same lines, or the base is not there to merge from.
func (h *Handler) merge(r *http.Request, v editView, cur atrium.Page) (string, bool) {
	if v.Base <= 0 || v.Base >= cur.Revision {
		return "", false
	}
	base, err := h.Services.Pages.ReadPage(r.Context(), pages.ReadRequest{Path: v.Path, Revision: v.Base})
	if err != nil {
		return "", false
	}
	return linediff.Merge(base.Content, v.Content, cur.Content)
}

// editorForm is the editor as the person posted it.
func editorForm(r *http.Request) editView {
	v := editView{Path: r.PathValue("path"), Content: formText(r, "content")}
	v.Base, _ = strconv.ParseInt(r.PostFormValue("base_revision"), 10, 64)
	return v
}

// formText is a text field of a posted form as it was typed: browsers send
// every line break in a form as CRLF, which a page or a comment never means.
func formText(r *http.Request, name string) string {
	return strings.ReplaceAll(r.PostFormValue(name), "\r\n", "\n")
}
