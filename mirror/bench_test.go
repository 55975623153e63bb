package mirror_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
)

// BenchmarkEditToSearchable measures how long a file saved in the mirror
// folder takes to be found by search: the debounce (100ms, the default),
// reading the file, the write and its indexing.
//
//	go test ./mirror -run '^$' -bench EditToSearchable -benchtime 50x
func BenchmarkEditToSearchable(b *testing.B) {
	v := newEnv(b, store.SQLite)
	v.debnc = 100 * time.Millisecond
	v.start()
	v.writeFile("Bench.md", "# Bench")
	v.eventually("first sync", func() bool { _, ok := v.page("Bench.md"); return ok })
	b.ResetTimer()
	lat := make([]time.Duration, 0, b.N)
	for i := range b.N {
		word := fmt.Sprintf("zqx%06d", i)
		t0 := time.Now()
		v.writeFile("Bench.md", "# Bench\n\nthe word is "+word+"\n")
		for {
			r, err := v.docs.Search(v.ctx, pages.SearchRequest{Query: word})
			if err != nil {
				b.Fatal(err)
			}
			if r.Total == 1 {
				break
			}
			if time.Since(t0) > 10*time.Second {
				b.Fatalf("%s never became searchable", word)
			}
			time.Sleep(2 * time.Millisecond)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Milliseconds()), "p95-ms")
}
