package e2e

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// 32 searches at once from one token are all answered (issue 23.18): the
// gate queues them in turn instead of refusing past 8.
func TestSearchBurstFromOneTokenIsAnswered(t *testing.T) {
	srv := startServe(t, "")
	for i := range 20 {
		if res, err := newRequest("PUT", fmt.Sprintf("%s/api/pages/Burst/%d.md", srv.URL, i), srv.AdminToken, `{"content":"# Burst page\n\nbackups run nightly with a simple copy"}`); err != nil || res.StatusCode/100 != 2 {
			t.Fatalf("PUT: %v %v", err, res)
		}
	}
	var wg sync.WaitGroup
	codes := make(chan int, 32)
	for range 32 {
		wg.Go(func() {
			res, err := newRequest("GET", srv.URL+"/api/search?q=backups+nightly", srv.AdminToken, "")
			if err != nil {
				t.Error(err)
				return
			}
			codes <- res.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != http.StatusOK {
			t.Errorf("a search of the burst: status %d", c)
		}
	}
}
