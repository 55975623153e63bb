package web

import (
	"net/http"
	"net/url"

	"github.com/atrium-hq/atrium/pages"
)

// trashView is the workspace's trash.
type trashView struct {
	view
	Pages []pages.TrashEntry
	Next  string
}

func (h *Handler) trash(w http.ResponseWriter, r *http.Request) {
	res, err := h.Services.Pages.Trash(r.Context(), pages.TrashRequest{Cursor: r.URL.Query().Get("cursor")})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := res.Output()
	v := trashView{Pages: out.Pages}
	if out.NextCursor != "" {
		v.Next = "/trash?cursor=" + url.QueryEscape(out.NextCursor)
	}
	h.render(w, r, http.StatusOK, "trash", &v)
}

// restoreFromTrash brings a page back, to new_path when its own is taken.
func (h *Handler) restoreFromTrash(w http.ResponseWriter, r *http.Request) {
	res, err := h.Services.Pages.RestorePage(r.Context(), pages.RestoreRequest{PageID: r.PathValue("id"), To: r.PostFormValue("new_path")})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, pageURL(res.Page.Path), http.StatusSeeOther)
}
