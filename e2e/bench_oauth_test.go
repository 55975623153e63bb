package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// oauthHandler is a go-sdk OAuth client that registers dynamically and has
// person consent as admin.
func oauthHandler(b testing.TB, person *personBrowser) *auth.AuthorizationCodeHandler {
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "bench", RedirectURIs: []string{"http://127.0.0.1:1/callback"}}},
		AuthorizationCodeFetcher: person.fetcher(approve("default", "writer", "")),
	})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkOAuth measures, as an outside client does against a fresh
// server: a tool call with an OAuth access token against the same call with
// an API token, interleaved in one run (p50 of each and their ratio); and
// the whole sign-in of a new client — the 401, discovery, registration, the
// consent page's two requests (the person's click itself is not timed), the
// code for tokens, the handshake and the first tool call.
//
//	go test ./e2e -run '^$' -bench BenchmarkOAuth -benchtime 2000x
func BenchmarkOAuth(b *testing.B) {
	b.Run("call", func(b *testing.B) {
		srv := startServe(b, "")
		person := signedIn(b, srv, srv.AdminToken)
		h := oauthHandler(b, person)
		if _, err := oauthConnect(b, srv.MCP(), h); err != nil {
			b.Fatal(err)
		}
		ts, _ := h.TokenSource(context.Background())
		tok, err := ts.Token()
		if err != nil {
			b.Fatal(err)
		}
		// Both sessions are the same client sending a bearer header: what
		// differs is only the server's work for each kind of token.
		oa := httpSession(b, srv.MCP(), tok.AccessToken, "")
		api := httpSession(b, srv.MCP(), srv.AdminToken, "")
		ctx := context.Background()
		params := &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}}
		call := func(cs *mcp.ClientSession) time.Duration {
			t0 := time.Now()
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatalf("whoami: %v %+v", err, res)
			}
			return time.Since(t0)
		}
		for range 50 {
			call(api)
			call(oa)
		}
		apiLat, oaLat := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			if i%2 == 0 { // alternate which goes first
				apiLat, oaLat = append(apiLat, call(api)), append(oaLat, call(oa))
			} else {
				oaLat, apiLat = append(oaLat, call(oa)), append(apiLat, call(api))
			}
		}
		b.StopTimer()
		slices.Sort(apiLat)
		slices.Sort(oaLat)
		p50 := func(l []time.Duration) float64 { return float64(l[len(l)/2].Microseconds()) }
		b.ReportMetric(p50(apiLat), "api-p50-µs")
		b.ReportMetric(p50(oaLat), "oauth-p50-µs")
		b.ReportMetric(p50(oaLat)/p50(apiLat), "oauth/api")
	})
	b.Run("sign-in", func(b *testing.B) {
		srv := startServe(b, "")
		person := signedIn(b, srv, srv.AdminToken)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			h := oauthHandler(b, person)
			t0 := time.Now()
			cs, err := newClient().Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.MCP(), OAuthHandler: h, MaxRetries: -1}, nil)
			if err != nil {
				b.Fatal(err)
			}
			if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami"}); err != nil || res.IsError {
				b.Fatal(err, res)
			}
			lat = append(lat, time.Since(t0))
			cs.Close()
			if len(lat)%15 == 0 { // stay under the registration limit of one address
				b.StopTimer()
				srv.stop(b)
				srv.restart(b)
				b.StartTimer()
			}
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	})
}
