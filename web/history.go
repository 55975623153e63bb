package web

import (
	"net/http"
	"strconv"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/internal/linediff"
	"github.com/atrium-hq/atrium/pages"
)

// historyView is a page's revisions, and a diff between two of them.
type historyView struct {
	view
	Page      atrium.Page
	Revisions []atrium.PageRevision
	Next      string
	From, To  int64
	Diff      []diffRow
	Changed   int // lines removed or added between From and To
	TooLarge  bool
}

// diffRow is a line of a diff, or (Skipped > 0) a run of unchanged lines
// left out: a diff shows the changes with a few lines around each, not a
// long page whole.
type diffRow struct {
	linediff.Line
	Skipped int
}

// diffContext is how many unchanged lines a diff shows around a change.
const diffContext = 3

// hunks keeps the changed lines of a diff and up to context unchanged ones
// on either side of each, and says how many it leaves out in between.
func hunks(lines []linediff.Line, context int) (out []diffRow, changed int) {
	keep := make([]bool, len(lines))
	for i, l := range lines {
		if l.Op == linediff.Same {
			continue
		}
		changed++
		for j := max(0, i-context); j <= min(len(lines)-1, i+context); j++ {
			keep[j] = true
		}
	}
	for i := 0; i < len(lines); {
		if keep[i] {
			out = append(out, diffRow{Line: lines[i]})
			i++
			continue
		}
		j := i
		for j < len(lines) && !keep[j] {
			j++
		}
		if j-i == 1 { // a gap of one line is shown, not said
			out = append(out, diffRow{Line: lines[i]})
		} else {
			out = append(out, diffRow{Skipped: j - i})
		}
		i = j
	}
	return out, changed
}

// history shows /history/{path}: who changed the page when, a diff
// between any two revisions (?from=&to=, default the last change), and a
// button that restores one as a new revision.
func (h *Handler) history(w http.ResponseWriter, r *http.Request) {
	path, q := r.PathValue("path"), r.URL.Query()
	res, err := h.Services.Pages.Revisions(r.Context(), path, q.Get("cursor"), 50)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v := historyView{Page: res.Page, Revisions: res.Revisions}
	if res.NextCursor != "" {
		v.Next = actionURL("history", res.Page.Path) + "?cursor=" + res.NextCursor
	}
	v.To, _ = strconv.ParseInt(q.Get("to"), 10, 64)
	v.From, _ = strconv.ParseInt(q.Get("from"), 10, 64)
	if v.To <= 0 {
		v.To = res.Page.Revision
	}
	if v.From <= 0 {
		v.From = v.To - 1
	}
	if v.From > 0 && v.From != v.To {
		texts := [2]string{}
		for i, rev := range []int64{v.From, v.To} {
			rd, err := h.Services.Pages.ReadPage(r.Context(), pages.ReadRequest{Path: path, Revision: rev})
			if err != nil {
				h.fail(w, r, err)
				return
			}
			texts[i] = rd.Content
		}
		lines, ok := linediff.Lines(texts[0], texts[1])
		v.Diff, v.Changed = hunks(lines, diffContext)
		v.TooLarge = !ok
	}
	h.render(w, r, http.StatusOK, "history", &v)
}
