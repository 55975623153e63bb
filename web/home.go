package web

import (
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
)

// homeView is the home page of a member: the way into the pages (the top
// of the tree and what changed lately), what happened, what is under review,
// and which threads wait for them.
type homeView struct {
	view
	Top      []pages.Child // the root's first homeTop pages and folders
	MoreTop  bool          // the root holds more
	Recent   []recentPage
	Activity []activityRow
	Older    string // the feed's next page
	Reviews  []atrium.Review
	Waiting  []atrium.Annotation
	// MoreWaiting is how many waiting threads are not listed; Scanned how
	// many open threads were looked at, and NotScanned that there are more.
	MoreWaiting, Scanned int
	NotScanned           bool
	MoreReviews          bool // more open reviews than listed
	// Attention is what the mirror could not do: conflicts and files it
	// left alone, for a person to sort out.
	Attention []activity.Attention
}

// recentPage is a page recently written, for the home page's list.
type recentPage struct {
	activity.RecentPage
	Name, Folder string
}

// homeTop is how many of the root's pages and folders the home page lists;
// homeRecent, how many recently changed pages.
const (
	homeTop    = 40
	homeRecent = 10
)

func (h *Handler) home(w http.ResponseWriter, r *http.Request, v *homeView) error {
	ctx := r.Context()
	a := atrium.ActorFromContext(ctx)
	top, err := h.Services.Pages.Children(ctx, pages.ChildrenRequest{Limit: homeTop})
	if err != nil {
		return err
	}
	v.Top, v.MoreTop = top.Children, top.NextCursor != ""
	recent, err := h.Services.Activity.RecentPages(ctx, homeRecent)
	if err != nil {
		return err
	}
	for _, p := range recent {
		rp := recentPage{RecentPage: p, Name: strings.TrimSuffix(baseName(p.Path), ".md")}
		if i := strings.LastIndex(p.Path, "/"); i > 0 {
			rp.Folder = p.Path[:i]
		}
		v.Recent = append(v.Recent, rp)
	}
	if v.Activity, v.Older, err = h.feed(r, 0, homeRows); err != nil {
		return err
	}
	if v.Attention, err = h.Services.Activity.NeedsAttention(ctx, 20); err != nil {
		return err
	}
	reviews, err := h.Services.Review.ListReviews(ctx, "", atrium.ReviewSubmitted, "", 20)
	if err != nil {
		return err
	}
	v.Reviews, v.MoreReviews = reviews.Reviews, reviews.NextCursor != ""
	// Waiting for me: open threads I took part in whose last word is
	// someone else's, looked for in up to waitingScan open threads; past
	// that the page says how many it looked at.
	cursor := ""
	for {
		open, err := h.Services.Review.Threads(ctx, review.ThreadsRequest{Status: atrium.StatusSubmitted, Cursor: cursor, Limit: 200})
		if err != nil {
			return err
		}
		v.Scanned += len(open.Threads)
		for _, t := range open.Threads {
			all := append([]atrium.Annotation{t.Annotation}, t.Replies...)
			mine := false
			for _, x := range all {
				mine = mine || x.Author == a.Principal.Handle
			}
			if mine && all[len(all)-1].Author != a.Principal.Handle {
				v.Waiting = append(v.Waiting, t.Annotation)
			}
		}
		if cursor = open.NextCursor; cursor == "" {
			break
		}
		if v.Scanned >= waitingScan {
			v.NotScanned = true
			break
		}
	}
	if len(v.Waiting) > waitingShown {
		v.MoreWaiting = len(v.Waiting) - waitingShown
		v.Waiting = v.Waiting[:waitingShown]
	}
	return nil
}

// waitingScan bounds the open threads the home page reads to find those
// waiting for the person; waitingShown, those it lists.
const (
	waitingScan  = 2000
	waitingShown = 50
)
