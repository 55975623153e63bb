package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
)

// heartbeat keeps an idle event stream from being cut by proxies, lets the
// server notice a browser that has gone, and is when a stream checks that
// its session or token is still good.
const heartbeat = 15 * time.Second

// retryMS is how long a browser waits before it reconnects a stream that
// ended (EventSource's retry field).
const retryMS = 2000

// gatewayCoalesce gathers a burst of gateway changes (a server stopping,
// then starting, then ready, then its tools listed) into one message.
const gatewayCoalesce = 150 * time.Millisecond

// events is the one Server-Sent Events stream of the browser UI: every event
// of the workspace the member may see (the activity service decides), each
// with its id, from after Last-Event-ID (which EventSource sends when it
// reconnects) or ?after=, then live. Pages listen to it to show others'
// changes without a reload. The stream ends when the session or token that
// opened it ends (checked at each heartbeat, and at once when the log says a
// token, a session or a membership changed), or the member's role changes.
//
// With ?gateway, it also says "gateway.changed" (with no id: it is not in
// the event log, and must not move Last-Event-ID) whenever what /gateway
// shows has changed: the upstreams are this process's, not the workspace's,
// so their changes are not events of the log.
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	a := atrium.ActorFromContext(r.Context())
	if a == nil || a.Role == "" {
		h.fail(w, r, atrium.Errorf(atrium.EUnauthenticated, "live updates are for members of the workspace: sign in"))
		return
	}
	after := int64(-1)
	for _, v := range []string{r.Header.Get("Last-Event-ID"), r.URL.Query().Get("after")} {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
			after = n
			break
		}
	}
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	h.streams.Add(1)
	defer h.streams.Done()
	go func() {
		select {
		case <-h.closing:
			stop()
		case <-ctx.Done():
		}
	}()
	if after < 0 {
		// A new listener starts now, not from the beginning of time.
		var err error
		if after, err = h.Services.Activity.Latest(ctx); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	// still says whether whoever opened the stream may still follow it: the
	// same principal, in the same workspace, with the same role.
	still := func(ctx context.Context) error {
		now, err := h.Auth.Recheck(ctx, r)
		switch {
		case err != nil:
			return err
		case now == nil || now.Principal.ID != a.Principal.ID || now.Workspace.ID != a.Workspace.ID || now.Role != a.Role:
			return atrium.Errorf(atrium.EPermission, "your access to the workspace changed: reconnect")
		}
		return nil
	}
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: %d\n\n", retryMS)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	beat := h.Heartbeat
	if beat <= 0 {
		beat = heartbeat
	}
	tick := time.NewTicker(beat)
	defer tick.Stop()
	var gwChanged <-chan struct{}
	var gwSend <-chan time.Time
	if h.Gateway != nil && r.URL.Query().Has("gateway") {
		gwChanged = h.Gateway.Watch()
	}
	sent := make(chan atrium.Event)
	go func() {
		defer close(sent)
		err := h.Services.Activity.Follow(ctx, activity.FollowRequest{After: after, Recheck: still}, func(e atrium.Event) bool {
			select {
			case sent <- e:
				return true
			case <-ctx.Done():
				return false
			}
		})
		if err != nil && ctx.Err() == nil {
			h.Services.Log.Debug("event stream ended", "principal", a.Principal.Handle, "err", err)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := still(ctx); err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, ": heartbeat\n\n"); err != nil {
				return
			}
			flush()
		case <-gwChanged:
			gwChanged = h.Gateway.Watch()
			if gwSend == nil {
				gwSend = time.After(gatewayCoalesce)
			}
		case <-gwSend:
			gwSend = nil
			if _, err := fmt.Fprintf(w, "event: gateway.changed\ndata: {}\n\n"); err != nil {
				return
			}
			flush()
		case e, ok := <-sent:
			if !ok {
				return
			}
			data, _ := json.Marshal(e)
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Kind, data); err != nil {
				return
			}
			flush()
		}
	}
}
