package web

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/pages"
)

// pageView is a page as the browser shows it.
type pageView struct {
	view
	Page atrium.Page
	HTML template.HTML // rendered by markdown.RenderWith: raw HTML dropped (a bare <br> aside)
	// ShowTitle: the body does not open with a heading of its own (its
	// title is in its frontmatter, or its file name), so the view shows
	// the title above it.
	ShowTitle bool
	Tags      []string
	Tree      *treeLevel // the sidebar: the root, open down to the page
	Backlinks []pages.IncomingLink
	Folder    string
	Threads   []threadView
	Orphaned  []threadView
	// MoreThreads is the address of the page's next threads, when there
	// are more than one view shows.
	MoreThreads string
	// Reviews are the page's reviews with their status (and how many
	// threads each holds, when the view has all of the page's); Review is
	// the one whose threads alone are shown (?review=), if any.
	Reviews     []reviewView
	MoreReviews bool
	Review      *reviewView
	Drafts      int   // the viewer's draft comments, which "Submit review" publishes
	LastEvent   int64 // the workspace's newest event when the page was read: live updates start after it
	// Moved and MovedPages say what the move that led here rewrote.
	Moved, MovedPages string
	// Merged is the revision a save was based on when it merged with
	// changes made meanwhile (?merged=).
	Merged string
	// Form is what the person typed in a form of this page that failed:
	// the page comes back with it in place, and the error beside it.
	Form pageForm
}

// pageForm is a review form of the page as the person posted it, when the
// service refused it. Where says which form: "comment" (a new thread),
// "reply" (to thread ID), "edit" (comment ID) or "summary" (the review).
type pageForm struct {
	Where, ID, Content string
	Quote              *atrium.Quote
}

// page shows /pages/{path}: the rendered Markdown, its frontmatter as chips,
// its folder beside it and what links to it.
func (h *Handler) page(w http.ResponseWriter, r *http.Request) {
	h.showPage(w, r, r.PathValue("path"), pageForm{}, nil)
}

// showPage shows page p; after a form of it failed (failed is not nil), in
// the status the error means, with form's text in place.
func (h *Handler) showPage(w http.ResponseWriter, r *http.Request, p string, form pageForm, failed error) {
	if to := oldPageURL(r, p); failed == nil && to != "" {
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	if path.Ext(p) != "" && !strings.EqualFold(path.Ext(p), ".md") {
		// A file beside the pages: an image or a download a page links to
		// by a relative address (../assets/shot.png), or an attachment's
		// wikilink. The REST surface serves files, with the headers that
		// keep one from running as a page.
		http.Redirect(w, r, fileURL(p), http.StatusFound)
		return
	}
	// bail shows an error instead of the page; after a refused form, the
	// form's error, with the person's text.
	bail := func(err error) {
		if failed != nil {
			h.renderError(w, r, failed, "error", &errorView{Typed: form.Content})
			return
		}
		h.fail(w, r, err)
	}
	ctx := r.Context()
	read, err := h.Services.Pages.ReadPage(ctx, pages.ReadRequest{Path: p})
	if err != nil {
		bail(err)
		return
	}
	links, err := h.Services.Pages.Links(ctx, read.Page.Path)
	if err != nil {
		bail(err)
		return
	}
	targets := map[string]string{}
	for _, l := range links.Outgoing {
		if l.Resolved {
			targets[strings.ToLower(l.Target)] = l.Path
		}
	}
	_, body, _ := markdown.Split(read.Page.Content)
	out, err := markdown.RenderWith(body, h.renderOptions(r, read.Page.Path, func(l markdown.Link) (string, bool) {
		to, ok := targets[strings.ToLower(l.Target)]
		return to, ok
	}))
	if err != nil {
		bail(err)
		return
	}
	v := pageView{Page: read.Page, HTML: template.HTML(out), ShowTitle: !strings.HasPrefix(strings.TrimSpace(out), "<h1"),
		Tags: read.Page.Tags, Backlinks: links.Incoming, Folder: path.Dir(read.Page.Path),
		Moved: r.URL.Query().Get("moved"), MovedPages: r.URL.Query().Get("pages"), Form: form,
		Merged: r.URL.Query().Get("merged")}
	if v.Folder == "." {
		v.Folder = ""
	}
	a := atrium.ActorFromContext(ctx)
	if v.Tree, err = h.sidebar(r, read.Page); err != nil {
		bail(err)
		return
	}
	if a.Role != "" {
		// Read first, so that a change made while the page renders is
		// one the live updates bring.
		if v.LastEvent, err = h.Services.Activity.Latest(ctx); err != nil {
			h.fail(w, r, err)
			return
		}
		if err := h.pageReviews(r, &v); err != nil {
			h.fail(w, r, err)
			return
		}
		showQuotes(body, v.Threads, v.Orphaned)
	}
	if failed != nil {
		placeForm(&v, failed)
		h.renderError(w, r, failed, "page", &v)
		return
	}
	h.render(w, r, http.StatusOK, "page", &v)
}

// pageURL is the browser address of a page.
func pageURL(p string) string { return actionURL("pages", p) }

// actionURL is the address of an action on page p: /edit/{path},
// /history/{path}, /move/{path} …
func actionURL(action, p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/" + action + "/" + strings.Join(segs, "/")
}

// oldPageURL is where an address of a page from before each action had a
// route of its own now leads, so that bookmarks keep working: the editor
// was /pages/{path}?edit, the history /pages/{path}/history. "" for any
// other address.
func oldPageURL(r *http.Request, p string) string {
	if r.URL.Query().Has("edit") {
		return actionURL("edit", p)
	}
	const history = ".md/history"
	if strings.HasSuffix(strings.ToLower(p), history) {
		to := actionURL("history", p[:len(p)-len(history)+len(".md")])
		if q := r.URL.RawQuery; q != "" {
			to += "?" + q
		}
		return to
	}
	return ""
}

// fail shows an error as a page, in the status its code means.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.renderError(w, r, err, "error", &errorView{})
}

// errorView is the error page; Typed is what the person wrote in a form
// whose page cannot be shown, kept for them to copy.
type errorView struct {
	view
	Typed string
}

// renderError shows page name with err's message and code, in the status
// its code means; an internal error's text is logged, never shown.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, err error, name string, data viewData) {
	code := h.errorCode(r, err)
	v := data.common()
	v.Error, v.Code = atrium.ErrorMessage(err), code
	h.render(w, r, authn.Status(code), name, data)
}

// errorCode is err's code, internal when it has none; an internal error is
// logged, as its text is never shown.
func (h *Handler) errorCode(r *http.Request, err error) string {
	code := atrium.ErrorCode(err)
	if r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
		// The browser went away (a reload, a closed tab): nothing failed,
		// and no one reads the answer.
		h.Services.Log.Debug("web request abandoned", "path", r.URL.Path)
		return atrium.EUnavailable
	}
	if code == atrium.EInternal || code == "" {
		h.Services.Log.Error("web request failed", "path", r.URL.Path, "err", err)
		code = atrium.EInternal
	}
	return code
}

// failFragment answers a request for a piece of a page (a script asked,
// with X-Atrium-Fragment) that failed: the status its code means, the code
// in X-Atrium-Error-Code, and as the body a list item saying why, which the
// script shows where the piece would have gone.
func (h *Handler) failFragment(w http.ResponseWriter, r *http.Request, err error) {
	code := h.errorCode(r, err)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Atrium-Error-Code", code)
	w.WriteHeader(authn.Status(code))
	if err := templates["error"].ExecuteTemplate(w, "fragment-error", &view{Error: atrium.ErrorMessage(err), Code: code}); err != nil {
		h.Services.Log.Warn("render error fragment", "err", err)
	}
}
