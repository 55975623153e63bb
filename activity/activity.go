// Package activity is the service of a workspace's event log as people see
// it: what happened since a point (the catch-up of live updates, the home
// page's feed) and what happens next (live). Events are written by the other
// services, each in the transaction of its change; this one only reads.
package activity

import (
	"context"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// Service reads the event log.
type Service struct{ db *store.DB }

// New returns the activity service over db.
func New(db *store.DB) *Service { return &Service{db: db} }

// Since returns up to limit events of the caller's workspace after event
// after, oldest first. Only members read it: events name private pages.
func (s *Service) Since(ctx context.Context, after int64, limit int) ([]atrium.Event, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), 1000)
	var out []atrium.Event
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = tx.EventsAfter(ctx, a.Workspace.ID, after, limit)
		return err
	})
	return out, err
}

// Recent lists the caller's workspace's latest events, newest first, with
// who made them: the home page's feed.
func (s *Service) Recent(ctx context.Context, limit int) ([]store.EventBy, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return nil, err
	}
	var out []store.EventBy
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = tx.RecentEvents(ctx, a.Workspace.ID, min(max(limit, 1), 200))
		return err
	})
	return out, err
}

// Latest is the ID of the newest event of the caller's workspace, 0 for
// none: where a listener that wants only what comes next starts.
func (s *Service) Latest(ctx context.Context) (int64, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return 0, err
	}
	var id int64
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		id, err = tx.LatestEventID(ctx, a.Workspace.ID)
		return err
	})
	return id, err
}

// Follow calls fn with every event of the caller's workspace after event
// after — first those already written, then each as it commits, from this
// process or another — until ctx ends or fn returns false. A follower too
// slow to keep up is told by an error, rather than silently missing events.
func (s *Service) Follow(ctx context.Context, after int64, fn func(atrium.Event) bool) error {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return err
	}
	// Subscribe first, then catch up: an event committed in between is in
	// both, and the IDs tell.
	live, stop := s.db.Subscribe(256)
	defer stop()
	for {
		batch, err := s.Since(ctx, after, 500)
		if err != nil {
			return err
		}
		for _, e := range batch {
			if !fn(e) {
				return nil
			}
			after = e.ID
		}
		if len(batch) < 500 {
			break
		}
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-live:
			if !ok {
				return atrium.Errorf(atrium.EUnavailable, "the event stream ended; reconnect to catch up")
			}
			if e.WorkspaceID != a.Workspace.ID || e.ID <= after {
				continue
			}
			if !fn(e) {
				return nil
			}
			after = e.ID
		}
	}
}
