package pages

import (
	"context"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// Children listings: the sidebar tree asks for small pages of them.
const (
	defaultChildrenLimit = 50
	maxChildrenLimit     = 500
)

// ChildrenRequest asks for the pages and folders directly in one folder.
type ChildrenRequest struct {
	Folder string // "" for the root
	Cursor string // ChildCursor of the last child already shown
	Until  string // stop before this child (a ChildCursor), for a window that ends where another starts
	Limit  int
}

// Child is a page or a folder directly in a folder.
type Child struct {
	Name   string
	Folder string // a folder's path ("Projects/Alpha"); "" for a page
	Page   *Entry // the page itself, or a folder's own _index.md (nil: a folder without one visible)
	Cursor string // this child's position: pass it as Cursor to go on after it
}

// ChildrenResult is one window of a folder's children, in key order; a
// folder sorts after a page of the same key.
type ChildrenResult struct {
	Children   []Child
	NextCursor string
}

// ChildCursor is the position of a child: a page by its path, a folder by
// its path (folder true).
func ChildCursor(path string, folder bool) string {
	kind := "p:"
	if folder {
		kind = "f:"
	}
	return encodeCursor(kind + store.PathKey(strings.TrimSuffix(path, "/")))
}

func decodeChildCursor(c string) (key string, folder bool, err error) {
	s, err := decodeCursor(c)
	if err != nil || s == "" {
		return "", false, err
	}
	kind, key, ok := strings.Cut(s, ":")
	if !ok || kind != "p" && kind != "f" {
		return "", false, atrium.Errorf(atrium.EInvalid, "invalid cursor: pass the cursor of a listed child as it was")
	}
	return key, kind == "f", nil
}

// Children lists the pages and folders directly in a folder, a window at a
// time. Each window reads at most Limit+1 pages and folders through the
// parent indexes, so a folder of any size in a tree of any size costs the
// same. Private pages, and folders holding nothing else, are not listed to
// those who may not read them.
func (s *Service) Children(ctx context.Context, r ChildrenRequest) (ChildrenResult, error) {
	a, member, err := reader(ctx)
	if err != nil {
		return ChildrenResult{}, err
	}
	folder, err := listFolder(r.Folder)
	if err != nil {
		return ChildrenResult{}, err
	}
	after, afterFolder, err := decodeChildCursor(r.Cursor)
	if err != nil {
		return ChildrenResult{}, err
	}
	until, untilFolder, err := decodeChildCursor(r.Until)
	if err != nil {
		return ChildrenResult{}, err
	}
	limit, err := checkLimit(r.Limit, defaultChildrenLimit, maxChildrenLimit)
	if err != nil {
		return ChildrenResult{}, err
	}
	parent := store.PathKey(folder)
	var res ChildrenResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if folder != "" {
			// To a non-member, a folder of private pages is no folder.
			some, err := tx.ChildFolders(ctx, a.Workspace.ID, store.PathKey(folderOf(folder)), parent, true, 1, member)
			if err != nil {
				return err
			}
			if len(some) == 0 || store.PathKey(some[0].Path) != parent {
				return atrium.Errorf(atrium.ENotFound, "Folder not found: %s", folder)
			}
		}
		pages, err := tx.ListPages(ctx, store.ListQuery{Workspace: a.Workspace.ID, Parents: []string{parent}, After: after, Limit: limit + 1, IncludePrivate: member})
		if err != nil {
			return err
		}
		// Pages sort before folders of the same key: after a page, its
		// namesake folder is still to come.
		folders, err := tx.ChildFolders(ctx, a.Workspace.ID, parent, after, after != "" && !afterFolder, limit+1, member)
		if err != nil {
			return err
		}
		keys := make([]string, len(folders))
		for i, f := range folders {
			keys[i] = store.PathKey(f.Path)
		}
		own, err := tx.FolderPages(ctx, a.Workspace.ID, keys)
		if err != nil {
			return err
		}
		before := func(key string, isFolder bool) bool { // is this child before until?
			return until == "" && !untilFolder || key < until || key == until && !isFolder && untilFolder
		}
		for len(res.Children) < limit && (len(pages) > 0 || len(folders) > 0) {
			var c Child
			if len(folders) == 0 || len(pages) > 0 && store.PathKey(pages[0].Path) <= keys[0] {
				p := pages[0]
				pages = pages[1:]
				if !before(store.PathKey(p.Path), false) {
					return nil
				}
				c = Child{Name: baseName(p.Path) + pathExt(p.Path), Page: summaryEntry(p), Cursor: ChildCursor(p.Path, false)}
			} else {
				f, key := folders[0], keys[0]
				folders, keys = folders[1:], keys[1:]
				if !before(key, true) {
					return nil
				}
				c = Child{Name: f.Path[strings.LastIndexByte(f.Path, '/')+1:], Folder: f.Path, Cursor: ChildCursor(f.Path, true)}
				if p, ok := own[key]; ok && (member || p.Access == atrium.AccessPublic) {
					c.Page = summaryEntry(p)
				}
			}
			res.Children = append(res.Children, c)
		}
		if len(res.Children) == limit && (len(pages) > 0 || len(folders) > 0) {
			next := pages
			if len(next) == 0 || len(folders) > 0 && keys[0] < store.PathKey(next[0].Path) {
				if before(keys[0], true) {
					res.NextCursor = res.Children[limit-1].Cursor
				}
			} else if before(store.PathKey(next[0].Path), false) {
				res.NextCursor = res.Children[limit-1].Cursor
			}
		}
		return nil
	})
	return res, err
}

func summaryEntry(p store.PageSummary) *Entry {
	return &Entry{Path: p.Path, Title: p.Title, Icon: p.Icon, PageID: p.UID, Access: p.Access, Revision: p.Revision}
}
