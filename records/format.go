// Package records is the file format of a workspace's tasks, review threads
// and desks beside the pages of an export, and the writing and reading of
// it: `atrium export DIR` writes DIR/.atrium/tasks.json, threads.json and
// desks.json, and `atrium import DIR` reads them back. What is exported and
// how an import goes in are the services' (tasks.Service and
// review.Service, Export and Import; identity for the authors); this
// package only turns their records into files and back, and checks a file
// whole before anything is written. It never touches the store.
//
// # The format, atrium-export/1
//
// Each file is one JSON object, pretty-printed with two spaces, in an order
// that depends only on the data (tasks by number, threads and reviews by
// creation, desks and principals by handle), so two exports of the same
// workspace are the same bytes and a diff of two exports reads as what
// changed. Times are RFC 3339 in UTC, to the microsecond the store keeps.
// Every file starts with:
//
//	"format":     "atrium-export/1" — a reader refuses any other value
//	"workspace":  the workspace exported (a note: import goes wherever it is run)
//	"principals": [{"handle", "kind": "human"|"agent", "display_name"}]
//	              everyone the file names; elsewhere principals are handles
//
// tasks.json adds "tasks" and "handoff_rules". A task holds number, kind
// ("task", or "todo" for a desk's todo), title, body, status, status_text,
// progress, phase, labels, creator, assignee ("" for nobody), specs, plans
// (page paths), blocked_by (task numbers), created_at, updated_at,
// "comments" — each with n (its place in the task's thread, from 1), author,
// type, body (without its marker), answers (the n of the question it
// answers; absent when none) and created_at — and "waits": whom the task
// waits on ({on, reason: question|blocked, comment: the n it waits since}).
// A rule is {match: phase|label, value, next, next_phase}.
//
// threads.json adds "reviews" ({id, doc_path, status, author, summary,
// created_at, updated_at}) and "threads": each root annotation with id,
// doc_path, section, quote ({exact, prefix, suffix}; absent when none),
// orphaned, status, review (a review's id; absent when none), author,
// author_type (human|ai, as the annotation was written), content,
// created_at, updated_at, and its "replies" (id, status, review, author,
// author_type, content, created_at, updated_at), oldest first. Drafts are
// included: an export is the operator's.
//
// desks.json adds "desks": {owner, todos, plan, draft, progress}. A desk's
// todos are tasks of kind todo, held in tasks.json; "todos" lists their
// numbers (todo_7 is task 7), those assigned to the owner or, while nobody
// holds one, created by them. "plan" and "draft" are the paths of the desk's
// pages (Desks/<owner>/Plan.md, Draft.md; "" when it has none), whose
// content travels with the other pages. "progress" is the log, archived
// items too: {description, done_at, created_at, archived_at (absent while
// the day is open)}.
//
// Not exported: revisions of tasks (an import starts each at 1), the quote
// offsets the store keeps as a hint, inboxes (who has read what), todos'
// attached files, agents and their sessions, tokens. `atrium backup` copies
// all of it.
package records

import "time"

// Format is the format this package writes and the only one it reads.
const Format = "atrium-export/1"

// Dir is the folder of an export that holds the files, hidden so that an
// import and the folder mirror never take it for pages.
const Dir = ".atrium"

// The files.
const (
	TasksFile   = "tasks.json"
	ThreadsFile = "threads.json"
	DesksFile   = "desks.json"
)

// A Principal is a person or an agent a file names.
type Principal struct {
	Handle      string `json:"handle"`
	Kind        string `json:"kind"`
	DisplayName string `json:"display_name"`
}

// TasksDoc is tasks.json.
type TasksDoc struct {
	Format       string      `json:"format"`
	Workspace    string      `json:"workspace"`
	Principals   []Principal `json:"principals"`
	Tasks        []Task      `json:"tasks"`
	HandoffRules []Rule      `json:"handoff_rules"`
}

// A Task is a task or a todo with its comments and waits.
type Task struct {
	Number     int64     `json:"number"`
	Kind       string    `json:"kind"`
	Title      string    `json:"title"`
	Body       string    `json:"body"`
	Status     string    `json:"status"`
	StatusText string    `json:"status_text"`
	Progress   int       `json:"progress"`
	Phase      string    `json:"phase"`
	Labels     []string  `json:"labels"`
	Creator    string    `json:"creator"`
	Assignee   string    `json:"assignee"`
	Specs      []string  `json:"specs"`
	Plans      []string  `json:"plans"`
	BlockedBy  []int64   `json:"blocked_by"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	Comments   []Comment `json:"comments"`
	Waits      []Wait    `json:"waits"`
}

// A Comment is one entry of a task's thread.
type Comment struct {
	N         int64     `json:"n"`
	Author    string    `json:"author"`
	Type      string    `json:"type"`
	Body      string    `json:"body"`
	Answers   int64     `json:"answers,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// A Wait is someone a task waits on.
type Wait struct {
	On      string `json:"on"`
	Reason  string `json:"reason"`
	Comment int64  `json:"comment"`
}

// A Rule is a hand-off rule.
type Rule struct {
	Match     string `json:"match"`
	Value     string `json:"value"`
	Next      string `json:"next"`
	NextPhase string `json:"next_phase"`
}

// ThreadsDoc is threads.json.
type ThreadsDoc struct {
	Format     string      `json:"format"`
	Workspace  string      `json:"workspace"`
	Principals []Principal `json:"principals"`
	Reviews    []Review    `json:"reviews"`
	Threads    []Thread    `json:"threads"`
}

// A Review groups the annotations one author submitted on one page.
type Review struct {
	ID        string    `json:"id"`
	DocPath   string    `json:"doc_path"`
	Status    string    `json:"status"`
	Author    string    `json:"author"`
	Summary   string    `json:"summary"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// A Thread is a root annotation, its anchor and its replies.
type Thread struct {
	ID         string    `json:"id"`
	DocPath    string    `json:"doc_path"`
	Section    string    `json:"section"`
	Quote      *Quote    `json:"quote,omitempty"`
	Orphaned   bool      `json:"orphaned"`
	Status     string    `json:"status"`
	Review     string    `json:"review,omitempty"`
	Author     string    `json:"author"`
	AuthorType string    `json:"author_type"`
	Content    string    `json:"content"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	Replies    []Reply   `json:"replies"`
}

// A Quote is the text a thread is anchored to.
type Quote struct {
	Exact  string `json:"exact"`
	Prefix string `json:"prefix"`
	Suffix string `json:"suffix"`
}

// A Reply is an annotation in a thread after its root.
type Reply struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"`
	Review     string    `json:"review,omitempty"`
	Author     string    `json:"author"`
	AuthorType string    `json:"author_type"`
	Content    string    `json:"content"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// DesksDoc is desks.json.
type DesksDoc struct {
	Format     string      `json:"format"`
	Workspace  string      `json:"workspace"`
	Principals []Principal `json:"principals"`
	Desks      []Desk      `json:"desks"`
}

// A Desk is one principal's desk.
type Desk struct {
	Owner    string     `json:"owner"`
	Todos    []int64    `json:"todos"`
	Plan     string     `json:"plan"`
	Draft    string     `json:"draft"`
	Progress []Progress `json:"progress"`
}

// A Progress is an item of a desk's progress log.
type Progress struct {
	Description string     `json:"description"`
	DoneAt      time.Time  `json:"done_at"`
	CreatedAt   time.Time  `json:"created_at"`
	ArchivedAt  *time.Time `json:"archived_at,omitempty"`
}
