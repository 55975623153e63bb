package tasks

import (
	"context"
	"time"

	"github.com/atrium-hq/atrium/store"
)

// Presence (001's sessions resource): who is connected now, over what, since
// when. Transports report activity; a session not seen for PresenceWindow is
// gone (its process may have been killed without a goodbye).

// PresenceWindow is how long a silent session still counts as connected.
const PresenceWindow = 2 * time.Minute

// EventJoined is a session seen for the first time; its subject is @handle.
const EventJoined = "presence.joined"

// Seen records that the caller's session key (over transport, from client)
// is active. It writes only what changed; the caller throttles.
func (s *Service) Seen(ctx context.Context, key, transport, client string) error {
	a, err := reader(ctx)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		fresh, err := tx.SeePresence(ctx, a.Workspace.ID, a.Principal.ID, key, transport, client)
		if err != nil || !fresh {
			return err
		}
		if err := tx.ForgetPresence(ctx, a.Workspace.ID, tx.Now().Add(-24*time.Hour)); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventJoined, "@"+a.Principal.Handle, map[string]string{"transport": transport, "client": client})
	})
}

// Sessions lists who is connected to the caller's workspace now.
func (s *Service) Sessions(ctx context.Context) ([]store.Presence, error) {
	a, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	var out []store.Presence
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = tx.Present(ctx, a.Workspace.ID, tx.Now().Add(-PresenceWindow))
		return err
	})
	if out == nil {
		out = []store.Presence{}
	}
	return out, err
}
