// Package activity is the service of a workspace's event log as people see
// it: what happened since a point (the catch-up of live updates, the home
// page's feed) and what happens next (live). Events are written by the other
// services, each in the transaction of its change; this one only reads, and
// decides who may see which kind of event (see Visible).
package activity

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// Service reads the event log.
type Service struct{ db *store.DB }

// New returns the activity service over db.
func New(db *store.DB) *Service { return &Service{db: db} }

// adminKinds are the prefixes of the kinds of event about administering who
// may enter the workspace: tokens (their names), browser sessions, members
// and their roles, principals and workspaces. The admin page shows these to
// admins; other members see none of them, in no feed or stream.
var adminKinds = []string{"token.", "session.", "member.", "principal.", "workspace."}

// accessKinds are the kinds that may change who may read the workspace at
// all: a follower of the stream checks its own access again when one comes,
// from its workspace or from none (a token or session not bound to one).
var accessKinds = map[string]bool{
	"token.revoked": true, "session.revoked": true, "member.removed": true, "member.role_set": true,
}

// ChangesAccess reports whether an event of kind may have ended or changed
// someone's access to a workspace (a token or session revoked, a member
// removed, a role set): whoever holds a lasting stream checks again.
func ChangesAccess(kind string) bool { return accessKinds[kind] }

// Visible says whether a may see event e: a member sees the work of the
// workspace (pages, threads, tasks …) but not someone else's drafts, and
// only an admin its administration and every draft — the rule the review
// service applies to the drafts themselves.
func Visible(a *atrium.Actor, e atrium.Event) bool {
	if a == nil || a.Role == "" || e.WorkspaceID != 0 && e.WorkspaceID != a.Workspace.ID {
		return false
	}
	if a.Role.Allows(atrium.RoleAdmin) {
		return true
	}
	for _, p := range adminKinds {
		if strings.HasPrefix(e.Kind, p) {
			return false
		}
	}
	if author := draftOf(e); author != "" && author != a.Principal.Handle {
		return false
	}
	return true
}

// draftOf is the author of the draft event e is about (atrium.EventDraftOf),
// "" when it is about no draft.
func draftOf(e atrium.Event) string {
	if !bytes.Contains(e.Payload, []byte(`"`+atrium.EventDraftOf+`"`)) {
		return "" // most events: no need to decode
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(e.Payload, &p) != nil {
		return ""
	}
	var author string
	if json.Unmarshal(p[atrium.EventDraftOf], &author) != nil {
		return ""
	}
	return author
}

// Since returns up to limit events of the caller's workspace after position
// after in the log (an event's Seq) that the caller may see, in log order. Only members read it: events
// name private pages.
func (s *Service) Since(ctx context.Context, after int64, limit int) ([]atrium.Event, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return nil, err
	}
	raw, err := s.since(ctx, a, after, limit)
	if err != nil {
		return nil, err
	}
	out := raw[:0]
	for _, e := range raw {
		if Visible(a, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// since is Since before the filter: a window of the log, all kinds.
func (s *Service) since(ctx context.Context, a *atrium.Actor, after int64, limit int) ([]atrium.Event, error) {
	limit = min(max(limit, 1), 1000)
	var out []atrium.Event
	err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = tx.EventsAfter(ctx, a.Workspace.ID, after, limit)
		return err
	})
	return out, err
}

// Recent lists the caller's workspace's latest events the caller may see,
// newest first, with who made them: the home page's feed.
func (s *Service) Recent(ctx context.Context, limit int) ([]EventBy, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return nil, err
	}
	var raw []store.EventBy
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		raw, err = tx.RecentEvents(ctx, a.Workspace.ID, 0, min(max(limit, 1), 200))
		return err
	})
	var out []EventBy
	for _, e := range raw {
		if Visible(a, e.Event) {
			out = append(out, EventBy(e))
		}
	}
	return out, err
}

// EventBy is an event with who made it.
type EventBy struct {
	atrium.Event
	Actor     string               // handle; "" for the system
	ActorKind atrium.PrincipalKind // human or agent
}

// Latest is the log position (Seq) of the newest event of the caller's
// workspace, 0 for none: where a listener that wants only what comes next
// starts.
func (s *Service) Latest(ctx context.Context) (int64, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return 0, err
	}
	return s.db.LatestEventSeq(ctx, a.Workspace.ID)
}

// FollowRequest says where a follower starts and how it learns that it may
// no longer follow.
type FollowRequest struct {
	After int64 // the log position (Seq) of the last event the follower has; it gets those after it
	// Recheck, when set, tells whether the follower may still read the
	// workspace (its session or token may have ended, its role changed).
	// Follow calls it when an event that may change that comes, seen by the
	// follower or not; an error from it ends Follow with that error.
	Recheck func(context.Context) error
}

// Follow calls fn with every event of the caller's workspace the caller may
// see after r.After — first those already written, then each as it commits,
// from this process or another — until ctx ends, fn returns false, or
// r.Recheck fails. A follower too slow to keep up is told by an error,
// rather than silently missing events.
func (s *Service) Follow(ctx context.Context, r FollowRequest, fn func(atrium.Event) bool) error {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return err
	}
	// deliver passes e on if the caller may see it, and checks access again
	// after an event that may have changed it. false: stop.
	var stop error
	err = s.db.Follow(ctx, a.Workspace.ID, r.After, func(e atrium.Event) bool {
		if e.WorkspaceID == 0 {
			// Of no one workspace (a token that works in several, a
			// session of one): it may be the follower's own.
			if accessKinds[e.Kind] && r.Recheck != nil {
				stop = r.Recheck(ctx)
			}
			return stop == nil
		}
		if Visible(a, e) && !fn(e) {
			return false
		}
		if accessKinds[e.Kind] && r.Recheck != nil {
			stop = r.Recheck(ctx)
		}
		return stop == nil
	})
	if stop != nil {
		return stop
	}
	if errors.Is(err, store.ErrClosed) {
		return atrium.Errorf(atrium.EUnavailable, "the event stream ended; reconnect to catch up")
	}
	return err
}
