package tasks

import (
	"context"
	"errors"
	"time"
)

// A Tracker is an outside issue tracker that a workspace's tasks are mirrored
// to (GitHub first; Jira and Linear later), shaped like 002's adapter:
// get_issue_context, post_comment, add_label, remove_label, get_comments,
// plus what a mirror needs (create and update an issue, list what changed).
// Implementations live in their own packages (trackers/github) and import
// only the root and their client; nothing here knows their types.
type Tracker interface {
	// Issue is get_issue_context: the issue and its fields.
	Issue(ctx context.Context, number int) (Issue, error)
	// IssuesSince lists the issues updated at or after since (all when
	// zero), oldest change first. Unchanged reports that the tracker said
	// nothing changed since the last identical request (a 304: free); etag
	// is that request's answer as a previous call returned it (next), kept
	// by the caller across processes.
	IssuesSince(ctx context.Context, since time.Time, etag string) (issues []Issue, next string, unchanged bool, err error)
	CreateIssue(ctx context.Context, f IssueFields) (Issue, error)
	UpdateIssue(ctx context.Context, number int, f IssueFields) (Issue, error)
	// Comments is get_comments: the issue's comments, oldest first.
	Comments(ctx context.Context, number int) ([]IssueComment, error)
	// CommentsSince lists every issue's comments made or edited at or after
	// since, oldest change first, conditional like IssuesSince.
	CommentsSince(ctx context.Context, since time.Time, etag string) (comments []IssueComment, next string, unchanged bool, err error)
	// PostComment posts body on issue number: as author's own identity on
	// the tracker when it has one (Own), otherwise as the link's.
	PostComment(ctx context.Context, number int, author, body string) (IssueComment, error)
	// Own reports whether the agent with handle author posts as its own
	// identity (GitHub: its own App); if not, its comments name it.
	Own(author string) bool
	AddLabel(ctx context.Context, number int, label string) error
	RemoveLabel(ctx context.Context, number int, label string) error
	// Budget is what the tracker's rate limit leaves, and the calls made.
	Budget() Budget
}

// The errors a Tracker's calls wrap, so the mirror knows whom a failure is
// about: ErrRateLimited, the link's budget (wait for its reset, count no
// failure); ErrTrackerFailed, the tracker's own failure answering (a 5xx
// after the adapter's retries: the row backs off). A not_found error is the
// issue's absence; invalid_argument, a request the tracker will never take.
var (
	ErrRateLimited   = errors.New("rate limited")
	ErrTrackerFailed = errors.New("the tracker failed")
)

// An Issue is an issue of a tracker.
type Issue struct {
	Number    int
	Title     string
	Body      string
	Closed    bool
	Labels    []string
	Assignees []string // logins
	Author    string   // login
	UpdatedAt time.Time
	// PullRequest is set for GitHub pull requests, which its issue lists
	// include; they are not mirrored.
	PullRequest bool
}

// IssueFields is what a create or update sets; nil leaves a field as it is.
type IssueFields struct {
	Title     *string
	Body      *string
	Closed    *bool
	Labels    *[]string
	Assignees *[]string
}

// An IssueComment is one comment of an issue.
type IssueComment struct {
	ID        int64
	Issue     int // its issue's number
	Body      string
	Author    string // login
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Budget is a tracker's rate budget as last reported, and the calls this
// client made (NotModified of them answered 304, which cost none).
type Budget struct {
	Limit, Remaining int
	Reset            time.Time
	Calls            int
	NotModified      int
}
