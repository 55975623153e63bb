package web

import (
	"html/template"
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/search"
)

// searchView is a page of search results.
type searchView struct {
	view
	Query, Path, Tags string
	Hits              []searchHit
	Total             int
	Next              string // the address of the next results, if any
	Note              string
}

type searchHit struct {
	pages.Hit
	Snippet template.HTML // the context, escaped, with the matching words marked
}

// search shows /search?q=…&path=…&tags=a,b: ranked results, their best
// line with the query's words marked.
func (h *Handler) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := searchView{Query: q.Get("q"), Path: q.Get("path"), Tags: q.Get("tags")}
	if strings.TrimSpace(v.Query) == "" {
		h.render(w, r, http.StatusOK, "search", &v)
		return
	}
	var tags []string
	for _, t := range strings.Split(v.Tags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	// Admins, who tune the vault, see what made each score.
	a := atrium.ActorFromContext(r.Context())
	explain := a != nil && a.Role == atrium.RoleAdmin
	res, err := h.Services.Pages.Search(r.Context(), pages.SearchRequest{Query: v.Query, Path: v.Path, Tags: tags, Cursor: q.Get("cursor"), Explain: explain})
	if err != nil {
		h.renderError(w, r, err, "search", &v)
		return
	}
	// The query as ranked: its words' synonyms are marked too.
	for _, hit := range res.Hits {
		v.Hits = append(v.Hits, searchHit{Hit: hit, Snippet: highlight(readable(hit.Context), res.Query)})
	}
	v.Total, v.Note = res.Total, res.Note
	if res.NextCursor != "" {
		next := r.URL.Query()
		next.Set("cursor", res.NextCursor)
		v.Next = "/search?" + next.Encode()
	}
	h.render(w, r, http.StatusOK, "search", &v)
}

// readable is a line of a page as a reader sees it: its Markdown (emphasis,
// code marks, link targets, a heading's #) left out; the line itself when
// nothing readable is left (raw HTML alone, say).
func readable(line string) string {
	text := strings.TrimSpace(markdown.PlainText(line))
	if text == "" {
		return line
	}
	return text
}

// highlight escapes text and marks the words the query matched.
func highlight(text string, q search.Query) template.HTML {
	var b strings.Builder
	last := 0
	for _, m := range search.Highlights(text, q) {
		b.WriteString(template.HTMLEscapeString(text[last:m[0]]))
		b.WriteString("<mark>")
		b.WriteString(template.HTMLEscapeString(text[m[0]:m[1]]))
		b.WriteString("</mark>")
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(text[last:]))
	return template.HTML(b.String())
}
