package web

import (
	"net/http"
	"net/url"
	"strconv"
)

// move moves a page (and rewrites the links to it), then shows it at its
// new path, saying how many links changed.
func (h *Handler) move(w http.ResponseWriter, r *http.Request) {
	res, err := h.Services.Pages.MovePage(r.Context(), r.PathValue("path"), r.PostFormValue("destination_path"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := url.Values{"moved": {strconv.Itoa(res.LinksRewritten)}, "pages": {strconv.Itoa(res.PagesChanged)}}
	http.Redirect(w, r, pageURL(res.NewPath)+"?"+q.Encode(), http.StatusSeeOther)
}
