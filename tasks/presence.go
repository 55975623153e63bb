package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/atrium-hq/atrium/store"
)

// Presence (001's sessions resource): who is connected now, over what, since
// when. Transports report activity; a session not seen for PresenceWindow is
// gone (its process may have been killed without a goodbye).

// PresenceWindow is how long a silent session still counts as connected.
const PresenceWindow = 2 * time.Minute

// EventJoined is a session seen for the first time, EventLeft one that
// closed or was not seen for PresenceWindow; their subject is @handle.
const (
	EventJoined = "presence.joined"
	EventLeft   = "presence.left"
)

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

// Left records that the caller's session key closed: it is no longer
// listed, and subscribers hear that someone left.
func (s *Service) Left(ctx context.Context, key, transport string) error {
	a, err := reader(ctx)
	if err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := tx.EndPresence(ctx, a.Workspace.ID, key)
		if err != nil || p == 0 {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventLeft, "@"+a.Principal.Handle, map[string]string{"transport": transport})
	})
}

// ExpirePresence ends the sessions of every workspace not seen for
// PresenceWindow — their process went away without a goodbye — so that
// subscribers hear they left. It acts for the server, not for a caller:
// transports run it now and then. Several processes on one store may run
// it at once; each departure is told once.
func (s *Service) ExpirePresence(ctx context.Context) (int, error) {
	var stale bool
	if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		stale, err = tx.StalePresence(ctx, tx.Now().Add(-PresenceWindow))
		return err
	}); err != nil || !stale {
		return 0, err
	}
	var n int
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		gone, err := tx.ExpirePresence(ctx, tx.Now().Add(-PresenceWindow))
		if err != nil {
			return err
		}
		n = len(gone)
		for _, d := range gone {
			if err := tx.EmitJSON(ctx, d.Workspace, d.Principal, EventLeft, "@"+d.Handle, map[string]string{"reason": "not seen for " + PresenceWindow.String()}); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// maxSessions bounds the sessions listed.
const maxSessions = 500

// SessionList is who is connected, and whether more are than it lists.
type SessionList struct {
	Sessions []Presence `json:"sessions"`
	Note     string     `json:"note,omitempty"`
}

// Sessions lists who is connected to the caller's workspace now, longest
// connected first.
func (s *Service) Sessions(ctx context.Context) (SessionList, error) {
	a, err := reader(ctx)
	if err != nil {
		return SessionList{}, err
	}
	var out []store.Presence
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = tx.Present(ctx, a.Workspace.ID, tx.Now().Add(-PresenceWindow), maxSessions+1)
		return err
	})
	res := SessionList{Sessions: make([]Presence, len(out))}
	for i, p := range out {
		res.Sessions[i] = Presence(p)
	}
	if len(out) > maxSessions {
		res.Sessions = res.Sessions[:maxSessions]
		res.Note = fmt.Sprintf("only the %d longest connected sessions are listed", maxSessions)
	}
	return res, err
}
