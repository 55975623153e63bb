package web

import (
	"embed"
	"html/template"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
)

//go:embed templates/*.html
var templateFS embed.FS

// pageNames are the pages, each templates/NAME.html, which h.render shows
// by name.
var pageNames = []string{
	"index", "login", "logout", "error",
	"page", "edit", "history", "delete", "new", "tree", "trash", "search", "activity",
	"tasks", "task", "inbox", "desk", "admin", "gateway", "agents", "session", "deliveries", "consent", "connections", "tracker",
}

// partials are what pages share: the layout, and the pieces a page holds
// and a script fetches alone (a folder's items, activity rows, task cards).
var partials = []string{"templates/layout.html", "templates/treeitems.html", "templates/activityrows.html", "templates/taskparts.html"}

// templates are the pages, each parsed with the layout and every partial:
// the one place templates are read.
var templates = parseTemplates()

func parseTemplates() map[string]*template.Template {
	out := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		files := append(append([]string{}, partials...), "templates/"+name+".html")
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, files...))
	}
	return out
}

// funcs are the functions every template may call.
var funcs = template.FuncMap{
	"pageURL":   pageURL,
	"actionURL": actionURL,
	"folderURL": folderURL,
	"kb":        kb,
	"kb64":      func(n int64) string { return kb(int(n)) },
	"browser":   browserName,
	"who":       func(handle string, t atrium.AuthorType) who { return who{handle, t} },
	"join":      strings.Join,
	// count says how many of a thing, as a person writes it: "1 file",
	// "2 files".
	"count":     plural,
	"kindWords": func(k atrium.InboxKind) string { return inboxWords[k] },
	// statusText says what an agent's session is doing, as people say it.
	"statusText": func(s string) string { return strings.ReplaceAll(s, "_", " ") },
	"statusWords": func(st atrium.TaskStatus) string {
		if st == atrium.TaskInProgress {
			return "in progress"
		}
		return string(st)
	},
	"numbers": func(ns []int64) string {
		parts := make([]string, len(ns))
		for i, n := range ns {
			parts[i] = "#" + strconv.FormatInt(n, 10)
		}
		return strings.Join(parts, ", ")
	},
}

// kb says a size in bytes for people: 812 B, 4.2 KB, 63 KB, 1.4 MB.
func kb(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " B"
	case n < 10_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + " KB"
	case n < 1_000_000:
		return strconv.Itoa((n+500)/1000) + " KB"
	default:
		return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + " MB"
	}
}
