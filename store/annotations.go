package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
)

const annotationCols = `a.id, a.uid, a.workspace_id, a.doc_path, a.section, a.quote_exact, a.quote_prefix, a.quote_suffix, a.quote_offset,
	a.content, COALESCE(a.author_id, 0), COALESCE(pr.handle, ''), a.author_type, a.status, COALESCE(a.parent_id, 0), COALESCE(pa.uid, ''),
	COALESCE(a.review_id, 0), COALESCE(rv.uid, ''), a.orphaned, a.created_at, a.updated_at`

const annotationFrom = ` FROM annotations a LEFT JOIN principals pr ON pr.id = a.author_id
	LEFT JOIN annotations pa ON pa.id = a.parent_id LEFT JOIN reviews rv ON rv.id = a.review_id`

func scanAnnotation(sc scanner) (atrium.Annotation, error) {
	var (
		a                     atrium.Annotation
		exact, prefix, suffix string
		authorType, status    string
		created, updated      int64
	)
	err := sc.Scan(&a.ID, &a.UID, &a.WorkspaceID, &a.DocPath, &a.Section, &exact, &prefix, &suffix, &a.QuoteOffset,
		&a.Content, &a.AuthorID, &a.Author, &authorType, &status, &a.ParentID, &a.ParentUID, &a.ReviewID, &a.ReviewUID, &a.Orphaned, &created, &updated)
	if exact != "" {
		a.Quote = &atrium.Quote{Exact: exact, Prefix: prefix, Suffix: suffix}
	}
	a.AuthorType, a.Status = atrium.AuthorType(authorType), atrium.AnnotationStatus(status)
	a.CreatedAt, a.UpdatedAt = fromMicros(created), fromMicros(updated)
	return a, err
}

func quoteParts(q *atrium.Quote) (string, string, string) {
	if q == nil {
		return "", "", ""
	}
	return q.Exact, q.Prefix, q.Suffix
}

// InsertAnnotation adds an annotation; ID, UID and times are set here.
func (tx *Tx) InsertAnnotation(ctx context.Context, a *atrium.Annotation) error {
	a.UID = "ann_" + strings.ToLower(rand.Text()[:16])
	a.CreatedAt, a.UpdatedAt = tx.now, tx.now
	exact, prefix, suffix := quoteParts(a.Quote)
	err := tx.queryRow(ctx, `INSERT INTO annotations (uid, workspace_id, doc_path, doc_key, section, quote_exact, quote_prefix, quote_suffix, quote_offset,
		content, author_id, author_type, status, parent_id, review_id, orphaned, created_at, updated_at, twin_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		a.UID, a.WorkspaceID, a.DocPath, PathKey(a.DocPath), a.Section, exact, prefix, suffix, a.QuoteOffset,
		a.Content, nullID(a.AuthorID), string(a.AuthorType), string(a.Status), nullID(a.ParentID), nullID(a.ReviewID), a.Orphaned,
		micros(tx.now), micros(tx.now), twinKey(*a)).Scan(&a.ID)
	if err != nil {
		return fmt.Errorf("insert annotation: %w", err)
	}
	return nil
}

// AnnotationByUID returns an annotation of workspace ws by its ID, or not_found.
func (tx *Tx) AnnotationByUID(ctx context.Context, ws int64, uid string) (atrium.Annotation, error) {
	a, err := scanAnnotation(tx.queryRow(ctx, "SELECT "+annotationCols+annotationFrom+" WHERE a.workspace_id = ? AND a.uid = ?"+liveThread("a"), ws, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return a, atrium.Errorf(atrium.ENotFound, "Annotation not found: %s", uid)
	}
	return a, err
}

// RecentTwin returns an annotation created since the given time that the
// same author wrote with the same document, section, parent and content.
func (tx *Tx) RecentTwin(ctx context.Context, a atrium.Annotation, since int64) (atrium.Annotation, bool, error) {
	t, err := scanAnnotation(tx.queryRow(ctx, "SELECT "+annotationCols+annotationFrom+`
		WHERE a.workspace_id = ? AND a.author_id = ? AND a.twin_key = ? AND a.created_at >= ? AND a.doc_key = ? AND a.section = ?
		AND COALESCE(a.parent_id, 0) = ? AND a.content = ? ORDER BY a.id LIMIT 1`,
		a.WorkspaceID, a.AuthorID, twinKey(a), since, PathKey(a.DocPath), a.Section, a.ParentID, a.Content))
	if errors.Is(err, sql.ErrNoRows) {
		return t, false, nil
	}
	return t, err == nil, err
}

// AnnotationFilter selects annotations to list, oldest first.
type AnnotationFilter struct {
	Workspace int64
	DocPath   string // "" for every document
	Section   string // "" for every section
	Status    atrium.AnnotationStatus
	ReviewID  int64
	ParentID  int64 // list the replies of this annotation only
	// ParentIDs lists the replies of these annotations, all in one query.
	ParentIDs []int64
	RootsOnly bool  // thread roots only, no replies
	Viewer    int64 // drafts are listed only to their author (0: no drafts)
	SeeDrafts bool  // an admin sees every draft
	After     struct{ Created, ID int64 }
	Limit     int
}

// Annotations lists annotations in creation order.
func (tx *Tx) Annotations(ctx context.Context, f AnnotationFilter) ([]atrium.Annotation, error) {
	q := "SELECT " + annotationCols + annotationFrom + " WHERE a.workspace_id = ?" + liveThread("a")
	args := []any{f.Workspace}
	if f.DocPath != "" {
		q += " AND a.doc_key = ?"
		args = append(args, PathKey(f.DocPath))
	}
	if f.Section != "" {
		q += " AND a.section = ?"
		args = append(args, f.Section)
	}
	if f.Status != "" {
		q += " AND a.status = ?"
		args = append(args, string(f.Status))
	}
	if f.ReviewID != 0 {
		q += " AND a.review_id = ?"
		args = append(args, f.ReviewID)
	}
	if f.ParentID != 0 {
		q += " AND a.parent_id = ?"
		args = append(args, f.ParentID)
	}
	if len(f.ParentIDs) > 0 {
		q += " AND a.parent_id IN (" + placeholders(len(f.ParentIDs)) + ")"
		for _, id := range f.ParentIDs {
			args = append(args, id)
		}
	}
	if f.RootsOnly {
		q += " AND a.parent_id IS NULL"
	}
	if !f.SeeDrafts {
		q += " AND (a.status <> 'draft' OR a.author_id = ?)"
		args = append(args, f.Viewer)
	}
	if f.After.Created != 0 || f.After.ID != 0 {
		q += " AND (a.created_at > ? OR a.created_at = ? AND a.id > ?)"
		args = append(args, f.After.Created, f.After.Created, f.After.ID)
	}
	q += " ORDER BY a.created_at, a.id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return queryAll(ctx, tx, scanAnnotation, q, args...)
}

// ReplyCounts counts the replies of each given annotation.
func (tx *Tx) ReplyCounts(ctx context.Context, ids []int64) (map[int64]int, error) {
	out := map[int64]int{}
	if len(ids) == 0 {
		return out, nil
	}
	args := idArgs(ids)
	rows, err := tx.query(ctx, "SELECT parent_id, COUNT(*) FROM annotations WHERE parent_id IN ("+placeholders(len(ids))+") GROUP BY parent_id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// UpdateAnnotation stores an annotation's content, status, review and anchor.
func (tx *Tx) UpdateAnnotation(ctx context.Context, a *atrium.Annotation) error {
	a.UpdatedAt = tx.now
	exact, prefix, suffix := quoteParts(a.Quote)
	_, err := tx.exec(ctx, `UPDATE annotations SET doc_path = ?, doc_key = ?, section = ?, quote_exact = ?, quote_prefix = ?, quote_suffix = ?, quote_offset = ?,
		content = ?, status = ?, review_id = ?, orphaned = ?, updated_at = ? WHERE id = ?`,
		a.DocPath, PathKey(a.DocPath), a.Section, exact, prefix, suffix, a.QuoteOffset, a.Content, string(a.Status), nullID(a.ReviewID), a.Orphaned, micros(tx.now), a.ID)
	return err
}

// SetAnchor re-anchors an annotation and its replies without touching
// updated_at: the page moved under it, nobody edited it.
func (tx *Tx) SetAnchor(ctx context.Context, a atrium.Annotation) error {
	exact, prefix, suffix := quoteParts(a.Quote)
	_, err := tx.exec(ctx, `UPDATE annotations SET section = ?, quote_exact = ?, quote_prefix = ?, quote_suffix = ?, quote_offset = ?, orphaned = ?
		WHERE id = ? OR parent_id = ?`, a.Section, exact, prefix, suffix, a.QuoteOffset, a.Orphaned, a.ID, a.ID)
	return err
}

// DeleteAnnotation deletes an annotation with its replies and says how many
// replies went.
func (tx *Tx) DeleteAnnotation(ctx context.Context, id int64) (int, error) {
	var replies int
	if err := tx.queryRow(ctx, "SELECT COUNT(*) FROM annotations WHERE parent_id = ?", id).Scan(&replies); err != nil {
		return 0, err
	}
	if _, err := tx.exec(ctx, "DELETE FROM annotations WHERE parent_id = ?", id); err != nil {
		return 0, err
	}
	_, err := tx.exec(ctx, "DELETE FROM annotations WHERE id = ?", id)
	return replies, err
}

// ThreadRoots returns the root annotations of a document (their replies
// share their anchor), for re-anchoring.
func (tx *Tx) ThreadRoots(ctx context.Context, ws int64, docPath string) ([]atrium.Annotation, error) {
	return tx.Annotations(ctx, AnnotationFilter{Workspace: ws, DocPath: docPath, SeeDrafts: true, RootsOnly: true})
}

// MoveAnnotations carries a document's annotations and reviews to its new path.
func (tx *Tx) MoveAnnotations(ctx context.Context, ws int64, from, to string) error {
	for _, table := range []string{"annotations", "reviews"} {
		if _, err := tx.exec(ctx, "UPDATE "+table+" SET doc_path = ?, doc_key = ? WHERE workspace_id = ? AND doc_key = ?", to, PathKey(to), ws, PathKey(from)); err != nil {
			return err
		}
	}
	return nil
}

// SubmitAnnotations moves annotations (and their replies) into a review as submitted.
func (tx *Tx) SubmitAnnotations(ctx context.Context, review int64, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{review, micros(tx.now)}
	for range 2 {
		for _, id := range ids {
			args = append(args, id)
		}
	}
	in := placeholders(len(ids))
	_, err := tx.exec(ctx, `UPDATE annotations SET status = 'submitted', review_id = ?, updated_at = ?
		WHERE (id IN (`+in+`) OR parent_id IN (`+in+`)) AND status = 'draft'`, args...)
	return err
}

const reviewCols = `r.id, r.uid, r.workspace_id, r.doc_path, r.status, COALESCE(r.author_id, 0), COALESCE(pr.handle, ''), r.summary, r.created_at, r.updated_at`

const reviewFrom = ` FROM reviews r LEFT JOIN principals pr ON pr.id = r.author_id`

func scanReview(sc scanner) (atrium.Review, error) {
	var r atrium.Review
	var status string
	var created, updated int64
	err := sc.Scan(&r.ID, &r.UID, &r.WorkspaceID, &r.DocPath, &status, &r.AuthorID, &r.Author, &r.Summary, &created, &updated)
	r.Status, r.CreatedAt, r.UpdatedAt = atrium.ReviewStatus(status), fromMicros(created), fromMicros(updated)
	return r, err
}

// InsertReview adds a review; ID, UID and times are set here.
func (tx *Tx) InsertReview(ctx context.Context, r *atrium.Review) error {
	r.UID = "rev_" + strings.ToLower(rand.Text()[:16])
	r.CreatedAt, r.UpdatedAt = tx.now, tx.now
	return tx.queryRow(ctx, `INSERT INTO reviews (uid, workspace_id, doc_path, doc_key, status, author_id, summary, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.UID, r.WorkspaceID, r.DocPath, PathKey(r.DocPath), string(r.Status), nullID(r.AuthorID), r.Summary, micros(tx.now), micros(tx.now)).Scan(&r.ID)
}

// ReviewByUID returns a review of workspace ws by its ID, or not_found.
func (tx *Tx) ReviewByUID(ctx context.Context, ws int64, uid string) (atrium.Review, error) {
	r, err := scanReview(tx.queryRow(ctx, "SELECT "+reviewCols+reviewFrom+" WHERE r.workspace_id = ? AND r.uid = ?"+liveThread("r"), ws, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return r, atrium.Errorf(atrium.ENotFound, "Review not found: %s", uid)
	}
	return r, err
}

// ReviewFilter selects reviews to list, oldest first.
type ReviewFilter struct {
	Workspace int64
	DocPath   string
	Status    atrium.ReviewStatus
	After     struct{ Created, ID int64 }
	Limit     int
}

// Reviews lists reviews in creation order.
func (tx *Tx) Reviews(ctx context.Context, f ReviewFilter) ([]atrium.Review, error) {
	q := "SELECT " + reviewCols + reviewFrom + " WHERE r.workspace_id = ?" + liveThread("r")
	args := []any{f.Workspace}
	if f.DocPath != "" {
		q += " AND r.doc_key = ?"
		args = append(args, PathKey(f.DocPath))
	}
	if f.Status != "" {
		q += " AND r.status = ?"
		args = append(args, string(f.Status))
	}
	if f.After.Created != 0 || f.After.ID != 0 {
		q += " AND (r.created_at > ? OR r.created_at = ? AND r.id > ?)"
		args = append(args, f.After.Created, f.After.Created, f.After.ID)
	}
	q += " ORDER BY r.created_at, r.id"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	return queryAll(ctx, tx, scanReview, q, args...)
}

// UpdateReview stores a review's status and summary.
func (tx *Tx) UpdateReview(ctx context.Context, r *atrium.Review) error {
	r.UpdatedAt = tx.now
	_, err := tx.exec(ctx, "UPDATE reviews SET status = ?, summary = ?, updated_at = ? WHERE id = ?", string(r.Status), r.Summary, micros(tx.now), r.ID)
	return err
}

// DeleteReviewIfEmpty deletes a review left without annotations, and says whether it did.
func (tx *Tx) DeleteReviewIfEmpty(ctx context.Context, id int64) (bool, error) {
	if id == 0 {
		return false, nil
	}
	res, err := tx.exec(ctx, "DELETE FROM reviews WHERE id = ? AND NOT EXISTS (SELECT 1 FROM annotations WHERE review_id = ?)", id, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// liveThread leaves out the threads and reviews of pages in the trash: they
// wait there with their page, and come back when it is restored.
func liveThread(table string) string { return " AND " + table + ".doc_key NOT LIKE 'trash:%'" }

// twinKey hashes what makes two annotations twins (see RecentTwin), as they
// were sent: an index on it finds the candidates among an author's recent
// annotations without reading the others.
func twinKey(a atrium.Annotation) int64 {
	h := fnv.New64a()
	for _, part := range []string{PathKey(a.DocPath), a.Section, strconv.FormatInt(a.ParentID, 10), a.Content} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return int64(h.Sum64())
}
