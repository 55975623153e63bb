package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
)

// homeView is the home page of a member: what happened, what is under
// review, and which threads wait for them.
type homeView struct {
	view
	Activity []activityItem
	Reviews  []atrium.Review
	Waiting  []atrium.Annotation
	// MoreWaiting is how many waiting threads are not listed; Scanned how
	// many open threads were looked at, and NotScanned that there are more.
	MoreWaiting, Scanned int
	NotScanned           bool
	MoreReviews          bool // more open reviews than listed
}

type activityItem struct {
	store.EventBy
	What string // the event in words
	Page string // the page it is about, if any
	Link string // where else it leads: a task, a desk
}

// eventWords says what an event kind means, for people.
var eventWords = map[string]string{
	"page.created": "created", "page.updated": "edited", "page.deleted": "deleted", "page.moved": "moved",
	"page.restored": "restored", "page.purged": "purged", "attachment.added": "attached a file to",
	"annotation.created": "commented on", "annotation.updated": "updated a thread on", "annotation.deleted": "deleted a thread on",
	"annotation.anchored": "re-anchored threads on", "review.created": "started a review of", "review.updated": "updated a review of",
	"review.deleted": "dropped a review of",
	"task.created":   "created task", "task.updated": "updated task", "task.claimed": "claimed task",
	"task.commented": "commented on task", "task.completed": "completed task",
	"desk.progress": "logged progress on the desk of", "desk.archived": "closed the day on the desk of",
}

func (h *Handler) home(w http.ResponseWriter, r *http.Request, v *homeView) error {
	ctx := r.Context()
	a := atrium.ActorFromContext(ctx)
	events, err := h.Activity.Recent(ctx, 50)
	if err != nil {
		return err
	}
	for _, e := range events {
		what, ok := eventWords[e.Kind]
		if !ok {
			continue // housekeeping (sessions, tokens): not a change to the work
		}
		it := activityItem{EventBy: e, What: what}
		if strings.HasSuffix(strings.ToLower(e.Subject), ".md") && e.Kind != "page.deleted" && e.Kind != "page.purged" {
			it.Page = e.Subject
		}
		switch {
		case strings.HasPrefix(e.Kind, "task.") && strings.HasPrefix(e.Subject, "#"):
			it.Link = "/tasks/" + strings.TrimPrefix(e.Subject, "#")
		case strings.HasPrefix(e.Kind, "desk.") && strings.HasPrefix(e.Subject, "@"):
			it.Link = "/desk/" + url.PathEscape(strings.TrimPrefix(e.Subject, "@"))
		}
		if e.Kind == "page.moved" {
			var p struct{ Path string }
			if json.Unmarshal(e.Payload, &p) == nil && p.Path != "" {
				it.Page = p.Path
			}
		}
		v.Activity = append(v.Activity, it)
	}
	reviews, err := h.Review.ListReviews(ctx, "", atrium.ReviewSubmitted, "", 20)
	if err != nil {
		return err
	}
	v.Reviews, v.MoreReviews = reviews.Reviews, reviews.NextCursor != ""
	// Waiting for me: open threads I took part in whose last word is
	// someone else's, looked for in up to waitingScan open threads; past
	// that the page says how many it looked at.
	cursor := ""
	for {
		open, err := h.Review.Threads(ctx, review.ThreadsRequest{Status: atrium.StatusSubmitted, Cursor: cursor, Limit: 200})
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
