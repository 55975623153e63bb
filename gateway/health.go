package gateway

import (
	"context"
	"errors"
	"sync"
	"time"
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
}

// ServerHealth is one server's probes.
type ServerHealth struct {
	Name   string  `json:"name" jsonschema:"the server"`
	Health string  `json:"health" jsonschema:"healthy, degraded (slow, or one probe failed) or unhealthy (down, or every probe failed)"`
	State  State   `json:"state" jsonschema:"its supervisor's state"`
	Reason string  `json:"reason,omitempty" jsonschema:"why it is not healthy"`
	Probes []Probe `json:"probes" jsonschema:"the probes run: ping and tools/list"`
}

// Probe is one probe's evidence.
type Probe struct {
	Name      string  `json:"name" jsonschema:"ping or tools/list"`
	OK        bool    `json:"ok" jsonschema:"whether it answered in time"`
	LatencyMS float64 `json:"latency_ms" jsonschema:"how long it took, in milliseconds"`
	Error     string  `json:"error,omitempty" jsonschema:"why it failed"`
}

// Health probes every server in parallel.
func (g *Gateway) Health(ctx context.Context) HealthReport {
	rep := HealthReport{CheckedAt: time.Now(), Servers: []ServerHealth{}}
	ups := g.sortedUpstreams()
	results := make([]ServerHealth, len(ups))
	var wg sync.WaitGroup
	for i, u := range ups {
		wg.Go(func() { results[i] = u.health(ctx) })
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
	return rep
}

func (u *upstream) health(ctx context.Context) ServerHealth {
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
	var wg sync.WaitGroup
	var ping, list Probe
	wg.Go(func() { ping = probe("ping", func(ctx context.Context) error { return sess.Ping(ctx, nil) }) })
	wg.Go(func() {
		list = probe("tools/list", func(ctx context.Context) error { _, err := sess.ListTools(ctx, nil); return err })
	})
	wg.Wait()
	h.Probes = []Probe{ping, list}
	switch {
	case !ping.OK && !list.OK:
		h.Health, h.Reason = Unhealthy, "no probe answered"
	case !ping.OK || !list.OK:
		h.Health, h.Reason = Degraded, "a probe failed"
	case ping.LatencyMS > ms(slow) || list.LatencyMS > ms(slow):
		h.Health, h.Reason = Degraded, "slow: a probe took over "+slow.String()+" (timeouts.slow)"
	default:
		h.Health = Healthy
	}
	return h
}
