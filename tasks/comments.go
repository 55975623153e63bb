package tasks

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// CommentRequest posts a comment of a type on task #Number.
type CommentRequest struct {
	Number  int64
	Type    atrium.CommentType
	Body    string
	Answers int64 // the question comment it answers, for answers
}

// Posted is a comment just written, with what it did to its task.
type Posted struct {
	Comment    atrium.TaskComment
	Task       atrium.Task
	WaitingFor string // a question's or a block's target
	NextAgent  string // who a completion hands the task to
	LabelAdded string
}

// Comment posts a comment. Its type's marker is shown before it, so a body
// that already starts with the marker (as 002's agents write them) keeps one.
func (s *Service) Comment(ctx context.Context, r CommentRequest) (Posted, error) {
	if r.Type == "" {
		r.Type = atrium.CommentNote
	}
	if !r.Type.Valid() {
		return Posted{}, atrium.Errorf(atrium.EInvalid, "comment_type is status, completion, question, answer, blocked, clarification or note, not %q", r.Type)
	}
	body := strings.TrimSpace(r.Body)
	if m := r.Type.Marker(); m != "" {
		body = strings.TrimSpace(strings.TrimPrefix(body, m))
	}
	return s.post(ctx, r.Number, r.Type, body, post{answers: r.Answers})
}

// UpdateStatus posts "📍 Status: text" and keeps text as the task's status
// text; progress, if given, is set too.
func (s *Service) UpdateStatus(ctx context.Context, n int64, text string, progress *int) (Posted, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Posted{}, atrium.Errorf(atrium.EInvalid, "status is required: what you are doing now")
	}
	return s.post(ctx, n, atrium.CommentStatus, "Status: "+text, post{statusText: &text, progress: progress})
}

// Ask posts "❓ @target Question: …" and records that the task waits on target.
func (s *Service) Ask(ctx context.Context, n int64, target, question string) (Posted, error) {
	target, question = handle(target), strings.TrimSpace(question)
	if target == "" || question == "" {
		return Posted{}, atrium.Errorf(atrium.EInvalid, "target (a handle, e.g. duc) and question are required")
	}
	return s.post(ctx, n, atrium.CommentQuestion, fmt.Sprintf("@%s Question: %s", target, question), post{target: target, wait: "question", inbox: atrium.InboxQuestion})
}

// Answer posts "💬 @target Answer: …"; the caller is no longer waited on
// for this task, and target learns of the answer.
func (s *Service) Answer(ctx context.Context, n int64, target, answer string, answers int64) (Posted, error) {
	target, answer = handle(target), strings.TrimSpace(answer)
	if target == "" || answer == "" {
		return Posted{}, atrium.Errorf(atrium.EInvalid, "target (who asked, e.g. dede) and answer are required")
	}
	return s.post(ctx, n, atrium.CommentAnswer, fmt.Sprintf("@%s Answer: %s", target, answer), post{target: target, inbox: atrium.InboxAnswer, answers: answers})
}

// Blocked posts "🚫 Blocked: reason.\n\nWaiting on @who.", sets the task
// blocked with the blocked:agent label and records the wait.
func (s *Service) Blocked(ctx context.Context, n int64, reason, waitingFor string) (Posted, error) {
	reason, waitingFor = strings.TrimSpace(reason), handle(waitingFor)
	if reason == "" {
		return Posted{}, atrium.Errorf(atrium.EInvalid, "reason is required: what is missing")
	}
	body := "Blocked: " + sentence(reason)
	if waitingFor != "" {
		body += fmt.Sprintf("\n\nWaiting on @%s.", waitingFor)
	}
	return s.post(ctx, n, atrium.CommentBlocked, body, post{target: waitingFor, wait: "blocked", inbox: atrium.InboxBlocked, block: true})
}

// Complete posts "✅ summary\n\n@next Ready for next phase.", records the
// artifact, and hands the task to the next agent of the workspace's rules
// (the task's creator when none matches): the phase moves on if the rule
// names one, otherwise the task is done.
func (s *Service) Complete(ctx context.Context, n int64, artifact, summary string) (Posted, error) {
	summary, artifact = strings.TrimSpace(summary), strings.TrimSpace(artifact)
	if summary == "" {
		return Posted{}, atrium.Errorf(atrium.EInvalid, "summary is required: what was done")
	}
	if len(artifact) > 1024 || strings.ContainsAny(artifact, "\r\n") {
		return Posted{}, atrium.Errorf(atrium.EInvalid, "artifact_path is one line of at most 1024 bytes")
	}
	if artifact != "" && !strings.Contains(summary, artifact) {
		summary = sentence(summary) + fmt.Sprintf(" See `%s`.", artifact)
	}
	return s.post(ctx, n, atrium.CommentCompletion, summary, post{complete: true})
}

func handle(h string) string { return strings.TrimPrefix(strings.TrimSpace(h), "@") }

// sentence ends s with a full stop unless it ends with punctuation already.
func sentence(s string) string {
	if r := []rune(s); len(r) > 0 && !unicode.IsPunct(r[len(r)-1]) {
		return s + "."
	}
	return s
}

// post is what a kind of comment does beside adding itself.
type post struct {
	answers    int64
	target     string           // a principal the comment is addressed to
	wait       string           // record that the task waits on target: question or blocked
	inbox      atrium.InboxKind // the target's inbox item
	block      bool
	complete   bool
	statusText *string
	progress   *int
}

func (s *Service) post(ctx context.Context, n int64, typ atrium.CommentType, body string, p post) (Posted, error) {
	a, err := writer(ctx)
	if err != nil {
		return Posted{}, err
	}
	if body == "" {
		return Posted{}, atrium.Errorf(atrium.EInvalid, "comment is required")
	}
	if len(body) > maxComment {
		return Posted{}, atrium.Errorf(atrium.ETooLarge, "comment is %d bytes; at most %d", len(body), maxComment)
	}
	var out Posted
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		// Locked: a comment that changes the task (status, blocked, an
		// answer that unblocks, completion) never meets a conflict its
		// caller did not ask for — it applies to the task as it is now.
		t, err := tx.LockTask(ctx, a.Workspace.ID, n)
		if err != nil {
			return err
		}
		if p.block || p.complete || p.statusText != nil || p.progress != nil {
			if err := mayChange(a, t); err != nil {
				return err
			}
		}
		base, before := t.Revision, t
		notified := map[int64]bool{a.Principal.ID: true} // nobody is told of their own comment
		var target atrium.Principal
		if p.target != "" {
			if target, err = member(ctx, tx, a, p.target); err != nil {
				return err
			}
		}
		if p.complete {
			rule, next, err := s.nextAgent(ctx, tx, a, t)
			if err != nil {
				return err
			}
			target, out.NextAgent = next, next.Handle
			body += fmt.Sprintf("\n\n@%s Ready for next phase.", next.Handle)
			if rule != nil && rule.NextPhase != "" {
				t.Phase, t.Status, t.AssigneeID, t.Assignee = rule.NextPhase, atrium.TaskOpen, next.ID, next.Handle
			} else {
				t.Status = atrium.TaskDone
			}
			removeLabel(&t, BlockedLabel)
			if _, err := tx.ClearWaits(ctx, t.ID, 0, ""); err != nil { // a finished task waits on nobody
				return err
			}
			p.inbox = atrium.InboxHandoff
		}
		mentioned, err := mentions(ctx, tx, a, body)
		if err != nil {
			return err
		}
		c := atrium.TaskComment{TaskID: t.ID, TaskNumber: t.Number, AuthorID: a.Principal.ID, Author: a.Principal.Handle,
			AuthorType: atrium.AuthorTypeOf(a.Principal.Kind), Type: typ, Body: body}
		if typ == atrium.CommentAnswer {
			if c.Answers, err = s.answered(ctx, tx, a, t, p.answers); err != nil {
				return err
			}
		}
		if err := tx.InsertComment(ctx, a.Workspace.ID, &c); err != nil {
			return err
		}
		if p.statusText != nil {
			t.StatusText = *p.statusText
		}
		if p.progress != nil {
			if *p.progress < 0 || *p.progress > 100 {
				return atrium.Errorf(atrium.EInvalid, "progress is a percentage, 0 to 100, not %d", *p.progress)
			}
			t.Progress = *p.progress
		}
		if p.block {
			t.Status = atrium.TaskBlocked
			addLabel(&t, BlockedLabel)
			out.LabelAdded = BlockedLabel // also when it was there already: 002 reports it
		}
		if p.wait != "" && target.ID != 0 {
			if err := tx.AddWait(ctx, t.ID, target.ID, p.wait, c.ID); err != nil {
				return err
			}
			out.WaitingFor = target.Handle
		}
		// An answer — task_post_answer, or a comment of type answer — ends
		// every wait on its author here: their question, and the block that
		// waits for them. Any other comment of theirs (a status, a note)
		// leaves the task waiting.
		if typ == atrium.CommentAnswer {
			if cleared, err := tx.ClearWaits(ctx, t.ID, a.Principal.ID, ""); err != nil {
				return err
			} else if cleared > 0 && t.Status == atrium.TaskBlocked {
				if err := unblockIfFree(ctx, tx, &t); err != nil {
					return err
				}
			}
		}
		if target.ID != 0 && !notified[target.ID] {
			notified[target.ID] = true
			if err := tx.AddInbox(ctx, store.InboxEntry{Workspace: a.Workspace.ID, Principal: target.ID, Task: t.ID, Comment: c.ID, Actor: a.Principal.ID, Kind: p.inbox}); err != nil {
				return err
			}
		}
		for _, m := range mentioned {
			if notified[m.ID] {
				continue
			}
			notified[m.ID] = true
			if err := tx.AddInbox(ctx, store.InboxEntry{Workspace: a.Workspace.ID, Principal: m.ID, Task: t.ID, Comment: c.ID, Actor: a.Principal.ID, Kind: atrium.InboxMention}); err != nil {
				return err
			}
		}
		if changed(before, t) {
			if err := tx.UpdateTask(ctx, &t, base, true); err != nil {
				return err
			}
		}
		kind := EventCommented
		if p.complete {
			kind = EventCompleted
		}
		out.Comment, out.Task = c, t
		return emit(ctx, tx, a, kind, t, Event{Comment: c.ID, Type: string(typ)})
	})
	return out, err
}

// unblockIfFree takes a blocked task back to in progress once nobody is
// waited on for its block.
func unblockIfFree(ctx context.Context, tx *store.Tx, t *atrium.Task) error {
	waits, err := tx.Waits(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, w := range waits {
		if w.Reason == "blocked" {
			return nil
		}
	}
	t.Status = atrium.TaskInProgress
	removeLabel(t, BlockedLabel)
	return nil
}

func changed(a, b atrium.Task) bool {
	return a.Status != b.Status || a.StatusText != b.StatusText || a.Progress != b.Progress || a.Phase != b.Phase ||
		a.AssigneeID != b.AssigneeID || strings.Join(a.Labels, ",") != strings.Join(b.Labels, ",")
}

// answered is the question an answer answers: the one named, which must be a
// question on this task, or the caller's open question wait.
func (s *Service) answered(ctx context.Context, tx *store.Tx, a *atrium.Actor, t atrium.Task, id int64) (int64, error) {
	if id != 0 {
		q, err := tx.CommentByID(ctx, a.Workspace.ID, id)
		if err != nil {
			return 0, err
		}
		if q.TaskID != t.ID || q.Type != atrium.CommentQuestion {
			return 0, atrium.Errorf(atrium.EInvalid, "comment %d is not a question on task #%d", id, t.Number)
		}
		return id, nil
	}
	q, _, err := tx.LastQuestionTo(ctx, t.ID, a.Principal.ID)
	return q, err
}

// nextAgent is who takes a task over when it is completed: the rule for its
// phase, else the first for one of its labels, else its creator.
func (s *Service) nextAgent(ctx context.Context, tx *store.Tx, a *atrium.Actor, t atrium.Task) (*atrium.HandoffRule, atrium.Principal, error) {
	rules, err := tx.HandoffRules(ctx, a.Workspace.ID)
	if err != nil {
		return nil, atrium.Principal{}, err
	}
	var pick *atrium.HandoffRule
	for i, r := range rules {
		if r.MatchKind == "phase" && r.MatchValue == t.Phase && t.Phase != "" {
			pick = &rules[i]
			break
		}
	}
	for _, l := range t.Labels {
		if pick != nil {
			break
		}
		for i, r := range rules {
			if r.MatchKind == "label" && r.MatchValue == l {
				pick = &rules[i]
				break
			}
		}
	}
	id := t.CreatorID
	if pick != nil {
		id = pick.NextID
	}
	if id == 0 {
		return nil, atrium.Principal{}, atrium.Errorf(atrium.EInvalid, "task #%d has no creator and no hand-off rule matches it: set one with `atrium handoff set`", t.Number)
	}
	p, err := tx.PrincipalByID(ctx, id)
	return pick, p, err
}

// CommentsRequest lists a task's comments.
type CommentsRequest struct {
	Number    int64
	Since     time.Time
	FromAgent string
	After     int64 // a comment id: only those after it
	Limit     int
}

// CommentsPage is a page of a task's comments.
type CommentsPage struct {
	Comments []atrium.TaskComment
	// NextAfter is set when more comments follow: the id to pass as After.
	NextAfter int64
}

// maxComments bounds one page of comments.
const maxComments = 500

// Comments lists a task's comments, oldest first: those created at or after
// Since (to the microsecond), by FromAgent, after the comment id After; a
// page holds at most Limit (500), and says where the next begins.
func (s *Service) Comments(ctx context.Context, r CommentsRequest) (CommentsPage, error) {
	a, err := reader(ctx)
	if err != nil {
		return CommentsPage{}, err
	}
	limit := r.Limit
	if limit <= 0 || limit > maxComments {
		limit = maxComments
	}
	var out []atrium.TaskComment
	var next int64
	err = s.db.View(ctx, func(tx *store.Tx) error {
		t, err := tx.TaskByNumber(ctx, a.Workspace.ID, r.Number)
		if err != nil {
			return err
		}
		f := store.CommentFilter{Task: t.ID, After: r.After, Limit: limit + 1}
		if !r.Since.IsZero() {
			f.Since = r.Since.UnixMicro()
		}
		if h := handle(r.FromAgent); h != "" {
			p, err := tx.PrincipalByHandle(ctx, h)
			if atrium.ErrorCode(err) == atrium.ENotFound {
				return nil // nobody by that name wrote anything
			} else if err != nil {
				return err
			}
			f.Author = p.ID
		}
		if out, err = tx.Comments(ctx, f); err != nil {
			return err
		}
		if len(out) > limit {
			out = out[:limit]
			next = out[limit-1].ID
		}
		return nil
	})
	if out == nil {
		out = []atrium.TaskComment{}
	}
	return CommentsPage{Comments: out, NextAfter: next}, err
}
