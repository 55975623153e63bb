package records

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/tasks"
)

// maxFile bounds a file Read takes: far above any real workspace's, it only
// keeps a stray huge file from being read into memory.
const maxFile = 1 << 30

// A Set is what an export's .atrium folder holds; a nil document is a file
// that is not there.
type Set struct {
	Tasks   *TasksDoc
	Threads *ThreadsDoc
	Desks   *DesksDoc
}

// Read reads and checks dir/.atrium: every file whole (its JSON, its
// format, its fields, what its parts name), before anything is written. A
// folder without .atrium gives nil and no error. Errors name the file and
// what is wrong in it.
func Read(dir string) (*Set, error) {
	if _, err := os.Lstat(filepath.Join(dir, Dir)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var set Set
	found := false
	for _, f := range []struct {
		name string
		doc  any
	}{{TasksFile, &TasksDoc{}}, {ThreadsFile, &ThreadsDoc{}}, {DesksFile, &DesksDoc{}}} {
		name := path.Join(Dir, f.name)
		shown := filepath.Join(dir, filepath.FromSlash(name))
		fi, err := root.Lstat(filepath.FromSlash(name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, err
		case !fi.Mode().IsRegular():
			return nil, atrium.Errorf(atrium.EInvalid, "%s: not a regular file (a link or a folder is never read)", shown)
		case fi.Size() > maxFile:
			return nil, atrium.Errorf(atrium.ETooLarge, "%s: %d bytes; at most %d", shown, fi.Size(), maxFile)
		}
		data, err := root.ReadFile(filepath.FromSlash(name))
		if err != nil {
			return nil, err
		}
		if err := decode(data, f.doc); err != nil {
			return nil, atrium.Errorf(atrium.EInvalid, "%s: %s", shown, err)
		}
		var check error
		switch d := f.doc.(type) {
		case *TasksDoc:
			set.Tasks, check = d, d.check()
		case *ThreadsDoc:
			set.Threads, check = d, d.check()
		case *DesksDoc:
			set.Desks, check = d, d.check()
		}
		if check != nil {
			return nil, atrium.Errorf(atrium.EInvalid, "%s: %s", shown, check)
		}
		found = true
	}
	if !found {
		return nil, nil
	}
	if err := set.check(); err != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "%s: %s", filepath.Join(dir, Dir), err)
	}
	return &set, nil
}

// decode reads one file into doc: first its format, so that a file of
// another version is named as such rather than for the fields it has; then
// the whole, refusing fields the format does not have (a misspelt field
// would otherwise be dropped without a word).
func decode(data []byte, doc any) error {
	var head struct {
		Format *string `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return jsonError(data, err)
	}
	switch {
	case head.Format == nil:
		return fmt.Errorf(`no "format": not a file of an Atrium export`)
	case *head.Format != Format:
		return fmt.Errorf("format is %q, which this version of Atrium does not read (it reads %q): export again with this version, or import with the version that exported it", *head.Format, Format)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		return jsonError(data, err)
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// jsonError says where in data a JSON error is, as line and column.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = max(syn.Offset-1, 0) // the offset is past the byte that was wrong
	case errors.As(err, &typ):
		off = typ.Offset
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if typ != nil && typ.Field != "" {
		msg = fmt.Sprintf("%s is a JSON %s, which does not fit (%s wanted)", typ.Field, typ.Value, typ.Type)
	}
	if off < 0 {
		return errors.New(msg)
	}
	before := data[:min(off, int64(len(data)))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Errorf("line %d, column %d: %s", line, col, msg)
}

// The checks of Read: what a file must hold for its import to make sense.
// The services check the rest (lengths, paths, who is a member) as they
// would for any write, in the import's transaction.

// checkPrincipals checks a file's principals and returns them by handle.
func checkPrincipals(ps []Principal) (map[string]Principal, error) {
	out := map[string]Principal{}
	for _, p := range ps {
		if err := atrium.ValidateName("principal handle", p.Handle); err != nil {
			return nil, err
		}
		if !atrium.PrincipalKind(p.Kind).Valid() {
			return nil, fmt.Errorf("principal %s: kind is human or agent, not %q", p.Handle, p.Kind)
		}
		if _, dup := out[p.Handle]; dup {
			return nil, fmt.Errorf("principal %s is listed twice", p.Handle)
		}
		out[p.Handle] = p
	}
	return out, nil
}

// named checks that handle h (required or not) is among the principals.
func named(ps map[string]Principal, what, h string, required bool) error {
	switch _, ok := ps[h]; {
	case h == "" && required:
		return fmt.Errorf("%s is required", what)
	case h != "" && !ok:
		return fmt.Errorf("%s @%s is not among the file's principals", what, h)
	}
	return nil
}

func (d *TasksDoc) check() error {
	ps, err := checkPrincipals(d.Principals)
	if err != nil {
		return err
	}
	numbers := map[int64]bool{}
	for _, t := range d.Tasks {
		if t.Number <= 0 || numbers[t.Number] {
			return fmt.Errorf("task number %d: numbers are 1 or more, each once", t.Number)
		}
		numbers[t.Number] = true
	}
	for _, t := range d.Tasks {
		if err := t.check(ps, numbers); err != nil {
			return fmt.Errorf("task #%d: %w", t.Number, err)
		}
	}
	for _, r := range d.HandoffRules {
		if r.Match != "phase" && r.Match != "label" || r.Value == "" {
			return fmt.Errorf("hand-off rule %s=%q: a rule matches a phase or a label", r.Match, r.Value)
		}
		if err := named(ps, "hand-off rule "+r.Match+"="+r.Value+": next", r.Next, true); err != nil {
			return err
		}
	}
	return nil
}

func (t Task) check(ps map[string]Principal, numbers map[int64]bool) error {
	switch {
	case t.Kind != string(atrium.KindTask) && t.Kind != string(atrium.KindTodo):
		return fmt.Errorf("kind is task or todo, not %q", t.Kind)
	case !atrium.TaskStatus(t.Status).Valid():
		return fmt.Errorf("status is open, in_progress, blocked, done or archived, not %q", t.Status)
	case strings.TrimSpace(t.Title) == "":
		return fmt.Errorf("title is required")
	case t.CreatedAt.IsZero() || t.UpdatedAt.IsZero():
		return fmt.Errorf("created_at and updated_at are required")
	}
	if err := named(ps, "creator", t.Creator, false); err != nil {
		return err
	}
	if err := named(ps, "assignee", t.Assignee, false); err != nil {
		return err
	}
	for _, b := range t.BlockedBy {
		if !numbers[b] {
			return fmt.Errorf("blocked_by names #%d, which the file does not hold", b)
		}
	}
	types := map[int64]string{}
	for i, c := range t.Comments {
		switch {
		case c.N != int64(i+1):
			return fmt.Errorf("comment %d has n %d: comments are numbered 1, 2, 3 … in order", i+1, c.N)
		case !atrium.CommentType(c.Type).Valid():
			return fmt.Errorf("comment %d: type is status, completion, question, answer, blocked, clarification or note, not %q", c.N, c.Type)
		case strings.TrimSpace(c.Body) == "":
			return fmt.Errorf("comment %d has no body", c.N)
		case c.CreatedAt.IsZero():
			return fmt.Errorf("comment %d: created_at is required", c.N)
		case c.Answers != 0 && types[c.Answers] != string(atrium.CommentQuestion):
			return fmt.Errorf("comment %d answers %d, which is not an earlier question", c.N, c.Answers)
		}
		if err := named(ps, fmt.Sprintf("comment %d: author", c.N), c.Author, false); err != nil {
			return err
		}
		types[c.N] = c.Type
	}
	for _, w := range t.Waits {
		switch {
		case w.Reason != "question" && w.Reason != "blocked":
			return fmt.Errorf("a wait's reason is question or blocked, not %q", w.Reason)
		case types[w.Comment] == "":
			return fmt.Errorf("the wait on @%s names comment %d, which the task does not have", w.On, w.Comment)
		}
		if err := named(ps, "a wait's principal (on)", w.On, true); err != nil {
			return err
		}
	}
	return nil
}

func (d *ThreadsDoc) check() error {
	ps, err := checkPrincipals(d.Principals)
	if err != nil {
		return err
	}
	reviews, ids := map[string]bool{}, map[string]bool{}
	for _, r := range d.Reviews {
		switch {
		case r.ID == "" || reviews[r.ID]:
			return fmt.Errorf("review %q: reviews need distinct ids", r.ID)
		case r.Status != string(atrium.ReviewDraft) && r.Status != string(atrium.ReviewSubmitted) && r.Status != string(atrium.ReviewCompleted):
			return fmt.Errorf("review %s: status is draft, submitted or completed, not %q", r.ID, r.Status)
		case r.DocPath == "":
			return fmt.Errorf("review %s: doc_path is required", r.ID)
		case r.CreatedAt.IsZero() || r.UpdatedAt.IsZero():
			return fmt.Errorf("review %s: created_at and updated_at are required", r.ID)
		}
		if err := named(ps, "review "+r.ID+": author", r.Author, false); err != nil {
			return err
		}
		reviews[r.ID] = true
	}
	annotation := func(id, status, rv, author, authorType, content string, root bool) error {
		switch {
		case id == "" || ids[id]:
			return fmt.Errorf("annotation %q: annotations need distinct ids", id)
		case status != string(atrium.StatusDraft) && status != string(atrium.StatusSubmitted) && (status != string(atrium.StatusResolved) || !root):
			return fmt.Errorf("annotation %s: status is draft, submitted or (for a thread's root) resolved, not %q", id, status)
		case rv != "" && !reviews[rv]:
			return fmt.Errorf("annotation %s names review %s, which the file does not hold", id, rv)
		case authorType != string(atrium.AuthorHuman) && authorType != string(atrium.AuthorAI):
			return fmt.Errorf("annotation %s: author_type is human or ai, not %q", id, authorType)
		case strings.TrimSpace(content) == "":
			return fmt.Errorf("annotation %s has no content", id)
		}
		ids[id] = true
		return named(ps, "annotation "+id+": author", author, false)
	}
	for _, t := range d.Threads {
		if err := annotation(t.ID, t.Status, t.Review, t.Author, t.AuthorType, t.Content, true); err != nil {
			return err
		}
		switch {
		case t.DocPath == "":
			return fmt.Errorf("thread %s: doc_path is required", t.ID)
		case t.CreatedAt.IsZero() || t.UpdatedAt.IsZero():
			return fmt.Errorf("thread %s: created_at and updated_at are required", t.ID)
		}
		for _, y := range t.Replies {
			if err := annotation(y.ID, y.Status, y.Review, y.Author, y.AuthorType, y.Content, false); err != nil {
				return err
			}
			if y.CreatedAt.IsZero() || y.UpdatedAt.IsZero() {
				return fmt.Errorf("reply %s: created_at and updated_at are required", y.ID)
			}
		}
	}
	return nil
}

func (d *DesksDoc) check() error {
	ps, err := checkPrincipals(d.Principals)
	if err != nil {
		return err
	}
	owners := map[string]bool{}
	for _, dk := range d.Desks {
		if err := named(ps, "a desk's owner", dk.Owner, true); err != nil {
			return err
		}
		if owners[dk.Owner] {
			return fmt.Errorf("@%s has two desks", dk.Owner)
		}
		owners[dk.Owner] = true
		for which, p := range map[string]string{"Plan": dk.Plan, "Draft": dk.Draft} {
			if p != "" && p != tasks.DeskPage(dk.Owner, which) {
				return fmt.Errorf("@%s's %s is %s; a desk's is %s", dk.Owner, strings.ToLower(which), p, tasks.DeskPage(dk.Owner, which))
			}
		}
		for _, p := range dk.Progress {
			if strings.TrimSpace(p.Description) == "" || p.DoneAt.IsZero() || p.CreatedAt.IsZero() {
				return fmt.Errorf("@%s's desk: a progress item needs a description, done_at and created_at", dk.Owner)
			}
		}
	}
	return nil
}

// check is what one file says of another: the principals two files name
// are the same, and a desk's todos are todos of tasks.json.
func (s *Set) check() error {
	seen := map[string]Principal{}
	for _, ps := range [][]Principal{s.tasksPrincipals(), s.threadsPrincipals(), s.desksPrincipals()} {
		for _, p := range ps {
			if q, ok := seen[p.Handle]; ok && q.Kind != p.Kind {
				return fmt.Errorf("principal %s is %s in one file and %s in another", p.Handle, q.Kind, p.Kind)
			}
			seen[p.Handle] = p
		}
	}
	if s.Desks == nil || s.Tasks == nil {
		return nil
	}
	kinds := map[int64]string{}
	for _, t := range s.Tasks.Tasks {
		kinds[t.Number] = t.Kind
	}
	for _, dk := range s.Desks.Desks {
		for _, n := range dk.Todos {
			if kinds[n] != string(atrium.KindTodo) {
				return fmt.Errorf("%s lists todo_%d on @%s's desk, but %s holds no todo #%d", DesksFile, n, dk.Owner, TasksFile, n)
			}
		}
	}
	return nil
}

func (s *Set) tasksPrincipals() []Principal {
	if s.Tasks == nil {
		return nil
	}
	return s.Tasks.Principals
}

func (s *Set) threadsPrincipals() []Principal {
	if s.Threads == nil {
		return nil
	}
	return s.Threads.Principals
}

func (s *Set) desksPrincipals() []Principal {
	if s.Desks == nil {
		return nil
	}
	return s.Desks.Principals
}

// ImportReport says what Import did.
type ImportReport struct {
	Principals identity.Ensured
	Tasks      *tasks.ImportReport  // nil: no tasks.json nor desks.json
	Threads    *review.ImportReport // nil: no threads.json
}

// Check says, before anything is written, whether the import of set would
// have to renumber tasks, which it refuses (tasks.Service.CheckImport).
func Check(ctx context.Context, s *services.Services, set *Set) error {
	if set == nil || set.Tasks == nil {
		return nil
	}
	return s.Tasks.CheckImport(ctx, set.taskRecords())
}

// Import writes set into the workspace of ctx's actor (an admin), after its
// pages: the principals it names (created with their kinds where new, and
// made writers where they are not members), then tasks and desks, then
// threads, each in one transaction. Importing the same set again adds
// nothing.
func Import(ctx context.Context, s *services.Services, set *Set) (*ImportReport, error) {
	rep := &ImportReport{}
	if set == nil {
		return rep, nil
	}
	var ps []atrium.Principal
	for _, list := range [][]Principal{set.tasksPrincipals(), set.threadsPrincipals(), set.desksPrincipals()} {
		for _, p := range list {
			if !slices.ContainsFunc(ps, func(q atrium.Principal) bool { return q.Handle == p.Handle }) {
				ps = append(ps, atrium.Principal{Handle: p.Handle, Kind: atrium.PrincipalKind(p.Kind), DisplayName: p.DisplayName})
			}
		}
	}
	var err error
	if rep.Principals, err = s.Identity.EnsureMembers(ctx, ps); err != nil {
		return rep, err
	}
	if set.Tasks != nil || set.Desks != nil {
		tr, err := s.Tasks.Import(ctx, set.taskRecords())
		if err != nil {
			return rep, err
		}
		rep.Tasks = &tr
	}
	if set.Threads != nil {
		rr, err := s.Review.Import(ctx, set.threadRecords())
		if err != nil {
			return rep, err
		}
		rep.Threads = &rr
	}
	return rep, nil
}

// taskRecords are tasks.json and desks.json as the tasks service takes them.
func (s *Set) taskRecords() tasks.Records {
	var r tasks.Records
	if d := s.Tasks; d != nil {
		for _, t := range d.Tasks {
			rec := tasks.Record{Task: atrium.Task{Number: t.Number, Kind: atrium.TaskKind(t.Kind), Title: t.Title, Body: t.Body,
				Status: atrium.TaskStatus(t.Status), StatusText: t.StatusText, Progress: t.Progress, Phase: t.Phase, Labels: nonNil(t.Labels),
				Creator: t.Creator, Assignee: t.Assignee, Specs: nonNil(t.Specs), Plans: nonNil(t.Plans), BlockedBy: nonNil(t.BlockedBy),
				CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}}
			// A comment's n is its key within the task, which answers
			// and waits name.
			for _, c := range t.Comments {
				rec.Comments = append(rec.Comments, atrium.TaskComment{ID: c.N, Author: c.Author, Type: atrium.CommentType(c.Type),
					Body: c.Body, Answers: c.Answers, CreatedAt: c.CreatedAt})
			}
			for _, w := range t.Waits {
				rec.Waits = append(rec.Waits, tasks.RecordWait{Handle: w.On, Reason: w.Reason, Comment: w.Comment})
			}
			r.Tasks = append(r.Tasks, rec)
		}
		for _, x := range d.HandoffRules {
			r.Rules = append(r.Rules, atrium.HandoffRule{MatchKind: x.Match, MatchValue: x.Value, Next: x.Next, NextPhase: x.NextPhase})
		}
	}
	if d := s.Desks; d != nil {
		for _, dk := range d.Desks {
			rec := tasks.DeskRecord{Handle: dk.Owner, Todos: dk.Todos, Plan: dk.Plan, Draft: dk.Draft}
			for _, p := range dk.Progress {
				rec.Progress = append(rec.Progress, tasks.DeskProgress{Description: p.Description, DoneAt: p.DoneAt, CreatedAt: p.CreatedAt, ArchivedAt: p.ArchivedAt})
			}
			r.Desks = append(r.Desks, rec)
		}
	}
	return r
}

// threadRecords are threads.json as the review service takes them.
func (s *Set) threadRecords() review.Records {
	var r review.Records
	for _, x := range s.Threads.Reviews {
		r.Reviews = append(r.Reviews, atrium.Review{UID: x.ID, DocPath: x.DocPath, Status: atrium.ReviewStatus(x.Status), Author: x.Author,
			Summary: x.Summary, CreatedAt: x.CreatedAt, UpdatedAt: x.UpdatedAt})
	}
	for _, t := range s.Threads.Threads {
		root := atrium.Annotation{UID: t.ID, DocPath: t.DocPath, Section: t.Section, QuoteOffset: -1, Orphaned: t.Orphaned,
			Status: atrium.AnnotationStatus(t.Status), ReviewUID: t.Review, Author: t.Author, AuthorType: atrium.AuthorType(t.AuthorType),
			Content: t.Content, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
		if t.Quote != nil {
			root.Quote = &atrium.Quote{Exact: t.Quote.Exact, Prefix: t.Quote.Prefix, Suffix: t.Quote.Suffix}
		}
		th := review.Thread{Annotation: root}
		for _, y := range t.Replies {
			th.Replies = append(th.Replies, atrium.Annotation{UID: y.ID, Status: atrium.AnnotationStatus(y.Status), ReviewUID: y.Review,
				Author: y.Author, AuthorType: atrium.AuthorType(y.AuthorType), Content: y.Content, CreatedAt: y.CreatedAt, UpdatedAt: y.UpdatedAt})
		}
		r.Threads = append(r.Threads, th)
	}
	return r
}
