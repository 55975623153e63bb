package review

import (
	"context"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// ThreadsRequest selects threads by their root; the filters combine.
type ThreadsRequest struct {
	DocPath string                  // "" for every document
	Status  atrium.AnnotationStatus // of the root; "" for any
	Cursor  string
	Limit   int // roots per answer: default 50, at most 200
}

// ThreadsResult is one page of threads, oldest root first.
type ThreadsResult struct {
	Threads    []Thread
	NextCursor string
}

// Threads lists whole threads — each root with its replies — in two queries
// however many threads there are, where List and a Get per thread would take
// one query per thread.
func (s *Service) Threads(ctx context.Context, r ThreadsRequest) (ThreadsResult, error) {
	a, err := reader(ctx)
	if err != nil {
		return ThreadsResult{}, err
	}
	if r.Status != "" && r.Status != atrium.StatusDraft && r.Status != atrium.StatusSubmitted && r.Status != atrium.StatusResolved {
		return ThreadsResult{}, atrium.Errorf(atrium.EInvalid, "status is draft, submitted or resolved, not %q", r.Status)
	}
	f := viewer(a, store.AnnotationFilter{Workspace: a.Workspace.ID, Status: r.Status, RootsOnly: true, Limit: clamp(r.Limit, 50, 200) + 1})
	if f.After.Created, f.After.ID, err = decodeCursor(r.Cursor); err != nil {
		return ThreadsResult{}, err
	}
	var res ThreadsResult
	err = s.db.View(ctx, func(tx *store.Tx) error {
		if r.DocPath != "" {
			if f.DocPath, _, err = docFilter(ctx, tx, a, r.DocPath); err != nil {
				return err
			}
		}
		roots, err := tx.Annotations(ctx, f)
		if err != nil || len(roots) == 0 {
			return err
		}
		if limit := f.Limit - 1; len(roots) > limit {
			roots = roots[:limit]
			last := roots[len(roots)-1]
			res.NextCursor = encodeCursor(last.CreatedAt.UnixMicro(), last.ID)
		}
		ids := make([]int64, len(roots))
		at := make(map[int64]int, len(roots))
		res.Threads = make([]Thread, len(roots))
		for i, root := range roots {
			ids[i], at[root.ID] = root.ID, i
			res.Threads[i].Annotation = root
		}
		replies, err := tx.Annotations(ctx, viewer(a, store.AnnotationFilter{Workspace: a.Workspace.ID, ParentIDs: ids}))
		if err != nil {
			return err
		}
		for _, x := range replies { // oldest first, so each thread's in order
			t := &res.Threads[at[x.ParentID]]
			t.Replies = append(t.Replies, x)
		}
		return nil
	})
	return res, err
}
