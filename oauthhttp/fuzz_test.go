package oauthhttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/oauth"
	"github.com/atrium-hq/atrium/oauthhttp"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
)

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// FuzzOAuthRoutes throws paths, headers and bodies at every endpoint of the
// authorization server: whatever comes, the answer is not a 5xx, nothing
// panics, and every refusal is OAuth's JSON error. Without -fuzz it runs the
// seeds, as a test.
//
//	go test ./oauthhttp -run '^$' -fuzz FuzzOAuthRoutes -fuzztime 30s
func FuzzOAuthRoutes(f *testing.F) {
	routes := oauthhttp.Routes()
	seeds := []struct{ param, ctype, body string }{
		{"default", "application/x-www-form-urlencoded", "grant_type=authorization_code&code=atc_x&code_verifier=" + strings.Repeat("v", 50) + "&client_id=atrium-dcr-x"},
		{"../x", "application/json", `{"redirect_uris":["http://127.0.0.1:1/cb"],"client_name":"` + strings.Repeat("n", 300) + `"}`},
		{"a b", "application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=atf_nope&client_id=https://127.0.0.1/c.json"},
		{"", "text/plain", "token=ato_x&token=ato_y&client_id=a&client_id=b"},
		{"w", "application/json", `{"redirect_uris":["javascript:alert(1)","data:x"]}`},
		{"x", "application/x-www-form-urlencoded", "grant_type=authorization_code&client_secret=s&client_id=\x00"},
	}
	for i := range routes {
		s := seeds[i%len(seeds)]
		f.Add(uint8(i), s.param, s.ctype, s.body, i%2 == 0)
	}
	svc := servicestest.MustOpen(f, store.SQLite, nil)
	svc.ConfigureOAuth(oauth.Config{DCR: true})
	mux := http.NewServeMux()
	(&oauthhttp.Handler{OAuth: svc.OAuth, Auth: &authn.Authenticator{Mode: authn.ModeToken, Identity: svc.Identity, OAuth: true}}).Register(mux)
	f.Fuzz(func(t *testing.T, route uint8, param, ctype, body string, basic bool) {
		pattern := routes[int(route)%len(routes)]
		method, target, _ := strings.Cut(pattern, " ")
		path := wildcard.ReplaceAllString(target, param)
		req, err := http.NewRequest(method, "http://127.0.0.1:8080"+path, strings.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		req.Header.Set("Content-Type", ctype)
		if basic {
			req.SetBasicAuth(param, body[:min(len(body), 5)])
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", method, path, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && rec.Code != 404 && rec.Code != 405 {
			var e map[string]string
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e["error"] == "" {
				t.Fatalf("%s %q: %d is not OAuth's JSON error: %s", method, path, rec.Code, rec.Body)
			}
		}
	})
}
