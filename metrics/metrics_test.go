package metrics_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/metrics"
)

func TestExposition(t *testing.T) {
	r := metrics.New()
	c := r.Counter("calls_total", "Calls.", "tool", "outcome")
	c.Inc("whoami", "ok")
	c.Add(2, "whoami", "ok")
	c.Inc(`we"ird`, "error")
	h := r.Histogram("latency_seconds", "Latency.", []float64{0.1, 1})
	h.Observe(0.05)
	h.Observe(0.5)
	h.Observe(5)
	if got := c.Value("whoami", "ok"); got != 3 {
		t.Errorf("counter = %v, want 3", got)
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		"# TYPE calls_total counter",
		`calls_total{tool="whoami",outcome="ok"} 3`,
		`calls_total{tool="we\"ird",outcome="error"} 1`,
		"# TYPE latency_seconds histogram",
		`latency_seconds_bucket{le="0.1"} 1`,
		`latency_seconds_bucket{le="1"} 2`,
		`latency_seconds_bucket{le="+Inf"} 3`,
		"latency_seconds_sum 5.55",
		"latency_seconds_count 3",
		"# TYPE atrium_goroutines gauge",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %q:\n%s", want, body)
		}
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
}

func TestDuplicateNamePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering a name twice did not panic")
		}
	}()
	r := metrics.New()
	r.Counter("x", "x")
	r.Counter("x", "x")
}

// Whatever label values callers pass, a metric keeps at most MaxSeries label
// sets (plus the overflow one), and counts every observation.
func TestSeriesAreBounded(t *testing.T) {
	r := metrics.New()
	c := r.Counter("calls_total", "Calls.", "tool")
	h := r.Histogram("latency_seconds", "Latency.", []float64{1}, "tool")
	const n = 3 * metrics.MaxSeries
	for i := range n {
		name := "t" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
		c.Inc(name)
		h.Observe(0.5, name)
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	counters, buckets := 0, 0
	for line := range strings.SplitSeq(rec.Body.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "calls_total{"):
			counters++
		case strings.HasPrefix(line, "latency_seconds_count{"):
			buckets++
		}
	}
	if counters != metrics.MaxSeries+1 || buckets != metrics.MaxSeries+1 {
		t.Errorf("%d counter and %d histogram series after %d names, want %d each", counters, buckets, n, metrics.MaxSeries+1)
	}
	if got := c.Value("other"); got != n-metrics.MaxSeries {
		t.Errorf("overflow counted %v, want %v", got, n-metrics.MaxSeries)
	}
}
