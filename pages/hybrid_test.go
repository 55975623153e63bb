package pages_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/embed"
	"github.com/atrium-hq/atrium/internal/embedfake"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// hybridEnv is env with the fake embedder and the worker running.
func hybridEnv(t *testing.T, e store.Engine) (*env, *embedfake.Server) {
	t.Helper()
	v := mustEnv(t, e)
	fake, err := embedfake.Start(embedfake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	c, err := embed.New(embed.Config{URL: fake.URL, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	v.svc.SetEmbedder(c)
	v.svc.EmbedPoll = 10 * time.Millisecond
	v.svc.QueryEmbedTimeout = 300 * time.Millisecond
	v.svc.MinSimilarity = 0.2
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.svc.RunEmbeddings(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return v, fake
}

// waitEmbedded waits until the worker has embedded every page.
func waitEmbedded(t *testing.T, v *env) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, on, err := v.svc.EmbedStatus(v.ctx)
		if err != nil || !on {
			t.Fatalf("embed status: %v, on %v", err, on)
		}
		if st.Waiting == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pages still waiting to be embedded: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hitPaths(r pages.SearchResult) []string {
	var out []string
	for _, h := range r.Hits {
		out = append(out, h.Path)
	}
	return out
}

func signal(h pages.Hit, name string) *pages.Signal {
	if h.Explanation == nil {
		return nil
	}
	for i, s := range h.Explanation.Signals {
		if s.Name == name {
			return &h.Explanation.Signals[i]
		}
	}
	return nil
}

// A question sharing no word with the page that answers it finds it
// through the vector side, which says so (rank, section); a page the caller
// cannot read never surfaces through vectors; an edit and a deletion reach
// them. The fake maps "phones" and "computers" onto the concept of
// "devices": this proves the fusion's mechanics, not a model's quality.
func TestHybridSearchFindsByMeaning(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		v, _ := hybridEnv(t, e)
		v.write(t, "Guides/Sync.md", "---\naccess: public\n---\n# Sync\n\nIntro text about the service.\n\n## Setup\n\nPair your devices with the server, then wait.\n")
		v.write(t, "Guides/Cooking.md", "---\naccess: public\n---\n# Cooking\n\nBoil the pasta in salted water.\n")
		v.write(t, "Inventory.md", "# Inventory\n\nThe laptops we own, and their serial numbers.\n") // private
		waitEmbedded(t, v)

		res, err := v.svc.Search(v.ctx, pages.SearchRequest{Query: "phones", Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		got := hitPaths(res)
		if len(got) < 2 || !strings.Contains(strings.Join(got[:2], " "), "Guides/Sync.md") || !strings.Contains(strings.Join(got[:2], " "), "Inventory.md") {
			t.Fatalf("member's hits for phones = %v, want Sync and Inventory first (no page holds the word)", got)
		}
		for _, h := range res.Hits {
			if h.Path != "Guides/Sync.md" {
				continue
			}
			vs := signal(h, "vector")
			if vs == nil || vs.Rank < 1 || vs.Section != "Sync > Setup" || vs.Similarity <= 0.2 || signal(h, "lexical") != nil {
				t.Errorf("Sync's signals = %+v, want a vector rank in section Sync > Setup and no lexical rank", h.Explanation)
			}
			if h.MatchLine != 10 || !strings.Contains(h.Context, "Pair your devices") {
				t.Errorf("Sync's match = line %d %q, want the section's line 10", h.MatchLine, h.Context)
			}
		}
		if res.Total != len(res.Hits) {
			t.Errorf("total %d for %d hits", res.Total, len(res.Hits))
		}

		// Both signals: a page holding the words and near in meaning.
		res, err = v.svc.Search(v.ctx, pages.SearchRequest{Query: "pair devices", Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Path != "Guides/Sync.md" || signal(res.Hits[0], "lexical") == nil || signal(res.Hits[0], "vector") == nil || signal(res.Hits[0], "words") == nil {
			t.Errorf("hits for pair devices = %v; the first's explanation %+v should hold both rankings", hitPaths(res), res.Hits[0].Explanation)
		}

		// A reader who may not see private pages never gets one by meaning.
		for _, ctx := range []context.Context{v.anon} {
			res, err := v.svc.Search(ctx, pages.SearchRequest{Query: "phones laptops", Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := hitPaths(res); strings.Contains(strings.Join(got, " "), "Inventory") || len(got) == 0 {
				t.Errorf("public reader's hits = %v: the private page surfaced, or nothing did", got)
			}
		}
		// Nor outside the folder asked for.
		res, _ = v.svc.Search(v.ctx, pages.SearchRequest{Query: "phones", Path: "Guides"})
		if got := hitPaths(res); len(got) != 1 || got[0] != "Guides/Sync.md" {
			t.Errorf("hits under Guides = %v, want Sync only", got)
		}

		// An edit reaches the vectors: the search right after may rank with
		// the index it had (reloaded in the background), the next ones not.
		v.write(t, "Guides/Sync.md", "---\naccess: public\n---\n# Sync\n\nNothing here any more but gardening.\n")
		waitEmbedded(t, v)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			res, _ = v.svc.Search(v.ctx, pages.SearchRequest{Query: "phones"})
			got := hitPaths(res)
			if !strings.Contains(strings.Join(got, " "), "Sync") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("hits after the edit = %v, still Sync", got)
			}
		}
		// A deletion too, before the worker runs.
		if _, err := v.svc.DeletePage(v.ctx, "Inventory.md"); err != nil {
			t.Fatal(err)
		}
		res, _ = v.svc.Search(v.ctx, pages.SearchRequest{Query: "phones"})
		if got := hitPaths(res); len(got) != 0 {
			t.Errorf("hits after deleting Inventory = %v, want none", got)
		}
	})
}

// The endpoint down or slow: lexical results with a note, never an error,
// and within the query's deadline; pages written meanwhile wait, with one
// request per backoff step, and are embedded once it answers.
func TestHybridSearchEndpointDown(t *testing.T) {
	v, fake := hybridEnv(t, store.SQLite)
	v.write(t, "Sync.md", "# Sync\n\nPair your devices with the server.\n")
	waitEmbedded(t, v)

	fake.SetLatency(3 * time.Second)
	start := time.Now()
	res, err := v.svc.Search(v.ctx, pages.SearchRequest{Query: "pair devices"})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second || !strings.Contains(res.Note, "embeddings endpoint") || len(res.Hits) != 1 {
		t.Errorf("slow endpoint: %v, note %q, hits %v; want the lexical hit with a note within the deadline", took, res.Note, hitPaths(res))
	}
	fake.SetLatency(0)
	fake.SetFailure(http.StatusServiceUnavailable)
	// Searches skip the endpoint for a while after it failed.
	before := fake.Requests()
	res, err = v.svc.Search(v.ctx, pages.SearchRequest{Query: "pair devices"})
	if err != nil || !strings.Contains(res.Note, "embeddings endpoint") || len(res.Hits) != 1 {
		t.Errorf("endpoint down: %v, note %q, hits %v", err, res.Note, hitPaths(res))
	}
	if fake.Requests() != before {
		t.Errorf("a search asked an endpoint that just failed")
	}
	v.write(t, "Later.md", "# Later\n\nWritten while the endpoint is down.\n")
	time.Sleep(2500 * time.Millisecond)
	if n := fake.Requests() - before; n > 3 {
		t.Errorf("%d requests in 2.5 s to an endpoint that is down; want one per backoff step", n)
	}
	st, _, _ := v.svc.EmbedStatus(v.ctx)
	if st.Waiting != 1 {
		t.Errorf("status while down = %+v, want Later waiting", st)
	}
	fake.SetFailure(0)
	deadline := time.Now().Add(10 * time.Second)
	for st.Waiting != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		st, _, _ = v.svc.EmbedStatus(v.ctx)
	}
	if st.Waiting != 0 {
		t.Errorf("status after the endpoint came back = %+v", st)
	}
}
