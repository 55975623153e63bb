package web

import (
	"net/http"
	"strconv"
)

// restore makes an earlier revision current again, as a new revision based
// on the one the person saw.
func (h *Handler) restore(w http.ResponseWriter, r *http.Request) {
	path := r.PathValue("path")
	rev, _ := strconv.ParseInt(r.PostFormValue("revision"), 10, 64)
	base, _ := strconv.ParseInt(r.PostFormValue("base_revision"), 10, 64)
	res, err := h.Services.Pages.RestoreRevision(r.Context(), path, rev, base)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, pageURL(res.Page.Path), http.StatusSeeOther)
}
