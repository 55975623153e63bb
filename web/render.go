package web

import (
	"net/http"
	"path"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/pages"
)

// renderOptions are how Markdown standing for the page at from ("" for
// text that is no page: a task's body) renders in the browser: a wikilink
// goes to the page resolve names, and an embed of a page (![[Note]],
// ![[Note#Section]], ![[Note#^block]]) shows it inline. Embedded pages are
// read through the pages service with the request's caller, so its rules
// decide what shows: the caller's workspace only, private pages for
// members only; a page it refuses shows as an unresolved embed. Each page
// is read once per rendering, however often it is embedded.
func (h *Handler) renderOptions(r *http.Request, from string, resolve func(markdown.Link) (string, bool)) markdown.Options {
	e := &embedder{h: h, r: r, read: map[string]*markdown.Embedded{}}
	return e.options(from, resolve)
}

// embedder reads the pages one rendering embeds.
type embedder struct {
	h    *Handler
	r    *http.Request
	read map[string]*markdown.Embedded // by lower-cased path; nil: not to be shown
}

func (e *embedder) options(from string, resolve func(markdown.Link) (string, bool)) markdown.Options {
	return markdown.Options{
		Path: from,
		Resolve: func(l markdown.Link) markdown.Target {
			if p, ok := resolve(l); ok {
				return markdown.Target{Href: pageURL(p), Resolved: true}
			}
			if l.Target == "" && from != "" { // [[#Heading]]: the page itself
				return markdown.Target{Href: pageURL(from), Resolved: true}
			}
			return markdown.Target{}
		},
		Embed: func(l markdown.Link) (markdown.Embedded, bool) {
			p, ok := resolve(l)
			if l.Target == "" { // ![[#Section]]: a section of the page itself
				p, ok = from, from != ""
			}
			if !ok || !strings.EqualFold(path.Ext(p), ".md") { // an attachment is no page
				return markdown.Embedded{}, false
			}
			return e.page(p)
		},
	}
}

// page reads the page at p for an embed.
func (e *embedder) page(p string) (markdown.Embedded, bool) {
	key := strings.ToLower(p)
	if got, seen := e.read[key]; seen {
		if got == nil {
			return markdown.Embedded{}, false
		}
		return *got, true
	}
	e.read[key] = nil
	ctx := e.r.Context()
	read, err := e.h.Services.Pages.ReadPage(ctx, pages.ReadRequest{Path: p})
	if err != nil {
		e.refused(p, err)
		return markdown.Embedded{}, false
	}
	_, body, _ := markdown.Split(read.Content)
	resolve, err := e.h.Services.Pages.Resolve(ctx, read.Page.Path, body)
	if err != nil {
		e.refused(p, err)
		return markdown.Embedded{}, false
	}
	em := &markdown.Embedded{Path: read.Page.Path, Body: body, Options: e.options(read.Page.Path, resolve)}
	e.read[key] = em
	return *em, true
}

// refused notes why an embedded page could not be read: a page missing or
// hidden from the caller is what an unresolved embed says; anything else
// is logged, and the page around it still shows.
func (e *embedder) refused(p string, err error) {
	switch atrium.ErrorCode(err) {
	case atrium.ENotFound, atrium.EPermission, atrium.EUnauthenticated:
		return
	}
	if e.r.Context().Err() == nil {
		e.h.Services.Log.Warn("embedded page not shown", "path", p, "err", err)
	}
}
