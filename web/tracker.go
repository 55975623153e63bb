package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
)

// /admin/tracker is `atrium tracker link|status|sync|retry` for the
// browser (issue 22). The tasks service decides everything; the token or
// App the mirror uses comes from the server's environment, so no form here
// takes a credential.

// trackerView is /admin/tracker: the link and how its mirror stands, or,
// with no link, the form that makes one.
type trackerView struct {
	view
	Status *tasks.TrackerStatus // nil: the workspace is not linked
	Kinds  []string
	Form   url.Values // the link form as sent, kept when it was refused
	Notice string
}

// trackerAdmin gives anyone but the workspace's admins the refusal every
// admin page gives: the status itself is readable by readers (the CLI's
// `tracker status`), but this page is administration.
func (h *Handler) trackerAdmin(w http.ResponseWriter, r *http.Request) bool {
	if a := atrium.ActorFromContext(r.Context()); a == nil || a.Role != atrium.RoleAdmin {
		h.adminRefused(w, r, atrium.Errorf(atrium.EPermission, "only admins link the workspace to a tracker"))
		return false
	}
	return true
}

func (h *Handler) adminTracker(w http.ResponseWriter, r *http.Request) {
	if !h.trackerAdmin(w, r) {
		return
	}
	// The notice is made here from a number, never echoed from the query.
	q, notice := r.URL.Query(), ""
	if n, err := strconv.Atoi(q.Get("retried")); err == nil && n > 0 {
		notice = plural(n, "change") + " queued again: the mirror pushes them now."
	} else if err == nil {
		notice = "Nothing to queue again: no change was dead."
	} else if q.Has("synced") {
		notice = "The mirror was asked to sync now: reload in a moment to see what it did."
	}
	h.renderTracker(w, r, &trackerView{Notice: notice}, nil)
}

func (h *Handler) renderTracker(w http.ResponseWriter, r *http.Request, v *trackerView, failed error) {
	v.Kinds = tasks.TrackerKinds
	st, err := h.Services.Tasks.TrackerStatus(r.Context())
	switch {
	case err == nil:
		v.Status = &st
	case atrium.ErrorCode(err) != atrium.ENotFound:
		h.fail(w, r, err)
		return
	}
	if failed != nil {
		h.renderError(w, r, failed, "tracker", v)
		return
	}
	h.render(w, r, http.StatusOK, "tracker", v)
}

// linkTracker links the workspace, or moves its link, from the form.
func (h *Handler) linkTracker(w http.ResponseWriter, r *http.Request) {
	if !h.trackerAdmin(w, r) {
		return
	}
	if err := r.ParseForm(); err != nil {
		h.renderTracker(w, r, &trackerView{}, atrium.Errorf(atrium.EInvalid, "the form could not be read: %v", err))
		return
	}
	f := r.PostForm
	if _, err := h.Services.Tasks.LinkTracker(r.Context(), f.Get("kind"), strings.TrimSpace(f.Get("repo")), strings.TrimSpace(f.Get("api_url"))); err != nil {
		h.renderTracker(w, r, &trackerView{Form: f}, err)
		return
	}
	http.Redirect(w, r, "/admin/tracker", http.StatusSeeOther)
}

// syncTrackerNow wakes the server's mirror rather than syncing in the
// request: a first push can take minutes, and the worker holds the
// clients whose ETags make a poll free.
func (h *Handler) syncTrackerNow(w http.ResponseWriter, r *http.Request) {
	if !h.trackerAdmin(w, r) {
		return
	}
	if err := h.Services.Tasks.SyncTrackerSoon(r.Context()); err != nil {
		h.renderTracker(w, r, &trackerView{}, err)
		return
	}
	http.Redirect(w, r, "/admin/tracker?synced=1", http.StatusSeeOther)
}

// retryTracker requeues every dead change.
func (h *Handler) retryTracker(w http.ResponseWriter, r *http.Request) {
	if h.trackerAdmin(w, r) {
		h.retryDead(w, r, nil)
	}
}

// retryDeadLetter requeues one dead change.
func (h *Handler) retryDeadLetter(w http.ResponseWriter, r *http.Request) {
	if !h.trackerAdmin(w, r) {
		return
	}
	id, err := pathID(r, "dead change")
	if err != nil {
		h.renderTracker(w, r, &trackerView{}, err)
		return
	}
	h.retryDead(w, r, []int64{id})
}

// dismissConflict drops one conflict, once settled.
func (h *Handler) dismissConflict(w http.ResponseWriter, r *http.Request) {
	if !h.trackerAdmin(w, r) {
		return
	}
	id, err := pathID(r, "conflict")
	if err == nil {
		_, err = h.Services.Tasks.DismissTrackerConflicts(r.Context(), []int64{id})
	}
	if err != nil {
		h.renderTracker(w, r, &trackerView{}, err)
		return
	}
	http.Redirect(w, r, "/admin/tracker", http.StatusSeeOther)
}

func (h *Handler) retryDead(w http.ResponseWriter, r *http.Request, ids []int64) {
	n, err := h.Services.Tasks.RetryTracker(r.Context(), ids)
	if err != nil {
		h.renderTracker(w, r, &trackerView{}, err)
		return
	}
	http.Redirect(w, r, "/admin/tracker?retried="+strconv.Itoa(n), http.StatusSeeOther)
}
