package web

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/atrium-hq/atrium/pages"
)

// move moves a page (and rewrites the links to it), then shows it at its
// new path, saying how many links changed.
func (h *Handler) move(w http.ResponseWriter, r *http.Request, path string) {
	res, err := h.Docs.MovePage(r.Context(), path, r.PostFormValue("destination_path"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := url.Values{"moved": {strconv.Itoa(res.LinksRewritten)}, "pages": {strconv.Itoa(res.PagesChanged)}}
	http.Redirect(w, r, pageURL(res.NewPath)+"?"+q.Encode(), http.StatusSeeOther)
}

// remove sends a page to the trash, from where /trash brings it back.
func (h *Handler) remove(w http.ResponseWriter, r *http.Request, path string) {
	if _, err := h.Docs.DeletePage(r.Context(), path); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/trash", http.StatusSeeOther)
}

// trashView is the workspace's trash.
type trashView struct {
	view
	Pages []pages.TrashEntry
	Next  string
}

func (h *Handler) trash(w http.ResponseWriter, r *http.Request) {
	res, err := h.Docs.Trash(r.Context(), pages.TrashRequest{Cursor: r.URL.Query().Get("cursor")})
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
	res, err := h.Docs.RestorePage(r.Context(), pages.RestoreRequest{PageID: r.PathValue("id"), To: r.PostFormValue("new_path")})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, pageURL(res.Page.Path), http.StatusSeeOther)
}
