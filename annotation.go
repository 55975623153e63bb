package atrium

import "time"

// AnnotationStatus is where an annotation stands: a draft only its author
// sees in a pending review, submitted for others to see and answer, or
// resolved (threads resolve at their root).
type AnnotationStatus string

const (
	StatusDraft     AnnotationStatus = "draft"
	StatusSubmitted AnnotationStatus = "submitted"
	StatusResolved  AnnotationStatus = "resolved"
)

// AuthorType tells a person's annotation from an agent's.
type AuthorType string

const (
	AuthorHuman AuthorType = "human"
	AuthorAI    AuthorType = "ai"
)

// AuthorTypeOf is the author type of a principal kind.
func AuthorTypeOf(k PrincipalKind) AuthorType {
	if k == KindAgent {
		return AuthorAI
	}
	return AuthorHuman
}

// A Quote anchors an annotation to exact text: the quoted text, and a little
// of what precedes and follows it to find it again after edits.
type Quote struct {
	Exact  string `json:"exact"`
	Prefix string `json:"prefix,omitempty"`
	Suffix string `json:"suffix,omitempty"`
}

// An Annotation is a comment on a document section, or a reply to one.
type Annotation struct {
	ID          int64            `json:"-"`
	UID         string           `json:"id"`
	WorkspaceID int64            `json:"-"`
	DocPath     string           `json:"doc_path"`
	Section     string           `json:"section"`
	Quote       *Quote           `json:"quote,omitempty"`
	QuoteOffset int              `json:"-"` // byte offset of the quote in the body at the last anchoring, -1 if none
	Content     string           `json:"content"`
	AuthorID    int64            `json:"-"`
	Author      string           `json:"author"`
	AuthorType  AuthorType       `json:"author_type"`
	Status      AnnotationStatus `json:"status"`
	ParentID    int64            `json:"-"`
	ParentUID   string           `json:"parent_id,omitempty"`
	ReviewID    int64            `json:"-"`
	ReviewUID   string           `json:"review_id,omitempty"`
	Orphaned    bool             `json:"orphaned"`
	CreatedAt   time.Time        `json:"created_at"`
	UpdatedAt   time.Time        `json:"updated_at"`
}

// ReviewStatus is where a review stands.
type ReviewStatus string

const (
	ReviewDraft     ReviewStatus = "draft"
	ReviewSubmitted ReviewStatus = "submitted"
	ReviewCompleted ReviewStatus = "completed"
)

// A Review groups the annotations one author submits on one document.
type Review struct {
	ID          int64        `json:"-"`
	UID         string       `json:"id"`
	WorkspaceID int64        `json:"-"`
	DocPath     string       `json:"doc_path"`
	Status      ReviewStatus `json:"status"`
	AuthorID    int64        `json:"-"`
	Author      string       `json:"author"`
	Summary     string       `json:"summary"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}
