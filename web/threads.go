package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/review"
)

// threadView is a review thread beside the page.
type threadView struct {
	Root    atrium.Annotation
	Replies []atrium.Annotation
	Mine    bool // the viewer may edit or delete it
}

// threads are the review threads of page p, roots in order with their
// replies; orphaned ones (their quote is gone) apart.
func (h *Handler) threads(r *http.Request, p string) (anchored, orphaned []threadView, err error) {
	a := atrium.ActorFromContext(r.Context())
	list, err := h.Review.Threads(r.Context(), review.ThreadsRequest{DocPath: p, Limit: 200})
	if err != nil {
		return nil, nil, err
	}
	for _, t := range list.Threads {
		tv := threadView{Root: t.Annotation, Replies: t.Replies, Mine: a.Role == atrium.RoleAdmin || t.Annotation.Author == a.Principal.Handle}
		if t.Annotation.Orphaned {
			orphaned = append(orphaned, tv)
		} else {
			anchored = append(anchored, tv)
		}
	}
	return anchored, orphaned, nil
}

// back sends the browser to the page a thread is on.
func back(w http.ResponseWriter, r *http.Request, doc, anchor string) {
	to := pageURL(doc)
	if anchor != "" {
		to += "#" + anchor
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// comment starts a thread (a draft until the review is submitted) or, with
// parent_id, replies to one. A quote is the text the person selected, with a
// little before and after it so that it can be found again after edits.
func (h *Handler) comment(w http.ResponseWriter, r *http.Request) {
	req := review.CreateRequest{DocPath: r.PostFormValue("doc_path"), Content: r.PostFormValue("content"), ParentID: r.PostFormValue("parent_id")}
	if exact := strings.TrimSpace(r.PostFormValue("quote_exact")); exact != "" {
		req.Quote = &atrium.Quote{Exact: exact, Prefix: r.PostFormValue("quote_prefix"), Suffix: r.PostFormValue("quote_suffix")}
	}
	ann, _, err := h.Review.Create(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	back(w, r, ann.DocPath, "thread-"+rootOf(ann))
}

func rootOf(a atrium.Annotation) string {
	if a.ParentUID != "" {
		return a.ParentUID
	}
	return a.UID
}

// threadAction serves the buttons of a thread: resolve, reopen, delete.
func (h *Handler) threadAction(w http.ResponseWriter, r *http.Request) {
	var change func(ctx context.Context, id string) (atrium.Annotation, error)
	switch r.PathValue("action") {
	case "resolve":
		change = h.Review.Resolve
	case "reopen":
		change = h.Review.Reopen
	case "delete":
		h.deleteThread(w, r)
		return
	default:
		h.fail(w, r, atrium.Errorf(atrium.ENotFound, "a thread can be resolved, reopened or deleted, not %q", r.PathValue("action")))
		return
	}
	ann, err := change(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	back(w, r, ann.DocPath, "thread-"+rootOf(ann))
}

// confirmView asks before a thread goes, saying what goes with it.
type confirmView struct {
	view
	Thread atrium.Annotation
	N      int
}

// confirmDelete asks "Delete this thread? N replies will also be deleted."
// (000 D3). It is a page, not a script's dialog, so it works without
// JavaScript; Cancel goes back and changes nothing.
func (h *Handler) confirmDelete(w http.ResponseWriter, r *http.Request) {
	t, err := h.Review.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "delete", &confirmView{Thread: t.Annotation, N: len(t.Replies)})
}

func (h *Handler) deleteThread(w http.ResponseWriter, r *http.Request) {
	res, err := h.Review.Delete(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	back(w, r, res.Annotation.DocPath, "threads")
}

// submitReview submits the person's draft comments on a page as a review.
func (h *Handler) submitReview(w http.ResponseWriter, r *http.Request) {
	doc := r.PostFormValue("doc_path")
	if _, err := h.Review.Submit(r.Context(), review.SubmitRequest{DocPath: doc, Summary: r.PostFormValue("summary")}); err != nil {
		h.fail(w, r, err)
		return
	}
	back(w, r, doc, "threads")
}
