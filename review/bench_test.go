package review_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/store"
)

// The review benchmarks (SQLite, service level):
//
//	go test ./review -run '^$' -bench . -benchtime 2000x

func latencies(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func BenchmarkCreateAnnotation(b *testing.B) {
	v := newEnv(b, store.SQLite)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		t0 := time.Now()
		if _, _, err := v.rev.Create(v.clay, review.CreateRequest{DocPath: "Docs/Design.md", Section: "Storage", Content: fmt.Sprintf("comment %d", i), Quote: &atrium.Quote{Exact: "PostgreSQL to scale"}}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
	latencies(b, lat)
}

// BenchmarkCreateAnnotationParallel is sustained throughput with 8 writers.
func BenchmarkCreateAnnotationParallel(b *testing.B) {
	v := newEnv(b, store.SQLite)
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	b.ResetTimer()
	start := time.Now()
	for w := range 8 {
		wg.Go(func() {
			for {
				mu.Lock()
				if n >= b.N {
					mu.Unlock()
					return
				}
				n++
				i := n
				mu.Unlock()
				if _, _, err := v.rev.Create(v.clay, review.CreateRequest{DocPath: "Docs/Design.md", Content: fmt.Sprintf("w%d comment %d", w, i)}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "creates/s")
}

func BenchmarkListAnnotations1000Threads(b *testing.B) {
	v := newEnv(b, store.SQLite)
	for i := range 1000 {
		if _, _, err := v.rev.Create(v.clay, review.CreateRequest{DocPath: "Docs/Design.md", Content: fmt.Sprintf("thread %d", i), Status: atrium.StatusSubmitted}); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		res, err := v.rev.List(v.dan, review.ListRequest{DocPath: "Docs/Design.md", Limit: 50})
		if err != nil || len(res.Annotations) != 50 {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	latencies(b, lat)
}

// BenchmarkReanchor1000 measures a page edit that moves all 1000 quoted
// threads of the page, against the same edit of the same page without
// threads: the difference is the re-anchoring.
func BenchmarkReanchor1000(b *testing.B) {
	for _, threads := range []int{0, 1000} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			v := newEnv(b, store.SQLite)
			var body strings.Builder
			body.WriteString("# Design\n\n")
			for i := range 1000 {
				fmt.Fprintf(&body, "## Part %d\n\nSentence number %d says something.\n\n", i, i)
			}
			content := body.String()
			if _, err := v.docs.WritePage(v.dan, pages.WriteRequest{Path: "Big.md", Content: content}); err != nil {
				b.Fatal(err)
			}
			for i := range threads {
				if _, _, err := v.rev.Create(v.clay, review.CreateRequest{DocPath: "Big.md", Content: "c", Quote: &atrium.Quote{Exact: fmt.Sprintf("number %d says", i)}, Status: atrium.StatusSubmitted}); err != nil {
					b.Fatal(err)
				}
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				edited := fmt.Sprintf("# Design\n\nIntro %d moves every quote.\n\n", i) + content[len("# Design\n\n"):]
				t0 := time.Now()
				if _, err := v.docs.WritePage(v.dan, pages.WriteRequest{Path: "Big.md", Content: edited, Overwrite: true}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			latencies(b, lat)
		})
	}
}
