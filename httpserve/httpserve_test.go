package httpserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/httpserve"
)

// serve runs s on a loopback listener, as Atrium does, until the test ends.
func serve(t *testing.T, cfg httpserve.Config) string {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s := httpserve.New(cfg)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + s.Addr().String()
}

// The README: /healthz answers {"status":"ok"} when the database answers,
// 503 otherwise; no token needed.
func TestHealthzSaysWhetherTheDatabaseAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		health error
		status int
		body   string
	}{
		{"database answers", nil, http.StatusOK, "ok"},
		{"database does not answer", errors.New("connection refused"), http.StatusServiceUnavailable, "unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := serve(t, httpserve.Config{Engine: "sqlite", Health: func(context.Context) error { return tc.health }})
			res, err := http.Get(url + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body map[string]string
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tc.status || body["status"] != tc.body || body["engine"] != "sqlite" {
				t.Errorf("GET /healthz = %d %v, want %d with status %q", res.StatusCode, body, tc.status, tc.body)
			}
			if strings.Contains(body["status"]+body["error"], "connection refused") {
				t.Errorf("/healthz shows the database's error to anyone: %v", body)
			}
		})
	}
}

// A handler's panic answers 500 with the JSON error body and leaves the
// server serving.
func TestPanicIsAnInternalError(t *testing.T) {
	url := serve(t, httpserve.Config{Register: func(mux *http.ServeMux) {
		mux.HandleFunc("GET /boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	}})
	res, err := http.Get(url + "/boom")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var body map[string]any
	json.Unmarshal(b, &body)
	if res.StatusCode != http.StatusInternalServerError || body["code"] != "internal" || strings.Contains(string(b), "boom") {
		t.Errorf("a panicking handler answered %d %s, want 500 internal without the panic's text", res.StatusCode, b)
	}
	if res, err := http.Get(url + "/healthz"); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("after a panic, /healthz = %v %v", res, err)
	}
}

// The README: on a loopback listener a request must name a loopback Host
// (or an allowed one), and an Origin must match the host.
func TestLoopbackRefusesOtherHostsAndOrigins(t *testing.T) {
	url := serve(t, httpserve.Config{AllowedHosts: []string{"atrium.internal"}})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	cases := []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:" + port, "", http.StatusOK},
		{"localhost:" + port, "http://localhost:" + port, http.StatusOK},
		{"atrium.internal", "", http.StatusOK},
		{"evil.example:" + port, "", http.StatusForbidden},
		{"127.0.0.1:" + port, "http://evil.example", http.StatusForbidden},
		{"127.0.0.1:" + port, "null", http.StatusForbidden},
	}
	got, want := map[string]int{}, map[string]int{}
	for _, c := range cases {
		req := httptest.NewRequest("GET", url+"/healthz", nil)
		req.RequestURI = ""
		req.Host = c.host
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		key := "Host " + c.host + " Origin " + c.origin
		got[key], want[key] = res.StatusCode, c.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

// A shutdown ends within its grace period even when closing the streams and
// sessions never returns (an MCP session whose call never drains).
func TestShutdownEndsWhenClosingStreamsHangs(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	s := httpserve.New(httpserve.Config{
		Addr:          "127.0.0.1:0",
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		ShutdownGrace: 300 * time.Millisecond,
		CloseStreams:  func() { <-hang },
	})
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return: a hanging CloseStreams held the shutdown")
	}
}
