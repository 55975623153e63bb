package records

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path"
	"slices"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/tasks"
	"github.com/atrium-hq/atrium/vault"
)

// ExportReport says what Export wrote.
type ExportReport struct {
	Tasks, Todos, Comments, Rules int
	Threads, Replies, Reviews     int
	Desks, Progress               int
	// Written and Unchanged name the files (.atrium/tasks.json …): an
	// export over an earlier one leaves a file that would not change alone.
	Written, Unchanged []string
}

// Export writes the tasks, threads and desks of the workspace of ctx's
// actor (an admin) to dir/.atrium, each file whole or not at all.
func Export(ctx context.Context, s *services.Services, dir string) (*ExportReport, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return nil, err
	}
	tr, err := s.Tasks.Export(ctx)
	if err != nil {
		return nil, err
	}
	rr, err := s.Review.Export(ctx)
	if err != nil {
		return nil, err
	}
	rep := &ExportReport{}
	td, dd := tasksDoc(tr, rep), desksDoc(tr, rep)
	hd := threadsDoc(rr, rep)
	// Each file names the principals it mentions, with their kinds.
	for _, f := range []struct {
		principals *[]Principal
		handles    []string
	}{{&td.Principals, td.handles()}, {&hd.Principals, hd.handles()}, {&dd.Principals, dd.handles()}} {
		if *f.principals, err = principals(ctx, s, f.handles); err != nil {
			return nil, err
		}
	}
	td.Workspace, hd.Workspace, dd.Workspace = a.Workspace.Name, a.Workspace.Name, a.Workspace.Name
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for _, f := range []struct {
		name string
		doc  any
	}{{TasksFile, td}, {ThreadsFile, hd}, {DesksFile, dd}} {
		data, err := encode(f.doc)
		if err != nil {
			return rep, err
		}
		name := path.Join(Dir, f.name)
		changed, err := vault.WriteFileIn(root, name, data)
		switch {
		case err != nil:
			return rep, err
		case changed:
			rep.Written = append(rep.Written, name)
		default:
			rep.Unchanged = append(rep.Unchanged, name)
		}
	}
	return rep, nil
}

// encode is a document as its file holds it: indented, and with <, > and &
// as they are (Markdown is full of them; escaped, a diff would be unreadable).
func encode(doc any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(doc)
	return b.Bytes(), err
}

// principals are the principals of handles, by handle. A handle the store
// no longer knows (none should be) is written as a person's.
func principals(ctx context.Context, s *services.Services, handles []string) ([]Principal, error) {
	ps, err := s.Identity.Principals(ctx, handles)
	if err != nil {
		return nil, err
	}
	known := map[string]atrium.Principal{}
	for _, p := range ps {
		known[p.Handle] = p
	}
	out := []Principal{}
	for _, h := range sortedSet(handles) {
		p, ok := known[h]
		if !ok {
			p = atrium.Principal{Handle: h, Kind: atrium.KindHuman, DisplayName: h}
		}
		out = append(out, Principal{Handle: p.Handle, Kind: string(p.Kind), DisplayName: p.DisplayName})
	}
	return out, nil
}

// sortedSet is the distinct non-empty strings of s, sorted.
func sortedSet(s []string) []string {
	out := slices.DeleteFunc(slices.Clone(s), func(x string) bool { return x == "" })
	slices.Sort(out)
	return slices.Compact(out)
}

func tasksDoc(r tasks.Records, rep *ExportReport) *TasksDoc {
	d := &TasksDoc{Format: Format, Tasks: []Task{}, HandoffRules: []Rule{}}
	for _, rec := range r.Tasks {
		t := rec.Task
		out := Task{Number: t.Number, Kind: string(t.Kind), Title: t.Title, Body: t.Body, Status: string(t.Status), StatusText: t.StatusText,
			Progress: t.Progress, Phase: t.Phase, Labels: nonNil(t.Labels), Creator: t.Creator, Assignee: t.Assignee, Specs: nonNil(t.Specs),
			Plans: nonNil(t.Plans), BlockedBy: nonNil(t.BlockedBy), CreatedAt: t.CreatedAt.UTC(), UpdatedAt: t.UpdatedAt.UTC(),
			Comments: []Comment{}, Waits: []Wait{}}
		// Comments are named by their place in the thread, not by the
		// store's ids, which another store gives anew.
		n := map[int64]int64{}
		for i, c := range rec.Comments {
			n[c.ID] = int64(i + 1)
			out.Comments = append(out.Comments, Comment{N: int64(i + 1), Author: c.Author, Type: string(c.Type), Body: c.Body,
				Answers: n[c.Answers], CreatedAt: c.CreatedAt.UTC()})
		}
		for _, w := range rec.Waits {
			out.Waits = append(out.Waits, Wait{On: w.Handle, Reason: w.Reason, Comment: n[w.Comment]})
		}
		d.Tasks = append(d.Tasks, out)
		if t.Kind == atrium.KindTodo {
			rep.Todos++
		} else {
			rep.Tasks++
		}
		rep.Comments += len(rec.Comments)
	}
	for _, r := range r.Rules {
		d.HandoffRules = append(d.HandoffRules, Rule{Match: r.MatchKind, Value: r.MatchValue, Next: r.Next, NextPhase: r.NextPhase})
	}
	rep.Rules = len(r.Rules)
	return d
}

func (d *TasksDoc) handles() []string {
	var hs []string
	for _, t := range d.Tasks {
		hs = append(hs, t.Creator, t.Assignee)
		for _, c := range t.Comments {
			hs = append(hs, c.Author)
		}
		for _, w := range t.Waits {
			hs = append(hs, w.On)
		}
	}
	for _, r := range d.HandoffRules {
		hs = append(hs, r.Next)
	}
	return hs
}

func desksDoc(r tasks.Records, rep *ExportReport) *DesksDoc {
	d := &DesksDoc{Format: Format, Desks: []Desk{}}
	for _, dk := range r.Desks {
		out := Desk{Owner: dk.Handle, Todos: nonNil(dk.Todos), Plan: dk.Plan, Draft: dk.Draft, Progress: []Progress{}}
		for _, p := range dk.Progress {
			it := Progress{Description: p.Description, DoneAt: p.DoneAt.UTC(), CreatedAt: p.CreatedAt.UTC()}
			if p.ArchivedAt != nil {
				at := p.ArchivedAt.UTC()
				it.ArchivedAt = &at
			}
			out.Progress = append(out.Progress, it)
		}
		d.Desks = append(d.Desks, out)
		rep.Progress += len(out.Progress)
	}
	rep.Desks = len(d.Desks)
	return d
}

func (d *DesksDoc) handles() []string {
	var hs []string
	for _, dk := range d.Desks {
		hs = append(hs, dk.Owner)
	}
	return hs
}

func threadsDoc(r review.Records, rep *ExportReport) *ThreadsDoc {
	d := &ThreadsDoc{Format: Format, Reviews: []Review{}, Threads: []Thread{}}
	for _, rv := range r.Reviews {
		d.Reviews = append(d.Reviews, Review{ID: rv.UID, DocPath: rv.DocPath, Status: string(rv.Status), Author: rv.Author, Summary: rv.Summary,
			CreatedAt: rv.CreatedAt.UTC(), UpdatedAt: rv.UpdatedAt.UTC()})
	}
	for _, t := range r.Threads {
		x := t.Annotation
		out := Thread{ID: x.UID, DocPath: x.DocPath, Section: x.Section, Orphaned: x.Orphaned, Status: string(x.Status), Review: x.ReviewUID,
			Author: x.Author, AuthorType: string(x.AuthorType), Content: x.Content, CreatedAt: x.CreatedAt.UTC(), UpdatedAt: x.UpdatedAt.UTC(),
			Replies: []Reply{}}
		if x.Quote != nil {
			out.Quote = &Quote{Exact: x.Quote.Exact, Prefix: x.Quote.Prefix, Suffix: x.Quote.Suffix}
		}
		for _, y := range t.Replies {
			out.Replies = append(out.Replies, Reply{ID: y.UID, Status: string(y.Status), Review: y.ReviewUID, Author: y.Author,
				AuthorType: string(y.AuthorType), Content: y.Content, CreatedAt: y.CreatedAt.UTC(), UpdatedAt: y.UpdatedAt.UTC()})
		}
		d.Threads = append(d.Threads, out)
		rep.Replies += len(t.Replies)
	}
	rep.Threads, rep.Reviews = len(d.Threads), len(d.Reviews)
	return d
}

func (d *ThreadsDoc) handles() []string {
	var hs []string
	for _, r := range d.Reviews {
		hs = append(hs, r.Author)
	}
	for _, t := range d.Threads {
		hs = append(hs, t.Author)
		for _, y := range t.Replies {
			hs = append(hs, y.Author)
		}
	}
	return hs
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
