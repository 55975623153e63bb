package atrium

import "time"

// Access says who may read a page: members of its workspace always; anonymous
// readers only public pages.
type Access string

const (
	AccessPublic  Access = "public"
	AccessPrivate Access = "private"
)

// A Page is a Markdown document at a path in a workspace ("Projects/Alpha.md").
// Its Content is exactly what was written: optional YAML frontmatter, then the
// body. Title, Icon, Tags and Access are read from the frontmatter (the title
// falls back to the first heading, then the file name).
type Page struct {
	ID          int64     `json:"-"`
	UID         string    `json:"page_id"`
	WorkspaceID int64     `json:"-"`
	Path        string    `json:"path"`
	Title       string    `json:"title"`
	Icon        string    `json:"icon,omitempty"`
	Tags        []string  `json:"tags"`
	Access      Access    `json:"access"`
	Content     string    `json:"content"`
	ContentHash string    `json:"content_hash"`
	Revision    int64     `json:"revision"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedBy   string    `json:"updated_by"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// A PageRevision is one saved state of a page.
type PageRevision struct {
	Revision    int64     `json:"revision"`
	Path        string    `json:"path"`
	Content     string    `json:"-"`
	ContentHash string    `json:"content_hash"`
	Size        int       `json:"size"`
	Author      string    `json:"author"`
	CreatedAt   time.Time `json:"created_at"`
}

// LinkKind tells a [[wikilink]] from a Markdown link.
type LinkKind string

const (
	LinkWiki     LinkKind = "wiki"
	LinkMarkdown LinkKind = "markdown"
)

// A PageLink is a link written in a page, as stored on every write.
type PageLink struct {
	Kind    LinkKind `json:"kind"`
	Target  string   `json:"target"` // as written, without #heading and |alias
	Key     string   `json:"-"`      // the lookup key the target resolves by
	Heading string   `json:"heading,omitempty"`
	Line    int      `json:"line"`
}

// An Attachment is a file kept with a page, at Path ("Projects/assets/x.png").
type Attachment struct {
	ID        int64     `json:"-"`
	UID       string    `json:"attachment_id"`
	PageID    int64     `json:"-"`
	Path      string    `json:"path"`
	Name      string    `json:"name"`
	MIMEType  string    `json:"mime_type"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
}
