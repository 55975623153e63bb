package web

import (
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// newPageView asks for the path of a page to create.
type newPageView struct {
	view
	Path     string
	Existing string // a page already at Path: the address to edit it
}

// newPage serves /new: a form that asks for a path (a folder's address
// suggests the folder), and, given one, opens the editor on it. ".md" is
// added when left out; a path that is taken or not allowed says so, with
// the path kept for correcting it.
func (h *Handler) newPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := &newPageView{Path: q.Get("path")}
	if !q.Has("path") {
		if folder := strings.Trim(q.Get("folder"), "/"); folder != "" {
			v.Path = folder + "/"
		}
		h.render(w, r, http.StatusOK, "new", v)
		return
	}
	if a := atrium.ActorFromContext(r.Context()); a == nil || !a.Role.Allows(atrium.RoleWriter) {
		h.renderError(w, r, atrium.Errorf(atrium.EPermission, "only writers make pages: sign in with a writer's token"), "new", v)
		return
	}
	p := strings.TrimSpace(v.Path)
	if p != "" && !strings.HasSuffix(strings.ToLower(p), ".md") {
		p += ".md"
	}
	clean, err := pages.NormalizePath(p)
	if err != nil {
		h.renderError(w, r, err, "new", v)
		return
	}
	v.Path = clean
	switch _, err := h.Services.Pages.ReadPage(r.Context(), pages.ReadRequest{Path: clean}); atrium.ErrorCode(err) {
	case atrium.ENotFound:
		http.Redirect(w, r, actionURL("edit", clean), http.StatusSeeOther)
	case "":
		v.Existing = actionURL("edit", clean)
		h.renderError(w, r, atrium.Errorf(atrium.EConflict, "a page is already at %s", clean), "new", v)
	default:
		h.renderError(w, r, err, "new", v)
	}
}
