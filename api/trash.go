package api

import (
	"net/http"

	"github.com/atrium-hq/atrium/pages"
)

func (h *Handler) registerTrash(route func(string, http.HandlerFunc)) {
	route("GET /api/trash", h.listTrash)
	route("POST /api/trash/{id}/restore", h.restorePage)
	route("DELETE /api/trash/{id}", h.purgePage)
}

func (h *Handler) listTrash(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.Services.Pages.Trash(r.Context(), pages.TrashRequest{Path: q.Get("path"), Cursor: q.Get("cursor"), Limit: int(limit)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

// restorePage takes an optional body {"new_path": …}.
func (h *Handler) restorePage(w http.ResponseWriter, r *http.Request) {
	var body struct {
		NewPath string `json:"new_path"`
	}
	if r.ContentLength != 0 {
		if err := decode(w, r, &body); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	res, err := h.Services.Pages.RestorePage(r.Context(), pages.RestoreRequest{PageID: r.PathValue("id"), To: body.NewPath})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

func (h *Handler) purgePage(w http.ResponseWriter, r *http.Request) {
	p, err := h.Services.Pages.PurgePage(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, pages.PurgePageOutput{Purged: true, PageID: p.UID, Path: p.Path})
}
