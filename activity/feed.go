package activity

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// The feed shows runs, not events: the log keeps one event per change (it is
// the audit trail, and live updates and MCP notifications follow single
// changes), and the feed folds a run of them — the same actor doing the same
// kind of thing close together, such as an import's hundreds of pages and
// files — into one row that says how many.
const (
	// RunGap is how far apart two events of a run may be.
	RunGap = 10 * time.Minute
	// RunSpan is how long one run may last; a longer one is cut in rows.
	RunSpan = time.Hour
	// RunEvents is how many of a run's events a row keeps to list.
	RunEvents = 50
	// feedScan bounds the events one page of the feed reads: a page of a
	// feed full of what it does not show (another's drafts, housekeeping)
	// stops there and says where to go on.
	feedScan   = 2000
	feedWindow = 250
)

// FeedRequest asks for a page of the feed, newest first.
type FeedRequest struct {
	Before int64 // only events with an ID below it; 0: from the newest
	Rows   int   // at most this many rows; 0 means 20, at most 200
	// Kinds, when set, are the kinds of event the feed shows; others are
	// passed over as if they were not there (they break no run).
	Kinds map[string]bool
}

// A Row is one line of the feed: an event, or a run of events by one actor
// of the same kind (or, for the writes of an import or a folder sync, of the
// same origin) each within RunGap of the next.
type Row struct {
	Actor     string // handle; "" for the system
	ActorKind atrium.PrincipalKind
	Kind      string // of the newest event
	// Origin is where a run of page and file writes came from ("import",
	// "mirror"); such a run may mix page and file events.
	Origin string
	Count  int            // events in the row
	Kinds  map[string]int // how many of each kind
	// Subjects is how many different subjects the events name; Folder the
	// folder all of those that are paths lie in ("" for the root or none).
	Subjects int
	Folder   string
	Events   []EventBy // the newest RunEvents of them, newest first
	// Newest and Oldest are the times of its first and last event.
	Newest, Oldest time.Time
	// Partial says that the run may go on in older events than this page
	// of the feed read.
	Partial bool

	actor    int64
	key      string
	subjects map[string]bool
}

// Feed is a page of the feed.
type Feed struct {
	Rows []Row
	// Next is the Before of the page of older rows; 0 when there are none.
	Next int64
}

// Feed reads a page of the caller's workspace's activity as people read it:
// the events the caller may see, in runs.
func (s *Service) Feed(ctx context.Context, r FeedRequest) (Feed, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return Feed{}, err
	}
	rows := r.Rows
	if rows <= 0 {
		rows = 20
	}
	rows = min(rows, 200)
	var (
		out     Feed
		open    *Row  // the run being gathered
		lastID  int64 // the oldest event read
		oldest  int64 // the oldest event of the rows kept
		scanned int
	)
	before := r.Before
	// A feed of some kinds looks through each window in the database, and
	// reads out only the events of its kinds.
	const window = feedWindow
	var kinds []string
	if r.Kinds != nil {
		for k, on := range r.Kinds {
			if on {
				kinds = append(kinds, k)
			}
		}
		slices.Sort(kinds) // one statement shape per set of kinds
	}
	for scanned < feedScan {
		var (
			batch []store.EventBy
			floor int64 // the oldest event of the window read
			n     int   // events in it
		)
		err := s.db.View(ctx, func(tx *store.Tx) (err error) {
			if r.Kinds != nil {
				batch, floor, n, err = tx.RecentEventsOf(ctx, a.Workspace.ID, before, window, kinds)
				return err
			}
			batch, err = tx.RecentEvents(ctx, a.Workspace.ID, before, window)
			if n = len(batch); n > 0 {
				floor = batch[n-1].ID
			}
			return err
		})
		if err != nil {
			return Feed{}, err
		}
		scanned += n
		if n > 0 {
			lastID, before = floor, floor
		}
		for _, se := range batch {
			e := EventBy(se)
			if !Visible(a, e.Event) { // kinds: chosen by the query
				continue
			}
			key := runKey(e.Event)
			if open != nil && open.takes(e, key) {
				open.add(e)
				oldest = e.ID
				continue
			}
			if len(out.Rows) == rows {
				// A new run past the last row: the page ends before it.
				out.Next = oldest
				return out, nil
			}
			out.Rows = append(out.Rows, newRow(e, key))
			open = &out.Rows[len(out.Rows)-1]
			oldest = e.ID
		}
		if n < window {
			return out, nil // the beginning of the log
		}
	}
	// Read as far as one page may: the next page goes on from there.
	if open != nil {
		open.Partial = true
	}
	out.Next = lastID
	return out, nil
}

func newRow(e EventBy, key string) Row {
	r := Row{Actor: e.Actor, ActorKind: e.ActorKind, Kind: e.Kind, Kinds: map[string]int{}, Newest: e.CreatedAt,
		actor: e.ActorID, subjects: map[string]bool{}, key: key}
	if strings.HasPrefix(r.key, "origin:") {
		r.Origin = strings.TrimPrefix(r.key, "origin:")
	}
	r.add(e)
	return r
}

// takes says whether e (of run key key), older than the row's events, goes
// on its run.
func (r *Row) takes(e EventBy, key string) bool {
	return e.ActorID == r.actor && key == r.key &&
		r.Oldest.Sub(e.CreatedAt) <= RunGap && r.Newest.Sub(e.CreatedAt) <= RunSpan
}

func (r *Row) add(e EventBy) {
	r.Count++
	r.Kinds[e.Kind]++
	if !r.subjects[e.Subject] && len(r.subjects) < 10*RunEvents {
		r.subjects[e.Subject] = true
		r.Subjects = len(r.subjects)
	}
	dir := ""
	if i := strings.LastIndex(e.Subject, "/"); i > 0 {
		dir = e.Subject[:i]
	}
	if r.Count == 1 {
		r.Folder = dir
	} else {
		r.Folder = commonFolder(r.Folder, dir)
	}
	if len(r.Events) < RunEvents {
		r.Events = append(r.Events, e)
	}
	r.Oldest = e.CreatedAt
}

// commonFolder is the deepest folder that holds both a and b.
func commonFolder(a, b string) string {
	for a != "" && b != a && !strings.HasPrefix(b, a+"/") {
		i := strings.LastIndex(a, "/")
		if i < 0 {
			return ""
		}
		a = a[:i]
	}
	return a
}

// runKey is what events of one run share: their kind, or for the page and
// file writes of an import or a sync, their origin.
func runKey(e atrium.Event) string {
	if strings.HasPrefix(e.Kind, "page.") || strings.HasPrefix(e.Kind, "attachment.") {
		if o := originOf(e); o != "" {
			return "origin:" + o
		}
	}
	return e.Kind
}

// originOf is the origin a page or file event's payload names, if any. A
// feed page reads thousands of these: the plain case is read off the bytes
// (payloads are written by encoding/json), the rest decoded.
func originOf(e atrium.Event) string {
	i := bytes.Index(e.Payload, originField)
	if i < 0 {
		return ""
	}
	rest := e.Payload[i+len(originField):]
	if j := bytes.IndexByte(rest, '"'); j >= 0 && bytes.IndexByte(rest[:j], '\\') < 0 && bytes.Count(e.Payload, originField) == 1 {
		return string(rest[:j])
	}
	var p struct{ Origin string }
	if json.Unmarshal(e.Payload, &p) != nil {
		return ""
	}
	return p.Origin
}

var originField = []byte(`"origin":"`)

// A RecentPage is a page recently written, as the events tell.
type RecentPage struct {
	Path      string
	Kind      string // the newest event's: page.created, page.updated …
	Actor     string
	ActorKind atrium.PrincipalKind
	At        time.Time
}

// pageWrites are the events after which a page exists with new content.
var pageWrites = map[string]bool{"page.created": true, "page.updated": true, "page.moved": true, "page.restored": true}

// RecentPages lists up to limit pages of the caller's workspace most
// recently created, edited, moved or restored, newest first, read from the
// newest feedScan events: pages deleted or moved away since are left out.
func (s *Service) RecentPages(ctx context.Context, limit int) ([]RecentPage, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return nil, err
	}
	limit = min(max(limit, 1), 100)
	var out []RecentPage
	gone := map[string]bool{} // by path key: what happened later
	before := int64(0)
	for scanned := 0; scanned < feedScan && len(out) < limit; {
		var batch []store.EventBy
		err := s.db.View(ctx, func(tx *store.Tx) (err error) {
			batch, err = tx.RecentEvents(ctx, a.Workspace.ID, before, feedWindow)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, e := range batch {
			scanned++
			before = e.ID
			if !strings.HasPrefix(e.Kind, "page.") || !Visible(a, e.Event) {
				continue
			}
			key := store.PathKey(e.Subject)
			if pageWrites[e.Kind] && !gone[key] && len(out) < limit {
				out = append(out, RecentPage{Path: e.Subject, Kind: e.Kind, Actor: e.Actor, ActorKind: e.ActorKind, At: e.CreatedAt})
			}
			gone[key] = true // older events of this path are older news
			if e.Kind == "page.moved" {
				var p struct{ From string }
				if json.Unmarshal(e.Payload, &p) == nil && p.From != "" {
					gone[store.PathKey(p.From)] = true
				}
			}
		}
		if len(batch) < feedWindow {
			break
		}
	}
	return out, nil
}
