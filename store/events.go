package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium"
)

const notifyChannel = "atrium_events"

// Emit records e in this transaction. ActorID and WorkspaceID come from the
// caller; ID and CreatedAt are set here. The event reaches subscribers only if
// the transaction commits.
func (tx *Tx) Emit(ctx context.Context, e atrium.Event) (atrium.Event, error) {
	if !tx.write {
		return e, fmt.Errorf("emit %s in a read transaction", e.Kind)
	}
	e.CreatedAt = tx.now
	var payload sql.NullString
	if len(e.Payload) > 0 {
		payload = sql.NullString{String: string(e.Payload), Valid: true}
	}
	err := tx.queryRow(ctx, `INSERT INTO events (workspace_id, actor_id, kind, subject, payload, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`,
		nullID(e.WorkspaceID), nullID(e.ActorID), e.Kind, e.Subject, payload, micros(e.CreatedAt)).Scan(&e.ID)
	if err != nil {
		return e, fmt.Errorf("insert event %s: %w", e.Kind, err)
	}
	if tx.db.engine == Postgres {
		note, _ := json.Marshal(notification{Schema: tx.db.schema, Origin: tx.db.instance, ID: e.ID})
		if _, err := tx.exec(ctx, "SELECT pg_notify(?, ?)", notifyChannel, string(note)); err != nil {
			return e, fmt.Errorf("notify event %s: %w", e.Kind, err)
		}
	}
	tx.db.broker.pending(e.ID)
	tx.events = append(tx.events, e)
	return e, nil
}

// EmitJSON is Emit with a payload marshalled from v.
func (tx *Tx) EmitJSON(ctx context.Context, ws, actor int64, kind, subject string, v any) error {
	var raw json.RawMessage
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("event payload %s: %w", kind, err)
		}
		raw = b
	}
	_, err := tx.Emit(ctx, atrium.Event{WorkspaceID: ws, ActorID: actor, Kind: kind, Subject: subject, Payload: raw})
	return err
}

func nullID(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

type notification struct {
	Schema string `json:"s"`
	Origin string `json:"o"`
	ID     int64  `json:"id"`
}

const eventCols = "id, workspace_id, actor_id, kind, subject, payload, created_at"

func scanEvent(sc scanner) (atrium.Event, error) { return scanEventAnd(sc) }

// scanEventAnd scans eventCols and then the extra columns into extra.
func scanEventAnd(sc scanner, extra ...any) (atrium.Event, error) {
	var (
		e           atrium.Event
		ws, actor   sql.NullInt64
		payload     sql.NullString
		createdAtUs int64
	)
	if err := sc.Scan(append([]any{&e.ID, &ws, &actor, &e.Kind, &e.Subject, &payload, &createdAtUs}, extra...)...); err != nil {
		return e, err
	}
	e.WorkspaceID, e.ActorID = ws.Int64, actor.Int64
	if payload.Valid {
		e.Payload = json.RawMessage(payload.String)
	}
	e.CreatedAt = fromMicros(createdAtUs)
	return e, nil
}

// EventsAfter lists up to limit events of workspace ws (all workspaces when ws is
// 0) with an ID above after, oldest first: the catch-up path of live updates and
// the activity feed.
func (tx *Tx) EventsAfter(ctx context.Context, ws, after int64, limit int) ([]atrium.Event, error) {
	q := "SELECT " + eventCols + " FROM events WHERE id > ?"
	args := []any{after}
	if ws != 0 {
		q += " AND workspace_id = ?"
		args = append(args, ws)
	}
	q += " ORDER BY id LIMIT ?"
	args = append(args, limit)
	return queryAll(ctx, tx, scanEvent, q, args...)
}

func (db *DB) maxEventID(ctx context.Context) (int64, error) {
	var id int64
	err := db.r.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM events").Scan(&id)
	return id, err
}

// Subscribe returns a channel of every event committed from now on, by this
// process or (through polling on SQLite, LISTEN/NOTIFY on PostgreSQL) by any
// other, and a function that ends the subscription. Delivery is best effort:
// a subscriber that falls more than buf events behind loses the excess, and
// can catch up from the event log with EventsAfter.
// An EventBy is an event with who made it, for people to read.
type EventBy struct {
	atrium.Event
	Actor     string               // handle; "" for the system
	ActorKind atrium.PrincipalKind // human or agent
}

// RecentEvents lists up to limit events of workspace ws with an ID below
// before (0: the newest), newest first.
func (tx *Tx) RecentEvents(ctx context.Context, ws, before int64, limit int) ([]EventBy, error) {
	cols := "e.id, e.workspace_id, e.actor_id, e.kind, e.subject, e.payload, e.created_at"
	if before <= 0 {
		before = math.MaxInt64
	}
	return queryAll(ctx, tx, func(sc scanner) (e EventBy, err error) {
		var handle, kind sql.NullString
		e.Event, err = scanEventAnd(sc, &handle, &kind)
		e.Actor, e.ActorKind = handle.String, atrium.PrincipalKind(kind.String)
		return e, err
	}, "SELECT "+cols+", p.handle, p.kind FROM events e LEFT JOIN principals p ON p.id = e.actor_id WHERE e.workspace_id = ? AND e.id < ? ORDER BY e.id DESC LIMIT ?", ws, before, limit)
}

// LatestEventID is the ID of workspace ws's newest event, 0 for none.
func (tx *Tx) LatestEventID(ctx context.Context, ws int64) (int64, error) {
	var id int64
	err := tx.queryRow(ctx, "SELECT COALESCE(MAX(id), 0) FROM events WHERE workspace_id = ?", ws).Scan(&id)
	return id, err
}

func (db *DB) Subscribe(buf int) (<-chan atrium.Event, func()) {
	return db.broker.subscribe(buf)
}

// poll publishes events that other processes committed to the same SQLite file.
func (db *DB) poll(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			var evs []atrium.Event
			err := db.View(ctx, func(tx *Tx) (err error) {
				evs, err = tx.EventsAfter(ctx, 0, db.broker.lastSeen(), 500)
				return err
			})
			if err != nil {
				if ctx.Err() == nil {
					db.log.Warn("poll events", "err", err)
				}
				break
			}
			db.broker.publishPolled(evs)
			if len(evs) < 500 {
				break
			}
		}
	}
}

// listen carries events committed by other PostgreSQL clients (other replicas,
// the CLI) to this process's subscribers. It reconnects until ctx ends.
func (db *DB) listen(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := db.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		db.log.Warn("event listener lost its connection; reconnecting", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

func (db *DB) listenOnce(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, db.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var note notification
		if json.Unmarshal([]byte(n.Payload), &note) != nil || note.Schema != db.schema || note.Origin == db.instance {
			continue
		}
		var e atrium.Event
		err = db.View(ctx, func(tx *Tx) error {
			var err error
			e, err = scanEvent(tx.queryRow(ctx, "SELECT "+eventCols+" FROM events WHERE id = ?", note.ID))
			return err
		})
		if err != nil {
			db.log.Warn("load notified event", "id", note.ID, "err", err)
			continue
		}
		db.broker.publish([]atrium.Event{e})
	}
}

// broker fans events out to in-process subscribers.
type broker struct {
	log   *slog.Logger
	mu    sync.Mutex
	subs  map[*subscriber]struct{}
	last  int64              // SQLite polling: highest ID seen
	local map[int64]struct{} // SQLite polling: IDs this process wrote, so polling skips them
	// tracking is set when a poller runs; without one, local would only grow.
	tracking bool
	closed   bool
}

type subscriber struct {
	ch      chan atrium.Event
	dropped int
}

func newBroker(log *slog.Logger) *broker {
	return &broker{log: log, subs: map[*subscriber]struct{}{}, local: map[int64]struct{}{}}
}

func (b *broker) subscribe(buf int) (<-chan atrium.Event, func()) {
	if buf <= 0 {
		buf = 256
	}
	s := &subscriber{ch: make(chan atrium.Event, buf)}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(s.ch)
		return s.ch, func() {}
	}
	b.subs[s] = struct{}{}
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if _, ok := b.subs[s]; ok {
				delete(b.subs, s)
				close(s.ch)
			}
		})
	}
}

// trackFrom starts the bookkeeping that polling needs, from event ID id on.
func (b *broker) trackFrom(id int64) {
	b.mu.Lock()
	b.last = id
	b.tracking = true
	b.mu.Unlock()
}

func (b *broker) lastSeen() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// pending marks an ID written by this process before its commit, so that a poll
// racing the commit does not publish it a second time.
func (b *broker) pending(id int64) {
	b.mu.Lock()
	if b.tracking {
		b.local[id] = struct{}{}
	}
	b.mu.Unlock()
}

// forget drops the marks of a transaction that rolled back: SQLite may hand the
// same IDs out again.
func (b *broker) forget(evs []atrium.Event) {
	b.mu.Lock()
	for _, e := range evs {
		delete(b.local, e.ID)
	}
	b.mu.Unlock()
}

func (b *broker) publishLocal(evs []atrium.Event) {
	if len(evs) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range evs {
		if e.ID <= b.last {
			delete(b.local, e.ID) // the poller got here first and skipped it
		}
		b.deliverLocked(e)
	}
}

func (b *broker) publishPolled(evs []atrium.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range evs {
		if e.ID > b.last {
			b.last = e.ID
		}
		if _, mine := b.local[e.ID]; mine {
			delete(b.local, e.ID)
			continue
		}
		b.deliverLocked(e)
	}
}

func (b *broker) publish(evs []atrium.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range evs {
		b.deliverLocked(e)
	}
}

func (b *broker) deliverLocked(e atrium.Event) {
	for s := range b.subs {
		select {
		case s.ch <- e:
		default:
			s.dropped++
			if s.dropped == 1 || s.dropped%1000 == 0 {
				b.log.Warn("event subscriber is behind; events dropped", "dropped", s.dropped)
			}
		}
	}
}

func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		close(s.ch)
		delete(b.subs, s)
	}
}
