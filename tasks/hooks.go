package tasks

import (
	"context"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// A HookResult says what a tracker's webhook delivery did: which
// workspaces' mirrors it woke, or that it was a delivery seen before.
type HookResult struct {
	Workspaces []string `json:"workspaces"`
	Duplicate  bool     `json:"duplicate,omitempty"`
}

// TrackerHook takes a webhook delivery of a tracker of kind about repo,
// whose sender the caller has verified (its signature): each workspace that
// mirrors repo is woken to sync now, once per delivery ID however often it
// is delivered. The delivery is a hint, not the change itself: the sync
// reads the tracker, so a delivery lost, forged or out of order changes
// nothing by itself, and the poll still runs for servers the tracker cannot
// reach.
//
// issue, when not 0, is the issue the delivery is about: its comments are
// read whole at the sync, which is how a comment deleted there is seen.
func (s *Service) TrackerHook(ctx context.Context, kind, repo, delivery, event string, issue int) (HookResult, error) {
	var out HookResult
	if delivery == "" || len(delivery) > 100 {
		return out, atrium.Errorf(atrium.EInvalid, "the delivery has no ID (X-GitHub-Delivery)")
	}
	var woken []int64
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		links, err := tx.TrackerLinksOfRepo(ctx, kind, repo)
		if err != nil {
			return err
		}
		for _, l := range links {
			fresh, err := tx.RecordHookDelivery(ctx, delivery, l.WorkspaceID, event)
			if err != nil {
				return err
			}
			if !fresh {
				out.Duplicate = true
				continue
			}
			ws, err := tx.WorkspaceByID(ctx, l.WorkspaceID)
			if err != nil {
				return err
			}
			out.Workspaces = append(out.Workspaces, ws.Name)
			woken = append(woken, l.WorkspaceID)
		}
		return nil
	})
	if err != nil {
		return HookResult{}, err
	}
	for _, ws := range woken {
		if issue > 0 {
			s.recheckMu.Lock()
			if s.recheck[ws] == nil {
				s.recheck[ws] = map[int]bool{}
			}
			s.recheck[ws][issue] = true
			s.recheckMu.Unlock()
		}
		s.wake(ws)
	}
	return out, nil
}

// wake asks the mirror to sync workspace ws now.
func (s *Service) wake(ws int64) {
	select {
	case s.hooked <- ws:
	default: // a sync is already due
	}
}

// TrackerWake delivers the workspaces a webhook asked to sync now.
func (s *Service) TrackerWake() <-chan int64 { return s.hooked }

// takeRecheck hands a sync the issues of workspace ws that deliveries named
// since the last one, for their comments to be read whole.
func (s *Service) takeRecheck(ws int64) map[int]bool {
	s.recheckMu.Lock()
	defer s.recheckMu.Unlock()
	out := s.recheck[ws]
	delete(s.recheck, ws)
	if out == nil {
		out = map[int]bool{}
	}
	return out
}

// TrackerChanges delivers, until ctx ends, the workspace of every task event
// committed from now on by any process or replica: a server's mirror pushes
// that workspace's outbox at once rather than at its next look. It is a hint
// (coalesced: a workspace already waiting is not sent twice); the outbox is
// the truth.
func (s *Service) TrackerChanges(ctx context.Context) <-chan int64 {
	evs, stop := s.db.Subscribe(256)
	out := make(chan int64, 64)
	go func() {
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-evs:
				if !ok {
					return
				}
				if strings.HasPrefix(e.Kind, "task.") {
					select {
					case out <- e.WorkspaceID:
					default:
					}
				}
			}
		}
	}()
	return out
}
