package web

import "net/http"

// remove sends a page to the trash, from where /trash brings it back.
func (h *Handler) remove(w http.ResponseWriter, r *http.Request) {
	if _, err := h.Services.Pages.DeletePage(r.Context(), r.PathValue("path")); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/trash", http.StatusSeeOther)
}
