package review

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// Export and import of a workspace's reviews and threads: what `atrium
// export` writes beside the pages (package records holds the file format)
// and `atrium import` reads back. Both are the operator's (admins only): an
// export holds every draft, and an import writes threads as their authors
// wrote them, with their ids and times, which no other call may do.

// EventImported records an import; its payload is the ImportReport.
const EventImported = "import.threads"

// Records are a workspace's reviews and threads, drafts included.
type Records struct {
	Reviews []atrium.Review // oldest first
	// Threads are oldest first, each root with its replies. Replies share
	// their root's anchor: theirs is not read.
	Threads []Thread
}

// Export reads every review and thread of the caller's workspace (drafts
// too; not those of pages in the trash) in one snapshot.
func (s *Service) Export(ctx context.Context) (Records, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return Records{}, err
	}
	var out Records
	err = s.db.View(ctx, func(tx *store.Tx) error {
		out = Records{Threads: []Thread{}}
		var err error
		if out.Reviews, err = tx.Reviews(ctx, store.ReviewFilter{Workspace: a.Workspace.ID}); err != nil {
			return err
		}
		anns, err := tx.Annotations(ctx, store.AnnotationFilter{Workspace: a.Workspace.ID, SeeDrafts: true})
		if err != nil {
			return err
		}
		at := map[int64]int{} // a root's place in Threads
		for _, x := range anns {
			if x.ParentID == 0 {
				at[x.ID] = len(out.Threads)
				out.Threads = append(out.Threads, Thread{Annotation: x, Replies: []atrium.Annotation{}})
			}
		}
		for _, x := range anns { // oldest first, so each thread's replies in order
			if i, ok := at[x.ParentID]; ok && x.ParentID != 0 {
				out.Threads[i].Replies = append(out.Threads[i].Replies, x)
			}
		}
		return nil
	})
	if out.Reviews == nil {
		out.Reviews = []atrium.Review{}
	}
	return out, err
}

// ImportReport says what Import did.
type ImportReport struct {
	Created   int `json:"created"`   // annotations (threads and replies) added
	Updated   int `json:"updated"`   // annotations there that the export changed
	Unchanged int `json:"unchanged"` // annotations there as the export holds them
	Reviews   int `json:"reviews"`   // reviews added or changed
	// InTrash counts annotations and reviews left alone because their
	// page is in this workspace's trash, where they wait with it.
	InTrash int `json:"in_trash"`
	// NewIDs counts those given an id of their own, because another
	// workspace of this store holds theirs (the same export imported there).
	NewIDs int `json:"new_ids"`
}

func (r ImportReport) changed() bool { return r.Created+r.Updated+r.Reviews > 0 }

// Import writes r into the caller's workspace, in one transaction, as the
// export holds it: reviews and annotations keep their ids, authors, states
// and times, threads their anchors. One already there (the same id) is
// brought to the export's state, so importing twice adds nothing. Threads
// whose page is missing come in orphaned, as they would be had the page
// gone. Every author must exist as a principal (see identity's
// EnsureMembers); import pages first, so that quotes find their text.
func (s *Service) Import(ctx context.Context, r Records) (ImportReport, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return ImportReport{}, err
	}
	var rep ImportReport
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		rep = ImportReport{}
		im := importer{tx: tx, a: a, rep: &rep, reviews: map[string]int64{}, pages: map[string]*page{}}
		for _, rv := range r.Reviews {
			if err := im.review(ctx, rv); err != nil {
				return fmt.Errorf("review %s: %w", rv.UID, err)
			}
		}
		for _, t := range r.Threads {
			root, err := im.annotation(ctx, t.Annotation, nil)
			if err != nil {
				return inThread(t.Annotation.UID, err)
			}
			for _, x := range t.Replies {
				if _, err := im.annotation(ctx, x, &root); err != nil {
					return inThread(x.UID, err)
				}
			}
		}
		if !rep.changed() {
			return nil
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventImported, "threads", rep)
	})
	return rep, err
}

// inThread puts an annotation's id before an error's message.
func inThread(uid string, err error) error {
	var e *atrium.Error
	if errors.As(err, &e) {
		return &atrium.Error{Code: e.Code, Message: fmt.Sprintf("annotation %s: %s", uid, e.Message), Details: e.Details}
	}
	return fmt.Errorf("annotation %s: %w", uid, err)
}

// importer is one Import's transaction and what it has learnt.
type importer struct {
	tx      *store.Tx
	a       *atrium.Actor
	rep     *ImportReport
	reviews map[string]int64 // the export's review ids → rows
	pages   map[string]*page // documents parsed, by path ("": none)
}

// uid is the id an exported review or annotation has in this workspace,
// with its row if it is there already. Ids are unique across the store; one
// that another workspace holds is replaced by one derived from it and the
// workspace, so that importing again finds the same.
func (im *importer) uid(ctx context.Context, table, uid string) (string, int64, error) {
	if uid == "" {
		return "", 0, atrium.Errorf(atrium.EInvalid, "an id is required")
	}
	ws, id, err := im.tx.UIDOwner(ctx, table, uid)
	if err != nil || ws == 0 || ws == im.a.Workspace.ID {
		return uid, id, err
	}
	prefix, _, _ := strings.Cut(uid, "_")
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", uid, im.a.Workspace.ID))
	own := prefix + "_" + strings.ToLower(base32.StdEncoding.EncodeToString(sum[:])[:16])
	if ws, id, err = im.tx.UIDOwner(ctx, table, own); err != nil {
		return "", 0, err
	}
	if ws != 0 && ws != im.a.Workspace.ID {
		return "", 0, atrium.Errorf(atrium.EConflict, "id %s is taken in another workspace, and so is %s", uid, own)
	}
	if id == 0 {
		im.rep.NewIDs++
	}
	return own, id, nil
}

func (im *importer) author(ctx context.Context, h string) (int64, error) {
	if h == "" {
		return 0, nil // its author was deleted
	}
	p, err := im.tx.PrincipalByHandle(ctx, h)
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return 0, atrium.Errorf(atrium.EInvalid, "unknown principal @%s", h)
	}
	return p.ID, err
}

func (im *importer) review(ctx context.Context, rv atrium.Review) error {
	switch {
	case rv.Status != atrium.ReviewDraft && rv.Status != atrium.ReviewSubmitted && rv.Status != atrium.ReviewCompleted:
		return atrium.Errorf(atrium.EInvalid, "review status is draft, submitted or completed, not %q", rv.Status)
	case len(rv.Summary) > maxSummary:
		return atrium.Errorf(atrium.ETooLarge, "summary is %d bytes; at most %d", len(rv.Summary), maxSummary)
	case rv.CreatedAt.IsZero() || rv.UpdatedAt.IsZero():
		return atrium.Errorf(atrium.EInvalid, "created_at and updated_at are required")
	}
	doc, err := pages.NormalizePath(strings.TrimPrefix(rv.DocPath, "/"))
	if err != nil {
		return err
	}
	exported := rv.UID
	row := rv
	row.WorkspaceID, row.DocPath = im.a.Workspace.ID, doc
	if row.AuthorID, err = im.author(ctx, rv.Author); err != nil {
		return err
	}
	if row.UID, row.ID, err = im.uid(ctx, "reviews", rv.UID); err != nil {
		return err
	}
	im.reviews[exported] = row.ID
	if row.ID != 0 {
		have, err := im.tx.ReviewByUID(ctx, row.WorkspaceID, row.UID)
		switch {
		case atrium.ErrorCode(err) == atrium.ENotFound:
			im.rep.InTrash++
			return nil
		case err != nil:
			return err
		case have.DocPath == row.DocPath && have.Status == row.Status && have.AuthorID == row.AuthorID && have.Summary == row.Summary && have.UpdatedAt.Equal(row.UpdatedAt):
			return nil
		}
	}
	if err := im.tx.RestoreReview(ctx, &row); err != nil {
		return err
	}
	im.reviews[exported] = row.ID
	im.rep.Reviews++
	return nil
}

// annotation writes a thread's root (root nil) or one of its replies.
func (im *importer) annotation(ctx context.Context, x atrium.Annotation, root *atrium.Annotation) (atrium.Annotation, error) {
	switch {
	case strings.TrimSpace(x.Content) == "":
		return x, atrium.Errorf(atrium.EInvalid, "content is required")
	case len(x.Content) > maxContent:
		return x, atrium.Errorf(atrium.ETooLarge, "content is %d bytes; at most %d", len(x.Content), maxContent)
	case x.Status != atrium.StatusDraft && x.Status != atrium.StatusSubmitted && x.Status != atrium.StatusResolved:
		return x, atrium.Errorf(atrium.EInvalid, "status is draft, submitted or resolved, not %q", x.Status)
	case root != nil && x.Status == atrium.StatusResolved:
		return x, atrium.Errorf(atrium.EInvalid, "a reply is not resolved: threads resolve at their root")
	case x.AuthorType != atrium.AuthorHuman && x.AuthorType != atrium.AuthorAI:
		return x, atrium.Errorf(atrium.EInvalid, "author_type is human or ai, not %q", x.AuthorType)
	case x.CreatedAt.IsZero() || x.UpdatedAt.IsZero():
		return x, atrium.Errorf(atrium.EInvalid, "created_at and updated_at are required")
	}
	row := x
	row.WorkspaceID, row.ParentID, row.ReviewID = im.a.Workspace.ID, 0, 0
	var err error
	if row.AuthorID, err = im.author(ctx, x.Author); err != nil {
		return row, err
	}
	if x.ReviewUID != "" {
		id, ok := im.reviews[x.ReviewUID]
		if !ok {
			return row, atrium.Errorf(atrium.EInvalid, "it names review %s, which the export does not hold", x.ReviewUID)
		}
		row.ReviewID = id
	}
	if root == nil {
		if row.DocPath, err = pages.NormalizePath(strings.TrimPrefix(x.DocPath, "/")); err != nil {
			return row, err
		}
		row.QuoteOffset = im.offset(ctx, row)
	} else {
		// A reply shares its root's anchor (Create does the same).
		row.DocPath, row.Section, row.Quote, row.QuoteOffset, row.Orphaned, row.ParentID = root.DocPath, root.Section, root.Quote, root.QuoteOffset, root.Orphaned, root.ID
	}
	if row.UID, row.ID, err = im.uid(ctx, "annotations", x.UID); err != nil {
		return row, err
	}
	if row.ID != 0 {
		have, err := im.tx.AnnotationByUID(ctx, row.WorkspaceID, row.UID)
		switch {
		case atrium.ErrorCode(err) == atrium.ENotFound:
			im.rep.InTrash++
			return row, nil // its replies are in the trash with it
		case err != nil:
			return row, err
		case sameAnnotation(have, row):
			im.rep.Unchanged++
			return have, nil
		}
		im.rep.Updated++
	} else {
		im.rep.Created++
	}
	return row, im.tx.RestoreAnnotation(ctx, &row)
}

// offset is where a root's quote is in its page now, for the next
// re-anchoring to start from; -1 when it is not there as exported (the
// anchor is kept as exported all the same).
func (im *importer) offset(ctx context.Context, x atrium.Annotation) int {
	if x.Quote == nil || x.Quote.Exact == "" || x.Orphaned {
		return -1
	}
	p, ok := im.pages[x.DocPath]
	if !ok {
		if pg, err := im.tx.PageByPath(ctx, x.WorkspaceID, x.DocPath); err == nil {
			p = newPage(pg.Content)
		}
		im.pages[x.DocPath] = p
	}
	if p == nil {
		return -1
	}
	where := relocate(p, x)
	if where.orphaned || where.section != x.Section || !sameQuote(where.quote, x.Quote) {
		return -1
	}
	return where.offset
}

// sameAnnotation reports whether two versions of an annotation say the same
// (the quote's offset is a hint, not part of it).
func sameAnnotation(x, y atrium.Annotation) bool {
	return x.DocPath == y.DocPath && x.Section == y.Section && sameQuote(x.Quote, y.Quote) && x.Orphaned == y.Orphaned &&
		x.Content == y.Content && x.Status == y.Status && x.ReviewID == y.ReviewID && x.AuthorID == y.AuthorID &&
		x.AuthorType == y.AuthorType && x.UpdatedAt.Equal(y.UpdatedAt)
}
