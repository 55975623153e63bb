package e2e

import (
	"context"
	"net/http"
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
			srv := startServe(t, "", "--toolsets", "all,conformance")
			cs := connectHTTP(t, srv.MCP(), srv.AdminToken, version)
			type outcome struct {
				res *mcp.CallToolResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_slow", Arguments: map[string]any{"ms": 1500}})
				done <- outcome{res, err}
			}()
			time.Sleep(300 * time.Millisecond) // well inside the 1.5 s call
			if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			time.Sleep(200 * time.Millisecond)
			if _, err := http.Get(srv.URL + "/healthz"); err == nil {
				t.Error("a new connection was accepted during shutdown")
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
		})
	}
}
