package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/atrium-hq/atrium"
)

// The event log. Every change writes an event in its own transaction; the
// log's order is seq, and whoever resumes from a position (a browser's
// Last-Event-ID, an MCP subscription, the mirror) reads seq > position.
// That only works if no event can appear below a position a reader has
// already passed, so seq is given in the order events become visible:
//
//   - SQLite has one writer at a time: an event takes MAX(seq)+1 as it is
//     written, and the transactions commit in that order.
//   - On PostgreSQL, transactions commit out of order, so an event is written
//     without a seq and a stamper gives it one after its commit: under one
//     advisory lock, every committed event without a seq gets the next ones,
//     in id order. A reader sees an event only once it is stamped, and a later
//     stamp only ever gives higher numbers.
//
// Live delivery reads the same log: a tailer per process reads seq > the
// last it published whenever it is told something may be there — a local
// commit, a stamp, a NOTIFY from another replica, or a poll, which is the
// fallback when notifications are lost — and fans the events out in order.
// A subscriber that falls behind is dropped and catches up from the log
// (Follow), so nothing is skipped and nothing is delivered twice.

const notifyChannel = "atrium_events"

// Emit records e in this transaction. ActorID and WorkspaceID come from the
// caller; ID, Seq and CreatedAt are set here (Seq on SQLite only: on
// PostgreSQL the stamper gives it after the commit). The event reaches
// subscribers only if the transaction commits.
func (tx *Tx) Emit(ctx context.Context, e atrium.Event) (atrium.Event, error) {
	if !tx.write {
		return e, fmt.Errorf("emit %s in a read transaction", e.Kind)
	}
	e.CreatedAt = tx.now
	var payload sql.NullString
	if len(e.Payload) > 0 {
		payload = sql.NullString{String: string(e.Payload), Valid: true}
	}
	var seq sql.NullInt64
	q := `INSERT INTO events (workspace_id, actor_id, kind, subject, payload, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id, seq`
	if tx.db.engine == SQLite {
		q = `INSERT INTO events (workspace_id, actor_id, kind, subject, payload, created_at, seq)
			VALUES (?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events)) RETURNING id, seq`
	}
	err := tx.queryRow(ctx, q, nullID(e.WorkspaceID), nullID(e.ActorID), e.Kind, e.Subject, payload, micros(e.CreatedAt)).Scan(&e.ID, &seq)
	if err != nil {
		return e, fmt.Errorf("insert event %s: %w", e.Kind, err)
	}
	e.Seq = seq.Int64
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

// committed is told of the events of a transaction that committed.
func (db *DB) committed(evs []atrium.Event) {
	if len(evs) == 0 {
		return
	}
	if db.engine == Postgres {
		db.kickStamper()
		return
	}
	if !db.broker.publishNext(evs) {
		db.wakeTailer() // another process wrote in between: read the log
	}
}

// notification is what a stamp tells other replicas over NOTIFY: a hint that
// the log has grown, never the truth.
type notification struct {
	Schema string `json:"s"`
	Origin string `json:"o"`
	Seq    int64  `json:"seq,omitempty"`
	Probe  string `json:"probe,omitempty"` // the listener's self-test
}

const eventCols = "id, workspace_id, actor_id, kind, subject, payload, created_at, COALESCE(seq, 0)"

func scanEvent(sc scanner) (atrium.Event, error) { return scanEventAnd(sc) }

// scanEventAnd scans eventCols and then the extra columns into extra.
func scanEventAnd(sc scanner, extra ...any) (atrium.Event, error) {
	var (
		e           atrium.Event
		ws, actor   sql.NullInt64
		payload     sql.NullString
		createdAtUs int64
	)
	if err := sc.Scan(append([]any{&e.ID, &ws, &actor, &e.Kind, &e.Subject, &payload, &createdAtUs, &e.Seq}, extra...)...); err != nil {
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
// 0) after position after in the log, in log order: the catch-up path of live
// updates. Only events in the log (stamped) are listed, so a reader that moves
// its position past the last one listed never skips one.
func (tx *Tx) EventsAfter(ctx context.Context, ws, after int64, limit int) ([]atrium.Event, error) {
	q := "SELECT " + eventCols + " FROM events WHERE seq > ?"
	args := []any{after}
	if ws != 0 {
		q += " AND workspace_id = ?"
		args = append(args, ws)
	}
	q += " ORDER BY seq LIMIT ?"
	args = append(args, limit)
	return queryAll(ctx, tx, scanEvent, q, args...)
}

// eventsFollowed is EventsAfter for a follower of workspace ws: with the
// events of no workspace too (a new principal, a token of any workspace
// revoked), which Follow passes on live as well, so that one committed just
// before the follower subscribed is not missed.
func (tx *Tx) eventsFollowed(ctx context.Context, ws, after int64, limit int) ([]atrium.Event, error) {
	if ws == 0 {
		return tx.EventsAfter(ctx, 0, after, limit)
	}
	return queryAll(ctx, tx, scanEvent, "SELECT "+eventCols+" FROM events WHERE seq > ? AND (workspace_id = ? OR workspace_id IS NULL) ORDER BY seq LIMIT ?", after, ws, limit)
}

// An EventBy is an event with who made it, for people to read.
type EventBy struct {
	atrium.Event
	Actor     string               // handle; "" for the system
	ActorKind atrium.PrincipalKind // human or agent
}

// RecentEvents lists up to limit events of workspace ws with an ID below
// before (0: the newest), newest first. The feed reads by ID, so that an
// event is in it as soon as its transaction committed, stamped or not.
func (tx *Tx) RecentEvents(ctx context.Context, ws, before int64, limit int) ([]EventBy, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	return queryAll(ctx, tx, scanEventBy, selectEventBy+" WHERE e.workspace_id = ? AND e.id < ? ORDER BY e.id DESC LIMIT ?", ws, before, limit)
}

// selectEventBy reads events (e) with who caused them, for scanEventBy.
const selectEventBy = "SELECT e.id, e.workspace_id, e.actor_id, e.kind, e.subject, e.payload, e.created_at, COALESCE(e.seq, 0), p.handle, p.kind" +
	" FROM events e LEFT JOIN principals p ON p.id = e.actor_id"

func scanEventBy(sc scanner) (e EventBy, err error) {
	var handle, kind sql.NullString
	e.Event, err = scanEventAnd(sc, &handle, &kind)
	e.Actor, e.ActorKind = handle.String, atrium.PrincipalKind(kind.String)
	return e, err
}

// RecentEventsOf reads the window of up to limit events of workspace ws
// below before (0: the newest), as RecentEvents would, but returns only
// those of kinds, newest first, with the window's oldest ID and its size:
// the events skipped are skipped in the database, never read out (a feed
// of conflicts looked through 2,000 page.created events of an import, row
// by row, on every home page).
func (tx *Tx) RecentEventsOf(ctx context.Context, ws, before int64, limit int, kinds []string) (events []EventBy, oldest int64, n int, err error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	var low sql.NullInt64
	if err := tx.queryRow(ctx, "SELECT MIN(id), COUNT(*) FROM (SELECT id FROM events WHERE workspace_id = ? AND id < ? ORDER BY id DESC LIMIT ?) w",
		ws, before, limit).Scan(&low, &n); err != nil || n == 0 || len(kinds) == 0 {
		return nil, low.Int64, n, err
	}
	args := []any{ws, low.Int64, before}
	for _, k := range kinds {
		args = append(args, k)
	}
	events, err = queryAll(ctx, tx, scanEventBy, selectEventBy+" WHERE e.workspace_id = ? AND e.id >= ? AND e.id < ? AND e.kind IN ("+
		placeholders(len(kinds))+") ORDER BY e.id DESC", args...)
	return events, low.Int64, n, err
}

// LatestEventSeq is the log position of workspace ws's newest event, 0 for
// none: where a reader that wants what happens from now on starts. An event
// already committed is counted even if it is not stamped yet (PostgreSQL):
// it is stamped first, so that the reader does not get it as news.
func (db *DB) LatestEventSeq(ctx context.Context, ws int64) (int64, error) {
	var (
		seq       int64
		unstamped bool
	)
	read := func() error {
		return db.r.QueryRowContext(ctx, db.rebind("SELECT COALESCE(MAX(seq), 0), EXISTS (SELECT 1 FROM events WHERE seq IS NULL AND workspace_id = ?) FROM events WHERE workspace_id = ?"), ws, ws).Scan(&seq, &unstamped)
	}
	if err := read(); err != nil || !unstamped {
		return seq, err
	}
	if _, err := db.stamp(ctx); err != nil {
		return 0, err
	}
	return seq, read()
}

func (db *DB) logHead(ctx context.Context) (int64, error) {
	var seq int64
	err := db.r.QueryRowContext(ctx, "SELECT COALESCE(MAX(seq), 0) FROM events").Scan(&seq)
	return seq, err
}

// Follow calls fn with every event of workspace ws (every workspace when ws
// is 0) after position after, in log order, each once, until fn returns
// false, ctx ends or the store closes. Events of no workspace (a new
// principal, a revoked token) are passed to a follower of any workspace,
// caught up and live: they may be its caller's. A follower that falls behind the live stream
// catches up from the log instead of losing events.
func (db *DB) Follow(ctx context.Context, ws, after int64, fn func(atrium.Event) bool) error {
	const window = 500
	for {
		sub := db.broker.subscribe(1024)
		for {
			var batch []atrium.Event
			err := db.View(ctx, func(tx *Tx) (err error) {
				batch, err = tx.eventsFollowed(ctx, ws, after, window)
				return err
			})
			if err != nil {
				sub.stop()
				return err
			}
			for _, e := range batch {
				if !fn(e) {
					sub.stop()
					return nil
				}
				after = e.Seq
			}
			if len(batch) < window {
				break
			}
		}
	live:
		for {
			select {
			case <-ctx.Done():
				sub.stop()
				return ctx.Err()
			case e, ok := <-sub.ch:
				if !ok {
					break live
				}
				if e.Seq <= after || ws != 0 && e.WorkspaceID != ws && e.WorkspaceID != 0 {
					continue
				}
				if !fn(e) {
					sub.stop()
					return nil
				}
				after = e.Seq
			}
		}
		if !sub.lagged() {
			return ErrClosed
		}
		// Dropped for falling behind: read what was missed from the log.
	}
}

// ErrClosed is what Follow returns when the store closes under it.
var ErrClosed = errors.New("store: closed")

// Subscribe returns a channel of every event committed from now on, by this
// process or any other, in log order, each once; stop ends the subscription
// and closes the channel. A reader that falls behind holds the events back
// (they are read again from the log), never loses them.
func (db *DB) Subscribe(buf int) (events <-chan atrium.Event, stop func()) {
	ch := make(chan atrium.Event, max(buf, 1))
	ctx, cancel := context.WithCancel(context.Background())
	head := db.nowHead(ctx)
	go func() {
		defer close(ch)
		err := db.Follow(ctx, 0, head, func(e atrium.Event) bool {
			select {
			case ch <- e:
				return true
			case <-ctx.Done():
				return false
			}
		})
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) && !db.closing.Load() {
			db.log.Warn("event subscription ended", "err", err)
		}
	}()
	return ch, cancel
}

// nowHead is the log's position now: on PostgreSQL, the events committed
// so far are stamped first, so that "from now on" leaves out every event
// committed before it, not only those already stamped.
func (db *DB) nowHead(ctx context.Context) int64 {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if db.engine == Postgres {
		for {
			n, err := db.stamp(ctx)
			if err != nil || n < stampBatch {
				break
			}
		}
	}
	head, err := db.logHead(ctx)
	if err != nil {
		return db.broker.head()
	}
	return head
}

// --- the tailer: live delivery from the log ---

// tail publishes the log's new events to this process's subscribers whenever
// it may have grown: woken by a local commit or stamp (wakeTailer), a
// notification from another replica, or every poll.
func (db *DB) tail(ctx context.Context, poll time.Duration) {
	var tick <-chan time.Time
	if poll > 0 {
		t := time.NewTicker(poll)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-db.wake:
		case <-tick:
		}
		for {
			var evs []atrium.Event
			err := db.View(ctx, func(tx *Tx) (err error) {
				evs, err = tx.EventsAfter(ctx, 0, db.broker.head(), 500)
				return err
			})
			if err != nil {
				if ctx.Err() == nil {
					db.log.Warn("read the event log", "err", err)
				}
				break
			}
			db.broker.publishRead(evs)
			if len(evs) < 500 {
				break
			}
		}
	}
}

// wakeTailer asks the tailer to read the log; wakes that come while it reads
// are one more read.
func (db *DB) wakeTailer() {
	select {
	case db.wake <- struct{}{}:
	default:
	}
}

// --- PostgreSQL: the stamper and the listener ---

// kickStamper asks the stamper to give committed events their place in the
// log; kicks that come while it works are one more round.
func (db *DB) kickStamper() {
	select {
	case db.kick <- struct{}{}:
	default:
	}
}

// stampEvery is how often a replica stamps events that no one stamped: a
// replica killed between a commit and its stamp leaves some.
const stampEvery = time.Second

// stamper stamps on each kick, and now and then in case some replica died
// before stamping its own.
func (db *DB) stamper(ctx context.Context) {
	t := time.NewTicker(stampEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-db.kick:
		case <-t.C:
			var waiting bool
			if err := db.r.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM events WHERE seq IS NULL)").Scan(&waiting); err != nil || !waiting {
				continue
			}
		}
		for {
			n, err := db.stamp(ctx)
			if err != nil {
				if ctx.Err() == nil {
					db.log.Warn("stamp events", "err", err)
				}
				break
			}
			if n < stampBatch {
				break
			}
		}
	}
}

const stampBatch = 5000

// stamp gives the committed events without a seq the next ones, in id order,
// and tells the other replicas and this one's tailer. Stamps are serialised by an advisory lock,
// which PostgreSQL releases only once the stamp is visible: the next stamp
// sees it and numbers after it.
func (db *DB) stamp(ctx context.Context) (int, error) {
	n := 0
	err := db.update(ctx, func(tx *Tx) error {
		if _, err := tx.exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('atrium.events.' || current_schema()))"); err != nil {
			return err
		}
		var head int64
		if err := tx.queryRow(ctx, "SELECT COALESCE(MAX(seq), 0) FROM events").Scan(&head); err != nil {
			return err
		}
		ids, err := queryAll(ctx, tx, func(sc scanner) (id int64, err error) { return id, sc.Scan(&id) },
			"SELECT id FROM events WHERE seq IS NULL ORDER BY id LIMIT ?", stampBatch)
		if err != nil || len(ids) == 0 {
			return err
		}
		seqs := make([]int64, len(ids))
		for i := range ids {
			seqs[i] = head + int64(i) + 1
		}
		if _, err := tx.exec(ctx, "UPDATE events SET seq = v.seq FROM unnest(?::bigint[], ?::bigint[]) AS v(id, seq) WHERE events.id = v.id", ids, seqs); err != nil {
			return err
		}
		note, _ := json.Marshal(notification{Schema: db.schema, Origin: db.instance, Seq: seqs[len(seqs)-1]})
		if _, err := tx.exec(ctx, "SELECT pg_notify(?, ?)", notifyChannel, string(note)); err != nil {
			return err
		}
		n = len(ids)
		return nil
	})
	if err == nil && n > 0 {
		db.wakeTailer()
	}
	return n, err
}

// listen wakes the tailer when another replica stamps events. It reconnects
// until ctx ends. A listener that cannot hear its own notification (LISTEN
// through a transaction-pooling PgBouncer hears nothing) says so, and the
// tailer polls often instead.
func (db *DB) listen(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := db.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		db.log.Warn("event listener lost its connection; reconnecting", "err", err, "in", backoff)
		db.setPoll(fastPoll)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// The tailer's polls on PostgreSQL: a slow safety net while notifications
// arrive, quick while they do not.
const (
	slowPoll = time.Second
	fastPoll = 250 * time.Millisecond
)

// listenTimeout bounds the listener's self-test.
const listenTimeout = 5 * time.Second

func (db *DB) listenOnce(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, db.listenDSN)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	// The self-test: a notification sent through the pool must come back.
	probe := db.instance + "." + time.Now().Format(time.RFC3339Nano)
	note, _ := json.Marshal(notification{Schema: db.schema, Origin: db.instance, Probe: probe})
	if _, err := db.w.ExecContext(ctx, "SELECT pg_notify($1, $2)", notifyChannel, string(note)); err != nil {
		return err
	}
	heard := false
	deadline := time.Now().Add(listenTimeout)
	for {
		wait := ctx
		var cancel context.CancelFunc = func() {}
		if !heard {
			wait, cancel = context.WithDeadline(ctx, deadline)
		}
		n, err := conn.WaitForNotification(wait)
		cancel()
		if err != nil {
			if !heard && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				db.log.Warn("the event listener hears no notifications (LISTEN through a transaction-pooling PgBouncer does not work: set ATRIUM_DB_LISTEN to a direct connection); polling the event log every 250 ms instead")
				db.setPoll(fastPoll)
				<-ctx.Done() // keep polling fast; try again on the next start
				return ctx.Err()
			}
			return err
		}
		var got notification
		if json.Unmarshal([]byte(n.Payload), &got) != nil || got.Schema != db.schema {
			continue
		}
		if got.Probe != "" {
			if got.Probe == probe && !heard {
				heard = true
				db.setPoll(slowPoll)
				db.wakeTailer() // what was stamped before the listener listened
			}
			continue
		}
		if got.Origin != db.instance {
			db.wakeTailer()
		}
	}
}

// setPoll changes how often the tailer polls on PostgreSQL.
func (db *DB) setPoll(every time.Duration) {
	select {
	case db.pollEvery <- every:
	default:
	}
}

// tailPostgres is tail with a poll interval the listener sets.
func (db *DB) tailPostgres(ctx context.Context) {
	every := fastPoll // until the listener has proved itself
	for {
		tctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func(every time.Duration) {
			defer close(done)
			db.tail(tctx, every)
		}(every) // its own copy: the loop sets the next one

		select {
		case <-ctx.Done():
			cancel()
			<-done
			return
		case every = <-db.pollEvery:
			cancel()
			<-done
		}
	}
}

// --- the broker: fan-out to this process's subscribers ---

// broker fans the log's events out to in-process subscribers, in log order.
type broker struct {
	log    *slog.Logger
	mu     sync.Mutex
	subs   map[*subscription]struct{}
	last   int64 // the seq of the last event published
	closed bool
}

type subscription struct {
	b      *broker
	ch     chan atrium.Event
	behind bool // dropped for falling behind
}

func newBroker(log *slog.Logger) *broker {
	return &broker{log: log, subs: map[*subscription]struct{}{}}
}

func (b *broker) subscribe(buf int) *subscription {
	s := &subscription{b: b, ch: make(chan atrium.Event, max(buf, 1))}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(s.ch)
		return s
	}
	b.subs[s] = struct{}{}
	return s
}

// stop ends s; its channel is closed.
func (s *subscription) stop() {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.dropLocked()
}

func (s *subscription) dropLocked() {
	if _, ok := s.b.subs[s]; ok {
		delete(s.b.subs, s)
		close(s.ch)
	}
}

// lagged reports whether s was dropped for falling behind.
func (s *subscription) lagged() bool {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.behind
}

func (b *broker) head() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

func (b *broker) startAt(seq int64) {
	b.mu.Lock()
	b.last = max(b.last, seq)
	b.mu.Unlock()
}

// publishNext publishes a local commit's events if they follow the last
// published at once (SQLite: no other process wrote in between), and reports
// whether it did; those already published by the tailer are passed over.
func (b *broker) publishNext(evs []atrium.Event) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := b.last + 1
	for _, e := range evs {
		switch {
		case e.Seq < next:
			continue // the tailer read it first
		case e.Seq != next:
			return false
		}
		b.deliverLocked(e)
		next++
	}
	b.last = next - 1
	return true
}

// publishRead publishes events read from the log after the last published.
func (b *broker) publishRead(evs []atrium.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range evs {
		if e.Seq <= b.last {
			continue
		}
		if e.Seq != b.last+1 {
			b.log.Error("the event log has a gap; delivering on", "after", b.last, "next", e.Seq)
		}
		b.deliverLocked(e)
		b.last = e.Seq
	}
}

func (b *broker) deliverLocked(e atrium.Event) {
	for s := range b.subs {
		select {
		case s.ch <- e:
		default:
			// Never wait for a slow reader: drop it, and let it catch up
			// from the log (Follow).
			s.behind = true
			s.dropLocked()
		}
	}
}

func (b *broker) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		s.dropLocked()
	}
}
