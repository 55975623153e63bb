package web

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// treeLimit is how many children one window of a folder shows: the tree
// stays light at any size of workspace, and "More" brings the next window.
const treeLimit = 50

// treeLevel is one folder's children in the sidebar tree: windows of them,
// with "More" items where a window stops.
type treeLevel struct {
	Folder string
	Items  []treeItem
}

// treeItem is a page, a folder (an open one carries its own level), or a
// "More" link to the next window.
type treeItem struct {
	pages.Child
	More    string     // the address of the next window: this item is the link to it
	Current bool       // the page being read
	Open    *treeLevel // an ancestor of the page being read
}

// treeView is the tree page: one folder listed, for browsers without
// JavaScript (a folder link leads here) and for a folder's own address.
type treeView struct {
	view
	Folder string
	Crumbs []crumb
	Level  *treeLevel
}

type crumb struct{ Name, Folder string }

// tree serves /tree?folder=…&after=…: a window of a folder's children, as an
// HTML fragment to the sidebar's script (which asks with X-Atrium-Fragment)
// or as a page of its own.
func (h *Handler) tree(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	level, err := h.treeWindow(r, q.Get("folder"), q.Get("after"), q.Get("until"))
	if r.Header.Get("X-Atrium-Fragment") != "" {
		if err != nil {
			h.failFragment(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := templates["tree"].ExecuteTemplate(w, "treeitems", level); err != nil {
			h.Services.Log.Warn("render tree", "err", err)
		}
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	v := &treeView{Folder: level.Folder, Level: level}
	if level.Folder != "" {
		parts := strings.Split(level.Folder, "/")
		for i := range parts {
			v.Crumbs = append(v.Crumbs, crumb{Name: parts[i], Folder: strings.Join(parts[:i+1], "/")})
		}
	}
	h.render(w, r, http.StatusOK, "tree", v)
}

// treeWindow is one window of folder's children after the cursor, up to
// until (a cursor too, "" for no end).
func (h *Handler) treeWindow(r *http.Request, folder, after, until string) (*treeLevel, error) {
	l := &treeLevel{Folder: strings.Trim(folder, "/")}
	return l, h.addWindow(r, l, after, until)
}

func (h *Handler) addWindow(r *http.Request, l *treeLevel, after, until string) error {
	res, err := h.Services.Pages.Children(r.Context(), pages.ChildrenRequest{Folder: l.Folder, Cursor: after, Until: until, Limit: treeLimit})
	if err != nil {
		return err
	}
	for _, c := range res.Children {
		l.Items = append(l.Items, treeItem{Child: c})
	}
	if res.NextCursor != "" {
		l.Items = append(l.Items, treeItem{More: treeURL(l.Folder, res.NextCursor, until)})
	}
	return nil
}

// sidebar is the tree as the page view shows it: the root, with each folder
// above page p open down to it and the page marked. Where the open child
// lies past a folder's first window, that window stops short of it with a
// "More" that fills the gap, and the listing goes on after it.
func (h *Handler) sidebar(r *http.Request, p atrium.Page) (*treeLevel, error) {
	dirs := strings.Split(p.Path, "/")
	top := &treeLevel{}
	l := top
	for i := range dirs {
		last := i == len(dirs)-1
		openPath := strings.Join(dirs[:i+1], "/")
		open := pages.ChildCursor(openPath, !last)
		if err := h.addWindow(r, l, "", open); err != nil {
			return nil, err
		}
		item := treeItem{Child: pages.Child{Name: dirs[i], Folder: openPath}, Open: &treeLevel{Folder: openPath}}
		if last {
			item = treeItem{Child: pages.Child{Name: dirs[i], Page: &pages.Entry{Path: p.Path, Title: p.Title}}, Current: true}
		}
		l.Items = append(l.Items, item)
		if err := h.addWindow(r, l, open, ""); err != nil {
			return nil, err
		}
		l = item.Open
	}
	return top, nil
}

// treeURL is the address of a window of a folder's children.
func treeURL(folder, after, until string) string {
	q := url.Values{}
	if folder != "" {
		q.Set("folder", folder)
	}
	if after != "" {
		q.Set("after", after)
	}
	if until != "" {
		q.Set("until", until)
	}
	if len(q) == 0 {
		return "/tree"
	}
	return "/tree?" + q.Encode()
}

// folderURL is the address of a folder's listing.
func folderURL(folder string) string { return treeURL(folder, "", "") }
