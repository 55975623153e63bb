package pages

import (
	"context"
	"encoding/base64"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// Listing limits. Content is cut well before a response would pass about
// 25,000 tokens, with a cursor to go on.
const (
	defaultListLimit = 100
	maxListLimit     = 1000
	defaultTreeLimit = 500
	maxTreeLimit     = 2000
	maxListDepth     = 64
	maxContentBudget = 80 << 10
)

// ListRequest lists pages under a folder.
type ListRequest struct {
	Path           string // folder ("Projects") or folder page ("Projects/_index.md"); "" for the root
	Depth          int    // levels below Path to include; 0 means 1
	IncludeContent bool
	IncludePrivate bool
	Cursor         string
	Limit          int
}

// Entry is a listed page or folder.
type Entry struct {
	Path        string
	Title       string
	Icon        string
	PageID      string
	Access      atrium.Access
	Revision    int64
	Folder      bool // a folder without a page of its own (no _index.md)
	HasChildren bool
	Content     string
	UpdatedAt   time.Time

	key string // listing order: a folder (or its own page) sorts just before its contents
}

// ListResult is one page of a listing.
type ListResult struct {
	Entries       []Entry
	NextCursor    string
	HiddenPrivate int    // private pages under Path left out; told to members only
	Note          string // why the listing stopped early, if it did
}

// checkLimit is a listing's page size: def for 0, n from 1 to max, and
// otherwise a mistake the caller is told of rather than one quietly mended.
func checkLimit(n, def, max int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0 || n > max:
		return 0, atrium.Errorf(atrium.EInvalid, "limit must be from 1 to %d (default %d), not %d", max, def, n)
	}
	return n, nil
}

func clampLimit(n, def, max int) int {
	if n <= 0 {
		return def
	}
	return min(n, max)
}

// cursor encodes a position in a listing; callers treat it as opaque.
func encodeCursor(s string) string {
	if s == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

func decodeCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", atrium.Errorf(atrium.EInvalid, "invalid cursor: pass the next_cursor of the previous answer as it was")
	}
	return string(b), nil
}

// listFolder accepts a folder or a folder's own page.
func listFolder(p string) (string, error) {
	p = strings.TrimSpace(p)
	if strings.HasSuffix(strings.ToLower(p), "/_index.md") || strings.EqualFold(p, "_index.md") {
		p = p[:len(p)-len("_index.md")]
	}
	return NormalizeFolder(p)
}

// ListPages lists the pages and folders under a folder, down to Depth levels,
// in path order. Folders that have a page of their own (_index.md) are listed
// as that page.
func (s *Service) ListPages(ctx context.Context, r ListRequest) (ListResult, error) {
	a, member, err := reader(ctx)
	if err != nil {
		return ListResult{}, err
	}
	folder, err := listFolder(r.Path)
	if err != nil {
		return ListResult{}, err
	}
	depth := r.Depth
	switch {
	case depth < 0 || depth > maxListDepth:
		return ListResult{}, atrium.Errorf(atrium.EInvalid, "depth must be from 1 to %d (levels below path; default 1), not %d", maxListDepth, depth)
	case depth == 0:
		depth = 1
	}
	after, err := decodeCursor(r.Cursor)
	if err != nil {
		return ListResult{}, err
	}
	limit, err := checkLimit(r.Limit, defaultListLimit, maxListLimit)
	if err != nil {
		return ListResult{}, err
	}
	includePrivate := r.IncludePrivate && member
	prefix := ""
	if folder != "" {
		prefix = store.PathKey(folder) + "/"
	}
	var res ListResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if folder != "" {
			ok, err := tx.FolderExists(ctx, a.Workspace.ID, folder)
			if err == nil && ok && !member {
				// To a non-member, a folder of private pages is no folder.
				var some []store.PageSummary
				some, err = tx.ListPages(ctx, store.ListQuery{Workspace: a.Workspace.ID, Prefix: prefix, Limit: 1})
				ok = len(some) > 0
			}
			if err != nil {
				return err
			}
			if !ok {
				return atrium.Errorf(atrium.ENotFound, "Folder not found: %s", folder)
			}
		}
		folders, err := tx.Folders(ctx, a.Workspace.ID, prefix)
		if err != nil {
			return err
		}
		// below counts the pages in a folder that the caller may know of: a
		// member hears of private ones (and how many were left out), anyone
		// else of public ones only.
		below := func(f store.Folder) int {
			if member {
				return f.Pages
			}
			return f.Public
		}
		folderSet := map[string]store.Folder{}
		for _, f := range folders {
			folderSet[store.PathKey(f.Path)] = f
		}
		rel := func(key string) int { return strings.Count(strings.TrimPrefix(key, prefix), "/") }
		// Shallow listings read only the folders they show, through the
		// parent index, rather than every page below.
		parents := []string{strings.TrimSuffix(prefix, "/")}
		for key := range folderSet {
			if rel(key) < depth-1 {
				parents = append(parents, key)
			}
		}
		if len(parents) > 200 {
			parents = nil
		}
		var pages []store.PageSummary
		cursor := after
		for len(pages) < limit+1 {
			batch, err := tx.ListPages(ctx, store.ListQuery{Workspace: a.Workspace.ID, Prefix: prefix, Parents: parents, After: cursor, Limit: 500, IncludePrivate: includePrivate, WithContent: r.IncludeContent})
			if err != nil {
				return err
			}
			for _, p := range batch {
				if rel(store.PathKey(p.Path)) < depth {
					pages = append(pages, p)
				}
			}
			if len(batch) < 500 {
				break
			}
			cursor = store.PathKey(batch[len(batch)-1].Path)
		}
		folderKey := strings.TrimSuffix(prefix, "/")
		entries := make([]Entry, 0, len(pages))
		for _, p := range pages {
			key := store.PathKey(p.Path)
			if dir, ok := strings.CutSuffix(key, "/_index.md"); ok && dir != folderKey {
				continue // a subfolder's own page stands for the folder, below
			}
			e := Entry{Path: p.Path, Title: p.Title, Icon: p.Icon, PageID: p.UID, Access: p.Access, Revision: p.Revision, Content: p.Content, key: key}
			if dir, ok := strings.CutSuffix(key, "/_index.md"); ok {
				e.HasChildren = below(folderSet[dir]) > 1
			} else {
				e.HasChildren = below(folderSet[strings.TrimSuffix(key, ".md")]) > 0
			}
			entries = append(entries, e)
		}
		var shown []string
		for key, f := range folderSet {
			if rel(key) < depth && key+"/" > after && (includePrivate || f.Public > 0) {
				shown = append(shown, key)
			}
		}
		own, err := tx.FolderPages(ctx, a.Workspace.ID, shown)
		if err != nil {
			return err
		}
		for _, key := range shown {
			f := folderSet[key]
			e := Entry{Path: f.Path + "/", Title: baseName(f.Path + ".md"), Folder: true, HasChildren: true, key: key + "/"}
			if p, ok := own[key]; ok && (includePrivate || p.Access == atrium.AccessPublic) {
				e = Entry{Path: p.Path, Title: p.Title, Icon: p.Icon, PageID: p.UID, Access: p.Access, Revision: p.Revision, HasChildren: below(f) > 1, key: key + "/"}
			}
			entries = append(entries, e)
		}
		slices.SortFunc(entries, func(x, y Entry) int { return strings.Compare(x.key, y.key) })
		budget := maxContentBudget
		for i, e := range entries {
			if i == limit || r.IncludeContent && budget < len(e.Content) && i > 0 {
				res.NextCursor = encodeCursor(entries[i-1].key)
				if i < limit {
					res.Note = "stopped early to keep the answer small; continue with next_cursor"
				}
				break
			}
			budget -= len(e.Content)
			res.Entries = append(res.Entries, e)
		}
		if member && !includePrivate {
			if res.HiddenPrivate, err = tx.CountPrivate(ctx, a.Workspace.ID, prefix); err != nil {
				return err
			}
		}
		return nil
	})
	return res, err
}

// TreeRequest asks for a slice of the page tree.
type TreeRequest struct {
	IncludeMetadata bool
	Cursor          string
	Limit           int
}

// TreeNode is a folder or a page in the tree.
type TreeNode struct {
	Name     string
	Path     string
	Folder   bool
	Page     *Entry // the page at this node: a page, or a folder's _index.md
	Children []*TreeNode
}

// TreeResult is a slice of the tree: the pages of one cursor window, nested.
type TreeResult struct {
	Root       []*TreeNode
	Pages      int
	NextCursor string
}

// Tree returns the page hierarchy as nested folders and pages, a window of
// Limit pages at a time (in path order), so that no answer is unbounded.
func (s *Service) Tree(ctx context.Context, r TreeRequest) (TreeResult, error) {
	a, member, err := reader(ctx)
	if err != nil {
		return TreeResult{}, err
	}
	after, err := decodeCursor(r.Cursor)
	if err != nil {
		return TreeResult{}, err
	}
	limit, err := checkLimit(r.Limit, defaultTreeLimit, maxTreeLimit)
	if err != nil {
		return TreeResult{}, err
	}
	var pages []store.PageSummary
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		pages, err = tx.ListPages(ctx, store.ListQuery{Workspace: a.Workspace.ID, After: after, Limit: limit + 1, IncludePrivate: member})
		return err
	})
	if err != nil {
		return TreeResult{}, err
	}
	var res TreeResult
	if len(pages) > limit {
		pages = pages[:limit]
		res.NextCursor = encodeCursor(store.PathKey(pages[len(pages)-1].Path))
	}
	res.Pages = len(pages)
	root := &TreeNode{}
	dirs := map[string]*TreeNode{"": root}
	var dir func(path string) *TreeNode
	dir = func(path string) *TreeNode {
		key := store.PathKey(path)
		if n := dirs[key]; n != nil {
			return n
		}
		parent := dir(folderOf(path))
		n := &TreeNode{Name: path[strings.LastIndexByte(path, '/')+1:], Path: path + "/", Folder: true}
		parent.Children = append(parent.Children, n)
		dirs[key] = n
		return n
	}
	for _, p := range pages {
		e := &Entry{Path: p.Path, Title: p.Title}
		if r.IncludeMetadata {
			e.Icon, e.PageID, e.Access, e.Revision, e.UpdatedAt = p.Icon, p.UID, p.Access, p.Revision, time.UnixMicro(p.Updated).UTC()
		}
		folder := folderOf(p.Path)
		if strings.EqualFold(baseName(p.Path)+pathExt(p.Path), "_index.md") && folder != "" {
			dir(folder).Page = e
			continue
		}
		parent := dir(folder)
		parent.Children = append(parent.Children, &TreeNode{Name: p.Path[strings.LastIndexByte(p.Path, '/')+1:], Path: p.Path, Page: e})
	}
	res.Root = root.Children
	return res, nil
}

// CompletePaths lists the paths of pages that start with prefix, for
// completion, and how many there are.
func (s *Service) CompletePaths(ctx context.Context, prefix string, limit int) ([]string, int, error) {
	a, member, err := reader(ctx)
	if err != nil {
		return nil, 0, err
	}
	var paths []string
	var total int
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		paths, total, err = tx.PathsWithPrefix(ctx, a.Workspace.ID, strings.TrimLeft(prefix, "/"), member, clampLimit(limit, 100, 100))
		return err
	})
	if paths == nil {
		paths = []string{}
	}
	return paths, total, err
}
