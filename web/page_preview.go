package web

import (
	"net/http"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
)

// preview shows the editor's text rendered, unsaved, with its links
// resolved by the pages service as the page view resolves them: a link to
// a page that does not exist is shown as unresolved. Previewing is part of
// editing, so it is for writers, as saving is: like every other POST, it is
// refused to readers and to the anonymous.
func (h *Handler) preview(w http.ResponseWriter, r *http.Request) {
	v := editorForm(r)
	if a := atrium.ActorFromContext(r.Context()); a == nil || !a.Role.Allows(atrium.RoleWriter) {
		h.renderError(w, r, atrium.Errorf(atrium.EPermission, "only writers edit pages: sign in with a writer's token"), "edit", &v)
		return
	}
	_, body, _ := markdown.Split(v.Content)
	var err error
	if v.Preview, err = h.renderLinked(r, v.Path, body); err != nil {
		h.renderError(w, r, err, "edit", &v)
		return
	}
	h.render(w, r, http.StatusOK, "edit", &v)
}
