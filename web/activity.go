package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
)

// activityRow is one row of the activity feed in words: one change, or a run
// of them ("imported 157 pages and 150 files") with the changes listed
// inside it for who wants them.
type activityRow struct {
	activity.Row
	activityItem // the row's own words and link: its one event, or the run's
	Run          bool
	Items        []activityItem // a run's changes, newest first (up to activity.RunEvents)
	More         int            // a run's changes not listed
	FolderLink   string         // the listing of the folder the run's pages and files are in
	Times        int            // a run of one change to one thing: how many times
}

type activityItem struct {
	activity.EventBy
	What string // the event in words
	Page string // the page it is about, if any
	Link string // where else it leads: a task, a desk, a file
	Text string // the link's text, when not the subject
}

// eventWords says what an event kind means, for people; the feed shows
// these kinds only.
var eventWords = map[string]string{
	"page.created": "created", "page.updated": "edited", "page.deleted": "deleted", "page.moved": "moved",
	"page.restored": "restored", "page.purged": "purged", "attachment.added": "added the file",
	"annotation.created": "commented on", "annotation.updated": "updated a thread on", "annotation.deleted": "deleted a thread on",
	"annotation.anchored": "re-anchored threads on", "review.created": "started a review of", "review.updated": "updated a review of",
	"review.deleted": "dropped a review of",
	"task.created":   "created task", "task.updated": "updated task", "task.claimed": "claimed task",
	"task.commented": "commented on task", "task.completed": "completed task",
	"desk.progress": "logged progress on the desk of", "desk.archived": "closed the day on the desk of",
	"mirror.conflict": "saved an older version in the folder; it was kept beside", "mirror.skipped": "has a file in the folder the mirror left alone:",
}

// runWords says what a run of one kind on several subjects did, with how
// many subjects.
var runWords = map[string]string{
	"page.created": "created %d pages", "page.updated": "edited %d pages", "page.deleted": "deleted %d pages", "page.moved": "moved %d pages",
	"page.restored": "restored %d pages", "page.purged": "purged %d pages", "attachment.added": "added %d files",
	"annotation.created": "commented on %d pages", "annotation.updated": "updated threads on %d pages", "annotation.deleted": "deleted threads on %d pages",
	"annotation.anchored": "re-anchored threads on %d pages", "review.created": "started reviews of %d pages", "review.updated": "updated reviews of %d pages",
	"review.deleted": "dropped reviews of %d pages",
	"task.created":   "created %d tasks", "task.updated": "updated %d tasks", "task.claimed": "claimed %d tasks",
	"task.commented": "commented on %d tasks", "task.completed": "completed %d tasks",
	"desk.progress": "logged progress on %d desks", "desk.archived": "closed the day on %d desks",
	"mirror.conflict": "saved older versions of %d pages in the folder, kept beside them", "mirror.skipped": "has %d files in the folder the mirror left alone",
}

// feedKinds are the kinds the feed shows: the work, not its housekeeping
// (sign-ins, tokens, gateway calls).
var feedKinds = func() map[string]bool {
	m := map[string]bool{}
	for k := range eventWords {
		m[k] = true
	}
	return m
}()

// describe says one event in words.
func describe(e activity.EventBy) activityItem {
	it := activityItem{EventBy: e, What: eventWords[e.Kind]}
	switch {
	case e.Kind == "attachment.added":
		var p struct{ Page string }
		if json.Unmarshal(e.Payload, &p) == nil && p.Page != "" {
			it.What, it.Page = "attached "+baseName(e.Subject)+" to", p.Page
		} else {
			it.Link = fileURL(e.Subject)
		}
	case strings.HasPrefix(e.Kind, "task.") && strings.HasPrefix(e.Subject, "#"):
		it.Link = "/tasks/" + strings.TrimPrefix(e.Subject, "#")
	case strings.HasPrefix(e.Kind, "desk.") && strings.HasPrefix(e.Subject, "@"):
		it.Link = "/desk/" + url.PathEscape(strings.TrimPrefix(e.Subject, "@"))
	case e.Kind == "page.moved":
		var p struct{ Path string }
		if json.Unmarshal(e.Payload, &p) == nil && p.Path != "" {
			it.Page = p.Path
		}
	case e.Kind == "mirror.conflict":
		var p struct {
			KeptAs string `json:"kept_as"`
		}
		it.Page = e.Subject
		if json.Unmarshal(e.Payload, &p) == nil && p.KeptAs != "" {
			it.What = "saved an older version in the folder; it was kept as " + p.KeptAs + " beside"
		}
	case e.Kind == "mirror.skipped":
		var p struct{ Why string }
		if json.Unmarshal(e.Payload, &p) == nil && p.Why != "" {
			it.What = "has a file in the folder the mirror left alone (" + p.Why + "):"
		}
	case e.Kind == "page.deleted" || e.Kind == "page.purged":
	case strings.HasSuffix(strings.ToLower(e.Subject), ".md"):
		it.Page = e.Subject
	}
	return it
}

// describeRow says a row of the feed in words.
func describeRow(r activity.Row) activityRow {
	out := activityRow{Row: r}
	if r.Count == 1 || len(r.Events) == 0 {
		out.activityItem = describe(r.Events[0])
		return out
	}
	out.Run = true
	out.EventBy = r.Events[0]
	for _, e := range r.Events {
		out.Items = append(out.Items, describe(e))
	}
	out.More = r.Count - len(r.Events)
	if r.Origin != "" || strings.HasPrefix(r.Kind, "page.") || strings.HasPrefix(r.Kind, "attachment.") || strings.HasPrefix(r.Kind, "annotation.") {
		out.FolderLink = folderURL(r.Folder) // the root's when they have no folder in common
	}
	switch {
	case r.Origin != "":
		var pagesN, filesN, gone int
		for k, n := range r.Kinds {
			switch {
			case k == "page.deleted" || k == "page.purged" || k == "attachment.deleted":
				gone += n
			case strings.HasPrefix(k, "page."):
				pagesN += n
			default:
				filesN += n
			}
		}
		var parts []string
		if pagesN > 0 {
			parts = append(parts, plural(pagesN, "page"))
		}
		if filesN > 0 {
			parts = append(parts, plural(filesN, "file"))
		}
		if gone > 0 {
			parts = append(parts, fmt.Sprintf("%d deletion%s", gone, map[bool]string{true: "s"}[gone != 1]))
		}
		what := strings.Join(parts, " and ")
		switch r.Origin {
		case "import":
			out.What = "imported " + what
		case "mirror":
			out.What = "synced " + what + " from the folder"
		default:
			out.What = "wrote " + what + " (" + r.Origin + ")"
		}
	case r.Subjects == 1:
		// The same change to one thing, again and again: said once, with
		// how often.
		out.activityItem = describe(r.Events[0])
		out.Run, out.Items, out.More, out.FolderLink = false, nil, 0, ""
		out.Times = r.Count
	default:
		out.What = fmt.Sprintf(runWords[r.Kind], r.Subjects)
	}
	return out
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func baseName(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// fileURL is where a browser reads an attached file.
func fileURL(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/api/attachments/" + strings.Join(segs, "/")
}

// activityView is the feed on a page of its own, older rows page by page.
type activityView struct {
	view
	Rows  []activityRow
	Older string // the address of the next, older page of rows
	Paged bool   // not the newest page
}

// activityRows is how many rows a page of the feed shows; the home page,
// homeRows.
const (
	activityRows = 50
	homeRows     = 15
)

// feed reads a page of the feed in words, and the address of the next.
func (h *Handler) feed(r *http.Request, before int64, rows int) ([]activityRow, string, error) {
	f, err := h.Services.Activity.Feed(r.Context(), activity.FeedRequest{Before: before, Rows: rows, Kinds: feedKinds})
	if err != nil {
		return nil, "", err
	}
	out := make([]activityRow, 0, len(f.Rows))
	for _, row := range f.Rows {
		out = append(out, describeRow(row))
	}
	older := ""
	if f.Next != 0 {
		older = "/activity?before=" + strconv.FormatInt(f.Next, 10)
	}
	return out, older, nil
}

// activityPage serves /activity?before=…: the workspace's activity, a page
// of rows at a time, older ones after.
func (h *Handler) activityPage(w http.ResponseWriter, r *http.Request) {
	var before int64
	if s := r.URL.Query().Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			h.fail(w, r, atrium.Errorf(atrium.EInvalid, "before is the ID of an event: follow the feed's Older link"))
			return
		}
		before = n
	}
	v := &activityView{Paged: before != 0}
	var err error
	if v.Rows, v.Older, err = h.feed(r, before, activityRows); err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "activity", v)
}
