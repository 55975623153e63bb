package review

import (
	"context"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// maxSummary bounds a review's summary.
const maxSummary = 16 << 10

// ReviewResult is a review with its annotations (threads and replies, oldest
// first, drafts only to their author).
type ReviewResult struct {
	Review      atrium.Review
	Annotations []atrium.Annotation
}

// SubmitRequest submits the caller's drafts on a document as a review.
type SubmitRequest struct {
	DocPath string
	// AnnotationIDs, if given, are the drafts to submit; else all the
	// caller's drafts on the document.
	AnnotationIDs []string
	Summary       string
}

// Submit creates a review of the caller's draft annotations on a document and
// submits them: they become visible to everyone, and their replies join the
// review. With no draft to submit it is an error, not an empty review.
func (s *Service) Submit(ctx context.Context, r SubmitRequest) (ReviewResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return ReviewResult{}, err
	}
	if len(r.Summary) > maxSummary {
		return ReviewResult{}, atrium.Errorf(atrium.ETooLarge, "summary is %d bytes; at most %d", len(r.Summary), maxSummary)
	}
	var res ReviewResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := docPage(ctx, tx, a, r.DocPath)
		if err != nil {
			return err
		}
		drafts, err := tx.Annotations(ctx, store.AnnotationFilter{Workspace: a.Workspace.ID, DocPath: p.Path, Status: atrium.StatusDraft, Viewer: a.Principal.ID})
		if err != nil {
			return err
		}
		mine := map[string]atrium.Annotation{}
		for _, d := range drafts {
			if d.AuthorID == a.Principal.ID && d.ParentID == 0 {
				mine[d.UID] = d
			}
		}
		var ids []int64
		if len(r.AnnotationIDs) > 0 {
			for _, uid := range r.AnnotationIDs {
				d, ok := mine[uid]
				if !ok {
					return atrium.Errorf(atrium.EInvalid, "annotation %s is not one of your draft threads on %s: only your own drafts can be submitted", uid, p.Path)
				}
				ids = append(ids, d.ID)
			}
		} else {
			for _, d := range drafts {
				if mine[d.UID].ID != 0 {
					ids = append(ids, d.ID)
				}
			}
		}
		if len(ids) == 0 {
			return atrium.Errorf(atrium.EInvalid, "you have no draft annotations on %s to submit: create them with create_annotation first", p.Path)
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		res.Review = atrium.Review{WorkspaceID: a.Workspace.ID, DocPath: p.Path, Status: atrium.ReviewSubmitted, AuthorID: a.Principal.ID, Author: a.Principal.Handle, Summary: r.Summary}
		if err := tx.InsertReview(ctx, &res.Review); err != nil {
			return err
		}
		if err := tx.SubmitAnnotations(ctx, res.Review.ID, ids); err != nil {
			return err
		}
		if res.Annotations, err = reviewAnnotations(ctx, tx, a, res.Review.ID); err != nil {
			return err
		}
		return emit(ctx, tx, a, EventReviewCreated, p.Path, res.Review.UID, res.Review.UID, "")
	})
	return res, err
}

func reviewAnnotations(ctx context.Context, tx *store.Tx, a *atrium.Actor, review int64) ([]atrium.Annotation, error) {
	return tx.Annotations(ctx, viewer(a, store.AnnotationFilter{Workspace: a.Workspace.ID, ReviewID: review}))
}

// CreateDraft opens an empty draft review on a document (the browser's flow:
// open a review, comment, submit).
func (s *Service) CreateDraft(ctx context.Context, doc, summary string) (atrium.Review, error) {
	a, err := writer(ctx)
	if err != nil {
		return atrium.Review{}, err
	}
	if len(summary) > maxSummary {
		return atrium.Review{}, atrium.Errorf(atrium.ETooLarge, "summary is %d bytes; at most %d", len(summary), maxSummary)
	}
	var rv atrium.Review
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := docPage(ctx, tx, a, doc)
		if err != nil {
			return err
		}
		rv = atrium.Review{WorkspaceID: a.Workspace.ID, DocPath: p.Path, Status: atrium.ReviewDraft, AuthorID: a.Principal.ID, Author: a.Principal.Handle, Summary: summary}
		if err := tx.InsertReview(ctx, &rv); err != nil {
			return err
		}
		return emit(ctx, tx, a, EventReviewCreated, p.Path, rv.UID, rv.UID, rv.Author) // a draft: its author's
	})
	return rv, err
}

// UpdateRequest changes a review: its summary, and its status along the
// allowed transitions draft → submitted → completed (and completed →
// submitted to reopen it).
type UpdateRequest struct {
	ID      string
	Status  atrium.ReviewStatus // "" leaves it
	Summary *string             // nil leaves it
}

// Update changes a review. Submitting a draft review submits the author's
// drafts on its document into it.
func (s *Service) Update(ctx context.Context, r UpdateRequest) (ReviewResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return ReviewResult{}, err
	}
	if r.Summary != nil && len(*r.Summary) > maxSummary {
		return ReviewResult{}, atrium.Errorf(atrium.ETooLarge, "summary is %d bytes; at most %d", len(*r.Summary), maxSummary)
	}
	var res ReviewResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		rv, err := tx.ReviewByUID(ctx, a.Workspace.ID, r.ID)
		if err != nil {
			return err
		}
		if rv.Status == atrium.ReviewDraft && rv.AuthorID != a.Principal.ID && !a.Role.Allows(atrium.RoleAdmin) {
			return atrium.Errorf(atrium.ENotFound, "Review not found: %s", r.ID) // a draft is its author's
		}
		before := rv
		if r.Summary != nil {
			if rv.AuthorID != a.Principal.ID && !a.Role.Allows(atrium.RoleAdmin) && rv.Status != atrium.ReviewSubmitted {
				return atrium.Errorf(atrium.EPermission, "only the review's author or an admin may change its summary")
			}
			rv.Summary = *r.Summary
		}
		if r.Status != "" && r.Status != rv.Status {
			if err := transition(rv.Status, r.Status); err != nil {
				return err
			}
			if rv.Status == atrium.ReviewDraft {
				drafts, err := tx.Annotations(ctx, store.AnnotationFilter{Workspace: a.Workspace.ID, DocPath: rv.DocPath, Status: atrium.StatusDraft, Viewer: rv.AuthorID})
				if err != nil {
					return err
				}
				var ids []int64
				for _, d := range drafts {
					if d.AuthorID == rv.AuthorID && d.ParentID == 0 && (d.ReviewID == 0 || d.ReviewID == rv.ID) {
						ids = append(ids, d.ID)
					}
				}
				if err := tx.SubmitAnnotations(ctx, rv.ID, ids); err != nil {
					return err
				}
			}
			rv.Status = r.Status
		}
		if rv != before {
			if err := tx.UpdateReview(ctx, &rv); err != nil {
				return err
			}
			if err := emit(ctx, tx, a, EventReviewUpdated, rv.DocPath, rv.UID, rv.UID, reviewDraftOf(rv)); err != nil {
				return err
			}
		}
		res.Review = rv
		res.Annotations, err = reviewAnnotations(ctx, tx, a, rv.ID)
		return err
	})
	return res, err
}

// reviewDraftOf is the author of rv if it is a draft, else "".
func reviewDraftOf(rv atrium.Review) string {
	if rv.Status == atrium.ReviewDraft {
		return rv.Author
	}
	return ""
}

// transition checks a review status change.
func transition(from, to atrium.ReviewStatus) error {
	switch {
	case from == atrium.ReviewDraft && to == atrium.ReviewSubmitted,
		from == atrium.ReviewSubmitted && to == atrium.ReviewCompleted,
		from == atrium.ReviewCompleted && to == atrium.ReviewSubmitted:
		return nil
	case to != atrium.ReviewDraft && to != atrium.ReviewSubmitted && to != atrium.ReviewCompleted:
		return atrium.Errorf(atrium.EInvalid, "review status is draft, submitted or completed, not %q", to)
	}
	return atrium.Errorf(atrium.EInvalid, "a %s review cannot become %s (draft → submitted → completed; completed → submitted reopens it)", from, to)
}

// Complete marks a submitted review completed, optionally with a closing summary.
func (s *Service) Complete(ctx context.Context, id string, summary *string) (ReviewResult, error) {
	return s.Update(ctx, UpdateRequest{ID: id, Status: atrium.ReviewCompleted, Summary: summary})
}

// GetReview returns a review with its annotations.
func (s *Service) GetReview(ctx context.Context, id string) (ReviewResult, error) {
	a, err := reader(ctx)
	if err != nil {
		return ReviewResult{}, err
	}
	var res ReviewResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		rv, err := tx.ReviewByUID(ctx, a.Workspace.ID, id)
		if err != nil {
			return err
		}
		if rv.Status == atrium.ReviewDraft && rv.AuthorID != a.Principal.ID && !a.Role.Allows(atrium.RoleAdmin) {
			return atrium.Errorf(atrium.ENotFound, "Review not found: %s", id)
		}
		res.Review = rv
		res.Annotations, err = reviewAnnotations(ctx, tx, a, rv.ID)
		return err
	})
	return res, err
}

// ReviewList is one page of reviews, oldest first.
type ReviewList struct {
	Reviews    []atrium.Review
	NextCursor string
}

// ListReviews lists the reviews of a document, optionally of one status.
func (s *Service) ListReviews(ctx context.Context, doc string, status atrium.ReviewStatus, cursor string, limit int) (ReviewList, error) {
	a, err := reader(ctx)
	if err != nil {
		return ReviewList{}, err
	}
	if status != "" && status != atrium.ReviewDraft && status != atrium.ReviewSubmitted && status != atrium.ReviewCompleted {
		return ReviewList{}, atrium.Errorf(atrium.EInvalid, "status is draft, submitted or completed, not %q", status)
	}
	f := store.ReviewFilter{Workspace: a.Workspace.ID, DocPath: strings.TrimPrefix(strings.TrimSpace(doc), "/"), Status: status, Limit: clamp(limit, 50, 200) + 1}
	if f.After.Created, f.After.ID, err = decodeCursor(cursor); err != nil {
		return ReviewList{}, err
	}
	var res ReviewList
	err = s.db.View(ctx, func(tx *store.Tx) error {
		rvs, err := tx.Reviews(ctx, f)
		if err != nil {
			return err
		}
		for _, rv := range rvs {
			if rv.Status == atrium.ReviewDraft && rv.AuthorID != a.Principal.ID && !a.Role.Allows(atrium.RoleAdmin) {
				continue
			}
			if len(res.Reviews) == f.Limit-1 {
				last := res.Reviews[len(res.Reviews)-1]
				res.NextCursor = encodeCursor(last.CreatedAt.UnixMicro(), last.ID)
				break
			}
			res.Reviews = append(res.Reviews, rv)
		}
		return nil
	})
	return res, err
}
