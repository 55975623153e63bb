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
	Root    commentView
	Replies []commentView
	Mine    bool // the viewer may delete it: its author, or an admin
}

// commentView is one comment of a thread as the page shows it, and whether
// it is the viewer's own (which they may edit). Its fields are its own, not
// an embedded atrium.Annotation's: the page template reads them for every
// comment, and a field reached through an embedded struct costs the
// template a search each time (the render benchmark's largest cost).
type commentView struct {
	UID, DocPath, Author, Content string
	ReviewUID                     string
	Status                        atrium.AnnotationStatus
	Quote                         *atrium.Quote
	AI                            bool // written by an agent
	Own                           bool
}

// viewThread is a thread as the viewer a sees it: what they may edit and
// delete.
func viewThread(a *atrium.Actor, root atrium.Annotation, replies []atrium.Annotation) threadView {
	own := func(x atrium.Annotation) commentView {
		return commentView{UID: x.UID, DocPath: x.DocPath, Author: x.Author, Content: x.Content, ReviewUID: x.ReviewUID,
			Status: x.Status, Quote: x.Quote, AI: x.AuthorType == atrium.AuthorAI, Own: x.Author == a.Principal.Handle}
	}
	tv := threadView{Root: own(root), Mine: a.Role == atrium.RoleAdmin || root.Author == a.Principal.Handle}
	if len(replies) > 0 {
		tv.Replies = make([]commentView, 0, len(replies))
	}
	for _, x := range replies {
		tv.Replies = append(tv.Replies, own(x))
	}
	return tv
}

// threadsPerPage is how many threads the page view shows at once; a link
// brings the next ones.
const threadsPerPage = 200

// pageThreads are the review threads of a page as the page view shows them.
type pageThreads struct {
	Anchored, Orphaned []threadView
	Next               string // the cursor of the threads after these, "" at the end
}

// threads are the review threads of page p after cursor, roots in order
// with their replies; orphaned ones (their quote is gone) apart.
func (h *Handler) threads(r *http.Request, p, cursor string) (pageThreads, error) {
	a := atrium.ActorFromContext(r.Context())
	list, err := h.Services.Review.Threads(r.Context(), review.ThreadsRequest{DocPath: p, Cursor: cursor, Limit: threadsPerPage})
	if err != nil {
		return pageThreads{}, err
	}
	out := pageThreads{Next: list.NextCursor}
	for _, t := range list.Threads {
		tv := viewThread(a, t.Annotation, t.Replies)
		if t.Annotation.Orphaned {
			out.Orphaned = append(out.Orphaned, tv)
		} else {
			out.Anchored = append(out.Anchored, tv)
		}
	}
	return out, nil
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
	req := review.CreateRequest{DocPath: r.PostFormValue("doc_path"), Content: formText(r, "content"), ParentID: r.PostFormValue("parent_id")}
	if exact := strings.TrimSpace(formText(r, "quote_exact")); exact != "" {
		req.Quote = &atrium.Quote{Exact: exact, Prefix: formText(r, "quote_prefix"), Suffix: formText(r, "quote_suffix")}
	}
	ann, _, err := h.Services.Review.Create(r.Context(), req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	back(w, r, ann.DocPath, threadAnchor(ann))
}

func rootOf(a atrium.Annotation) string {
	if a.ParentUID != "" {
		return a.ParentUID
	}
	return a.UID
}

// resolveThread and reopenThread are a thread's buttons; editComment is
// the form that edits one's own comment (the review service says who may:
// the author, or an admin).
func (h *Handler) resolveThread(w http.ResponseWriter, r *http.Request) {
	h.changeThread(w, r, h.Services.Review.Resolve, threadAnchor)
}

func (h *Handler) reopenThread(w http.ResponseWriter, r *http.Request) {
	h.changeThread(w, r, h.Services.Review.Reopen, threadAnchor)
}

func (h *Handler) editComment(w http.ResponseWriter, r *http.Request) {
	content := formText(r, "content")
	edit := func(ctx context.Context, id string) (atrium.Annotation, error) {
		return h.Services.Review.Edit(ctx, id, content)
	}
	h.changeThread(w, r, edit, func(a atrium.Annotation) string { return "comment-" + a.UID })
}

// changeThread makes change to comment {id}, then shows the page it is on
// at anchor.
func (h *Handler) changeThread(w http.ResponseWriter, r *http.Request, change func(ctx context.Context, id string) (atrium.Annotation, error), anchor func(atrium.Annotation) string) {
	ann, err := change(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	back(w, r, ann.DocPath, anchor(ann))
}

func threadAnchor(a atrium.Annotation) string { return "thread-" + rootOf(a) }

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
	t, err := h.Services.Review.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "delete", &confirmView{Thread: t.Annotation, N: len(t.Replies)})
}

func (h *Handler) deleteThread(w http.ResponseWriter, r *http.Request) {
	res, err := h.Services.Review.Delete(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	back(w, r, res.Annotation.DocPath, "threads")
}

// submitReview submits the person's draft comments on a page as a review.
func (h *Handler) submitReview(w http.ResponseWriter, r *http.Request) {
	doc := r.PostFormValue("doc_path")
	if _, err := h.Services.Review.Submit(r.Context(), review.SubmitRequest{DocPath: doc, Summary: formText(r, "summary")}); err != nil {
		h.fail(w, r, err)
		return
	}
	back(w, r, doc, "threads")
}
