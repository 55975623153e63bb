package pages_test

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/embed"
	"github.com/atrium-hq/atrium/internal/embedfake"
	"github.com/atrium-hq/atrium/pages"
)

// BenchmarkHybridSearch embeds the generated vault (ATRIUM_BENCH_PAGES,
// default 100000; the same store BenchmarkSearchSpeed reads, which the
// vectors leave as it is) with the fake endpoint on loopback, reporting the
// worker's throughput, then measures an 8-word question by words alone and
// hybrid: the difference is what the vector side adds beyond the
// endpoint's own time (which overlaps the lexical ranking). Reported,
// never asserted.
//
//	ATRIUM_BENCH_PAGES=10000 go test ./pages -run '^$' -bench HybridSearch -benchtime 50x
func BenchmarkHybridSearch(b *testing.B) {
	svc, ctx := searchBenchVault(b, benchPages())
	fake, err := embedfake.Start(embedfake.Options{Trigrams: true})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	c, err := embed.New(embed.Config{URL: fake.URL})
	if err != nil {
		b.Fatal(err)
	}
	svc.SetEmbedder(c)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() { svc.RunEmbeddings(wctx); close(done) }()
	for {
		st, _, err := svc.EmbedStatus(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if st.Waiting == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	took := time.Since(start)
	cancel()
	<-done
	if n := svc.EmbedCounters(); n.Pages > 0 {
		b.Logf("embedded %d pages (%d sections) in %s: %.0f pages/s, %.0f sections/s; the endpoint's share %s",
			n.Pages, n.Sections, took.Round(time.Millisecond), float64(n.Pages)/took.Seconds(), float64(n.Sections)/took.Seconds(), n.EndpointTime.Round(time.Millisecond))
	}
	const question = "what is our plan for the storage migration and the release review with the team budget"
	measure := func(name string, fn func()) float64 {
		var lat []time.Duration
		for range 50 {
			t0 := time.Now()
			fn()
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		b.Logf("%s: p50 %s p99 %s", name, lat[len(lat)/2], lat[len(lat)*99/100])
		return float64(lat[len(lat)/2].Microseconds())
	}
	req := pages.SearchRequest{Query: question, Limit: 10}
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	// The first searches answer by words with a note while the vectors
	// load in the background; the load is done when the note goes.
	t0 := time.Now()
	for {
		res, err := svc.Search(ctx, req)
		if err != nil {
			b.Fatalf("hybrid search: %v", err)
		}
		if res.Note == "" {
			break
		}
		if time.Since(t0) > time.Minute {
			b.Fatalf("hybrid search still says %q after a minute", res.Note)
		}
	}
	load := time.Since(t0)
	runtime.GC()
	runtime.ReadMemStats(&ms1)
	svc.SetEmbedder(nil)
	lex := measure("lexical", func() {
		if _, err := svc.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	})
	svc.SetEmbedder(c)
	ep := measure("endpoint", func() {
		if _, err := c.Embed(ctx, []string{question}); err != nil {
			b.Fatal(err)
		}
	})
	hy := measure("hybrid", func() {
		if _, err := svc.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	})
	for b.Loop() {
		if _, err := svc.Search(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(lex, "lexical-p50-µs")
	b.ReportMetric(ep, "endpoint-p50-µs")
	b.ReportMetric(hy, "hybrid-p50-µs")
	b.ReportMetric(hy-lex, "added-p50-µs")
	b.Logf("first hybrid search (loads the vectors): %s; vectors cached: %.1f MB; heap grew %.1f MB",
		load.Round(time.Millisecond), float64(svc.VectorCacheBytes())/1e6, float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc))/1e6)
}
