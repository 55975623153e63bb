package atrium

import (
	"encoding/json"
	"time"
)

// An Event records one change. It is written in the same transaction as the
// change, then fanned out: the activity feed, live updates and MCP resource
// notifications all read it.
type Event struct {
	ID int64 `json:"id"`
	// Seq is the event's place in the log: what a reader resumes after
	// (a browser's Last-Event-ID). It follows the order events became
	// visible in, which IDs need not (see store/events.go).
	Seq         int64           `json:"seq"`
	WorkspaceID int64           `json:"-"`
	ActorID     int64           `json:"-"`       // 0 for the system
	Kind        string          `json:"kind"`    // e.g. "page.updated"
	Subject     string          `json:"subject"` // what changed, e.g. a page path
	Payload     json.RawMessage `json:"payload,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
}

// EventDraftOf is the payload field that marks an event about a draft (a
// review comment or review not yet submitted) with the handle of the draft's
// author: like the draft, the event is seen only by them and by admins.
const EventDraftOf = "draft_of"
