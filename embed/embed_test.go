package embed_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/embed"
	"github.com/atrium-hq/atrium/internal/embedfake"
)

func startFake(t *testing.T) *embedfake.Server {
	t.Helper()
	s, err := embedfake.Start(embedfake.Options{Dims: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestEmbedBatches(t *testing.T) {
	s := startFake(t)
	c, err := embed.New(embed.Config{URL: s.URL + "/", Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, 10)
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d", i)
	}
	vecs, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 10 || s.Requests() != 3 || s.Inputs() != 10 {
		t.Fatalf("%d vectors in %d requests of %d inputs; want 10 in 3", len(vecs), s.Requests(), s.Inputs())
	}
	for i, v := range vecs {
		if want := s.Embed(texts[i]); fmt.Sprint(v) != fmt.Sprint(want) {
			t.Errorf("vector %d is not text %d's", i, i)
		}
	}
	if c.Model() != embed.DefaultModel {
		t.Errorf("model %q", c.Model())
	}
}

func TestEmbedErrors(t *testing.T) {
	s := startFake(t)
	c, err := embed.New(embed.Config{URL: s.URL + "/v1", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		status  int
		latency time.Duration
		code    string
	}{
		{http.StatusServiceUnavailable, 0, atrium.EUnavailable},
		{http.StatusTooManyRequests, 0, atrium.EUnavailable},
		{http.StatusBadRequest, 0, atrium.EInvalid},
		{0, time.Second, atrium.EUnavailable}, // past the timeout
	} {
		s.SetFailure(tc.status)
		s.SetLatency(tc.latency)
		start := time.Now()
		_, err := c.Embed(ctx, []string{"a"})
		if got := atrium.ErrorCode(err); got != tc.code {
			t.Errorf("status %d latency %v: code %q (%v), want %q", tc.status, tc.latency, got, err, tc.code)
		}
		if time.Since(start) > 900*time.Millisecond {
			t.Errorf("status %d latency %v: took %v, past the timeout", tc.status, tc.latency, time.Since(start))
		}
	}
	s.SetFailure(0)
	s.SetLatency(0)
	before := s.Requests()
	if _, err := c.Embed(ctx, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if n := s.Requests() - before; n != 1 {
		t.Errorf("%d requests for one call; the client must not retry", n)
	}
	s.Close()
	if _, err := c.Embed(ctx, []string{"a"}); atrium.ErrorCode(err) != atrium.EUnavailable {
		t.Errorf("closed endpoint: %v, want unavailable", err)
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:11434", "ftp://x", "http://", "http://h/?q=1"} {
		if _, err := embed.New(embed.Config{URL: u}); atrium.ErrorCode(err) != atrium.EInvalid {
			t.Errorf("%q: %v, want invalid_argument", u, err)
		}
	}
}
