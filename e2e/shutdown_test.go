package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SIGTERM lets calls in flight finish and answer, then the process exits 0;
// new connections are refused meanwhile.
func TestGracefulShutdownFinishesCallsInFlight(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("protocol "+map[string]string{"": "2026-07-28"}[version]+version, func(t *testing.T) {
			// The signal goes once the call is on the wire; the server's log
			// then says whether it had begun the call. A call still in the
			// listener's queue is no call in flight (closing the listener
			// resets it): that attempt proves nothing, and is made again.
			for attempt := 1; !shutdownDuringCall(t, version); attempt++ {
				if attempt == 5 {
					t.Fatal("in 5 attempts the server never had the call in flight when SIGTERM came")
				}
				t.Logf("attempt %d: SIGTERM came before the server read the call; again", attempt)
			}
		})
	}
}

var inFlightRE = regexp.MustCompile(`msg="shutting down: finishing in-flight requests" in_flight=(\d+)`)

// shutdownDuringCall sends SIGTERM while a slow call is in flight and checks
// the call answers, new connections are refused, and the server exits 0. It
// reports false, having checked nothing, when the server had not begun the
// call when the signal came.
func shutdownDuringCall(t *testing.T, version string) bool {
	t.Helper()
	srv := startServe(t, "", "--toolsets", "all,conformance")
	sent := make(chan struct{})
	var once sync.Once
	hc := &http.Client{Transport: &sentTransport{next: bearer(srv.AdminToken, "").Transport, mark: "test_slow", sent: func() { once.Do(func() { close(sent) }) }}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := newClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.MCP(), HTTPClient: hc, MaxRetries: -1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_slow", Arguments: map[string]any{"ms": 1500}})
		done <- outcome{res, err}
	}()
	select {
	case <-sent:
	case <-time.After(15 * time.Second):
		t.Fatal("the call was never sent")
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var inFlight string
	for deadline := time.Now().Add(15 * time.Second); inFlight == ""; time.Sleep(10 * time.Millisecond) {
		if m := inFlightRE.FindStringSubmatch(srv.stderr.String()); m != nil {
			inFlight = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no shutdown in the log after SIGTERM\n%s", srv.stderr)
		}
	}
	if inFlight == "0" {
		select {
		case err := <-srv.done:
			srv.done <- err
		case <-time.After(15 * time.Second):
			t.Fatalf("server did not exit with nothing in flight\n%s", srv.stderr)
		}
		return false
	}
	// New connections are refused while the call is still running: dial
	// until one is, and check the call had not answered yet.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		res, err := fresh.Get(srv.URL + "/healthz")
		if err != nil {
			break
		}
		res.Body.Close()
		if len(done) > 0 || time.Now().After(deadline) {
			t.Fatal("new connections were still accepted during shutdown, while the call in flight ran")
		}
	}
	select {
	case o := <-done:
		if o.err != nil || o.res.IsError {
			t.Fatalf("call in flight failed during shutdown: %v %+v", o.err, o.res)
		}
		if got := structured(t, o.res)["slept_ms"]; got != float64(1500) {
			t.Fatalf("result = %v", o.res.StructuredContent)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("call in flight never answered")
	}
	select {
	case err := <-srv.done:
		srv.done <- err
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, srv.stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("server did not exit after the call finished\n%s", srv.stderr)
	}
	return true
}

// sentTransport calls sent once a request whose body holds mark has been
// written out in full: the server has it.
type sentTransport struct {
	next http.RoundTripper
	mark string
	sent func()
}

func (s *sentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Method != http.MethodPost {
		return s.next.RoundTrip(r)
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	if bytes.Contains(b, []byte(s.mark)) {
		r.Body = &closeNotifier{ReadCloser: r.Body, closed: s.sent}
	}
	return s.next.RoundTrip(r)
}

// closeNotifier tells when the transport is done with a request body: it
// closes the body once it has written it.
type closeNotifier struct {
	io.ReadCloser
	closed func()
}

func (c *closeNotifier) Close() error {
	err := c.ReadCloser.Close()
	c.closed()
	return err
}
