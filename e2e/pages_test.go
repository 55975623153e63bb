package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A subscriber to atrium://pages/{path} hears of every change to the page,
// whatever surface made it: another MCP session, REST, another process.
func TestPageSubscriptionsHearEverySurface(t *testing.T) {
	srv := startServe(t, "")
	sub, updates := subscriber(t, srv)
	ctx := context.Background()
	writer := connectHTTP(t, srv.MCP(), srv.AdminToken, "")
	if res := callTool(t, writer, "write_page", map[string]any{"path": "Team/Plan.md", "content": "# Plan"}); res.IsError {
		t.Fatal(res.Content)
	}
	const uri = "atrium://pages/Team/Plan.md"
	if err := sub.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	// The marker page closes the negative check at the end; it is written
	// only then, so that no notification of an earlier write of it (which may
	// reach a subscriber after the write answered) comes in between.
	const markerURI = "atrium://pages/Team/Marker.md"
	if err := sub.Subscribe(ctx, &mcp.SubscribeParams{URI: markerURI}); err != nil {
		t.Fatal(err)
	}
	read, err := sub.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || read.Contents[0].Text != "# Plan" || read.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("read resource: %+v %v", read, err)
	}
	expect := func(how string) {
		t.Helper()
		select {
		case got := <-updates:
			if got != uri {
				t.Fatalf("%s: notified of %s", how, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no notification", how)
		}
	}
	callTool(t, writer, "edit_page", map[string]any{"path": "Team/Plan.md", "operations": []map[string]any{{"op": "append", "text": "- item"}}})
	expect("another MCP session")

	rest, err := newRequest("PATCH", srv.URL+"/api/pages/Team/Plan.md", srv.AdminToken, `{"operations":[{"op":"append","text":"- from REST"}]}`)
	if err != nil || rest.StatusCode != 200 {
		t.Fatalf("REST edit: %v %v", rest, err)
	}
	expect("REST")

	out, errOut, code := srv.cli(t, []string{"ATRIUM_AGENT=cli"}, "call", "edit_page", "path=Team/Plan.md", `operations=[{"op":"append","text":"- from the CLI"}]`)
	if code != 0 {
		t.Fatalf("atrium call: %s %s", out, errOut)
	}
	expect("another process (atrium call)")
	// A change may be told twice (resources/updated only says "read again");
	// what matters below is that the other workspace's write tells nothing,
	// so the echoes of this one are let pass first.
	for quiet := false; !quiet; {
		select {
		case got := <-updates:
			t.Logf("one more notification of %s after the CLI's edit", got)
		case <-time.After(time.Second):
			quiet = true
		}
	}

	// A page of another workspace with the same path never notifies.
	if _, errOut, code := srv.cli(t, nil, "workspace", "create", "elsewhere"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := srv.cli(t, []string{"ATRIUM_AGENT=cli", "ATRIUM_WORKSPACE=elsewhere"}, "call", "write_page", "path=Team/Plan.md", "content=other"); code != 0 {
		t.Fatal(errOut)
	}
	// Then a change of this workspace's marker page, by the same route: a
	// notification of the other workspace's change would come before it.
	if _, errOut, code := srv.cli(t, []string{"ATRIUM_AGENT=cli"}, "call", "write_page", "path=Team/Marker.md", "content=after"); code != 0 {
		t.Fatal(errOut)
	}
	if before, ok := until(updates, markerURI); !ok {
		t.Fatalf("no notification of the marker page: %v", before)
	} else if len(before) > 0 {
		t.Fatalf("notified of another workspace's change: %v", before)
	}
	final, err := sub.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || !strings.Contains(final.Contents[0].Text, "- from the CLI") {
		t.Fatalf("final read: %+v %v", final, err)
	}
}

// subscriber is an admin session over HTTP that reports the URI of every
// notifications/resources/updated it receives; it closes when t ends.
func subscriber(t *testing.T, srv *server) (*mcp.ClientSession, <-chan string) {
	t.Helper()
	updates := make(chan string, 32)
	client := mcp.NewClient(&mcp.Implementation{Name: "subscriber", Version: "1"}, &mcp.ClientOptions{
		Capabilities:           &mcp.ClientCapabilities{},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updates <- r.Params.URI },
	})
	sub, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.MCP(), HTTPClient: bearer(srv.AdminToken, ""), MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return sub, updates
}
