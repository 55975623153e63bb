package e2e

import (
	"context"
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
			shutdownDuringCall(t, version)
		})
	}
}

var inFlightRE = regexp.MustCompile(`msg="shutting down: finishing in-flight requests" in_flight=(\d+)`)

// shutdownDuringCall sends SIGTERM while a slow call is in flight and checks
// the call answers, new connections are refused, and the server exits 0.
// The signal goes once the call reports progress as it begins: a request
// merely written out may still wait in the listener's queue, which closing
// the listener resets, and a keep-alive connection the request is on may be
// closed as idle before the server reads it.
func shutdownDuringCall(t *testing.T, version string) {
	t.Helper()
	srv := startServe(t, "", "--toolsets", "all,conformance")
	begun := make(chan struct{})
	var once sync.Once
	client := mcp.NewClient(&mcp.Implementation{Name: "atrium-e2e", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			once.Do(func() { close(begun) })
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.MCP(), HTTPClient: bearer(srv.AdminToken, ""), MaxRetries: -1}, opts)
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
		params := &mcp.CallToolParams{Name: "test_slow", Arguments: map[string]any{"ms": 1500}}
		params.SetProgressToken("slow")
		res, err := cs.CallTool(context.Background(), params)
		done <- outcome{res, err}
	}()
	select {
	case <-begun:
	case o := <-done:
		t.Fatalf("the call answered before reporting it had begun: %v %+v", o.err, o.res)
	case <-time.After(15 * time.Second):
		t.Fatal("the call never reported it had begun")
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
		t.Fatalf("the server counted no request in flight while the call ran\n%s", srv.stderr)
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
}
