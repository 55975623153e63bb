package tasks

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// The shapes callers see, for MCP (structured content) and REST alike. The
// 002 tools keep Farm Code's names: a task is an "issue" in task_get_context,
// and comments are {id, author, created_at, body} with the marker in body.

// TaskOut is a task as callers see it.
type TaskOut struct {
	Number     int64    `json:"number"`
	Kind       string   `json:"kind"`
	Title      string   `json:"title"`
	Body       string   `json:"body"`
	Status     string   `json:"status"`
	StatusText string   `json:"status_text"`
	Progress   int      `json:"progress"`
	Phase      string   `json:"phase"`
	Labels     []string `json:"labels"`
	Assignee   string   `json:"assignee"`
	Creator    string   `json:"creator"`
	Specs      []string `json:"specs"`
	Plans      []string `json:"plans"`
	BlockedBy  []int64  `json:"blocked_by"`
	Revision   int64    `json:"revision"`
	URL        string   `json:"url"`
	CreatedAt  string   `json:"created_at"`
	UpdatedAt  string   `json:"updated_at"`
}

// Output is t as callers see it.
func (s *Service) Output(t atrium.Task) TaskOut {
	return TaskOut{Number: t.Number, Kind: string(t.Kind), Title: t.Title, Body: t.Body, Status: string(t.Status), StatusText: t.StatusText,
		Progress: t.Progress, Phase: t.Phase, Labels: t.Labels, Assignee: t.Assignee, Creator: t.Creator, Specs: t.Specs, Plans: t.Plans,
		BlockedBy: t.BlockedBy, Revision: t.Revision, URL: s.URL(t.Number), CreatedAt: stamp(t.CreatedAt), UpdatedAt: stamp(t.UpdatedAt)}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Row is a task in a list: the columns asked for (all of rowFields by default).
type Row map[string]any

// RowFields are the columns a list row can have; DefaultRowFields is what it
// has unless fields says otherwise — compact, as agents read lists whole.
var (
	RowFields        = []string{"number", "title", "status", "status_text", "progress", "phase", "labels", "assignee", "creator", "kind", "revision", "url", "updated_at", "created_at"}
	DefaultRowFields = []string{"number", "title", "status", "assignee", "labels", "progress"}
)

// Rows are ts with only the named fields (validated by the caller).
func (s *Service) Rows(ts []atrium.Task, fields []string) []Row {
	if len(fields) == 0 {
		fields = DefaultRowFields
	}
	out := make([]Row, 0, len(ts))
	for _, t := range ts {
		r := make(Row, len(fields))
		for _, f := range fields {
			switch f {
			case "number":
				r[f] = t.Number
			case "title":
				r[f] = t.Title
			case "status":
				r[f] = t.Status
			case "status_text":
				r[f] = t.StatusText
			case "progress":
				r[f] = t.Progress
			case "phase":
				r[f] = t.Phase
			case "labels":
				r[f] = t.Labels
			case "assignee":
				r[f] = t.Assignee
			case "creator":
				r[f] = t.Creator
			case "kind":
				r[f] = t.Kind
			case "revision":
				r[f] = t.Revision
			case "url":
				r[f] = s.URL(t.Number)
			case "updated_at":
				r[f] = stamp(t.UpdatedAt)
			case "created_at":
				r[f] = stamp(t.CreatedAt)
			}
		}
		out = append(out, r)
	}
	return out
}

// CheckFields refuses unknown columns, naming the known ones.
func CheckFields(fields []string) error {
	for _, f := range fields {
		known := false
		for _, k := range RowFields {
			known = known || f == k
		}
		if !known {
			return atrium.Errorf(atrium.EInvalid, "unknown field %q; fields are %v", f, RowFields)
		}
	}
	return nil
}

// CommentOut is a comment as 002's agents read it: body with its marker.
type CommentOut struct {
	ID        int64  `json:"id"`
	Author    string `json:"author"`
	CreatedAt string `json:"created_at"`
	Body      string `json:"body"`
	Type      string `json:"type"`
	// EditedAt and DeletedAt: written on the linked tracker, and edited or
	// deleted there since.
	EditedAt  string `json:"edited_at,omitempty"`
	DeletedAt string `json:"deleted_at,omitempty"`
}

// Comments are cs as callers see them.
func Comments(cs []atrium.TaskComment) []CommentOut {
	out := make([]CommentOut, 0, len(cs))
	for _, c := range cs {
		o := CommentOut{ID: c.ID, Author: c.Author, CreatedAt: stamp(c.CreatedAt), Body: c.Shown(), Type: string(c.Type)}
		if !c.EditedAt.IsZero() {
			o.EditedAt = stamp(c.EditedAt)
		}
		if !c.DeletedAt.IsZero() {
			o.DeletedAt = stamp(c.DeletedAt)
		}
		out = append(out, o)
	}
	return out
}

// IssueOut is the task in task_get_context, under 002's name "issue".
type IssueOut struct {
	Number     int64    `json:"number"`
	Title      string   `json:"title"`
	Body       string   `json:"body"`
	Labels     []string `json:"labels"`
	Phase      string   `json:"phase"`
	Worktree   string   `json:"worktree_path"`
	Status     string   `json:"status"`
	StatusText string   `json:"status_text"`
	Progress   int      `json:"progress"`
	Assignee   string   `json:"assignee"`
	Creator    string   `json:"creator"`
	BlockedBy  []int64  `json:"blocked_by"`
	Revision   int64    `json:"revision"`
	URL        string   `json:"url"`
}

// ContextOut is task_get_context's answer.
type ContextOut struct {
	Issue      IssueOut     `json:"issue"`
	Specs      []LinkedPage `json:"specs"`
	Plans      []LinkedPage `json:"plans"`
	Comments   []CommentOut `json:"comments"`
	WaitingFor []string     `json:"waiting_for"`
	// Omitted counts the older comments left out, and Note says how to read them.
	Omitted int    `json:"comments_omitted,omitempty"`
	Note    string `json:"note,omitempty"`
}

// ContextOutput is c as callers see it.
func (s *Service) ContextOutput(c Context) ContextOut {
	t := c.Task
	out := ContextOut{Issue: IssueOut{Number: t.Number, Title: t.Title, Body: t.Body, Labels: t.Labels, Phase: t.Phase, Worktree: WorktreePath(t),
		Status: string(t.Status), StatusText: t.StatusText, Progress: t.Progress, Assignee: t.Assignee, Creator: t.Creator, BlockedBy: t.BlockedBy,
		Revision: t.Revision, URL: s.URL(t.Number)},
		Specs: c.Specs, Plans: c.Plans, Comments: Comments(c.Comments), WaitingFor: []string{}, Omitted: c.Omitted}
	for _, w := range c.Waiting {
		out.WaitingFor = append(out.WaitingFor, w.Handle)
	}
	if c.Omitted > 0 && len(c.Comments) > 0 {
		out.Note = fmt.Sprintf("the newest %d comments are shown; %d older ones are left out: read them with task_get_comments (after=0, then after=next_after)", len(c.Comments), c.Omitted)
	}
	return out
}

// WorktreePath is where 002's agents work on task t: ../<number>-<slug of
// its title>, as Farm Code names an issue's git worktree beside the
// repository (../123-add-user-authentication). Atrium keeps no worktrees;
// it names one the same way so that agents' prompts built on 002 find it.
func WorktreePath(t atrium.Task) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(t.Title) {
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	slug := b.String()
	if len(slug) > maxSlug {
		// Cut at a word's end, as people shorten a name.
		cut := slug[:maxSlug]
		if slug[maxSlug] != '-' {
			if i := strings.LastIndexByte(cut, '-'); i > 0 {
				cut = cut[:i]
			}
		}
		slug = cut
	}
	if slug == "" {
		return fmt.Sprintf("../%d", t.Number)
	}
	return fmt.Sprintf("../%d-%s", t.Number, slug)
}

// maxSlug bounds the title's part of a worktree path.
const maxSlug = 60

// CommentsOut is task_get_comments' answer (MCP and REST).
type CommentsOut struct {
	Comments []CommentOut `json:"comments"`
	// NextAfter, when set, is where the list was cut: more comments follow;
	// pass it as after to read them.
	NextAfter int64  `json:"next_after,omitempty"`
	Note      string `json:"note,omitempty"`
}

// Output is p as callers see it.
func (p CommentsPage) Output() CommentsOut {
	out := CommentsOut{Comments: Comments(p.Comments), NextAfter: p.NextAfter}
	if p.NextAfter != 0 {
		out.Note = fmt.Sprintf("%d comments shown; more follow: pass after=%d for the next ones", len(p.Comments), p.NextAfter)
	}
	return out
}

// InboxOut is task_inbox's answer.
type InboxOut struct {
	Items     []atrium.InboxItem `json:"items"`
	Unread    int                `json:"unread"`
	Acked     int64              `json:"acked,omitempty"`
	AckCursor string             `json:"ack_cursor,omitempty"`
}

// Output is in as callers see it.
func (in Inbox) Output() InboxOut {
	return InboxOut(in)
}

// FieldsInput is what task_create and task_update set, as callers send it
// (MCP arguments, REST bodies); an absent field stays as it is.
type FieldsInput struct {
	Title      *string   `json:"title,omitempty"`
	Body       *string   `json:"body,omitempty" jsonschema:"Markdown"`
	Status     *string   `json:"status,omitempty" jsonschema:"open, in_progress, blocked, done, archived"`
	StatusText *string   `json:"status_text,omitempty"`
	Progress   *int      `json:"progress,omitempty" jsonschema:"0-100"`
	Phase      *string   `json:"phase,omitempty"`
	Labels     *[]string `json:"labels,omitempty" jsonschema:"replaces the labels"`
	Assignee   *string   `json:"assignee,omitempty" jsonschema:"handle; empty to unassign"`
	Specs      *[]string `json:"specs,omitempty" jsonschema:"page paths"`
	Plans      *[]string `json:"plans,omitempty" jsonschema:"page paths"`
	BlockedBy  *[]int64  `json:"blocked_by,omitempty" jsonschema:"task numbers"`
}

// Fields is in for the service.
func (in FieldsInput) Fields() Fields {
	f := Fields{Title: in.Title, Body: in.Body, StatusText: in.StatusText, Progress: in.Progress, Phase: in.Phase,
		Labels: in.Labels, Assignee: in.Assignee, Specs: in.Specs, Plans: in.Plans, BlockedBy: in.BlockedBy}
	if in.Status != nil {
		st := atrium.TaskStatus(*in.Status)
		f.Status = &st
	}
	return f
}

// ParseNumber reads a task number as people write it: 12 or #12.
func ParseNumber(v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(v), "#"), 10, 64)
	if err != nil || n <= 0 {
		return 0, atrium.Errorf(atrium.EInvalid, "a task is named by its number, such as 12 or #12, not %q", v)
	}
	return n, nil
}

// TodoOut is a todo as 001's agents read it.
type TodoOut struct {
	ID         string    `json:"id"`
	Number     int64     `json:"number"`
	Title      string    `json:"title"`
	Desc       string    `json:"description"`
	Status     string    `json:"status"`
	StatusDesc string    `json:"statusDesc"`
	Progress   int       `json:"progress"`
	Files      []FileOut `json:"files"`
	URL        string    `json:"url"`
}

// FileOut is a todo's file: what it is, and where to read it — uri as an MCP
// resource, url over HTTP (the REST download, which a browser session opens
// too).
type FileOut struct {
	File
	URI string `json:"uri"`
	URL string `json:"url"`
}

// FileOutput is f, a file of todo n, as callers see it.
func (s *Service) FileOutput(n int64, f File) FileOut {
	return FileOut{File: f, URI: TodoFileURI(n, f.ID), URL: s.Base() + TodoFilePath(n, f.ID)}
}

// DeskPageOut is a desk's draft or plan.
type DeskPageOut struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Revision int64  `json:"revision"`
}

// DeskOut is get_desk's answer.
type DeskOut struct {
	Handle   string         `json:"handle"`
	Todos    []TodoOut      `json:"todos"`
	Plan     *DeskPageOut   `json:"plan"`
	Draft    *DeskPageOut   `json:"draft"`
	Progress []ProgressItem `json:"progress"`
	// Note says what was left out of a desk too full for one answer.
	Note string `json:"note,omitempty"`
}

// DeskOutput is d as callers see it.
func (s *Service) DeskOutput(d Desk) DeskOut {
	out := DeskOut{Handle: d.Handle, Todos: []TodoOut{}, Progress: d.Progress}
	for _, t := range d.Todos {
		out.Todos = append(out.Todos, s.TodoOutput(t, d.Files[t.Number]))
	}
	if out.Progress == nil {
		out.Progress = []ProgressItem{}
	}
	var cut []string
	if d.MoreTodos {
		cut = append(cut, fmt.Sprintf("only the first %d todos (open first, then newest) are shown: task_list with assignee=%s lists them all", len(d.Todos), d.Handle))
	}
	if d.MoreProgress {
		cut = append(cut, fmt.Sprintf("only the oldest %d progress items are shown: archive_progress closes the day", len(d.Progress)))
	}
	out.Note = strings.Join(cut, "; ")
	for _, p := range []struct {
		in  *atrium.Page
		out **DeskPageOut
	}{{d.Plan, &out.Plan}, {d.Draft, &out.Draft}} {
		if p.in != nil {
			*p.out = &DeskPageOut{Path: p.in.Path, Content: p.in.Content, Revision: p.in.Revision}
		}
	}
	return out
}

// TodoOutput is t, a todo, with its files, as callers see it.
func (s *Service) TodoOutput(t atrium.Task, files []File) TodoOut {
	out := TodoOut{ID: TodoID(t.Number), Number: t.Number, Title: t.Title, Desc: t.Body, Status: string(t.Status),
		StatusDesc: t.StatusText, Progress: t.Progress, Files: make([]FileOut, 0, len(files)), URL: s.URL(t.Number)}
	for _, f := range files {
		out.Files = append(out.Files, s.FileOutput(t.Number, f))
	}
	return out
}

// File is a file attached to a todo, as callers see it.
type File struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	MIMEType  string    `json:"mime_type"`
	Size      int64     `json:"size"`
	SHA256    string    `json:"sha256"`
	CreatedAt time.Time `json:"created_at"`
}

func fileList(in []store.TaskFile) []File {
	if in == nil {
		return nil
	}
	out := make([]File, len(in))
	for i, f := range in {
		out[i] = File(f)
	}
	return out
}

// ProgressItem is an item of finished work on a desk's progress log.
type ProgressItem struct {
	ID          int64      `json:"id"`
	Description string     `json:"description"`
	DoneAt      time.Time  `json:"timestamp"`
	ArchivedAt  *time.Time `json:"archived_at,omitempty"`
}

func progressList(in []store.ProgressItem) []ProgressItem {
	if in == nil {
		return nil
	}
	out := make([]ProgressItem, len(in))
	for i, it := range in {
		out[i] = ProgressItem(it)
	}
	return out
}

// Presence is a session connected to the workspace: who, over what, since
// when and when last heard from.
type Presence struct {
	Principal string               `json:"principal"`
	Kind      atrium.PrincipalKind `json:"kind"`
	Transport string               `json:"transport"`
	Client    string               `json:"client,omitempty"`
	Since     time.Time            `json:"since"`
	LastSeen  time.Time            `json:"last_seen"`
}
