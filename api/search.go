package api

import (
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium/pages"
)

// search: GET /api/search?q=…&path=…&tags=a,b&limit=…&cursor=…&explain=true
func (h *Handler) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var tags []string
	for _, t := range q["tags"] {
		for part := range strings.SplitSeq(t, ",") {
			if part = strings.TrimSpace(part); part != "" {
				tags = append(tags, part)
			}
		}
	}
	explain, err := boolParam(r, "explain", false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	query := q.Get("q")
	if query == "" {
		query = q.Get("query")
	}
	res, err := h.Services.Pages.Search(r.Context(), pages.SearchRequest{Query: query, Path: q.Get("path"), Tags: tags, Limit: int(limit), Cursor: q.Get("cursor"), Explain: explain})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

// tree: GET /api/tree?include_metadata=true&cursor=…&limit=…
func (h *Handler) tree(w http.ResponseWriter, r *http.Request) {
	meta, err := boolParam(r, "include_metadata", false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	limit, err := intParam(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.Services.Pages.Tree(r.Context(), pages.TreeRequest{IncludeMetadata: meta, Cursor: r.URL.Query().Get("cursor"), Limit: int(limit)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}
