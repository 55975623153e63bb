package webhooks_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/webhooks"
)

func sign(secret, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(body))
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// FuzzGitHubHook throws bodies, events, delivery IDs and signatures at the
// webhook route: nothing is a 5xx, and nothing unsigned gets past 401.
//
//	go test ./webhooks -run '^$' -fuzz FuzzGitHubHook -fuzztime 30s
func FuzzGitHubHook(f *testing.F) {
	f.Add(`{"repository":{"full_name":"acme/app"}}`, "issues", "d-1", true)
	f.Add(`{"repository":{"full_name":"acme/app"}}`, "ping", "", false)
	f.Add(`not json`, "issue_comment", strings.Repeat("x", 200), true)
	f.Add(`{"repository":{"full_name":"`+strings.Repeat("a", 3000)+`"}}`, "label", "d-2", true)
	f.Add(`{}`, "push", "d-3", true)
	svc := servicestest.MustOpen(f, store.SQLite, nil)
	mux := http.NewServeMux()
	(&webhooks.Handler{Tasks: svc.Tasks, GitHubSecret: "s3cret"}).Register(mux)
	f.Fuzz(func(t *testing.T, body, event, delivery string, signed bool) {
		req := httptest.NewRequest(http.MethodPost, "/hooks/github", strings.NewReader(body))
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", delivery)
		if signed {
			req.Header.Set("X-Hub-Signature-256", sign("s3cret", body))
		} else {
			req.Header.Set("X-Hub-Signature-256", sign("other", body))
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		if !signed && rec.Code != http.StatusUnauthorized {
			t.Fatalf("a delivery signed with another secret: %d", rec.Code)
		}
	})
}
