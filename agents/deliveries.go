package agents

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// A Delivery is an inbox item on its way to an agent (see dispatch.go).
type Delivery struct {
	ID        int64
	Agent     string
	Task      int64
	TaskTitle string
	Kind      atrium.InboxKind
	// What: who did what ("@duc answered your question"), and the comment.
	What, Text string
	State      string
	// Session is the session it is for or went into, Generation its number.
	Session    string
	Generation int64
	Channel    string
	Attempts   int
	NextAt     time.Time
	Reason     string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	// DeliveredAt and AcknowledgedAt are zero until then.
	DeliveredAt, AcknowledgedAt time.Time
	History                     []DeliveryStep
}

// A DeliveryStep is one change of a delivery's state.
type DeliveryStep struct {
	At    time.Time
	State string
	Note  string
}

func deliveryOf(r store.DeliveryRow) Delivery {
	return Delivery{ID: r.ID, Agent: r.Agent, Task: r.TaskNumber, TaskTitle: r.TaskTitle, Kind: r.Kind, What: itemLine(r), Text: r.CommentBody,
		State: r.State, Session: r.SessionUID, Generation: r.SessionID, Channel: r.Channel, Attempts: r.Attempts, NextAt: r.NextAt, Reason: r.Reason,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, DeliveredAt: r.DeliveredAt, AcknowledgedAt: r.AckedAt}
}

// DeliveryStates lists the states, in their order.
var DeliveryStates = []string{store.DeliveryPending, store.DeliveryWaking, store.DeliveryDelivered, store.DeliveryAcknowledged, store.DeliveryFailed, store.DeliveryCancelled}

// DeliveryQuery narrows a listing of deliveries.
type DeliveryQuery struct {
	Agent  string // "": every agent
	State  string // "": every state
	Task   int64
	Before int64 // a delivery id: only older ones
	Limit  int   // 1 to 500 (100)
}

// Deliveries lists the workspace's deliveries, newest first. Admins only:
// they show what was said to every agent.
func (s *Service) Deliveries(ctx context.Context, q DeliveryQuery) ([]Delivery, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return nil, err
	}
	if q.State != "" && !slices.Contains(DeliveryStates, q.State) {
		return nil, atrium.Errorf(atrium.EInvalid, "no delivery state %q (states: %s)", q.State, strings.Join(DeliveryStates, ", "))
	}
	if q.Limit == 0 {
		q.Limit = 100
	}
	if q.Limit < 1 || q.Limit > 500 {
		return nil, atrium.Errorf(atrium.EInvalid, "limit is 1 to 500, not %d", q.Limit)
	}
	var rows []store.DeliveryRow
	err = s.db.View(ctx, func(tx *store.Tx) error {
		f := store.DeliveryFilter{State: q.State, Before: q.Before, Limit: q.Limit}
		if q.Agent != "" {
			ag, err := tx.AgentByHandle(ctx, a.Workspace.ID, strings.TrimPrefix(q.Agent, "@"))
			if err != nil {
				return err
			}
			f.Principal = ag.PrincipalID
		}
		if q.Task != 0 {
			t, err := tx.TaskByNumber(ctx, a.Workspace.ID, q.Task)
			if err != nil {
				return err
			}
			f.Task = t.ID
		}
		var err error
		rows, err = tx.Deliveries(ctx, a.Workspace.ID, f)
		return err
	})
	out := make([]Delivery, len(rows))
	for i, r := range rows {
		out[i] = deliveryOf(r)
	}
	return out, err
}

// Delivery is one delivery with its history. Admins only.
func (s *Service) Delivery(ctx context.Context, id int64) (Delivery, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return Delivery{}, err
	}
	var out Delivery
	err = s.db.View(ctx, func(tx *store.Tx) error {
		r, err := tx.DeliveryByID(ctx, a.Workspace.ID, id)
		if err != nil {
			return err
		}
		out = deliveryOf(r)
		log, err := tx.DeliveryLog(ctx, id)
		for _, e := range log {
			out.History = append(out.History, DeliveryStep(e))
		}
		return err
	})
	return out, err
}

// RetryDelivery makes a failed, or delivered but never read, delivery
// pending again, due now. Admins only.
func (s *Service) RetryDelivery(ctx context.Context, id int64) (Delivery, error) {
	return s.moveDelivery(ctx, id, store.DeliveryPending, []string{store.DeliveryFailed, store.DeliveryDelivered, store.DeliveryCancelled}, "retried by @%s")
}

// CancelDelivery stops a delivery that has not been read: it wakes no one.
// Admins only.
func (s *Service) CancelDelivery(ctx context.Context, id int64) (Delivery, error) {
	return s.moveDelivery(ctx, id, store.DeliveryCancelled, []string{store.DeliveryPending, store.DeliveryFailed, store.DeliveryDelivered, store.DeliveryWaking}, "cancelled by @%s")
}

func (s *Service) moveDelivery(ctx context.Context, id int64, to string, from []string, note string) (Delivery, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return Delivery{}, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.DeliveryByID(ctx, a.Workspace.ID, id)
		if err != nil {
			return err
		}
		ok, err := tx.SetDelivery(ctx, a.Workspace.ID, id, to, from, strings.ReplaceAll(note, "%s", a.Principal.Handle))
		if err != nil {
			return err
		}
		if !ok {
			return atrium.Errorf(atrium.EConflict, "delivery %d is %s: only a delivery that is %s can be %s", id, cur.State, strings.Join(from, ", "), map[string]string{store.DeliveryPending: "retried", store.DeliveryCancelled: "cancelled"}[to])
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventDelivery, "@"+cur.Agent, map[string]any{"deliveries": []int64{id}, "state": to})
	})
	if err != nil {
		return Delivery{}, err
	}
	s.nudge()
	return s.Delivery(ctx, id)
}

// Pause pauses an agent (its deliveries queue; none wakes it) or resumes
// it. Admins only.
func (s *Service) Pause(ctx context.Context, handle string, paused bool) (Agent, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return Agent{}, err
	}
	handle = strings.TrimPrefix(handle, "@")
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		row, err := tx.AgentByHandle(ctx, a.Workspace.ID, handle)
		if err != nil {
			return err
		}
		if err := tx.SetAgentPaused(ctx, a.Workspace.ID, row.PrincipalID, paused); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventAgentSet, "@"+handle, map[string]any{"agent": handle, "paused": paused})
	})
	if err != nil {
		return Agent{}, err
	}
	s.nudge()
	return s.Agent(ctx, handle)
}

// nudge has the dispatcher look for due deliveries now.
func (s *Service) nudge() {
	s.mu.Lock()
	d := s.disp
	s.mu.Unlock()
	if d != nil {
		d.nudge()
	}
}
