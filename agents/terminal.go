package agents

import (
	"context"
	"crypto/rand"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
)

// The terminal a session runs in is shared: many viewers, one writer. A
// viewer is shown the kept output first (the ring), then what follows, with
// nothing lost or painted twice in between; one who falls behind is dropped
// (and reconnects to a replay), never slowing the agent or the others.
// Typing needs control, which any writer may take, and everyone is told who
// has it.

// A Frame is what a viewer is sent: output, a change of control, or the end.
type Frame struct {
	Output []byte
	// Writer, on a change of control, is who has it now ("" for no one),
	// and WriterID their viewer.
	Control          bool
	Writer, WriterID string
	Ended            bool
	State            string // on Ended: how the session ended
}

// A Viewer watches one session's terminal.
type Viewer struct {
	ID     string
	Handle string
	// C delivers the viewer's frames, output coalesced: what came while the
	// viewer was busy arrives as one piece. It is closed once the viewer is
	// dropped, detached, or shown the session's end.
	C  <-chan Frame
	c  chan Frame
	ru *run

	mu      sync.Mutex
	queue   []Frame
	queued  int           // bytes of output queued
	wake    chan struct{} // something was queued
	stop    chan struct{} // closed when the viewer is dropped: C closes at once
	stopped bool
	closing bool // the session ended: C closes once the queue is delivered
}

// maxQueued is how much output a viewer may be behind before it is
// dropped (it reconnects to a replay of the screen as it is then).
const maxQueued = 4 << 20

func newViewer(ru *run, handle string) *Viewer {
	c := make(chan Frame)
	v := &Viewer{ID: "v_" + strings.ToLower(rand.Text()[:12]), Handle: handle, C: c, c: c, ru: ru,
		wake: make(chan struct{}, 1), stop: make(chan struct{})}
	go v.pump()
	return v
}

// push queues f for the viewer, merging output into the output before it,
// and reports false once the viewer is too far behind.
func (v *Viewer) push(f Frame) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stopped || v.closing {
		return true
	}
	if n := len(v.queue); n > 0 && f.Output != nil && v.queue[n-1].Output != nil {
		v.queue[n-1].Output = append(v.queue[n-1].Output, f.Output...)
	} else {
		if f.Output != nil {
			f.Output = append([]byte(nil), f.Output...) // the terminal's buffer is read into again
		}
		v.queue = append(v.queue, f)
	}
	v.queued += len(f.Output)
	if v.queued > maxQueued {
		return false
	}
	select {
	case v.wake <- struct{}{}:
	default:
	}
	return true
}

// halt drops the viewer: C closes without what is queued.
func (v *Viewer) halt() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.stopped {
		v.stopped = true
		close(v.stop)
	}
}

// finish lets the viewer be shown what is queued, then closes C.
func (v *Viewer) finish() {
	v.mu.Lock()
	v.closing = true
	v.mu.Unlock()
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// pump hands the queued frames to C, one at a time, as the viewer takes them.
func (v *Viewer) pump() {
	defer close(v.c)
	for {
		v.mu.Lock()
		if v.stopped {
			v.mu.Unlock()
			return
		}
		if len(v.queue) == 0 {
			closing := v.closing
			v.mu.Unlock()
			if closing {
				return
			}
			select {
			case <-v.wake:
			case <-v.stop:
				return
			}
			continue
		}
		f := v.queue[0]
		v.queue[0] = Frame{}
		v.queue = v.queue[1:]
		v.queued -= len(f.Output)
		v.mu.Unlock()
		select {
		case v.c <- f:
		case <-v.stop:
			return
		}
	}
}

// viewers is the run's share of the terminal's state.
type viewers struct {
	mu     sync.Mutex
	set    map[*Viewer]struct{}
	writer *Viewer
	ended  bool
}

// output keeps p and sends it to every viewer; called for each read of the
// terminal, under the viewers' lock, so that attach's replay and the frames
// after it never overlap or miss a byte.
func (ru *run) output(p []byte) {
	ru.mu.Lock()
	ru.lastOutput = time.Now()
	ru.mu.Unlock()
	ru.script.Write(p)
	ru.vs.mu.Lock()
	defer ru.vs.mu.Unlock()
	ru.out.Write(p)
	if len(ru.vs.set) == 0 {
		return
	}
	for v := range ru.vs.set {
		ru.sendLocked(v, Frame{Output: p})
	}
}

func (ru *run) sendLocked(v *Viewer, f Frame) {
	if !v.push(f) {
		ru.dropLocked(v) // behind: it reconnects to a replay
	}
}

func (ru *run) dropLocked(v *Viewer) {
	if _, ok := ru.vs.set[v]; !ok {
		return
	}
	delete(ru.vs.set, v)
	v.halt()
	if ru.vs.writer == v {
		ru.vs.writer = nil
		ru.controlLocked()
	}
}

func (ru *run) controlLocked() {
	f := Frame{Control: true}
	if w := ru.vs.writer; w != nil {
		f.Writer, f.WriterID = w.Handle, w.ID
	}
	for v := range ru.vs.set {
		ru.sendLocked(v, f)
	}
}

// ended tells every viewer the session ended, and lets them go.
func (ru *run) endViewers(state string) {
	ru.vs.mu.Lock()
	defer ru.vs.mu.Unlock()
	ru.vs.ended = true
	for v := range ru.vs.set {
		v.push(Frame{Ended: true, State: state})
		v.finish()
		delete(ru.vs.set, v)
	}
	ru.vs.writer = nil
}

// Attach makes the caller a viewer of session id: it gets the kept output
// (replay) and who has control, then frames. Viewing a terminal needs the
// writer role: it shows what the agent does in the workspace's repository.
func (s *Service) Attach(ctx context.Context, id string) (v *Viewer, replay []byte, writer string, err error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleWriter)
	if err != nil {
		return nil, nil, "", err
	}
	cur, err := s.Session(ctx, id)
	if err != nil {
		return nil, nil, "", err
	}
	s.mu.Lock()
	ru := s.running[id]
	s.mu.Unlock()
	if ru == nil {
		if cur.EndedAt.IsZero() {
			return nil, nil, "", atrium.Errorf(atrium.EUnavailable, "session %s runs on replica %s: open its terminal there", id, cur.Replica)
		}
		return nil, nil, "", atrium.Errorf(atrium.EConflict, "session %s has ended (%s): its transcript is kept", id, cur.State)
	}
	v = newViewer(ru, a.Principal.Handle)
	ru.vs.mu.Lock()
	defer ru.vs.mu.Unlock()
	if ru.vs.ended {
		v.halt()
		return nil, nil, "", atrium.Errorf(atrium.EConflict, "session %s has ended", id)
	}
	ru.vs.set[v] = struct{}{}
	replay, _ = ru.out.Snapshot()
	if w := ru.vs.writer; w != nil {
		writer = w.Handle + " " + w.ID
	}
	return v, replay, writer, nil
}

// Detach ends v's viewing; control it held is released.
func (v *Viewer) Detach() {
	v.ru.vs.mu.Lock()
	defer v.ru.vs.mu.Unlock()
	v.ru.dropLocked(v)
}

// TakeControl makes v the one who types, and tells every viewer.
func (v *Viewer) TakeControl() error {
	v.ru.vs.mu.Lock()
	defer v.ru.vs.mu.Unlock()
	if _, ok := v.ru.vs.set[v]; !ok {
		return atrium.Errorf(atrium.EConflict, "this viewer is no longer attached: reconnect")
	}
	v.ru.vs.writer = v
	v.ru.controlLocked()
	return nil
}

// Input types p into the terminal, if v has control.
func (v *Viewer) Input(p []byte) error {
	v.ru.vs.mu.Lock()
	has := v.ru.vs.writer == v
	v.ru.vs.mu.Unlock()
	if !has {
		return atrium.Errorf(atrium.EPermission, "take control of the terminal to type in it")
	}
	_, err := v.ru.Write(p)
	return err
}

// Resize sets the terminal's size, if v has control.
func (v *Viewer) Resize(rows, cols uint16) error {
	v.ru.vs.mu.Lock()
	has := v.ru.vs.writer == v
	v.ru.vs.mu.Unlock()
	if !has {
		return atrium.Errorf(atrium.EPermission, "take control of the terminal to resize it")
	}
	if rows == 0 || cols == 0 || rows > 500 || cols > 1000 {
		return atrium.Errorf(atrium.EInvalid, "a terminal of %d rows and %d columns: give 1 to 500 rows and 1 to 1000 columns", rows, cols)
	}
	return v.ru.resize(rows, cols)
}
