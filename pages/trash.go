package pages

import (
	"context"
	"strconv"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// Event kinds of the trash; the subject is the page path.
const (
	EventPageRestored = "page.restored"
	EventPagePurged   = "page.purged"
)

// DefaultTrashRetention is how long a deleted page stays restorable.
const DefaultTrashRetention = 30 * 24 * time.Hour

// TrashRequest lists the trash.
type TrashRequest struct {
	Path   string // only pages deleted from this path
	Cursor string
	Limit  int
}

// TrashResult is one page of the trash, most recently deleted first.
type TrashResult struct {
	Pages      []TrashedPage
	NextCursor string
	PurgeAfter time.Duration // how long a page stays in the trash
}

// A TrashedPage is a page in the trash: when and by whom it was deleted,
// and how many attachments and threads went with it.
type TrashedPage struct {
	Page        atrium.Page
	TrashedAt   time.Time
	TrashedBy   string // handle
	Attachments int
	Threads     int
}

// Trash lists the pages deleted in the caller's workspace.
func (s *Service) Trash(ctx context.Context, r TrashRequest) (TrashResult, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return TrashResult{}, err
	}
	path := ""
	if r.Path != "" {
		if path, err = NormalizePath(r.Path); err != nil {
			return TrashResult{}, err
		}
	}
	c, err := decodeCursor(r.Cursor)
	if err != nil {
		return TrashResult{}, err
	}
	var after int64
	if c != "" {
		if after, err = strconv.ParseInt(c, 10, 64); err != nil || after <= 0 {
			return TrashResult{}, atrium.Errorf(atrium.EInvalid, "invalid cursor")
		}
	}
	limit := clampLimit(r.Limit, 50, 500)
	res := TrashResult{PurgeAfter: s.TrashRetention}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		pages, err := tx.Trash(ctx, a.Workspace.ID, path, after, limit+1)
		if len(pages) > limit {
			pages = pages[:limit]
			res.NextCursor = encodeCursor(strconv.FormatInt(pages[limit-1].Page.ID, 10))
		}
		for _, p := range pages {
			res.Pages = append(res.Pages, TrashedPage(p))
		}
		return err
	})
	return res, err
}

// RestoreRequest takes a page out of the trash.
type RestoreRequest struct {
	PageID string // the trashed page; or
	Path   string // the path it was deleted from (the most recent such page)
	To     string // where to restore it; default: where it was
}

// RestoreResult says what a restore did.
type RestoreResult struct {
	Page        atrium.Page
	Attachments int
	Threads     int
}

// RestorePage brings a page back from the trash with its history,
// attachments and review threads (anchored again to its text). A page now at
// its path is a conflict: restore it elsewhere with To.
func (s *Service) RestorePage(ctx context.Context, r RestoreRequest) (RestoreResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return RestoreResult{}, err
	}
	var res RestoreResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		t, err := s.trashed(ctx, tx, a.Workspace.ID, r.PageID, r.Path)
		if err != nil {
			return err
		}
		to := t.Page.Path
		if r.To != "" {
			if to, err = NormalizePath(r.To); err != nil {
				return err
			}
			if err := checkFolders(to); err != nil {
				return err
			}
		}
		pc, err := parse(to, t.Page.Content)
		if err != nil {
			return err
		}
		p := t.Page
		if err := tx.RestorePage(ctx, &p, to, pc.index(to)); err != nil {
			return err
		}
		atts, err := tx.Attachments(ctx, a.Workspace.ID, p.ID)
		if err != nil {
			return err
		}
		res = RestoreResult{Page: p, Attachments: len(atts), Threads: t.Threads}
		if err := s.changed(ctx, tx, a, Change{Kind: EventPageRestored, Page: p}); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventPageRestored, p.Path, trashEvent{
			PageEvent: PageEvent{Path: p.Path, PageID: p.UID, Revision: p.Revision, Origin: originOf(ctx)}, Attachments: attachmentPaths(atts)})
	})
	return res, err
}

// trashed finds a page in the trash by ID, or the most recently deleted
// from a path.
func (s *Service) trashed(ctx context.Context, tx *store.Tx, ws int64, id, path string) (store.TrashedPage, error) {
	switch {
	case id != "":
		return tx.TrashedPage(ctx, ws, id)
	case path == "":
		return store.TrashedPage{}, atrium.Errorf(atrium.EInvalid, "page_id or path is required: which page to take out of the trash")
	}
	path, err := NormalizePath(path)
	if err != nil {
		return store.TrashedPage{}, err
	}
	pages, err := tx.Trash(ctx, ws, path, 0, 1)
	if err != nil {
		return store.TrashedPage{}, err
	}
	if len(pages) == 0 {
		return store.TrashedPage{}, atrium.Errorf(atrium.ENotFound, "No page deleted from %s is in the trash", path)
	}
	return pages[0], nil
}

// PurgePage deletes a page in the trash for good, with its history,
// attachments and threads. Only an admin may: nothing brings it back.
func (s *Service) PurgePage(ctx context.Context, id string) (atrium.Page, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return atrium.Page{}, err
	}
	if id == "" {
		return atrium.Page{}, atrium.Errorf(atrium.EInvalid, "page_id is required: which page to purge (list_trash shows them)")
	}
	var p atrium.Page
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		t, err := tx.TrashedPage(ctx, a.Workspace.ID, id)
		if err != nil {
			return err
		}
		p = t.Page
		return s.purge(ctx, tx, a.Principal.ID, p)
	})
	return p, err
}

func (s *Service) purge(ctx context.Context, tx *store.Tx, actor int64, p atrium.Page) error {
	if err := tx.PurgePage(ctx, p); err != nil {
		return err
	}
	return tx.EmitJSON(ctx, p.WorkspaceID, actor, EventPagePurged, p.Path, trashEvent{PageEvent: PageEvent{Path: p.Path, PageID: p.UID, Revision: p.Revision}})
}

// PurgeExpired purges, in every workspace, the pages that have been in the
// trash longer than the retention period, and says how many. It is the
// server's own housekeeping, run on start and every hour.
func (s *Service) PurgeExpired(ctx context.Context) (int, error) {
	if s.TrashRetention <= 0 {
		return 0, nil // kept until purged by hand
	}
	n := 0
	for {
		var batch []atrium.Page
		err := s.db.Update(ctx, func(tx *store.Tx) (err error) {
			if batch, err = tx.ExpiredTrash(ctx, tx.Now().Add(-s.TrashRetention), 100); err != nil {
				return err
			}
			for _, p := range batch {
				if err := s.purge(ctx, tx, 0, p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return n, err
		}
		n += len(batch)
		if len(batch) < 100 {
			return n, nil
		}
	}
}
