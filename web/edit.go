package web

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// editView is the editor of a page.
type editView struct {
	view
	Path     string
	Content  string // what the person is writing
	Base     int64  // the revision it is based on; 0 for a new page
	Preview  template.HTML
	Conflict *atrium.Page // the store's newer version, when saving found one
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
	res, err := h.Services.Pages.WritePage(r.Context(), pages.WriteRequest{Path: v.Path, Content: v.Content, BaseRevision: v.Base})
	if atrium.ErrorCode(err) == atrium.EConflict {
		if cur, rerr := h.Services.Pages.ReadPage(r.Context(), pages.ReadRequest{Path: v.Path}); rerr == nil {
			v.Conflict = &cur.Page
			v.Base = cur.Page.Revision
		}
		h.renderError(w, r, err, "edit", &v)
		return
	}
	if err != nil {
		h.renderError(w, r, err, "edit", &v)
		return
	}
	http.Redirect(w, r, pageURL(res.Page.Path), http.StatusSeeOther)
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
