package api

import (
	"net/http"
	"strconv"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/review"
)

func (h *Handler) registerReview(route func(string, http.HandlerFunc)) {
	route("GET /api/annotations", h.listAnnotations)
	route("POST /api/annotations", h.createAnnotation)
	route("GET /api/annotations/{id}", h.getAnnotation)
	route("PATCH /api/annotations/{id}", h.patchAnnotation)
	route("DELETE /api/annotations/{id}", h.deleteAnnotation)
	route("GET /api/reviews", h.listReviews)
	route("POST /api/reviews", h.createReview)
	route("GET /api/reviews/{id}", h.getReview)
	route("PATCH /api/reviews/{id}", h.patchReview)
	route("GET /api/access", h.access)
}

// listAnnotations: filters doc_path, section, status and review_id combine.
func (h *Handler) listAnnotations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.Services.Review.List(r.Context(), review.ListRequest{DocPath: q.Get("doc_path"), Section: q.Get("section"), Status: atrium.AnnotationStatus(q.Get("status")),
		ReviewID: q.Get("review_id"), Cursor: q.Get("cursor"), Limit: int(limit)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

// createBody is the body of POST /api/annotations: create_annotation's input.
type createBody struct {
	DocPath  string          `json:"doc_path"`
	Section  string          `json:"section"`
	Content  string          `json:"content"`
	ParentID string          `json:"parent_id"`
	Quote    *review.QuoteIn `json:"quote"`
	Status   string          `json:"status"`
}

func (h *Handler) createAnnotation(w http.ResponseWriter, r *http.Request) {
	var b createBody
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	a, created, err := h.Services.Review.Create(r.Context(), review.CreateRequest{DocPath: b.DocPath, Section: b.Section, Content: b.Content, ParentID: b.ParentID, Quote: b.Quote.Quote(), Status: atrium.AnnotationStatus(b.Status)})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK // the same annotation came moments ago: that one
	}
	h.writeJSON(w, status, review.CreateOutput{Annotation: review.Output(a), Deduplicated: !created})
}

func (h *Handler) getAnnotation(w http.ResponseWriter, r *http.Request) {
	t, err := h.Services.Review.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, t.Output())
}

// patchAnnotation edits content and/or sets status: resolved resolves,
// submitted reopens.
func (h *Handler) patchAnnotation(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Content *string `json:"content"`
		Status  string  `json:"status"`
	}
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	id := r.PathValue("id")
	var a atrium.Annotation
	var err error
	switch {
	case b.Content == nil && b.Status == "":
		err = atrium.Errorf(atrium.EInvalid, "send content, status (resolved or submitted), or both")
	case b.Status != "" && b.Status != string(atrium.StatusResolved) && b.Status != string(atrium.StatusSubmitted):
		err = atrium.Errorf(atrium.EInvalid, "status is resolved (resolve the thread) or submitted (reopen it), not %q", b.Status)
	}
	if err == nil && b.Content != nil {
		a, err = h.Services.Review.Edit(r.Context(), id, *b.Content)
	}
	if err == nil && b.Status == string(atrium.StatusResolved) {
		a, err = h.Services.Review.Resolve(r.Context(), id)
	}
	if err == nil && b.Status == string(atrium.StatusSubmitted) {
		a, err = h.Services.Review.Reopen(r.Context(), id)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, review.Output(a))
}

func (h *Handler) deleteAnnotation(w http.ResponseWriter, r *http.Request) {
	res, err := h.Services.Review.Delete(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("X-Replies-Deleted", strconv.Itoa(res.Replies))
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) listReviews(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(r, "limit")
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.Services.Review.ListReviews(r.Context(), q.Get("doc_path"), atrium.ReviewStatus(q.Get("status")), q.Get("cursor"), int(limit))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

// createReview submits the caller's drafts as a review (status submitted,
// the default), or opens an empty draft review (status draft).
func (h *Handler) createReview(w http.ResponseWriter, r *http.Request) {
	var b struct {
		DocPath       string   `json:"doc_path"`
		Summary       string   `json:"summary"`
		Status        string   `json:"status"`
		AnnotationIDs []string `json:"annotation_ids"`
	}
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	switch b.Status {
	case string(atrium.ReviewDraft):
		rv, err := h.Services.Review.CreateDraft(r.Context(), b.DocPath, b.Summary)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeJSON(w, http.StatusCreated, review.ReviewResult{Review: rv}.Output())
	case "", string(atrium.ReviewSubmitted):
		res, err := h.Services.Review.Submit(r.Context(), review.SubmitRequest{DocPath: b.DocPath, AnnotationIDs: b.AnnotationIDs, Summary: b.Summary})
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.writeJSON(w, http.StatusCreated, res.Output())
	default:
		h.fail(w, r, atrium.Errorf(atrium.EInvalid, "a new review is draft or submitted, not %q", b.Status))
	}
}

func (h *Handler) getReview(w http.ResponseWriter, r *http.Request) {
	res, err := h.Services.Review.GetReview(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

func (h *Handler) patchReview(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Status  string  `json:"status"`
		Summary *string `json:"summary"`
	}
	if err := decode(w, r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	res, err := h.Services.Review.Update(r.Context(), review.UpdateRequest{ID: r.PathValue("id"), Status: atrium.ReviewStatus(b.Status), Summary: b.Summary})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.writeJSON(w, http.StatusOK, res.Output())
}

// access says what the caller may do here, for the browser to show the
// right controls.
func (h *Handler) access(w http.ResponseWriter, r *http.Request) {
	a := atrium.ActorFromContext(r.Context())
	out := map[string]any{
		"authenticated": a.Principal.ID != 0,
		"workspace":     a.Workspace.Name,
		"role":          string(a.Role),
		"can": map[string]bool{
			"read_public":  true,
			"read_private": a.Role.Allows(atrium.RoleReader),
			"comment":      a.Role.Allows(atrium.RoleWriter) && a.Principal.ID != 0,
			"write":        a.Role.Allows(atrium.RoleWriter) && a.Principal.ID != 0,
			"admin":        a.Role.Allows(atrium.RoleAdmin),
		},
	}
	if a.Principal.ID != 0 {
		out["principal"] = map[string]string{"handle": a.Principal.Handle, "kind": string(a.Principal.Kind), "display_name": a.Principal.DisplayName}
	}
	h.writeJSON(w, http.StatusOK, out)
}
