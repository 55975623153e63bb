// Package review is the service of review threads on documents: annotations
// (comments on a section, optionally on a quote, with threaded replies) and
// reviews that group them. Its rules hold for every surface — MCP, REST, the
// browser — because they live only here:
//
//   - replies inherit the review, document and section of their thread;
//   - an identical create by the same author within the dedup window returns
//     the first annotation instead of a duplicate;
//   - deleting an annotation deletes its replies, and a review left without
//     annotations is deleted too;
//   - threads resolve and reopen at their root; a draft must be submitted
//     before it can be resolved;
//   - drafts are seen only by their author (and admins);
//   - when a page changes, through any surface, its annotations are anchored
//     again; one whose anchor is gone is marked orphaned, never dropped.
package review

import (
	"context"
	"encoding/base64"

	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// Event kinds; the subject is the document path.
const (
	EventAnnotationCreated  = "annotation.created"
	EventAnnotationUpdated  = "annotation.updated"
	EventAnnotationDeleted  = "annotation.deleted"
	EventAnnotationAnchored = "annotation.anchored"
	EventReviewCreated      = "review.created"
	EventReviewUpdated      = "review.updated"
	EventReviewDeleted      = "review.deleted"
)

// DefaultDedupWindow is how long an identical create returns the first
// annotation (the 30 seconds of Foundry's BUG-4).
const DefaultDedupWindow = 30 * time.Second

// maxContent bounds one annotation.
const maxContent = 64 << 10

// Service is the review service.
type Service struct {
	db  *store.DB
	log *slog.Logger
	// DedupWindow: an identical create within it returns the first annotation.
	DedupWindow time.Duration
}

// New returns the review service, and has the pages service keep annotations
// anchored as pages change.
func New(db *store.DB, d *pages.Service, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	s := &Service{db: db, log: log, DedupWindow: DefaultDedupWindow}
	if d != nil {
		d.OnChange(s.pageChanged)
	}
	return s
}

// Event is the payload of review events.
type Event struct {
	DocPath  string `json:"doc_path"`
	ID       string `json:"id"`
	ReviewID string `json:"review_id,omitempty"`
	From     string `json:"from,omitempty"` // a move: the old document path
	// DraftOf, on an event about a draft (an annotation or review not yet
	// submitted), is the handle of its author: as the draft itself, the
	// event is seen by them and admins only (atrium.EventDraftOf).
	DraftOf string `json:"draft_of,omitempty"`
}

// emit records a review event; draftOf is the author of the draft it is
// about, "" when it is about something others may see.
func emit(ctx context.Context, tx *store.Tx, a *atrium.Actor, kind, doc, id, review, draftOf string) error {
	return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, kind, doc, Event{DocPath: doc, ID: id, ReviewID: review, DraftOf: draftOf})
}

// draftOf is the author of ann if it is a draft, else "".
func draftOf(ann atrium.Annotation) string {
	if ann.Status == atrium.StatusDraft {
		return ann.Author
	}
	return ""
}

func reader(ctx context.Context) (*atrium.Actor, error) {
	return atrium.RequireActor(ctx, atrium.RoleReader)
}
func writer(ctx context.Context) (*atrium.Actor, error) {
	return atrium.RequireActor(ctx, atrium.RoleWriter)
}

// mayChange says whether a may edit or delete ann: its author, or an admin.
func mayChange(a *atrium.Actor, ann atrium.Annotation) error {
	if ann.AuthorID == a.Principal.ID || a.Role.Allows(atrium.RoleAdmin) {
		return nil
	}
	return atrium.Errorf(atrium.EPermission, "annotation %s is %s's: only its author or an admin may change or delete it", ann.UID, ann.Author)
}

// visibleTo hides other people's drafts, as if they did not exist.
func visibleTo(a *atrium.Actor, ann atrium.Annotation) error {
	if ann.Status != atrium.StatusDraft || ann.AuthorID == a.Principal.ID || a.Role.Allows(atrium.RoleAdmin) {
		return nil
	}
	return atrium.Errorf(atrium.ENotFound, "Annotation not found: %s", ann.UID)
}

// docPage returns the document an annotation is made on; it must exist and be
// visible to a.
func docPage(ctx context.Context, tx *store.Tx, a *atrium.Actor, path string) (atrium.Page, error) {
	clean, err := pages.NormalizePath(strings.TrimPrefix(strings.TrimSpace(path), "/"))
	if err != nil {
		return atrium.Page{}, err
	}
	return tx.PageByPath(ctx, a.Workspace.ID, clean)
}

// CreateRequest creates an annotation or a reply.
type CreateRequest struct {
	DocPath  string
	Section  string
	Content  string
	ParentID string // reply to this annotation
	Quote    *atrium.Quote
	// Status of a new thread: draft (the default, submitted later with its
	// review) or submitted (visible at once). Replies take their thread's.
	Status atrium.AnnotationStatus
}

// Create adds an annotation, or a reply when ParentID is set. It returns
// created false when an identical annotation of the same author already came
// within the dedup window: that one is returned instead.
func (s *Service) Create(ctx context.Context, r CreateRequest) (atrium.Annotation, bool, error) {
	a, err := writer(ctx)
	if err != nil {
		return atrium.Annotation{}, false, err
	}
	content := strings.TrimSpace(r.Content)
	switch {
	case content == "":
		return atrium.Annotation{}, false, atrium.Errorf(atrium.EInvalid, "content is required")
	case len(r.Content) > maxContent:
		return atrium.Annotation{}, false, atrium.Errorf(atrium.ETooLarge, "content is %d bytes; at most %d", len(r.Content), maxContent)
	case r.Status != "" && r.Status != atrium.StatusDraft && r.Status != atrium.StatusSubmitted:
		return atrium.Annotation{}, false, atrium.Errorf(atrium.EInvalid, "status of a new annotation is draft or submitted, not %q", r.Status)
	}
	ann := atrium.Annotation{WorkspaceID: a.Workspace.ID, Content: r.Content, AuthorID: a.Principal.ID, Author: a.Principal.Handle,
		AuthorType: atrium.AuthorTypeOf(a.Principal.Kind), Status: atrium.StatusDraft, QuoteOffset: -1}
	if r.Status != "" {
		ann.Status = r.Status
	}
	created := true
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if r.ParentID != "" {
			parent, err := tx.AnnotationByUID(ctx, a.Workspace.ID, r.ParentID)
			if err == nil {
				err = visibleTo(a, parent)
			}
			if err != nil {
				return err
			}
			if parent.ParentID != 0 { // replies thread under the root
				if parent, err = tx.AnnotationByUID(ctx, a.Workspace.ID, parent.ParentUID); err != nil {
					return err
				}
			}
			if r.DocPath != "" && store.PathKey(strings.TrimPrefix(r.DocPath, "/")) != store.PathKey(parent.DocPath) ||
				r.Section != "" && r.Section != parent.Section && !strings.HasSuffix(parent.Section, r.Section) {
				return atrium.Errorf(atrium.EInvalid, "a reply belongs to its thread's document and section (%s, %q); leave doc_path and section out", parent.DocPath, parent.Section)
			}
			// BUG-6: a reply is part of its thread's review.
			ann.DocPath, ann.Section, ann.Quote, ann.QuoteOffset, ann.Orphaned = parent.DocPath, parent.Section, parent.Quote, parent.QuoteOffset, parent.Orphaned
			ann.ParentID, ann.ParentUID, ann.ReviewID, ann.ReviewUID = parent.ID, parent.UID, parent.ReviewID, parent.ReviewUID
			ann.Status = atrium.StatusSubmitted
			if parent.Status == atrium.StatusDraft {
				ann.Status = atrium.StatusDraft
			}
		} else {
			if r.DocPath == "" {
				return atrium.Errorf(atrium.EInvalid, "doc_path is required (the page the annotation is on), unless parent_id makes it a reply")
			}
			p, err := docPage(ctx, tx, a, r.DocPath)
			if err != nil {
				return err
			}
			where, err := locate(newPage(p.Content), r.Section, r.Quote)
			if err != nil {
				return anchorError(p.Path, err)
			}
			ann.DocPath, ann.Section, ann.Quote, ann.QuoteOffset = p.Path, where.section, where.quote, where.offset
		}
		// BUG-4: the same create twice in a short while is one annotation.
		if twin, ok, err := tx.RecentTwin(ctx, ann, tx.Now().Add(-s.DedupWindow).UnixMicro()); err != nil || ok {
			ann, created = twin, false
			return err
		}
		if err := tx.InsertAnnotation(ctx, &ann); err != nil {
			return err
		}
		return emit(ctx, tx, a, EventAnnotationCreated, ann.DocPath, ann.UID, ann.ReviewUID, draftOf(ann))
	})
	if err != nil {
		return atrium.Annotation{}, false, err
	}
	return ann, created, nil
}

// anchorError codes a section lookup failure.
func anchorError(path string, err error) error {
	if me, ok := err.(*markdown.Error); ok {
		if me.Code == markdown.ENotFound {
			return atrium.Errorf(atrium.ENotFound, "Section not found in %s: %s", path, me.Message)
		}
		return atrium.Errorf(atrium.EInvalid, "Section is ambiguous in %s: %s", path, me.Message)
	}
	return err
}

// Thread is an annotation with its replies, oldest first.
type Thread struct {
	Annotation atrium.Annotation
	Replies    []atrium.Annotation
}

// Get returns an annotation, with its replies when it is a thread's root.
func (s *Service) Get(ctx context.Context, id string) (Thread, error) {
	a, err := reader(ctx)
	if err != nil {
		return Thread{}, err
	}
	var t Thread
	err = s.db.View(ctx, func(tx *store.Tx) error {
		ann, err := tx.AnnotationByUID(ctx, a.Workspace.ID, id)
		if err == nil {
			err = visibleTo(a, ann)
		}
		if err != nil {
			return err
		}
		t.Annotation = ann
		if ann.ParentID == 0 {
			t.Replies, err = tx.Annotations(ctx, viewer(a, store.AnnotationFilter{Workspace: a.Workspace.ID, ParentID: ann.ID}))
		}
		return err
	})
	return t, err
}

func viewer(a *atrium.Actor, f store.AnnotationFilter) store.AnnotationFilter {
	f.Viewer, f.SeeDrafts = a.Principal.ID, a.Role.Allows(atrium.RoleAdmin)
	return f
}

// ListRequest filters annotations; the filters combine.
type ListRequest struct {
	DocPath  string
	Section  string
	Status   atrium.AnnotationStatus
	ReviewID string
	Cursor   string
	Limit    int
}

// Listed is an annotation as listed, with the number of its replies.
type Listed struct {
	atrium.Annotation
	Replies int
}

// ListResult is one page of annotations, oldest first.
type ListResult struct {
	Annotations []Listed
	NextCursor  string
}

// List lists annotations, oldest first, a page at a time.
func (s *Service) List(ctx context.Context, r ListRequest) (ListResult, error) {
	a, err := reader(ctx)
	if err != nil {
		return ListResult{}, err
	}
	if r.Status != "" && r.Status != atrium.StatusDraft && r.Status != atrium.StatusSubmitted && r.Status != atrium.StatusResolved {
		return ListResult{}, atrium.Errorf(atrium.EInvalid, "status is draft, submitted or resolved, not %q", r.Status)
	}
	f := viewer(a, store.AnnotationFilter{Workspace: a.Workspace.ID, Status: r.Status, Limit: clamp(r.Limit, 50, 200) + 1})
	if f.After.Created, f.After.ID, err = decodeCursor(r.Cursor); err != nil {
		return ListResult{}, err
	}
	var res ListResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if r.DocPath != "" {
			var p atrium.Page
			f.DocPath, p, err = docFilter(ctx, tx, a, r.DocPath)
			if err != nil {
				return err
			}
			if r.Section != "" && p.ID != 0 {
				_, body, _ := markdown.Split(p.Content)
				if h, err := markdown.Parse(body).Section(r.Section); err == nil {
					f.Section = sectionPath(h)
				} else {
					f.Section = r.Section
				}
			}
		} else if r.Section != "" {
			return atrium.Errorf(atrium.EInvalid, "section filters need doc_path")
		}
		if r.ReviewID != "" {
			rv, err := tx.ReviewByUID(ctx, a.Workspace.ID, r.ReviewID)
			if err != nil {
				return err
			}
			f.ReviewID = rv.ID
		}
		anns, err := tx.Annotations(ctx, f)
		if err != nil {
			return err
		}
		limit := f.Limit - 1
		if len(anns) > limit {
			anns = anns[:limit]
			last := anns[len(anns)-1]
			res.NextCursor = encodeCursor(last.CreatedAt.UnixMicro(), last.ID)
		}
		ids := make([]int64, len(anns))
		for i, x := range anns {
			ids[i] = x.ID
		}
		counts, err := tx.ReplyCounts(ctx, ids)
		if err != nil {
			return err
		}
		for _, x := range anns {
			res.Annotations = append(res.Annotations, Listed{Annotation: x, Replies: counts[x.ID]})
		}
		return nil
	})
	return res, err
}

// docFilter is the document path annotations are filtered by: the page's
// own spelling, or the path as given when the page is gone (its annotations
// outlive it, orphaned), with the zero page then.
func docFilter(ctx context.Context, tx *store.Tx, a *atrium.Actor, path string) (string, atrium.Page, error) {
	p, err := docPage(ctx, tx, a, path)
	switch {
	case err == nil:
		return p.Path, p, nil
	case atrium.ErrorCode(err) == atrium.ENotFound:
		return strings.TrimPrefix(path, "/"), atrium.Page{}, nil
	}
	return "", atrium.Page{}, err
}

func clamp(n, def, max int) int {
	if n <= 0 {
		return def
	}
	return min(n, max)
}

// Cursors hold the (created, id) of the last row listed.
func encodeCursor(created, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(created, 36) + "." + strconv.FormatInt(id, 36)))
}

func decodeCursor(c string) (created, id int64, err error) {
	if c == "" {
		return 0, 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		x, y, ok := strings.Cut(string(b), ".")
		if created, err = strconv.ParseInt(x, 36, 64); err == nil && ok {
			if id, err = strconv.ParseInt(y, 36, 64); err == nil {
				return created, id, nil
			}
		}
	}
	return 0, 0, atrium.Errorf(atrium.EInvalid, "invalid cursor: pass the next_cursor of the previous answer as it was")
}

// change loads an annotation the caller may see, applies fn in a write
// transaction, and records the event.
func (s *Service) change(ctx context.Context, id string, fn func(tx *store.Tx, a *atrium.Actor, ann *atrium.Annotation) error) (atrium.Annotation, error) {
	a, err := writer(ctx)
	if err != nil {
		return atrium.Annotation{}, err
	}
	var ann atrium.Annotation
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if ann, err = tx.AnnotationByUID(ctx, a.Workspace.ID, id); err != nil {
			return err
		}
		if err := visibleTo(a, ann); err != nil {
			return err
		}
		before := ann
		if err := fn(tx, a, &ann); err != nil {
			return err
		}
		if ann == before {
			return nil // nothing to change: no new updated_at, no event
		}
		if err := tx.UpdateAnnotation(ctx, &ann); err != nil {
			return err
		}
		return emit(ctx, tx, a, EventAnnotationUpdated, ann.DocPath, ann.UID, ann.ReviewUID, draftOf(ann))
	})
	return ann, err
}

// Edit changes an annotation's content; only its author or an admin may.
func (s *Service) Edit(ctx context.Context, id, content string) (atrium.Annotation, error) {
	if strings.TrimSpace(content) == "" {
		return atrium.Annotation{}, atrium.Errorf(atrium.EInvalid, "content is required")
	}
	if len(content) > maxContent {
		return atrium.Annotation{}, atrium.Errorf(atrium.ETooLarge, "content is %d bytes; at most %d", len(content), maxContent)
	}
	return s.change(ctx, id, func(_ *store.Tx, a *atrium.Actor, ann *atrium.Annotation) error {
		if err := mayChange(a, *ann); err != nil {
			return err
		}
		if ann.Content == content {
			// Even an unchanged edit refreshes updated_at: the author saved it.
			ann.UpdatedAt = time.Time{}
		}
		ann.Content = content
		return nil
	})
}

// Resolve marks a thread resolved. Threads resolve at their root; a draft is
// submitted (with its review) before it can be resolved. Resolving a
// resolved thread changes nothing.
func (s *Service) Resolve(ctx context.Context, id string) (atrium.Annotation, error) {
	return s.change(ctx, id, func(_ *store.Tx, _ *atrium.Actor, ann *atrium.Annotation) error {
		switch {
		case ann.ParentID != 0:
			return atrium.Errorf(atrium.EInvalid, "threads resolve at their root: resolve %s, the annotation %s replies to", ann.ParentUID, ann.UID)
		case ann.Status == atrium.StatusDraft:
			return atrium.Errorf(atrium.EInvalid, "annotation %s is a draft: submit it with submit_review before resolving it", ann.UID)
		}
		ann.Status = atrium.StatusResolved
		return nil
	})
}

// Reopen makes a resolved thread submitted again.
func (s *Service) Reopen(ctx context.Context, id string) (atrium.Annotation, error) {
	return s.change(ctx, id, func(_ *store.Tx, _ *atrium.Actor, ann *atrium.Annotation) error {
		switch {
		case ann.ParentID != 0:
			return atrium.Errorf(atrium.EInvalid, "threads reopen at their root: reopen %s, the annotation %s replies to", ann.ParentUID, ann.UID)
		case ann.Status == atrium.StatusDraft:
			return atrium.Errorf(atrium.EInvalid, "annotation %s is a draft, not resolved: nothing to reopen", ann.UID)
		}
		ann.Status = atrium.StatusSubmitted
		return nil
	})
}

// DeleteResult says what a delete removed.
type DeleteResult struct {
	Annotation    atrium.Annotation
	Replies       int  // replies deleted with it
	ReviewDeleted bool // its review had nothing else and went too
}

// Delete deletes an annotation and all its replies; a review left without
// annotations is deleted as well. Only the author or an admin may.
func (s *Service) Delete(ctx context.Context, id string) (DeleteResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return DeleteResult{}, err
	}
	var res DeleteResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		ann, err := tx.AnnotationByUID(ctx, a.Workspace.ID, id)
		if err == nil {
			err = visibleTo(a, ann)
		}
		if err != nil {
			return err
		}
		if err := mayChange(a, ann); err != nil {
			return err
		}
		if res.Replies, err = tx.DeleteAnnotation(ctx, ann.ID); err != nil {
			return err
		}
		res.Annotation = ann
		if res.ReviewDeleted, err = tx.DeleteReviewIfEmpty(ctx, ann.ReviewID); err != nil {
			return err
		}
		if err := emit(ctx, tx, a, EventAnnotationDeleted, ann.DocPath, ann.UID, ann.ReviewUID, draftOf(ann)); err != nil {
			return err
		}
		if res.ReviewDeleted {
			return emit(ctx, tx, a, EventReviewDeleted, ann.DocPath, ann.ReviewUID, ann.ReviewUID, draftOf(ann))
		}
		return nil
	})
	return res, err
}

// pageChanged keeps a document's annotations anchored, in the page write's
// own transaction: moved pages take their threads along, changed pages get
// their quotes found again, deleted pages leave their threads orphaned.
func (s *Service) pageChanged(ctx context.Context, tx *store.Tx, a *atrium.Actor, c pages.Change) error {
	doc := c.Page.Path
	if c.Kind == pages.EventPageMoved && c.From != "" && store.PathKey(c.From) != store.PathKey(doc) {
		if err := tx.MoveAnnotations(ctx, a.Workspace.ID, c.From, doc); err != nil {
			return err
		}
	}
	roots, err := tx.ThreadRoots(ctx, a.Workspace.ID, doc)
	if err != nil || len(roots) == 0 {
		return err
	}
	var pg *page
	if c.Kind != pages.EventPageDeleted {
		pg = newPage(c.Page.Content)
	}
	changed := 0
	for _, ann := range roots {
		where := anchor{section: ann.Section, quote: ann.Quote, offset: ann.QuoteOffset, orphaned: true}
		if pg != nil {
			where = relocate(pg, ann)
		}
		if where.section == ann.Section && where.orphaned == ann.Orphaned && where.offset == ann.QuoteOffset && sameQuote(where.quote, ann.Quote) {
			continue
		}
		ann.Section, ann.Quote, ann.QuoteOffset, ann.Orphaned = where.section, where.quote, where.offset, where.orphaned
		if err := tx.SetAnchor(ctx, ann); err != nil {
			return err
		}
		changed++
	}
	if changed == 0 {
		return nil
	}
	return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventAnnotationAnchored, doc, map[string]any{"doc_path": doc, "annotations": changed})
}

func sameQuote(x, y *atrium.Quote) bool {
	if x == nil || y == nil {
		return x == y
	}
	return *x == *y
}
