package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/review"
)

// threadView is a review thread beside the page.
type threadView struct {
	Root    commentView
	Replies []commentView
	Mine    bool // the viewer may delete it: its author, or an admin
	// Reply is the text of a reply to it that failed, kept; Error says why.
	Reply, Error string
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
	QuoteOffset                   int
	// Shown is the quote as the page shows it: "run nightly" of
	// "run **nightly**", which is what a person selected.
	Shown string
	AI    bool // written by an agent
	Own   bool
	// Edit is the text of an edit of it that failed, kept; Error says why.
	Edit, Error string
}

// viewThread is a thread as the viewer a sees it: what they may edit and
// delete.
func viewThread(a *atrium.Actor, root atrium.Annotation, replies []atrium.Annotation) threadView {
	own := func(x atrium.Annotation) commentView {
		return commentView{UID: x.UID, DocPath: x.DocPath, Author: x.Author, Content: x.Content, ReviewUID: x.ReviewUID,
			Status: x.Status, Quote: x.Quote, QuoteOffset: x.QuoteOffset, AI: x.AuthorType == atrium.AuthorAI, Own: x.Author == a.Principal.Handle}
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
		form := pageForm{Where: "comment", Content: req.Content, Quote: req.Quote}
		if req.ParentID != "" {
			form = pageForm{Where: "reply", ID: req.ParentID, Content: req.Content}
		}
		h.refused(w, r, req.DocPath, form, err)
		return
	}
	back(w, r, ann.DocPath, threadAnchor(ann))
}

// refused shows page doc again after one of its forms failed, with what
// the person typed in place and the error beside it: no error drops their
// text. Without a page to show it on, the error page has the text.
func (h *Handler) refused(w http.ResponseWriter, r *http.Request, doc string, form pageForm, err error) {
	if doc == "" {
		h.renderError(w, r, err, "error", &errorView{Typed: form.Content})
		return
	}
	h.showPage(w, r, doc, form, err)
}

// placeForm puts a failed form's text and error where that form is: a
// reply's in its thread, an edit's in its comment; the new comment's and
// the summary's the template places itself.
func placeForm(v *pageView, failed error) {
	f := v.Form
	msg := atrium.ErrorMessage(failed)
	found := f.Where == "comment" || f.Where == "summary"
	for _, list := range [][]threadView{v.Threads, v.Orphaned} {
		for i := range list {
			t := &list[i]
			if f.Where == "reply" && t.Root.UID == f.ID {
				t.Reply, t.Error, found = f.Content, msg, true
			}
			for _, c := range append([]*commentView{&t.Root}, replyPtrs(t)...) {
				if f.Where == "edit" && c.UID == f.ID {
					c.Edit, c.Error, found = f.Content, msg, true
				}
			}
		}
	}
	if !found {
		// Its thread is not on the page any more (deleted meanwhile): the
		// text goes in the new comment's form, so that it is not lost.
		v.Form = pageForm{Where: "comment", Content: f.Content}
	}
}

func replyPtrs(t *threadView) []*commentView {
	out := make([]*commentView, len(t.Replies))
	for i := range t.Replies {
		out[i] = &t.Replies[i]
	}
	return out
}

// showQuotes sets what each thread's quote looks like on the page: the
// rendered text of the source it is anchored to, or for an orphaned one
// (its source gone) its own text rendered.
func showQuotes(body string, anchored, orphaned []threadView) {
	var vis *markdown.Visible
	for i := range anchored {
		c := &anchored[i].Root
		if q := c.Quote; q != nil {
			if off := c.QuoteOffset; off >= 0 && off+len(q.Exact) <= len(body) && body[off:off+len(q.Exact)] == q.Exact {
				if vis == nil {
					vis = markdown.NewVisible(body)
				}
				c.Shown = vis.Slice(off, off+len(q.Exact))
			}
			if c.Shown == "" {
				c.Shown = markdown.NewVisible(q.Exact).Text
			}
		}
	}
	for i := range orphaned {
		if q := orphaned[i].Root.Quote; q != nil {
			orphaned[i].Root.Shown = markdown.NewVisible(q.Exact).Text
		}
	}
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
	ann, err := h.Services.Review.Edit(r.Context(), r.PathValue("id"), content)
	if err != nil {
		h.refused(w, r, r.PostFormValue("doc_path"), pageForm{Where: "edit", ID: r.PathValue("id"), Content: content}, err)
		return
	}
	back(w, r, ann.DocPath, "comment-"+ann.UID)
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
	summary := formText(r, "summary")
	if _, err := h.Services.Review.Submit(r.Context(), review.SubmitRequest{DocPath: doc, Summary: summary}); err != nil {
		h.refused(w, r, doc, pageForm{Where: "summary", Content: summary}, err)
		return
	}
	back(w, r, doc, "threads")
}
