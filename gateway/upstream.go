package gateway

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is where an upstream's supervisor is.
type State string

const (
	Starting State = "starting" // starting the process or reaching the URL, then the handshake
	Ready    State = "ready"    // a session is open: calls go through
	Backoff  State = "backoff"  // it failed or died; the next attempt is at NextAttempt
	Failed   State = "failed"   // it cannot start until the file changes (a missing variable)
	Stopped  State = "stopped"  // disabled in the file, or Atrium is stopping it
)

// An upstream is one configured server and its supervisor: the goroutine
// that (re)starts it, holds its one session — shared by every Atrium session
// of every workspace — and ends it. Everything it starts it ends, on any path
// out (see process).
type upstream struct {
	g      *Gateway
	name   string
	cfg    *ServerConfig
	spec   *Spec // nil when the configuration could not be resolved
	stderr *ring
	lat    latencies

	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	kick    chan struct{} // a call saw the session lost: reconnect now
	relist  chan struct{} // the upstream said its lists changed
	hung    chan string   // a call timed out and the server answers no ping either: restart it
	broken  chan string   // a call found the connection broken (an answer too large): reconnect now
	probing atomic.Bool   // a ping after a timed-out call is under way

	mu          sync.Mutex
	state       State
	since       time.Time
	settled     chan struct{} // closed when the first attempt has ended either way
	transport   string
	sess        *mcp.ClientSession
	changed     chan struct{} // closed and replaced whenever the session or state changes
	pid         int
	tools       []*mcp.Tool
	prompts     []*mcp.Prompt
	resources   []*mcp.Resource
	templates   []*mcp.ResourceTemplate
	restarts    int
	lastErr     string
	lastErrAt   time.Time
	recent      []Incident // the last few failures, oldest first
	nextAttempt time.Time
}

// Incident is one failure of a server, for status: a server that fails now
// and then shows its history, not only its last word.
type Incident struct {
	At    time.Time `json:"at" jsonschema:"when"`
	Error string    `json:"error" jsonschema:"what happened, secrets redacted"`
}

// recentIncidents bounds the failures status keeps per server.
const recentIncidents = 8

func newUpstream(g *Gateway, name string, cfg *ServerConfig) *upstream {
	u := &upstream{g: g, name: name, cfg: cfg, stderr: newRing(16 << 10), done: make(chan struct{}),
		kick: make(chan struct{}, 1), relist: make(chan struct{}, 1), hung: make(chan string, 1), broken: make(chan string, 1), settled: make(chan struct{}), changed: make(chan struct{}),
		state: Starting, since: time.Now()}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	switch sp, err := Resolve(name, cfg, g.opts.Lookup); {
	case cfg.Disabled:
		u.state, u.lastErr = Stopped, "disabled in the gateway file"
	case err != nil:
		u.state, u.lastErr, u.lastErrAt = Failed, "configuration: "+err.Error(), time.Now()
		u.recent = []Incident{{At: u.lastErrAt, Error: u.lastErr}}
	default:
		u.spec = sp
	}
	return u
}

func (u *upstream) start() {
	if u.spec == nil {
		close(u.settled)
		close(u.done)
		if u.state == Failed {
			u.g.log.Error("gateway: server not started", "server", u.name, "err", u.lastErr)
		}
		return
	}
	go u.run()
}

// stop ends the supervisor and everything it started, and waits for that.
func (u *upstream) stop() {
	u.cancel()
	<-u.done
}

func (u *upstream) run() {
	defer close(u.done)
	attempt := 0
	for u.ctx.Err() == nil {
		u.setState(Starting, "")
		sess, proc, transport, err := u.open()
		if err != nil {
			u.settle()
			if u.ctx.Err() != nil {
				break
			}
			attempt++
			u.fail(err.Error())
			if !u.sleep(u.backoff(attempt)) {
				break
			}
			continue
		}
		readyAt := time.Now()
		u.mu.Lock()
		u.sess, u.transport = sess, transport
		u.state, u.since = Ready, readyAt
		u.broadcast()
		u.mu.Unlock()
		u.g.log.Info("gateway: server ready", "server", u.name, "transport", transport, "tools", len(u.toolsNow()))
		u.g.rebuild()
		u.settle()
		why, lost := u.watch(sess, proc)
		u.mu.Lock()
		u.sess = nil
		u.broadcast()
		u.mu.Unlock()
		closeSession(sess)
		if proc != nil {
			proc.stop(u.g.opts.StopGrace)
		}
		if u.ctx.Err() != nil {
			break
		}
		u.mu.Lock()
		u.restarts++
		u.mu.Unlock()
		if lost { // the server is fine; it forgot the session: initialise again at once
			u.fail(why)
			continue
		}
		if time.Since(readyAt) > u.g.opts.BackoffMax {
			attempt = 0 // it ran well for a while: this is a new failure, not the same one
		}
		attempt++
		u.fail(why)
		if !u.sleep(u.backoff(attempt)) {
			break
		}
	}
	u.setState(Stopped, "")
}

// open connects and lists the tools and prompts, within the start timeout.
func (u *upstream) open() (*mcp.ClientSession, *process, string, error) {
	ctx, cancel := context.WithTimeout(u.ctx, or(u.spec.Timeouts.Start, defaultStart))
	defer cancel()
	sess, proc, transport, err := u.connect(ctx)
	if err == nil {
		err = u.list(ctx, sess)
	}
	if err != nil {
		closeSession(sess)
		if proc != nil {
			proc.stop(u.g.opts.StopGrace)
		}
		if ctx.Err() == context.DeadlineExceeded && u.ctx.Err() == nil {
			err = fmt.Errorf("no answer within %s (timeouts.start): %w", or(u.spec.Timeouts.Start, defaultStart), err)
		}
		return nil, nil, "", errors.New(u.spec.redact.apply(err.Error()))
	}
	return sess, proc, transport, nil
}

// list reads the upstream's tools, prompts and resources, following cursors.
func (u *upstream) list(ctx context.Context, sess *mcp.ClientSession) error {
	var tools []*mcp.Tool
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, t)
	}
	var prompts []*mcp.Prompt
	if caps := sess.InitializeResult().Capabilities; caps != nil && caps.Prompts != nil {
		for p, err := range sess.Prompts(ctx, nil) {
			if err != nil {
				return fmt.Errorf("prompts/list: %w", err)
			}
			prompts = append(prompts, p)
		}
	}
	// Resources are a courtesy: a server that declares them and then fails
	// to list them keeps its tools.
	var resources []*mcp.Resource
	var templates []*mcp.ResourceTemplate
	if caps := sess.InitializeResult().Capabilities; caps != nil && caps.Resources != nil {
		for r, err := range sess.Resources(ctx, nil) {
			if err != nil {
				u.g.log.Warn("gateway: resources/list", "server", u.name, "err", u.spec.redact.apply(err.Error()))
				break
			}
			resources = append(resources, r)
		}
		for t, err := range sess.ResourceTemplates(ctx, nil) {
			if err != nil {
				u.g.log.Warn("gateway: resources/templates/list", "server", u.name, "err", u.spec.redact.apply(err.Error()))
				break
			}
			templates = append(templates, t)
		}
	}
	u.mu.Lock()
	u.tools, u.prompts, u.resources, u.templates = tools, prompts, resources, templates
	u.mu.Unlock()
	return nil
}

// watch waits until the session ends and says why; lost is true when the
// upstream forgot the session rather than died.
func (u *upstream) watch(sess *mcp.ClientSession, proc *process) (why string, lost bool) {
	ended := make(chan error, 1)
	go func() { ended <- sess.Wait() }()
	var exited <-chan struct{}
	if proc != nil {
		exited = proc.exited
	}
	for {
		select {
		case <-u.ctx.Done():
			return "stopped", false
		case <-exited:
			return "the process " + describeExit(proc.err), false
		case err := <-ended:
			if proc != nil {
				if proc.wait(u.g.opts.StopGrace) {
					return "the process " + describeExit(proc.err), false
				}
			}
			if err == nil {
				err = errors.New("closed")
			}
			return "connection ended: " + u.spec.redact.apply(err.Error()), false
		case <-u.kick:
			return "the server no longer knows the session (HTTP 404): initialising again", true
		case why := <-u.hung:
			return why, false
		case why := <-u.broken:
			return why, true
		case <-u.relist:
			ctx, cancel := context.WithTimeout(u.ctx, or(u.spec.Timeouts.Health, defaultHealth))
			err := u.list(ctx, sess)
			cancel()
			if err != nil {
				u.g.log.Warn("gateway: re-list after list_changed", "server", u.name, "err", u.spec.redact.apply(err.Error()))
			}
			u.g.rebuild()
		}
	}
}

func closeSession(sess *mcp.ClientSession) {
	if sess == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		_ = sess.Close()
		close(done)
	}()
	select { // an HTTP upstream that hangs on DELETE does not hold up a restart
	case <-done:
	case <-time.After(2 * time.Second):
	}
}

// checkAlive is for a call that timed out: a server that is slow still
// answers a ping, one that hangs does not, and is then restarted (its calls
// would otherwise time out one after another for as long as it lives).
func (u *upstream) checkAlive(sess *mcp.ClientSession) {
	if !u.probing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer u.probing.Store(false)
		wait := or(u.spec.Timeouts.Health, defaultHealth)
		ctx, cancel := context.WithTimeout(u.ctx, wait)
		defer cancel()
		if err := sess.Ping(ctx, nil); err == nil || u.ctx.Err() != nil {
			return
		}
		u.mu.Lock()
		current := u.sess == sess
		u.mu.Unlock()
		if !current {
			return
		}
		select {
		case u.hung <- fmt.Sprintf("the server stopped answering: a call got no answer within %s (timeouts.call), then a ping none within %s (timeouts.health); restarting it", or(u.spec.Timeouts.Call, defaultCall), wait):
		default:
		}
	}()
}

// reconnect ends the session sess, which a call found broken, at once: the
// supervisor opens a new one without waiting for a health probe or backoff.
func (u *upstream) reconnect(sess *mcp.ClientSession, why string) {
	u.mu.Lock()
	current := u.sess == sess
	u.mu.Unlock()
	if !current {
		return
	}
	select {
	case u.broken <- why:
	default:
	}
}

func (u *upstream) relistSoon() {
	select {
	case u.relist <- struct{}{}:
	default:
	}
}

func (u *upstream) kickNow() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// backoff is the wait before attempt n (1-based): base doubling up to max,
// with ±20% jitter so that servers that fail together do not retry together.
func (u *upstream) backoff(n int) time.Duration {
	d := u.g.opts.BackoffBase
	for i := 1; i < n && d < u.g.opts.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, u.g.opts.BackoffMax)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

func (u *upstream) sleep(d time.Duration) bool {
	u.mu.Lock()
	u.state, u.since, u.nextAttempt = Backoff, time.Now(), time.Now().Add(d)
	u.broadcast()
	u.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-u.kick: // signed in, or a call wants it: try now
		return true
	case <-u.ctx.Done():
		return false
	}
}

// broadcast wakes whoever waits for a change, here and in Watch; u.mu is
// held.
func (u *upstream) broadcast() {
	close(u.changed)
	u.changed = make(chan struct{})
	u.g.changed()
}

func (u *upstream) setState(s State, _ string) {
	u.mu.Lock()
	if u.state != s {
		u.state, u.since = s, time.Now()
		u.broadcast()
	}
	u.mu.Unlock()
}

func (u *upstream) fail(why string) {
	u.mu.Lock()
	u.lastErr, u.lastErrAt = why, time.Now()
	u.recent = append(u.recent, Incident{At: u.lastErrAt, Error: why})
	if n := len(u.recent) - recentIncidents; n > 0 {
		u.recent = append(u.recent[:0], u.recent[n:]...)
	}
	restarts := u.restarts
	u.g.changed()
	u.mu.Unlock()
	u.g.log.Warn("gateway: server down", "server", u.name, "why", why, "restarts", restarts)
}

func (u *upstream) settle() {
	u.mu.Lock()
	defer u.mu.Unlock()
	select {
	case <-u.settled:
	default:
		close(u.settled)
	}
}

func (u *upstream) toolsNow() []*mcp.Tool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tools
}

// session returns the open session, or an unavailable error saying why there
// is none: calls to a server that is down fail at once, they do not wait.
func (u *upstream) session() (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.sess != nil {
		return u.sess, nil
	}
	return nil, u.downErr()
}

func (u *upstream) downErr() error {
	msg := fmt.Sprintf("server %s is %s", u.name, u.state)
	if u.state == Backoff {
		msg = fmt.Sprintf("server %s is down, in backoff", u.name)
	}
	if u.lastErr != "" {
		msg += ": " + u.lastErr
	}
	if u.state == Backoff {
		msg += fmt.Sprintf("; next attempt in %s", time.Until(u.nextAttempt).Round(100*time.Millisecond))
	}
	return unavailable(msg)
}

// awaitReady waits for a session other than old, for a call that found old
// lost. It gives up when the server goes to backoff or stops.
func (u *upstream) awaitReady(ctx context.Context, old *mcp.ClientSession) (*mcp.ClientSession, error) {
	for {
		u.mu.Lock()
		sess, state, changed := u.sess, u.state, u.changed
		u.mu.Unlock()
		switch {
		case sess != nil && sess != old:
			return sess, nil
		case state == Backoff || state == Stopped || state == Failed:
			return u.session()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, unavailable(fmt.Sprintf("server %s: the session was lost and is not back yet", u.name))
		}
	}
}
