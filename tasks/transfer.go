package tasks

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// Export and import of a workspace's tasks and desks: what `atrium export`
// writes beside the pages (package records holds the file format) and
// `atrium import` reads back. Both are the operator's (admins only): an
// export holds everyone's work, and an import writes it as its authors wrote
// it, with their times, which no other call may do.

// EventImported records an import; its payload is the ImportReport.
const EventImported = "import.tasks"

// A Record is a task with everything that hangs on it, as an export holds it.
type Record struct {
	// Task names principals by handle (Creator, Assignee; "" for none) and
	// its blockers by number.
	Task atrium.Task
	// Comments are oldest first. An export gives their IDs; an import takes
	// an ID as a key within the task, which Answers and waits refer to.
	Comments []atrium.TaskComment
	Waits    []RecordWait
}

// A RecordWait is someone a task waits on, since one of its comments.
type RecordWait struct {
	Handle  string
	Reason  string // question or blocked
	Comment int64  // the ID of the comment, among the record's
}

// A DeskRecord is one principal's desk as an export holds it.
type DeskRecord struct {
	Handle string
	// Todos are the numbers of the todos on the desk: tasks of kind todo
	// assigned to Handle or, while nobody holds one, created by Handle. The
	// todos themselves are among the tasks, so an import reads this as a
	// note, not as data.
	Todos []int64
	// Plan and Draft are the paths of the desk's pages ("" when it has
	// none); their content travels with the other pages.
	Plan, Draft string
	Progress    []DeskProgress // in the order done, archived items too
}

// A DeskProgress is an item of a desk's progress log.
type DeskProgress struct {
	Description string
	DoneAt      time.Time
	CreatedAt   time.Time
	ArchivedAt  *time.Time // nil while the day is open
}

// Records are a workspace's tasks, hand-off rules and desks.
type Records struct {
	Tasks []Record             // by number
	Rules []atrium.HandoffRule // by match
	Desks []DeskRecord         // by handle
}

// all is the limit of a query meant to return every row.
const all = math.MaxInt32

// Export reads every task of the caller's workspace (todos and archived
// ones too) with its comments and waits, the hand-off rules and every desk,
// in one snapshot.
func (s *Service) Export(ctx context.Context) (Records, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return Records{}, err
	}
	ws := a.Workspace.ID
	var out Records
	err = s.db.View(ctx, func(tx *store.Tx) error {
		out = Records{Tasks: []Record{}, Desks: []DeskRecord{}}
		ts, err := tx.Tasks(ctx, store.TaskFilter{Workspace: ws, Limit: all})
		if err != nil {
			return err
		}
		slices.Reverse(ts) // newest first, as boards list them: by number here
		desks := map[string]*DeskRecord{}
		desk := func(h string) *DeskRecord {
			if desks[h] == nil {
				desks[h] = &DeskRecord{Handle: h, Todos: []int64{}, Progress: []DeskProgress{}}
			}
			return desks[h]
		}
		for _, row := range ts {
			t, err := tx.TaskByNumber(ctx, ws, row.Number) // with its blockers
			if err != nil {
				return err
			}
			rec := Record{Task: t, Waits: []RecordWait{}}
			if rec.Comments, err = tx.Comments(ctx, store.CommentFilter{Task: t.ID, Limit: all}); err != nil {
				return err
			}
			waits, err := tx.Waits(ctx, t.ID)
			if err != nil {
				return err
			}
			for _, w := range waits {
				rec.Waits = append(rec.Waits, RecordWait{Handle: w.Handle, Reason: w.Reason, Comment: w.CommentID})
			}
			// Waits written together share a time: order them by name.
			slices.SortFunc(rec.Waits, func(x, y RecordWait) int {
				return strings.Compare(x.Handle+"\x00"+x.Reason, y.Handle+"\x00"+y.Reason)
			})
			out.Tasks = append(out.Tasks, rec)
			if _, h := deskOf(t); t.Kind == atrium.KindTodo && h != "" {
				d := desk(h)
				d.Todos = append(d.Todos, t.Number)
			}
		}
		if out.Rules, err = tx.HandoffRules(ctx, ws); err != nil {
			return err
		}
		items, err := tx.DeskItems(ctx, ws)
		if err != nil {
			return err
		}
		for _, it := range items {
			d := desk(it.Handle)
			d.Progress = append(d.Progress, DeskProgress{Description: it.Description, DoneAt: it.DoneAt, CreatedAt: it.CreatedAt, ArchivedAt: it.ArchivedAt})
		}
		// A member with a plan or a draft and nothing else has a desk too.
		members, err := tx.Members(ctx, ws)
		if err != nil {
			return err
		}
		owners := map[string]bool{}
		for _, m := range members {
			owners[m.Principal.Handle] = true
		}
		for h := range desks {
			owners[h] = true
		}
		for h := range owners {
			for _, which := range []string{"Plan", "Draft"} {
				p, err := tx.PageByPath(ctx, ws, DeskPage(h, which))
				switch {
				case atrium.ErrorCode(err) == atrium.ENotFound:
				case err != nil:
					return err
				case which == "Plan":
					desk(h).Plan = p.Path
				default:
					desk(h).Draft = p.Path
				}
			}
		}
		for _, d := range desks {
			out.Desks = append(out.Desks, *d)
		}
		slices.SortFunc(out.Desks, func(x, y DeskRecord) int { return strings.Compare(x.Handle, y.Handle) })
		return nil
	})
	return out, err
}

// ImportReport says what Import did.
type ImportReport struct {
	Created   int `json:"created"`   // tasks (todos among them) that were not there
	Updated   int `json:"updated"`   // tasks there that the export changed
	Unchanged int `json:"unchanged"` // tasks there as the export holds them
	Comments  int `json:"comments"`  // comments added
	Waits     int `json:"waits"`     // tasks whose waits were set
	Rules     int `json:"rules"`     // hand-off rules added or changed
	Progress  int `json:"progress"`  // progress items added or changed
}

func (r ImportReport) changed() bool {
	return r.Created+r.Updated+r.Comments+r.Waits+r.Rules+r.Progress > 0
}

// CheckImport says, without writing, whether Import would keep every task
// number: a number the workspace already gives to another task (one not
// created by the same principal at the same time) is a conflict, and the
// error names them all (details: conflicting_numbers).
func (s *Service) CheckImport(ctx context.Context, r Records) error {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return err
	}
	return s.db.View(ctx, func(tx *store.Tx) error { return conflicts(ctx, tx, a, r.Tasks) })
}

// conflicts is CheckImport's rule. Renumbering instead would break every
// "#12" written in bodies and comments, and what links to the task from
// outside; so an import keeps numbers or refuses.
func conflicts(ctx context.Context, tx *store.Tx, a *atrium.Actor, recs []Record) error {
	var taken []int64
	for _, r := range recs {
		t, err := tx.TaskByNumber(ctx, a.Workspace.ID, r.Task.Number)
		switch {
		case atrium.ErrorCode(err) == atrium.ENotFound:
		case err != nil:
			return err
		case t.Kind != r.Task.Kind || t.Creator != r.Task.Creator || !t.CreatedAt.Equal(r.Task.CreatedAt):
			taken = append(taken, t.Number)
		}
	}
	if len(taken) == 0 {
		return nil
	}
	return atrium.Errorf(atrium.EConflict, "workspace %s already has other tasks numbered %s: an import keeps task numbers; import into a new workspace (atrium workspace create NAME, then ATRIUM_WORKSPACE=NAME atrium import DIR)",
		a.Workspace.Name, numbers(taken)).WithDetails(map[string]any{"conflicting_numbers": taken})
}

// Import writes r into the caller's workspace, in one transaction, as the
// export holds it: tasks keep their numbers, creators, assignees and times,
// comments their authors and times. A task already there (same number,
// creator and created time: an earlier import of the same export) is brought
// to the export's fields; comments and progress items already there (same
// author, time and text) are not added again, so importing twice adds
// nothing. Every principal named must exist, and be a member where the
// workspace needs one (assignees, waits, rules): see identity's
// EnsureMembers. Nobody's inbox hears of an import.
func (s *Service) Import(ctx context.Context, r Records) (ImportReport, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return ImportReport{}, err
	}
	var rep ImportReport
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		rep = ImportReport{}
		if err := conflicts(ctx, tx, a, r.Tasks); err != nil {
			return err
		}
		rows := make([]atrium.Task, len(r.Tasks))
		for i, rec := range r.Tasks {
			t, err := s.importTask(ctx, tx, a, rec.Task, &rep)
			if err != nil {
				return inTask(rec.Task.Number, err)
			}
			rows[i] = t
		}
		// Blockers once every task is in: blocked_by names tasks by number.
		for i, rec := range r.Tasks {
			t := rows[i]
			want := slices.Clone(rec.Task.BlockedBy)
			slices.Sort(want)
			if want = slices.Compact(want); slices.Equal(t.BlockedBy, want) {
				continue
			}
			ch, err := s.apply(ctx, tx, a, &t, Fields{BlockedBy: &want})
			if err == nil {
				err = s.writeBlockers(ctx, tx, &t, ch.blockers)
			}
			if err != nil {
				return inTask(t.Number, err)
			}
		}
		for i, rec := range r.Tasks {
			if err := s.importThread(ctx, tx, a, rows[i], rec, &rep); err != nil {
				return inTask(rec.Task.Number, err)
			}
		}
		if err := importRules(ctx, tx, a, r.Rules, &rep); err != nil {
			return err
		}
		if err := importDesks(ctx, tx, a, r.Desks, &rep); err != nil {
			return err
		}
		if !rep.changed() {
			return nil
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventImported, "tasks", rep)
	})
	return rep, err
}

// inTask puts the task's number before an error's message.
func inTask(n int64, err error) error {
	var e *atrium.Error
	if errors.As(err, &e) {
		return &atrium.Error{Code: e.Code, Message: fmt.Sprintf("task #%d: %s", n, e.Message), Details: e.Details}
	}
	return fmt.Errorf("task #%d: %w", n, err)
}

// principalID is the principal with handle h, 0 for "" (a principal that
// was deleted leaves its rows nobody's).
func principalID(ctx context.Context, tx *store.Tx, h string) (int64, error) {
	if h == "" {
		return 0, nil
	}
	p, err := tx.PrincipalByHandle(ctx, h)
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return 0, atrium.Errorf(atrium.EInvalid, "unknown principal @%s", h)
	}
	return p.ID, err
}

// importTask writes one task's own row, checked by the rules of a create or
// an update (apply), and returns it as stored.
func (s *Service) importTask(ctx context.Context, tx *store.Tx, a *atrium.Actor, want atrium.Task, rep *ImportReport) (atrium.Task, error) {
	switch {
	case want.Number <= 0:
		return want, atrium.Errorf(atrium.EInvalid, "a task number is 1 or more")
	case want.Kind != atrium.KindTask && want.Kind != atrium.KindTodo:
		return want, atrium.Errorf(atrium.EInvalid, "kind is task or todo, not %q", want.Kind)
	case want.CreatedAt.IsZero() || want.UpdatedAt.IsZero():
		return want, atrium.Errorf(atrium.EInvalid, "created_at and updated_at are required")
	}
	have, err := tx.LockTask(ctx, a.Workspace.ID, want.Number)
	found := err == nil
	if err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
		return have, err
	}
	t := have
	if !found {
		creator, err := principalID(ctx, tx, want.Creator)
		if err != nil {
			return t, err
		}
		t = atrium.Task{WorkspaceID: a.Workspace.ID, Number: want.Number, Kind: want.Kind, Status: atrium.TaskOpen,
			CreatorID: creator, Creator: want.Creator, CreatedAt: want.CreatedAt,
			Labels: []string{}, Specs: []string{}, Plans: []string{}, BlockedBy: []int64{}}
	}
	if want.Title == "" {
		return t, atrium.Errorf(atrium.EInvalid, "title is required")
	}
	f := Fields{Title: &want.Title, Body: &want.Body, Status: &want.Status, StatusText: &want.StatusText, Progress: &want.Progress,
		Phase: &want.Phase, Labels: &want.Labels, Specs: &want.Specs, Plans: &want.Plans, Assignee: &want.Assignee}
	if _, err := s.apply(ctx, tx, a, &t, f); err != nil {
		return t, err
	}
	t.UpdatedAt = want.UpdatedAt
	if found && sameFields(have, t) {
		rep.Unchanged++
		return have, nil
	}
	if err := tx.RestoreTask(ctx, &t); err != nil {
		return t, err
	}
	if found {
		rep.Updated++
	} else {
		rep.Created++
	}
	return t, nil
}

// sameFields reports whether two versions of a task hold the same fields.
func sameFields(x, y atrium.Task) bool {
	return x.Title == y.Title && x.Body == y.Body && x.Status == y.Status && x.StatusText == y.StatusText && x.Progress == y.Progress &&
		x.Phase == y.Phase && slices.Equal(x.Labels, y.Labels) && slices.Equal(x.Specs, y.Specs) && slices.Equal(x.Plans, y.Plans) &&
		x.AssigneeID == y.AssigneeID && x.UpdatedAt.Equal(y.UpdatedAt)
}

// importThread adds the comments of rec that t lacks, and sets its waits.
func (s *Service) importThread(ctx context.Context, tx *store.Tx, a *atrium.Actor, t atrium.Task, rec Record, rep *ImportReport) error {
	have, err := tx.Comments(ctx, store.CommentFilter{Task: t.ID, Limit: all})
	if err != nil {
		return err
	}
	used := map[int64]bool{}
	ids := map[int64]int64{} // the record's comment IDs → rows
	types := map[int64]atrium.CommentType{}
	for _, c := range rec.Comments {
		author, err := principalID(ctx, tx, c.Author)
		if err != nil {
			return err
		}
		switch {
		case !c.Type.Valid():
			return atrium.Errorf(atrium.EInvalid, "comment type is status, completion, question, answer, blocked, clarification or note, not %q", c.Type)
		case strings.TrimSpace(c.Body) == "":
			return atrium.Errorf(atrium.EInvalid, "a comment has no body")
		case len(c.Body) > maxComment:
			return atrium.Errorf(atrium.ETooLarge, "comment is %d bytes; at most %d", len(c.Body), maxComment)
		case c.CreatedAt.IsZero():
			return atrium.Errorf(atrium.EInvalid, "a comment has no time")
		case c.ID == 0 || ids[c.ID] != 0:
			return atrium.Errorf(atrium.EInvalid, "comments need distinct ids")
		}
		answers := int64(0)
		if c.Answers != 0 {
			if types[c.Answers] != atrium.CommentQuestion {
				return atrium.Errorf(atrium.EInvalid, "comment %d answers %d, which is not an earlier question of the task", c.ID, c.Answers)
			}
			answers = ids[c.Answers]
		}
		types[c.ID] = c.Type
		i := slices.IndexFunc(have, func(h atrium.TaskComment) bool {
			return !used[h.ID] && h.AuthorID == author && h.CreatedAt.Equal(c.CreatedAt) && h.Type == c.Type && h.Body == c.Body
		})
		if i >= 0 {
			used[have[i].ID], ids[c.ID] = true, have[i].ID
			continue
		}
		nc := atrium.TaskComment{TaskID: t.ID, AuthorID: author, Type: c.Type, Body: c.Body, Answers: answers, CreatedAt: c.CreatedAt}
		if err := tx.RestoreComment(ctx, a.Workspace.ID, &nc); err != nil {
			return err
		}
		ids[c.ID] = nc.ID
		rep.Comments++
	}
	return importWaits(ctx, tx, a, t, rec.Waits, ids, rep)
}

// importWaits makes t wait on whom the record says, and on nobody else.
func importWaits(ctx context.Context, tx *store.Tx, a *atrium.Actor, t atrium.Task, waits []RecordWait, ids map[int64]int64, rep *ImportReport) error {
	want := make([]store.Wait, 0, len(waits))
	for _, w := range waits {
		if w.Reason != "question" && w.Reason != "blocked" {
			return atrium.Errorf(atrium.EInvalid, "a wait's reason is question or blocked, not %q", w.Reason)
		}
		id, ok := ids[w.Comment]
		if !ok {
			return atrium.Errorf(atrium.EInvalid, "the wait on @%s names comment %d, which the task does not have", w.Handle, w.Comment)
		}
		p, err := member(ctx, tx, a, w.Handle)
		if err != nil {
			return err
		}
		want = append(want, store.Wait{PrincipalID: p.ID, Handle: p.Handle, Reason: w.Reason, CommentID: id})
	}
	have, err := tx.Waits(ctx, t.ID)
	if err != nil {
		return err
	}
	key := func(w store.Wait) string { return fmt.Sprintf("%d/%s/%d", w.PrincipalID, w.Reason, w.CommentID) }
	hk, wk := make([]string, len(have)), make([]string, len(want))
	for i, w := range have {
		hk[i] = key(w)
	}
	for i, w := range want {
		wk[i] = key(w)
	}
	slices.Sort(hk)
	slices.Sort(wk)
	if slices.Equal(hk, wk) {
		return nil
	}
	if _, err := tx.ClearWaits(ctx, t.ID, 0, ""); err != nil {
		return err
	}
	for _, w := range want {
		if err := tx.AddWait(ctx, t.ID, w.PrincipalID, w.Reason, w.CommentID); err != nil {
			return err
		}
	}
	rep.Waits++
	return nil
}

// importRules adds or changes the workspace's hand-off rules; rules the
// export does not name are left as they are.
func importRules(ctx context.Context, tx *store.Tx, a *atrium.Actor, rules []atrium.HandoffRule, rep *ImportReport) error {
	have, err := tx.HandoffRules(ctx, a.Workspace.ID)
	if err != nil {
		return err
	}
	for _, r := range rules {
		if r.MatchKind != "phase" && r.MatchKind != "label" || strings.TrimSpace(r.MatchValue) == "" {
			return atrium.Errorf(atrium.EInvalid, "a hand-off rule matches a phase or a label, not %s=%q", r.MatchKind, r.MatchValue)
		}
		p, err := member(ctx, tx, a, handle(r.Next))
		if err != nil {
			return err
		}
		r.NextID, r.Next = p.ID, p.Handle
		if slices.Contains(have, r) {
			continue
		}
		if err := tx.SetHandoffRule(ctx, a.Workspace.ID, r); err != nil {
			return err
		}
		rep.Rules++
	}
	return nil
}

// importDesks adds the progress items the desks lack, and archives those
// the export has archived. A desk's todos and pages come in as tasks and
// pages.
func importDesks(ctx context.Context, tx *store.Tx, a *atrium.Actor, desks []DeskRecord, rep *ImportReport) error {
	have, err := tx.DeskItems(ctx, a.Workspace.ID)
	if err != nil {
		return err
	}
	used := map[int64]bool{}
	for _, d := range desks {
		owner, err := principalID(ctx, tx, d.Handle)
		if err != nil {
			return err
		}
		if owner == 0 {
			return atrium.Errorf(atrium.EInvalid, "a desk needs its owner's handle")
		}
		for _, p := range d.Progress {
			desc := strings.TrimSpace(p.Description)
			switch {
			case desc == "" || len(desc) > 4000:
				return atrium.Errorf(atrium.EInvalid, "@%s's desk: a progress item's description is 1 to 4000 bytes", d.Handle)
			case p.DoneAt.IsZero() || p.CreatedAt.IsZero():
				return atrium.Errorf(atrium.EInvalid, "@%s's desk: a progress item needs its done and created times", d.Handle)
			}
			i := slices.IndexFunc(have, func(h store.DeskItem) bool {
				return !used[h.ID] && h.Principal == owner && h.DoneAt.Equal(p.DoneAt) && h.Description == desc
			})
			it := store.DeskItem{Principal: owner, Description: desc, DoneAt: p.DoneAt, CreatedAt: p.CreatedAt, ArchivedAt: p.ArchivedAt}
			if i >= 0 {
				used[have[i].ID] = true
				if sameTime(have[i].ArchivedAt, p.ArchivedAt) {
					continue
				}
				it.ID = have[i].ID
			}
			if err := tx.RestoreDeskItem(ctx, a.Workspace.ID, &it); err != nil {
				return err
			}
			rep.Progress++
		}
	}
	return nil
}

func sameTime(x, y *time.Time) bool {
	if x == nil || y == nil {
		return x == y
	}
	return x.Equal(*y)
}
