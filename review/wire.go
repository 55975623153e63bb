package review

import (
	"time"

	"github.com/atrium-hq/atrium"
)

// The shapes callers see, for MCP (structured content; the jsonschema tags
// are descriptions for models) and REST alike.

// QuoteOut is the text an annotation is anchored to.
type QuoteOut struct {
	Exact  string `json:"exact" jsonschema:"the quoted text"`
	Prefix string `json:"prefix,omitempty" jsonschema:"text just before it"`
	Suffix string `json:"suffix,omitempty" jsonschema:"text just after it"`
}

// AnnotationOut is an annotation as callers see it.
type AnnotationOut struct {
	ID         string    `json:"id" jsonschema:"the annotation's ID (ann_…)"`
	DocPath    string    `json:"doc_path" jsonschema:"the page it is on"`
	Section    string    `json:"section" jsonschema:"the heading path it is anchored to; empty for the whole page"`
	Quote      *QuoteOut `json:"quote,omitempty" jsonschema:"the exact text it is about, if any"`
	Content    string    `json:"content"`
	Author     string    `json:"author" jsonschema:"the principal who wrote it"`
	AuthorType string    `json:"author_type" jsonschema:"human or ai"`
	Status     string    `json:"status" jsonschema:"draft (only its author sees it), submitted or resolved"`
	ParentID   string    `json:"parent_id,omitempty" jsonschema:"the thread it replies to"`
	ReviewID   string    `json:"review_id,omitempty" jsonschema:"the review it belongs to"`
	Orphaned   bool      `json:"orphaned" jsonschema:"its section or quote is gone from the page"`
	Replies    *int      `json:"reply_count,omitempty" jsonschema:"replies in its thread (listings of threads)"`
	CreatedAt  string    `json:"created_at"`
	UpdatedAt  string    `json:"updated_at"`
}

// Output is an annotation as callers see it.
func Output(a atrium.Annotation) AnnotationOut {
	out := AnnotationOut{ID: a.UID, DocPath: a.DocPath, Section: a.Section, Content: a.Content, Author: a.Author, AuthorType: string(a.AuthorType),
		Status: string(a.Status), ParentID: a.ParentUID, ReviewID: a.ReviewUID, Orphaned: a.Orphaned,
		CreatedAt: a.CreatedAt.Format(time.RFC3339Nano), UpdatedAt: a.UpdatedAt.Format(time.RFC3339Nano)}
	if a.Quote != nil {
		out.Quote = &QuoteOut{Exact: a.Quote.Exact, Prefix: a.Quote.Prefix, Suffix: a.Quote.Suffix}
	}
	return out
}

func outputs(as []atrium.Annotation) []AnnotationOut {
	out := make([]AnnotationOut, 0, len(as))
	for _, a := range as {
		out = append(out, Output(a))
	}
	return out
}

// CreateOutput is a created annotation.
type CreateOutput struct {
	Annotation   AnnotationOut `json:"annotation"`
	Deduplicated bool          `json:"deduplicated" jsonschema:"true when the same annotation had just been created: that one is returned, no duplicate made"`
}

// ListOutput is one page of annotations, oldest first.
type ListOutput struct {
	Annotations []AnnotationOut `json:"annotations"`
	NextCursor  string          `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page; absent at the end"`
}

// Output is a listing as callers see it.
func (r ListResult) Output() ListOutput {
	out := ListOutput{Annotations: make([]AnnotationOut, 0, len(r.Annotations)), NextCursor: r.NextCursor}
	for _, a := range r.Annotations {
		o := Output(a.Annotation)
		if a.ParentID == 0 {
			n := a.Replies
			o.Replies = &n
		}
		out.Annotations = append(out.Annotations, o)
	}
	return out
}

// ThreadOutput is an annotation with its replies.
type ThreadOutput struct {
	Annotation AnnotationOut   `json:"annotation"`
	Replies    []AnnotationOut `json:"replies" jsonschema:"replies, oldest first"`
}

// Output is a thread as callers see it.
func (t Thread) Output() ThreadOutput {
	return ThreadOutput{Annotation: Output(t.Annotation), Replies: outputs(t.Replies)}
}

// DeleteOutput says what a delete removed.
type DeleteOutput struct {
	Deleted        bool   `json:"deleted"`
	AnnotationID   string `json:"annotation_id"`
	RepliesDeleted int    `json:"replies_deleted" jsonschema:"replies deleted with it"`
	ReviewDeleted  bool   `json:"review_deleted" jsonschema:"its review had nothing else and was deleted too"`
}

// Output is a delete as callers see it.
func (r DeleteResult) Output() DeleteOutput {
	return DeleteOutput{Deleted: true, AnnotationID: r.Annotation.UID, RepliesDeleted: r.Replies, ReviewDeleted: r.ReviewDeleted}
}

// ReviewOut is a review as callers see it.
type ReviewOut struct {
	ID        string `json:"id" jsonschema:"the review's ID (rev_…)"`
	DocPath   string `json:"doc_path"`
	Status    string `json:"status" jsonschema:"draft, submitted or completed"`
	Author    string `json:"author"`
	Summary   string `json:"summary"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func reviewOut(r atrium.Review) ReviewOut {
	return ReviewOut{ID: r.UID, DocPath: r.DocPath, Status: string(r.Status), Author: r.Author, Summary: r.Summary,
		CreatedAt: r.CreatedAt.Format(time.RFC3339Nano), UpdatedAt: r.UpdatedAt.Format(time.RFC3339Nano)}
}

// ReviewOutput is a review with its annotations.
type ReviewOutput struct {
	Review      ReviewOut       `json:"review"`
	Annotations []AnnotationOut `json:"annotations" jsonschema:"its threads and replies, oldest first"`
}

// Output is a review with its annotations as callers see it.
func (r ReviewResult) Output() ReviewOutput {
	return ReviewOutput{Review: reviewOut(r.Review), Annotations: outputs(r.Annotations)}
}

// ReviewsOutput is one page of reviews, oldest first.
type ReviewsOutput struct {
	Reviews    []ReviewOut `json:"reviews"`
	NextCursor string      `json:"next_cursor,omitempty"`
}

// Output is a listing of reviews as callers see it.
func (r ReviewList) Output() ReviewsOutput {
	out := ReviewsOutput{Reviews: make([]ReviewOut, 0, len(r.Reviews)), NextCursor: r.NextCursor}
	for _, rv := range r.Reviews {
		out.Reviews = append(out.Reviews, reviewOut(rv))
	}
	return out
}

// QuoteIn is a quote callers send.
type QuoteIn struct {
	Exact  string `json:"exact" jsonschema:"the exact text of the page the annotation is about"`
	Prefix string `json:"prefix,omitempty" jsonschema:"text just before it, to tell repeated text apart"`
	Suffix string `json:"suffix,omitempty" jsonschema:"text just after it"`
}

// Quote is the domain form of a quote callers sent.
func (q *QuoteIn) Quote() *atrium.Quote {
	if q == nil || q.Exact == "" {
		return nil
	}
	return &atrium.Quote{Exact: q.Exact, Prefix: q.Prefix, Suffix: q.Suffix}
}
