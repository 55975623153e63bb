package web

import (
	"net/http"
	"net/url"

	"github.com/atrium-hq/atrium"
)

// reviewsPerPage bounds the reviews the page view lists; past it, the page
// says that older ones are left out.
const reviewsPerPage = 50

// reviewView is one review of a page as its view lists it.
type reviewView struct {
	atrium.Review
	Threads int    // its threads, when the view holds all of the page's (else -1)
	Link    string // the page showing this review's threads alone
}

// pageReviews fills the page view's threads — a window of them, or with
// ?review= all of one review's — and the page's reviews with their status.
func (h *Handler) pageReviews(r *http.Request, v *pageView) error {
	ctx := r.Context()
	a := atrium.ActorFromContext(ctx)
	q := r.URL.Query()
	if id := q.Get("review"); id != "" {
		res, err := h.Services.Review.GetReview(ctx, id)
		if err != nil {
			return err
		}
		if res.Review.DocPath != v.Page.Path {
			return atrium.Errorf(atrium.ENotFound, "review %s is of %s, not of this page", id, res.Review.DocPath)
		}
		v.Review = &reviewView{Review: res.Review}
		v.Threads, v.Orphaned = threadsOf(a, res.Annotations)
	} else {
		th, err := h.threads(r, v.Page.Path, q.Get("threads"))
		if err != nil {
			return err
		}
		v.Threads, v.Orphaned = th.Anchored, th.Orphaned
		if th.Next != "" {
			v.MoreThreads = pageURL(v.Page.Path) + "?" + url.Values{"threads": {th.Next}}.Encode() + "#threads"
		}
	}
	list, err := h.Services.Review.ListReviews(ctx, v.Page.Path, "", "", reviewsPerPage)
	if err != nil {
		return err
	}
	v.MoreReviews = list.NextCursor != ""
	all := v.Review == nil && v.MoreThreads == "" && q.Get("threads") == ""
	count := map[string]int{}
	for _, t := range append(v.Threads, v.Orphaned...) {
		count[t.Root.ReviewUID]++
		if t.Root.Status == atrium.StatusDraft && t.Root.Author == a.Principal.Handle {
			v.Drafts++
		}
	}
	for _, rv := range list.Reviews {
		n := -1
		if all {
			n = count[rv.UID]
		}
		v.Reviews = append(v.Reviews, reviewView{Review: rv, Threads: n, Link: pageURL(v.Page.Path) + "?review=" + url.QueryEscape(rv.UID) + "#threads"})
	}
	if v.Review != nil {
		v.Review.Threads = len(v.Threads) + len(v.Orphaned)
	}
	return nil
}

// threadsOf gathers one review's annotations (oldest first) into threads.
func threadsOf(a *atrium.Actor, anns []atrium.Annotation) (anchored, orphaned []threadView) {
	var roots []atrium.Annotation
	replies := map[string][]atrium.Annotation{}
	for _, x := range anns {
		if x.ParentUID == "" {
			roots = append(roots, x)
		} else {
			replies[x.ParentUID] = append(replies[x.ParentUID], x)
		}
	}
	for _, root := range roots {
		t := viewThread(a, root, replies[root.UID])
		if root.Orphaned {
			orphaned = append(orphaned, t)
		} else {
			anchored = append(anchored, t)
		}
	}
	return anchored, orphaned
}
