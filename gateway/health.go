package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
)

// Health levels, per server and overall.
const (
	Healthy   = "healthy"
	Degraded  = "degraded"
	Unhealthy = "unhealthy"
)

// HealthReport is system_health_check's answer (004's option B): every
// server probed at once, each probe under its own timeout, with the
// evidence.
type HealthReport struct {
	Overall   string         `json:"overall" jsonschema:"healthy when every server is, unhealthy when none is usable, degraded otherwise"`
	CheckedAt time.Time      `json:"checked_at" jsonschema:"when the probes started"`
	Servers   []ServerHealth `json:"servers" jsonschema:"each server's result"`
	Cached    bool           `json:"cached,omitempty" jsonschema:"true when this is the last full check (made by a writer or an admin at checked_at), not a new one"`
	Note      string         `json:"note,omitempty" jsonschema:"what this report leaves out, and why"`
}

// A reader may not make Atrium call upstream tools: a health probe's call
// may cost the upstream (an API's quota, a deployment listing). A reader's
// check is the last full one while it is this recent, else a light one.
const cachedHealth = 10 * time.Minute

// lightNote says what a reader's light check leaves out.
const lightNote = "ping and tools/list only: the tool calls of the servers' health configuration run for writers and admins, whose last full check is shown to readers for 10 minutes"

// ServerHealth is one server's probes.
type ServerHealth struct {
	Name   string  `json:"name" jsonschema:"the server"`
	Health string  `json:"health" jsonschema:"healthy, degraded (slow, or some probes failed) or unhealthy (down, or every probe failed)"`
	State  State   `json:"state" jsonschema:"its supervisor's state"`
	Reason string  `json:"reason,omitempty" jsonschema:"why it is not healthy"`
	Probes []Probe `json:"probes" jsonschema:"the probes run: ping, tools/list and the calls its health configuration names"`
}

// Probe is one probe's evidence.
type Probe struct {
	Name      string  `json:"name" jsonschema:"ping, tools/list, or tools/call and the tool's name"`
	OK        bool    `json:"ok" jsonschema:"whether it answered in time (and, for a tool, without an error)"`
	LatencyMS float64 `json:"latency_ms" jsonschema:"how long it took, in milliseconds"`
	Error     string  `json:"error,omitempty" jsonschema:"why it failed"`
	Result    string  `json:"result,omitempty" jsonschema:"what a tool answered, cut short, secrets redacted"`
}

// probeResult is how much of a tool probe's answer the report keeps.
const probeResult = 500

// Health probes every server in parallel. The caller in ctx decides how:
// a writer or an admin (or Atrium itself: no caller) runs every probe; a
// reader gets the last full report while recent (cachedHealth), else ping
// and tools/list alone — a reader never makes Atrium call an upstream tool.
func (g *Gateway) Health(ctx context.Context) HealthReport {
	full := true
	if a := atrium.ActorFromContext(ctx); a != nil && !a.Role.Allows(atrium.RoleWriter) {
		full = false
		g.healthMu.Lock()
		last := g.lastHealth
		g.healthMu.Unlock()
		if last != nil && time.Since(last.CheckedAt) < cachedHealth {
			rep := *last
			rep.Cached = true
			return rep
		}
	}
	rep := HealthReport{CheckedAt: time.Now(), Servers: []ServerHealth{}}
	if !full {
		rep.Note = lightNote
	}
	ups := g.sortedUpstreams()
	results := make([]ServerHealth, len(ups))
	var wg sync.WaitGroup
	for i, u := range ups {
		wg.Go(func() { results[i] = u.health(ctx, full) })
	}
	wg.Wait()
	counts := map[string]int{}
	for _, r := range results {
		if r.State == Stopped && r.Reason == "disabled in the gateway file" {
			continue // not meant to run: neither healthy nor not
		}
		counts[r.Health]++
		rep.Servers = append(rep.Servers, r)
	}
	switch n := len(rep.Servers); {
	case counts[Healthy] == n:
		rep.Overall = Healthy
	case counts[Unhealthy] == n:
		rep.Overall = Unhealthy
	default:
		rep.Overall = Degraded
	}
	if full {
		g.healthMu.Lock()
		g.lastHealth = &rep
		g.healthMu.Unlock()
	}
	return rep
}

// health probes the server: ping, tools/list and, when full, the tool
// calls its health configuration names.
func (u *upstream) health(ctx context.Context, full bool) ServerHealth {
	u.mu.Lock()
	h := ServerHealth{Name: u.name, State: u.state, Probes: []Probe{}}
	sess := u.sess
	if sess == nil {
		h.Health, h.Reason = Unhealthy, u.downErr().Error()
		if u.state == Stopped {
			h.Reason = u.lastErr
		}
	}
	u.mu.Unlock()
	if sess == nil {
		return h
	}
	timeout := or(u.spec.Timeouts.Health, defaultHealth)
	slow := or(u.spec.Timeouts.Slow, defaultSlow)
	probe := func(name string, do func(context.Context) error) Probe {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		start := time.Now()
		err := do(ctx)
		p := Probe{Name: name, OK: err == nil, LatencyMS: ms(time.Since(start))}
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				p.Error = "no answer within " + timeout.String() + " (timeouts.health)"
			} else {
				p.Error = u.spec.redact.apply(err.Error())
			}
		}
		return p
	}
	configured := u.spec.Health
	if !full {
		configured = nil
	}
	h.Probes = make([]Probe, 2+len(configured))
	var wg sync.WaitGroup
	wg.Go(func() { h.Probes[0] = probe("ping", func(ctx context.Context) error { return sess.Ping(ctx, nil) }) })
	wg.Go(func() {
		h.Probes[1] = probe("tools/list", func(ctx context.Context) error { _, err := sess.ListTools(ctx, nil); return err })
	})
	for i, hp := range configured {
		wg.Go(func() {
			var result string
			p := probe("tools/call "+hp.Tool, func(ctx context.Context) error {
				var err error
				result, err = u.callProbe(ctx, sess, hp)
				return err
			})
			p.Result = u.spec.redact.apply(truncate(result, probeResult))
			h.Probes[2+i] = p
		})
	}
	wg.Wait()
	var failed []string
	slowest := 0.0
	for _, p := range h.Probes {
		if !p.OK {
			failed = append(failed, p.Name)
		}
		slowest = max(slowest, p.LatencyMS)
	}
	switch {
	case len(failed) == len(h.Probes):
		h.Health, h.Reason = Unhealthy, "no probe answered"
	case len(failed) > 0:
		h.Health, h.Reason = Degraded, "failed: "+strings.Join(failed, ", ")
	case slowest > ms(slow):
		h.Health, h.Reason = Degraded, "slow: a probe took over "+slow.String()+" (timeouts.slow)"
	default:
		h.Health = Healthy
	}
	return h
}

// callProbe calls the tool a health probe names, and returns the text of
// its answer. A tool Atrium holds back is not called, by a probe or anyone.
func (u *upstream) callProbe(ctx context.Context, sess *mcp.ClientSession, hp HealthProbe) (string, error) {
	tools := u.toolsNow()
	i := slices.IndexFunc(tools, func(t *mcp.Tool) bool { return t.Name == hp.Tool })
	if i < 0 {
		return "", fmt.Errorf("the server lists no tool %s", hp.Tool)
	}
	if why := holdBack(tools[i], u.spec.Allow); why != "" {
		return "", fmt.Errorf("not called: %s is held back (%s)", hp.Tool, why)
	}
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: hp.Tool, Arguments: hp.Arguments})
	if err != nil {
		return "", err
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	out := strings.Join(text, "\n")
	if res.IsError {
		return out, errors.New("the tool answered with an error: " + u.spec.redact.apply(truncate(out, probeResult)))
	}
	return out, nil
}
