package atrium

import "time"

// TaskStatus is where a task stands.
type TaskStatus string

const (
	TaskOpen       TaskStatus = "open"
	TaskInProgress TaskStatus = "in_progress"
	TaskBlocked    TaskStatus = "blocked"
	TaskDone       TaskStatus = "done"
	TaskArchived   TaskStatus = "archived"
)

// Valid reports whether s is a known status.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskOpen, TaskInProgress, TaskBlocked, TaskDone, TaskArchived:
		return true
	}
	return false
}

// Closed reports whether a task in status s no longer holds up others.
func (s TaskStatus) Closed() bool { return s == TaskDone || s == TaskArchived }

// TaskKind tells a work item on the board from a desk's todo; both are tasks.
type TaskKind string

const (
	KindTask TaskKind = "task"
	KindTodo TaskKind = "todo"
)

// A Task is a work item with a per-workspace number (#123).
type Task struct {
	ID          int64      `json:"-"`
	WorkspaceID int64      `json:"-"`
	Number      int64      `json:"number"`
	Kind        TaskKind   `json:"kind"`
	Title       string     `json:"title"`
	Body        string     `json:"body"`
	Status      TaskStatus `json:"status"`
	StatusText  string     `json:"status_text"`
	Progress    int        `json:"progress"`
	Phase       string     `json:"phase"`
	Labels      []string   `json:"labels"`
	Specs       []string   `json:"specs"` // linked pages, by path
	Plans       []string   `json:"plans"`
	AssigneeID  int64      `json:"-"`
	Assignee    string     `json:"assignee"`
	CreatorID   int64      `json:"-"`
	Creator     string     `json:"creator"`
	BlockedBy   []int64    `json:"blocked_by"` // task numbers
	Revision    int64      `json:"revision"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

// HasLabel reports whether t carries label l.
func (t Task) HasLabel(l string) bool {
	for _, x := range t.Labels {
		if x == l {
			return true
		}
	}
	return false
}

// CommentType is what a task comment says; each has its marker.
type CommentType string

const (
	CommentStatus        CommentType = "status"
	CommentCompletion    CommentType = "completion"
	CommentQuestion      CommentType = "question"
	CommentAnswer        CommentType = "answer"
	CommentBlocked       CommentType = "blocked"
	CommentClarification CommentType = "clarification"
	CommentNote          CommentType = "note"
)

// Marker is the emoji a comment of type c is shown with (002's formats); a
// note has none.
func (c CommentType) Marker() string {
	switch c {
	case CommentStatus:
		return "📍"
	case CommentCompletion:
		return "✅"
	case CommentQuestion:
		return "❓"
	case CommentAnswer:
		return "💬"
	case CommentBlocked:
		return "🚫"
	case CommentClarification:
		return "🔍"
	}
	return ""
}

// Valid reports whether c is a known type.
func (c CommentType) Valid() bool { return c == CommentNote || c.Marker() != "" }

// A TaskComment is one entry of a task's thread. Body is stored without its
// marker; Shown adds it.
type TaskComment struct {
	ID         int64       `json:"id"`
	TaskID     int64       `json:"-"`
	TaskNumber int64       `json:"task"`
	AuthorID   int64       `json:"-"`
	Author     string      `json:"author"`
	AuthorType AuthorType  `json:"author_type"`
	Type       CommentType `json:"type"`
	Body       string      `json:"body"`
	Answers    int64       `json:"answers,omitempty"` // the question comment it answers
	CreatedAt  time.Time   `json:"created_at"`
	// EditedAt and DeletedAt: a comment written on a linked tracker and
	// edited or deleted there since (its text stays here, for the record).
	EditedAt  time.Time `json:"edited_at,omitzero"`
	DeletedAt time.Time `json:"deleted_at,omitzero"`
}

// Shown is the comment as people and agents read it: its marker, then its body.
func (c TaskComment) Shown() string {
	if m := c.Type.Marker(); m != "" {
		return m + " " + c.Body
	}
	return c.Body
}

// InboxKind is why an inbox item is there.
type InboxKind string

const (
	InboxMention  InboxKind = "mention"
	InboxQuestion InboxKind = "question"
	InboxAnswer   InboxKind = "answer"
	InboxAssigned InboxKind = "assigned"
	InboxHandoff  InboxKind = "handoff"
	InboxBlocked  InboxKind = "blocked"
	// InboxResume: Atrium's own end cut short the agent's session on the
	// task after the agent had read what woke it; it goes on where it left
	// off.
	InboxResume InboxKind = "resume"
)

// An InboxItem is something waiting for a principal's attention.
type InboxItem struct {
	ID         int64      `json:"id"`
	Kind       InboxKind  `json:"kind"`
	TaskNumber int64      `json:"task"`
	TaskTitle  string     `json:"title"`
	CommentID  int64      `json:"comment_id,omitempty"`
	From       string     `json:"from"`
	FromType   AuthorType `json:"from_type,omitempty"` // a person's or an agent's doing
	Text       string     `json:"text,omitempty"`      // the comment as shown
	CreatedAt  time.Time  `json:"created_at"`
	ReadAt     *time.Time `json:"read_at,omitempty"`
}

// A HandoffRule names who takes a task over when it is completed in a phase
// (or carrying a label), and the phase it moves to.
type HandoffRule struct {
	MatchKind  string `json:"match"` // phase or label
	MatchValue string `json:"value"`
	Next       string `json:"next_agent"`
	NextID     int64  `json:"-"`
	NextPhase  string `json:"next_phase,omitempty"`
}
