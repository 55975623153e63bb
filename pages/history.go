package pages

import (
	"context"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/store"
)

// DeleteResult says what a delete moved to the trash.
type DeleteResult struct {
	Page        atrium.Page
	Attachments int
}

// DeletePage moves a page to the trash, with its history, attachments and
// review threads, from where RestorePage brings it back until it is purged.
// Its path is free at once for a new page, whose threads start empty. Links
// to it stay in other pages and show as unresolved.
func (s *Service) DeletePage(ctx context.Context, path string) (DeleteResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return DeleteResult{}, err
	}
	if path, err = NormalizePath(path); err != nil {
		return DeleteResult{}, err
	}
	var res DeleteResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := tx.PageByPath(ctx, a.Workspace.ID, path)
		if err != nil {
			return err
		}
		atts, err := tx.Attachments(ctx, a.Workspace.ID, p.ID)
		if err != nil {
			return err
		}
		if err := tx.TrashPage(ctx, p, a.Principal.ID); err != nil {
			return err
		}
		if atts, err = keepSharedFiles(ctx, tx, p, atts); err != nil {
			return err
		}
		if err := s.changed(ctx, tx, a, Change{Kind: EventPageDeleted, Page: p}); err != nil {
			return err
		}
		res = DeleteResult{Page: p, Attachments: len(atts)}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventPageDeleted, p.Path, trashEvent{
			PageEvent{Path: p.Path, PageID: p.UID, Revision: p.Revision, Origin: originOf(ctx)}, attachmentPaths(atts), true})
	})
	return res, err
}

// keepSharedFiles takes out of the trash again the files a trashed page
// owned only because they sit near it — a vault's Attachments/ folder, an
// image beside many notes — and gives them to the page now nearest them.
// What goes to the trash with the page is its own assets folder, as a move
// takes only that along; and what no other page is left to hold. It returns
// the files that went.
func keepSharedFiles(ctx context.Context, tx *store.Tx, p atrium.Page, atts []atrium.Attachment) ([]atrium.Attachment, error) {
	own := store.PathKey(join(folderOf(p.Path), AssetsFolder)) + "/"
	var gone []atrium.Attachment
	for _, at := range atts {
		if strings.HasPrefix(store.PathKey(at.Path), own) {
			gone = append(gone, at)
			continue
		}
		owner, err := nearestOwner(ctx, tx, p.WorkspaceID, folderOf(at.Path))
		switch {
		case atrium.ErrorCode(err) == atrium.ENotFound:
			gone = append(gone, at)
			continue
		case err != nil:
			return nil, err
		}
		if err := tx.ReassignAttachment(ctx, p.WorkspaceID, at.ID, owner, at.Path); err != nil {
			return nil, err
		}
	}
	return gone, nil
}

// trashEvent is the payload of page.deleted, page.restored and page.purged.
type trashEvent struct {
	PageEvent
	Attachments []string `json:"attachments,omitempty"`
	Trashed     bool     `json:"trashed,omitempty"`
}

func attachmentPaths(atts []atrium.Attachment) []string {
	var out []string
	for _, a := range atts {
		out = append(out, a.Path)
	}
	return out
}

// RevisionsResult is one page of a page's history, newest first.
type RevisionsResult struct {
	Page       atrium.Page
	Revisions  []atrium.PageRevision
	NextCursor string
}

// Revisions lists the revisions of a page, newest first.
func (s *Service) Revisions(ctx context.Context, path, cursor string, limit int) (RevisionsResult, error) {
	a, member, err := reader(ctx)
	if err != nil {
		return RevisionsResult{}, err
	}
	if path, err = NormalizePath(path); err != nil {
		return RevisionsResult{}, err
	}
	c, err := decodeCursor(cursor)
	if err != nil {
		return RevisionsResult{}, err
	}
	var before int64
	if c != "" {
		if before, err = strconv.ParseInt(c, 10, 64); err != nil {
			return RevisionsResult{}, atrium.Errorf(atrium.EInvalid, "invalid cursor")
		}
	}
	limit = clampLimit(limit, 20, 200)
	var res RevisionsResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		p, err := visiblePage(ctx, tx, a.Workspace.ID, path, member)
		if err != nil {
			return err
		}
		res.Page = p
		var revs []atrium.PageRevision
		for {
			batch, err := tx.PageRevisions(ctx, p.ID, before, limit+1, !member)
			if err != nil {
				return err
			}
			for _, r := range batch {
				if member || revisionAccess(r.Content) == atrium.AccessPublic {
					r.Content = ""
					revs = append(revs, r)
				}
			}
			if len(revs) > limit || len(batch) <= limit {
				break
			}
			before = batch[len(batch)-1].Revision
		}
		if len(revs) > limit {
			revs = revs[:limit]
			res.NextCursor = encodeCursor(strconv.FormatInt(revs[len(revs)-1].Revision, 10))
		}
		res.Revisions = revs
		return nil
	})
	if !member {
		res.Page = anonymous(res.Page)
		for i := range res.Revisions {
			res.Revisions[i].Author = ""
		}
	}
	return res, err
}

// revisionAccess is the access a page had at a revision: what its
// frontmatter said then. A reader outside the workspace sees only the
// revisions that were public, whatever the page is now.
func revisionAccess(content string) atrium.Access {
	fm, _, _ := markdown.Split(content)
	meta, err := markdown.ParseFrontmatter(fm)
	if err != nil || meta.Access == "" {
		return atrium.AccessPrivate
	}
	return atrium.Access(meta.Access)
}

// anonymous is p as a reader outside the workspace sees it: without who
// wrote it.
func anonymous(p atrium.Page) atrium.Page {
	p.CreatedBy, p.UpdatedBy = "", ""
	return p
}

// RestoreRevision makes an earlier revision's content current again, as a new
// revision; history is never rewritten. The page keeps its current path.
func (s *Service) RestoreRevision(ctx context.Context, path string, revision, base int64) (WriteResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	if path, err = NormalizePath(path); err != nil {
		return WriteResult{}, err
	}
	var res WriteResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.PageByPath(ctx, a.Workspace.ID, path)
		if err != nil {
			return err
		}
		if base > 0 {
			if err := checkBase(cur, base, false); err != nil {
				return err
			}
		}
		rev, err := tx.PageRevision(ctx, cur.ID, revision)
		if atrium.ErrorCode(err) == atrium.ENotFound {
			return atrium.Errorf(atrium.ENotFound, "Revision %d of %s not found: it has revisions 1 to %d", revision, cur.Path, cur.Revision)
		}
		if err != nil {
			return err
		}
		res.Page = cur
		if rev.ContentHash == cur.ContentHash {
			return nil
		}
		pc, err := parse(cur.Path, rev.Content)
		if err != nil {
			return err
		}
		res.Changed = true
		pc.apply(&res.Page, rev.Content)
		if err := tx.UpdatePage(ctx, &res.Page, pc.index(cur.Path), a.Principal.ID); err != nil {
			return err
		}
		return s.emit(ctx, tx, a, EventPageUpdated, res.Page, "")
	})
	return res, err
}

// OutgoingLink is a link written in a page, resolved if it can be.
type OutgoingLink struct {
	atrium.PageLink
	Resolved bool
	Path     string // the page it resolves to
	Title    string
}

// IncomingLink is a link to a page from another.
type IncomingLink struct {
	Path  string
	Title string
	Kind  atrium.LinkKind
	Line  int
}

// LinksResult is what links a page has.
type LinksResult struct {
	Page     atrium.Page
	Outgoing []OutgoingLink
	Incoming []IncomingLink
}

// Links returns the links written in a page (resolved or not) and the links
// of other pages that resolve to it.
func (s *Service) Links(ctx context.Context, path string) (LinksResult, error) {
	a, member, err := reader(ctx)
	if err != nil {
		return LinksResult{}, err
	}
	if path, err = NormalizePath(path); err != nil {
		return LinksResult{}, err
	}
	var res LinksResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		p, err := visiblePage(ctx, tx, a.Workspace.ID, path, member)
		if err != nil {
			return err
		}
		res.Page = p
		out, err := tx.LinksFrom(ctx, p.ID)
		if err != nil {
			return err
		}
		keys := make([]string, 0, len(out))
		for _, l := range out {
			keys = append(keys, l.Key)
		}
		targets, err := resolve(ctx, tx, a.Workspace.ID, keys)
		if err != nil {
			return err
		}
		var rest []string
		for _, k := range keys {
			if _, ok := targets[k]; !ok {
				rest = append(rest, k)
			}
		}
		atts, err := resolveAttachments(ctx, tx, a.Workspace.ID, rest, member)
		if err != nil {
			return err
		}
		for _, l := range out {
			ol := OutgoingLink{PageLink: l}
			if t, ok := targets[l.Key]; ok {
				if member || t.Access == atrium.AccessPublic {
					ol.Resolved, ol.Path, ol.Title = true, t.Path, t.Title
				}
			} else if at, ok := atts[l.Key]; ok {
				ol.Resolved, ol.Path, ol.Title = true, at.Path, at.Name
			}
			res.Outgoing = append(res.Outgoing, ol)
		}
		in, err := tx.LinksTo(ctx, a.Workspace.ID, keysOf(p.Path, p.Title))
		if err != nil {
			return err
		}
		inKeys := make([]string, 0, len(in))
		for _, l := range in {
			inKeys = append(inKeys, l.Key)
		}
		inTargets, err := resolve(ctx, tx, a.Workspace.ID, inKeys)
		if err != nil {
			return err
		}
		sources := map[int64]atrium.Access{}
		if !member {
			// Links from private pages are not for anonymous readers.
			ids := make([]int64, 0, len(in))
			for _, l := range in {
				ids = append(ids, l.SourceID)
			}
			srcs, err := tx.PagesByID(ctx, ids)
			if err != nil {
				return err
			}
			for _, sp := range srcs {
				sources[sp.ID] = sp.Access
			}
		}
		for _, l := range in {
			if t, ok := inTargets[l.Key]; !ok || t.ID != p.ID {
				continue // that key means another page
			}
			if !member && sources[l.SourceID] != atrium.AccessPublic {
				continue
			}
			res.Incoming = append(res.Incoming, IncomingLink{Path: l.SourcePath, Title: l.SourceTitle, Kind: l.Kind, Line: l.Line})
		}
		return nil
	})
	return res, err
}

// resolve picks, for each link key, the page it means, as Obsidian does: a
// page at that path first, then a page with that file name (the one nearest
// the root when several share it, then the first in path order); Atrium adds
// a page with that title last.
func resolve(ctx context.Context, tx *store.Tx, ws int64, keys []string) (map[string]store.PageSummary, error) {
	targets, err := tx.ResolveKeys(ctx, ws, dedupe(keys))
	if err != nil {
		return nil, err
	}
	best := map[string]store.Target{}
	for _, t := range targets { // in path order
		if b, ok := best[t.Key]; !ok || betterTarget(t, b) {
			best[t.Key] = t
		}
	}
	out := make(map[string]store.PageSummary, len(best))
	for k, t := range best {
		out[k] = t.Page
	}
	return out, nil
}

// resolveAttachments picks, for each link key, the attachment it means, as
// Obsidian does: the one at that path, else the one with that file name
// nearest the root (the first in path order among those). Anonymous readers
// (member false) only get attachments of public pages.
func resolveAttachments(ctx context.Context, tx *store.Tx, ws int64, keys []string, member bool) (map[string]atrium.Attachment, error) {
	out := map[string]atrium.Attachment{}
	if len(keys) == 0 {
		return out, nil
	}
	list, err := tx.AttachmentsByKey(ctx, ws, dedupe(keys))
	if err != nil {
		return nil, err
	}
	public := map[int64]bool{}
	if !member {
		var ids []int64
		for _, at := range list {
			ids = append(ids, at.PageID)
		}
		owners, err := tx.PagesByID(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, p := range owners {
			public[p.ID] = p.Access == atrium.AccessPublic
		}
	}
	want, byPath := keysIn(keys), map[string]bool{}
	for _, at := range list { // in path order
		if !member && !public[at.PageID] {
			continue
		}
		pk := store.PathKey(at.Path)
		if _, ok := want[pk]; ok {
			out[pk], byPath[pk] = at, true
		}
		nk := store.PathKey(at.Name)
		if b, ok := out[nk]; !byPath[nk] && (!ok || depth(at.Path) < depth(b.Path)) {
			out[nk] = at
		}
	}
	return out, nil
}

func keysIn(keys []string) map[string]struct{} {
	m := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		m[k] = struct{}{}
	}
	return m
}

// matchRank orders the ways a key reaches a page.
var matchRank = map[string]int{"path": 0, "name": 1, "title": 2}

// betterTarget reports whether t is a better meaning of its key than b, which
// comes before it in path order.
func betterTarget(t, b store.Target) bool {
	if rt, rb := matchRank[t.Match], matchRank[b.Match]; rt != rb {
		return rt < rb
	}
	return t.Match == "name" && depth(t.Page.Path) < depth(b.Page.Path)
}

// depth is how many folders deep a path is.
func depth(p string) int { return strings.Count(p, "/") }

func dedupe(keys []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
