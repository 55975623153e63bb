// Package metrics counts what the server does and serves it in the Prometheus
// text format at /metrics. It is a few dozen lines on purpose: counters,
// histograms and gauges with labels are all Atrium needs, and the official
// client library would bring a dependency tree larger than Atrium itself.
package metrics

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Registry holds metrics by name.
type Registry struct {
	mu      sync.Mutex
	metrics map[string]metric
	start   time.Time
}

type metric interface {
	write(w io.Writer, name string)
}

// New returns an empty registry with the process metrics every server reports.
func New() *Registry {
	r := &Registry{metrics: map[string]metric{}, start: time.Now()}
	r.GaugeFunc("atrium_goroutines", "Goroutines that exist now.", func() float64 { return float64(runtime.NumGoroutine()) })
	r.GaugeFunc("atrium_heap_bytes", "Bytes of allocated heap objects.", func() float64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc)
	})
	r.GaugeFunc("atrium_uptime_seconds", "Seconds since the server started.", func() float64 { return time.Since(r.start).Seconds() })
	return r
}

func (r *Registry) register(name string, m metric) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.metrics[name]; dup {
		panic("metrics: duplicate metric " + name)
	}
	r.metrics[name] = m
}

// A Counter is a family of monotonically increasing values, one per label set.
type Counter struct {
	help   string
	labels []string
	mu     sync.Mutex
	values map[string]float64
}

// Counter registers a counter with the given label names.
func (r *Registry) Counter(name, help string, labels ...string) *Counter {
	c := &Counter{help: help, labels: labels, values: map[string]float64{}}
	r.register(name, c)
	return c
}

// MaxSeries bounds the label sets of one metric. Callers keep label values
// to known sets (a tool that does not exist is "unknown"); this is the
// backstop, so that no bug lets clients grow the registry without end: past
// it, new label sets are counted under one whose values are all "other".
const MaxSeries = 1000

// admit returns the key to record k under: k itself if it is known or there
// is room, else the overflow key.
func admit[V any](m map[string]V, k string, labels int) string {
	if _, ok := m[k]; ok || len(m) < MaxSeries {
		return k
	}
	return key(slices.Repeat([]string{"other"}, labels))
}

// Add adds v to the counter of the label values (in the order of the names).
func (c *Counter) Add(v float64, labelValues ...string) {
	k := key(labelValues)
	c.mu.Lock()
	c.values[admit(c.values, k, len(c.labels))] += v
	c.mu.Unlock()
}

// Inc adds one.
func (c *Counter) Inc(labelValues ...string) { c.Add(1, labelValues...) }

// Value returns the counter of the label values.
func (c *Counter) Value(labelValues ...string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.values[key(labelValues)]
}

func (c *Counter) write(w io.Writer, name string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s counter\n", name, c.help, name)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range sortedKeys(c.values) {
		fmt.Fprintf(w, "%s%s %s\n", name, labelText(c.labels, k, ""), num(c.values[k]))
	}
}

// A Histogram counts observations into buckets, one set per label set.
type Histogram struct {
	help    string
	labels  []string
	buckets []float64
	mu      sync.Mutex
	series  map[string]*series
}

type series struct {
	counts []uint64
	sum    float64
	n      uint64
}

// DurationBuckets suit request latencies in seconds, from 100µs to 10s.
var DurationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Histogram registers a histogram with the given upper bounds and label names.
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) *Histogram {
	h := &Histogram{help: help, labels: labels, buckets: slices.Sorted(slices.Values(buckets)), series: map[string]*series{}}
	r.register(name, h)
	return h
}

// Observe records v for the label values.
func (h *Histogram) Observe(v float64, labelValues ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := admit(h.series, key(labelValues), len(h.labels))
	s := h.series[k]
	if s == nil {
		s = &series{counts: make([]uint64, len(h.buckets))}
		h.series[k] = s
	}
	if i := sort.SearchFloat64s(h.buckets, v); i < len(h.buckets) {
		s.counts[i]++
	}
	s.sum += v
	s.n++
}

// Since observes the seconds elapsed since t.
func (h *Histogram) Since(t time.Time, labelValues ...string) {
	h.Observe(time.Since(t).Seconds(), labelValues...)
}

func (h *Histogram) write(w io.Writer, name string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", name, h.help, name)
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, k := range sortedKeys(h.series) {
		s := h.series[k]
		var cum uint64
		for i, b := range h.buckets {
			cum += s.counts[i]
			fmt.Fprintf(w, "%s_bucket%s %d\n", name, labelText(h.labels, k, num(b)), cum)
		}
		fmt.Fprintf(w, "%s_bucket%s %d\n", name, labelText(h.labels, k, "+Inf"), s.n)
		fmt.Fprintf(w, "%s_sum%s %s\n", name, labelText(h.labels, k, ""), num(s.sum))
		fmt.Fprintf(w, "%s_count%s %d\n", name, labelText(h.labels, k, ""), s.n)
	}
}

type gaugeFunc struct {
	help string
	fn   func() float64
}

// GaugeFunc registers a gauge whose value fn reads at scrape time.
func (r *Registry) GaugeFunc(name, help string, fn func() float64) {
	r.register(name, &gaugeFunc{help: help, fn: fn})
}

func (g *gaugeFunc) write(w io.Writer, name string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n%s %s\n", name, g.help, name, name, num(g.fn()))
}

// ServeHTTP writes every metric in the Prometheus text format.
func (r *Registry) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	r.mu.Lock()
	names := make([]string, 0, len(r.metrics))
	for n := range r.metrics {
		names = append(names, n)
	}
	ms := r.metrics
	r.mu.Unlock()
	sort.Strings(names)
	for _, n := range names {
		ms[n].write(w, n)
	}
}

const sep = "\x00"

func key(values []string) string { return strings.Join(values, sep) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func labelText(names []string, k, le string) string {
	var parts []string
	if len(names) > 0 {
		values := strings.Split(k, sep)
		for i, n := range names {
			v := ""
			if i < len(values) {
				v = values[i]
			}
			parts = append(parts, n+"="+strconv.Quote(v))
		}
	}
	if le != "" {
		parts = append(parts, `le="`+le+`"`)
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func num(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
