package gateway

import (
	"time"

	"github.com/atrium-hq/atrium"
)

// UpstreamStatus is one server as get_status and /gateway report it. It
// never holds a secret: the command line, errors and stderr pass through the
// server's redactor, and env and headers are named, not shown.
type UpstreamStatus struct {
	Name        string     `json:"name" jsonschema:"the server's name in the gateway file, also its tools' prefix"`
	State       State      `json:"state" jsonschema:"starting, ready, backoff, failed or stopped"`
	Since       time.Time  `json:"since" jsonschema:"when it entered this state"`
	Transport   string     `json:"transport" jsonschema:"stdio, http (Streamable HTTP) or sse (legacy HTTP+SSE)"`
	Target      string     `json:"target,omitempty" jsonschema:"the command line or URL, secrets redacted"`
	PID         int        `json:"pid,omitempty" jsonschema:"the process id of a stdio server, while it runs"`
	EnvKeys     []string   `json:"env_keys,omitempty" jsonschema:"the names of the env it is given (values are never shown)"`
	HeaderKeys  []string   `json:"header_keys,omitempty" jsonschema:"the names of the headers it is sent (values are never shown)"`
	Tools       []string   `json:"tools" jsonschema:"the tools exposed, by their names in Atrium"`
	Held        []Held     `json:"held_back" jsonschema:"the tools not exposed, and why"`
	Prompts     []string   `json:"prompts,omitempty" jsonschema:"the prompts exposed"`
	Resources   []string   `json:"resources,omitempty" jsonschema:"the URIs and URI templates of the resources it exposes, unchanged"`
	Restarts    int        `json:"restarts" jsonschema:"how often it was restarted after dying or losing its session"`
	LastError   string     `json:"last_error,omitempty" jsonschema:"why it last failed"`
	LastErrorAt time.Time  `json:"last_error_at,omitzero" jsonschema:"when"`
	Recent      []Incident `json:"recent_errors,omitempty" jsonschema:"its last few failures, oldest first"`
	NextAttempt time.Time  `json:"next_attempt,omitzero" jsonschema:"in backoff: when it will be started again"`
	Calls       int        `json:"calls" jsonschema:"calls made through Atrium since it started"`
	Failures    int        `json:"failures" jsonschema:"of which failed or returned an error"`
	P50ms       float64    `json:"p50_ms" jsonschema:"median call time over the last 256 calls, in milliseconds"`
	P95ms       float64    `json:"p95_ms" jsonschema:"95th percentile call time over the last 256 calls, in milliseconds"`
	Stderr      []string   `json:"stderr_tail,omitempty" jsonschema:"the last lines it wrote to stderr, secrets redacted (for admins only)"`
}

// Status reports every upstream, by name, as a viewer of role may see it:
// the stderr tails only to admins. Redaction removes the secrets Atrium
// gave a server, but a server may print others of its own (a token it
// read from a file, a connection string it built), and its stderr is
// Atrium's operator's business, as its log is.
func (g *Gateway) Status(role atrium.Role) []UpstreamStatus {
	v := g.view.Load()
	var out []UpstreamStatus
	for _, u := range g.sortedUpstreams() {
		st := u.status(v)
		if role != atrium.RoleAdmin {
			st.Stderr = nil
		}
		out = append(out, st)
	}
	return out
}

func (u *upstream) status(v *view) UpstreamStatus {
	u.mu.Lock()
	st := UpstreamStatus{Name: u.name, State: u.state, Since: u.since, Transport: u.transport, Restarts: u.restarts,
		LastError: u.lastErr, LastErrorAt: u.lastErrAt, Recent: append([]Incident(nil), u.recent...), Tools: []string{}, Held: v.heldBy[u.name]}
	if u.state == Backoff {
		st.NextAttempt = u.nextAttempt
	}
	if u.state == Ready || u.state == Starting {
		st.PID = u.pid
	}
	u.mu.Unlock()
	if st.Held == nil {
		st.Held = []Held{}
	}
	if sp := u.spec; sp != nil {
		if st.Transport == "" {
			st.Transport = sp.Transport
		}
		st.Target = sp.Describe()
		for k := range sp.Env {
			st.EnvKeys = append(st.EnvKeys, k)
		}
		for k := range sp.Headers {
			st.HeaderKeys = append(st.HeaderKeys, k)
		}
		for _, line := range u.stderr.Tail(20) {
			st.Stderr = append(st.Stderr, sp.redact.apply(line))
		}
	}
	for _, n := range v.order {
		if v.tools[n].up == u {
			st.Tools = append(st.Tools, n)
		}
	}
	for _, n := range v.promptOrder {
		if v.prompts[n].up == u {
			st.Prompts = append(st.Prompts, n)
		}
	}
	for _, uri := range v.resourceOrder {
		if v.resources[uri].up == u {
			st.Resources = append(st.Resources, uri)
		}
	}
	for _, t := range v.templateOrder {
		if v.templates[t].up == u {
			st.Resources = append(st.Resources, t)
		}
	}
	calls, fails, p50, p95 := u.lat.summary()
	st.Calls, st.Failures, st.P50ms, st.P95ms = calls, fails, ms(p50), ms(p95)
	return st
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
