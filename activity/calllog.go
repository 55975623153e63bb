package activity

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// A CallLog writes the audit records of gateway calls in the background,
// several to a transaction.
//
// Why not one transaction per call, as every other event is written: the
// call it records is not a change of the store (it happened on another
// server, which no transaction of Atrium's can undo), so there is nothing
// for its record to be atomic with; and on SQLite each commit waits for an
// fsync, which tripled a proxied call's time. The record is written right
// after the answer instead, and a burst of calls shares one commit. Close
// writes whatever is queued: a clean shutdown loses nothing; a crash loses
// at most the records of the last few milliseconds' calls.
type CallLog struct {
	s     *Service
	log   *slog.Logger
	mu    sync.RWMutex // senders hold it shared; Close, alone
	shut  bool
	queue chan queuedCall
	done  chan struct{}
}

type queuedCall struct {
	ws, principal int64
	call          UpstreamCall
}

const (
	callQueue = 1024 // calls waiting for their record; more wait for room
	callBatch = 256  // records to a transaction, at most
)

// NewCallLog starts the writer of gateway call records; Close ends it.
func (s *Service) NewCallLog(log *slog.Logger) *CallLog {
	if log == nil {
		log = slog.Default()
	}
	l := &CallLog{s: s, log: log, queue: make(chan queuedCall, callQueue), done: make(chan struct{})}
	go l.run()
	return l
}

// Record queues c for the caller's workspace's event log. After Close it
// writes it at once.
func (l *CallLog) Record(ctx context.Context, c UpstreamCall) error {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return err
	}
	l.mu.RLock()
	if l.shut {
		l.mu.RUnlock()
		return l.s.RecordUpstreamCall(ctx, c)
	}
	l.queue <- queuedCall{ws: a.Workspace.ID, principal: a.Principal.ID, call: c}
	l.mu.RUnlock()
	return nil
}

// Close writes the records still queued and stops the writer.
func (l *CallLog) Close() {
	l.mu.Lock()
	if !l.shut {
		l.shut = true
		close(l.queue)
	}
	l.mu.Unlock()
	<-l.done
}

func (l *CallLog) run() {
	defer close(l.done)
	for q := range l.queue {
		batch := []queuedCall{q}
	fill:
		for len(batch) < callBatch {
			select {
			case q, ok := <-l.queue:
				if !ok {
					break fill
				}
				batch = append(batch, q)
			default:
				break fill
			}
		}
		l.write(batch)
	}
}

func (l *CallLog) write(batch []queuedCall) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := l.s.db.Update(ctx, func(tx *store.Tx) error {
		for _, q := range batch {
			if err := tx.EmitJSON(ctx, q.ws, q.principal, EventGatewayCall, q.call.Tool, q.call); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		l.log.Error("gateway: audit records not written", "records", len(batch), "first", batch[0].call.Tool, "err", err)
	}
}
