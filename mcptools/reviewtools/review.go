package reviewtools

import (
	"context"
	"embed"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/review"
)

// Name is the toolset's name, as --toolsets and clients name it.
const Name = "review"

// AnnotationsURIPrefix starts the URI of a document's threads: atrium://annotations/{doc_path}.
const AnnotationsURIPrefix = "atrium://annotations/"

//go:embed defs/*.json
var defs embed.FS

// reviewRef reaches the review service when a tool is called (tools are
// defined without it for listings).
type reviewRef struct{ s *mcpserver.Server }

func (r *reviewRef) get() *review.Service {
	if r.s.Services() == nil {
		panic("reviewtools: review tool called on a server built without services")
	}
	return r.s.Services().Review
}

// New is the review toolset: review threads on documents, and the review
// recipes as prompts.
func New(s *mcpserver.Server) *mcpserver.Toolset {
	r := &reviewRef{s}
	return &mcpserver.Toolset{
		Name:        Name,
		Description: "Review threads on documents: annotations, replies, reviews.",
		Default:     true,
		Tools: []*mcpserver.Tool{
			listAnnotationsTool(r), getAnnotationTool(r), createAnnotationTool(r), editAnnotationTool(r),
			resolveAnnotationTool(r), reopenAnnotationTool(r), deleteAnnotationTool(r),
			submitReviewTool(r), listReviewsTool(r), getReviewTool(r), completeReviewTool(r),
		},
		Templates: []mcpserver.ResourceTemplate{annotationsResource(r)},
		Prompts:   reviewPrompts(),
		Defs:      defs,
		Updates:   updates,
		Skill:     skill,
	}
}

// updates are the thread resources an event changed: a page's threads
// follow it when it changes or moves, and change with any thread on it.
func updates(ev atrium.Event) []mcpserver.ResourceUpdate {
	path, docPath, from := mcpserver.EventPaths(ev)
	switch {
	case strings.HasPrefix(ev.Kind, "page."):
		return mcpserver.PathUpdates(AnnotationsURIPrefix, path, from)
	case strings.HasPrefix(ev.Kind, "annotation."), strings.HasPrefix(ev.Kind, "review."):
		return mcpserver.PathUpdates(AnnotationsURIPrefix, docPath, from)
	}
	return nil
}

// ListAnnotationsInput filters annotations; filters combine.
type ListAnnotationsInput struct {
	DocPath  string `json:"doc_path,omitempty" jsonschema:"the page, e.g. Projects/Alpha.md"`
	Section  string `json:"section,omitempty" jsonschema:"a heading path within doc_path, e.g. Design > Storage"`
	Status   string `json:"status,omitempty" jsonschema:"draft, submitted or resolved"`
	ReviewID string `json:"review_id,omitempty" jsonschema:"only the annotations of this review"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer"`
	Limit    int    `json:"limit,omitempty" jsonschema:"annotations per answer (default 50, at most 200)"`
}

func listAnnotationsTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "list_annotations",
		Title:       "List annotations",
		Description: "Lists annotations (threads and replies), oldest first, filtered by doc_path, section, status and review_id in any combination; each thread shows its reply_count, each reply its parent_id and author_type (human or ai). Paginated.",
		Annotations: mcpserver.Reads("List annotations"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in ListAnnotationsInput) (review.ListOutput, error) {
		res, err := r.get().List(ctx, review.ListRequest{DocPath: in.DocPath, Section: in.Section, Status: atrium.AnnotationStatus(in.Status), ReviewID: in.ReviewID, Cursor: in.Cursor, Limit: in.Limit})
		if err != nil {
			return review.ListOutput{}, err
		}
		return res.Output(), nil
	})
}

// AnnotationIDInput names an annotation.
type AnnotationIDInput struct {
	AnnotationID string `json:"annotation_id" jsonschema:"ID of the annotation (ann_…)"`
}

func getAnnotationTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "get_annotation",
		Title:       "Get annotation",
		Description: "Gets a single annotation by ID, including its reply thread (oldest first).",
		Annotations: mcpserver.Reads("Get annotation"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in AnnotationIDInput) (review.ThreadOutput, error) {
		t, err := r.get().Get(ctx, in.AnnotationID)
		if err != nil {
			return review.ThreadOutput{}, err
		}
		return t.Output(), nil
	})
}

// CreateAnnotationInput creates an annotation or a reply.
type CreateAnnotationInput struct {
	DocPath  string          `json:"doc_path,omitempty" jsonschema:"the page to comment on (not needed for a reply)"`
	Section  string          `json:"section,omitempty" jsonschema:"the heading path it is about, e.g. Design > Storage; empty for the whole page"`
	Content  string          `json:"content" jsonschema:"the comment"`
	ParentID string          `json:"parent_id,omitempty" jsonschema:"reply to this annotation; the reply joins its thread's review"`
	Quote    *review.QuoteIn `json:"quote,omitempty" jsonschema:"the exact text of the section it is about"`
	Status   string          `json:"status,omitempty" jsonschema:"a new thread is a draft until submit_review, unless submitted is given; replies take their thread's"`
}

func createAnnotationTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "create_annotation",
		Title:       "Create annotation",
		Description: "Creates an annotation on a page section (optionally on an exact quote), or a reply with parent_id. New threads are drafts until submit_review; replies to submitted threads are visible at once. The same annotation sent twice within 30 seconds is created once.",
		Annotations: mcpserver.Writes("Create annotation", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in CreateAnnotationInput) (review.CreateOutput, error) {
		a, created, err := r.get().Create(ctx, review.CreateRequest{DocPath: in.DocPath, Section: in.Section, Content: in.Content, ParentID: in.ParentID, Quote: in.Quote.Quote(), Status: atrium.AnnotationStatus(in.Status)})
		if err != nil {
			return review.CreateOutput{}, err
		}
		return review.CreateOutput{Annotation: review.Output(a), Deduplicated: !created}, nil
	})
}

// EditAnnotationInput changes an annotation's content.
type EditAnnotationInput struct {
	AnnotationID string `json:"annotation_id" jsonschema:"ID of the annotation to edit"`
	Content      string `json:"content" jsonschema:"new content for the annotation"`
}

func editAnnotationTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "edit_annotation",
		Title:       "Edit annotation",
		Description: "Edits the content of an existing annotation (its author or an admin); updated_at is refreshed.",
		Annotations: mcpserver.Writes("Edit annotation", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in EditAnnotationInput) (review.AnnotationOut, error) {
		a, err := r.get().Edit(ctx, in.AnnotationID, in.Content)
		if err != nil {
			return review.AnnotationOut{}, err
		}
		return review.Output(a), nil
	})
}

func resolveAnnotationTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "resolve_annotation",
		Title:       "Resolve annotation",
		Description: "Marks a thread resolved. Threads resolve at their root annotation; a draft must be submitted first.",
		Annotations: mcpserver.Writes("Resolve annotation", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in AnnotationIDInput) (review.AnnotationOut, error) {
		a, err := r.get().Resolve(ctx, in.AnnotationID)
		if err != nil {
			return review.AnnotationOut{}, err
		}
		return review.Output(a), nil
	})
}

func reopenAnnotationTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "reopen_annotation",
		Title:       "Reopen annotation",
		Description: "Reopens a previously resolved thread (its status becomes submitted).",
		Annotations: mcpserver.Writes("Reopen annotation", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in AnnotationIDInput) (review.AnnotationOut, error) {
		a, err := r.get().Reopen(ctx, in.AnnotationID)
		if err != nil {
			return review.AnnotationOut{}, err
		}
		return review.Output(a), nil
	})
}

func deleteAnnotationTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "delete_annotation",
		Title:       "Delete annotation",
		Description: "Deletes an annotation by ID (its author or an admin). If the annotation has replies, all replies are deleted too; a review left with no annotations is deleted. Says how many replies went.",
		Annotations: mcpserver.Writes("Delete annotation", true, true),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in AnnotationIDInput) (review.DeleteOutput, error) {
		res, err := r.get().Delete(ctx, in.AnnotationID)
		if err != nil {
			return review.DeleteOutput{}, err
		}
		return res.Output(), nil
	})
}

// SubmitReviewInput submits the caller's drafts on a page.
type SubmitReviewInput struct {
	DocPath       string   `json:"doc_path" jsonschema:"the page reviewed"`
	AnnotationIDs []string `json:"annotation_ids,omitempty" jsonschema:"the draft threads to submit; default: all your drafts on doc_path"`
	Summary       string   `json:"summary,omitempty" jsonschema:"the review's overall comment"`
}

func submitReviewTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "submit_review",
		Title:       "Submit review",
		Description: "Creates a review of your draft annotations on a page and submits them: they become visible to everyone. Create the annotations first with create_annotation.",
		Annotations: mcpserver.Writes("Submit review", false, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in SubmitReviewInput) (review.ReviewOutput, error) {
		res, err := r.get().Submit(ctx, review.SubmitRequest{DocPath: in.DocPath, AnnotationIDs: in.AnnotationIDs, Summary: in.Summary})
		if err != nil {
			return review.ReviewOutput{}, err
		}
		return res.Output(), nil
	})
}

// ListReviewsInput lists a page's reviews.
type ListReviewsInput struct {
	DocPath string `json:"doc_path" jsonschema:"the page"`
	Status  string `json:"status,omitempty" jsonschema:"draft, submitted or completed"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous answer"`
	Limit   int    `json:"limit,omitempty" jsonschema:"reviews per answer (default 50, at most 200)"`
}

func listReviewsTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "list_reviews",
		Title:       "List reviews",
		Description: "Lists the reviews of a page, oldest first, optionally filtered by status (draft, submitted, completed).",
		Annotations: mcpserver.Reads("List reviews"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in ListReviewsInput) (review.ReviewsOutput, error) {
		if strings.TrimSpace(in.DocPath) == "" {
			return review.ReviewsOutput{}, atrium.Errorf(atrium.EInvalid, "doc_path is required")
		}
		res, err := r.get().ListReviews(ctx, in.DocPath, atrium.ReviewStatus(in.Status), in.Cursor, in.Limit)
		if err != nil {
			return review.ReviewsOutput{}, err
		}
		return res.Output(), nil
	})
}

// ReviewIDInput names a review.
type ReviewIDInput struct {
	ReviewID string `json:"review_id" jsonschema:"ID of the review (rev_…)"`
}

func getReviewTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "get_review",
		Title:       "Get review",
		Description: "Gets a review by ID with all its annotations (threads and replies, oldest first).",
		Annotations: mcpserver.Reads("Get review"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in ReviewIDInput) (review.ReviewOutput, error) {
		res, err := r.get().GetReview(ctx, in.ReviewID)
		if err != nil {
			return review.ReviewOutput{}, err
		}
		return res.Output(), nil
	})
}

// CompleteReviewInput completes a review.
type CompleteReviewInput struct {
	ReviewID string  `json:"review_id" jsonschema:"ID of the review"`
	Summary  *string `json:"summary,omitempty" jsonschema:"a closing summary, replacing the review's"`
}

func completeReviewTool(r *reviewRef) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name:        "complete_review",
		Title:       "Complete review",
		Description: "Marks a submitted review completed (its comments were addressed), optionally with a closing summary.",
		Annotations: mcpserver.Writes("Complete review", true, false),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in CompleteReviewInput) (review.ReviewOutput, error) {
		res, err := r.get().Complete(ctx, in.ReviewID, in.Summary)
		if err != nil {
			return review.ReviewOutput{}, err
		}
		return res.Output(), nil
	})
}

// annotationsResource serves a page's threads as a resource, subscribable:
// a subscriber hears when a thread on that page changes.
func annotationsResource(r *reviewRef) mcpserver.ResourceTemplate {
	return mcpserver.ResourceTemplate{
		Def: &mcp.ResourceTemplate{
			Name:        "annotations",
			Title:       "Annotations of a page",
			Description: "The review threads on a page (atrium://annotations/Projects/Alpha.md), as JSON. Subscribe to hear when they change.",
			MIMEType:    "application/json",
			URITemplate: AnnotationsURIPrefix + "{+doc_path}",
		},
		Handler: func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			doc, ok := strings.CutPrefix(req.Params.URI, AnnotationsURIPrefix)
			if !ok || doc == "" {
				return nil, atrium.Errorf(atrium.ENotFound, "not an annotations URI: %s", req.Params.URI)
			}
			var all []review.AnnotationOut
			cursor := ""
			for {
				res, err := r.get().List(ctx, review.ListRequest{DocPath: mcpserver.UnescapePath(doc), Cursor: cursor, Limit: 200})
				if err != nil {
					return nil, err
				}
				all = append(all, res.Output().Annotations...)
				if cursor = res.NextCursor; cursor == "" || len(all) >= 2000 {
					break
				}
			}
			b, err := json.Marshal(map[string]any{"doc_path": mcpserver.UnescapePath(doc), "annotations": all})
			if err != nil {
				return nil, err
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}}, nil
		},
	}
}
