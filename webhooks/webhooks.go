// Package webhooks takes the webhook deliveries of the trackers that tasks
// are mirrored to: POST /hooks/github, for an Atrium that GitHub can reach.
// A delivery is checked by its HMAC signature (the secret shared with the
// repository's webhook), then wakes the mirror of every workspace linked to
// its repository; the mirror reads GitHub itself, so the body is trusted
// for nothing more than which repository changed.
package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/tasks"
)

// Handler serves the webhook routes.
type Handler struct {
	Tasks *tasks.Service
	// GitHubSecret is the webhook secret of GitHub deliveries; empty: the
	// route answers that webhooks are not set up (polling still runs).
	GitHubSecret string
	Log          *slog.Logger
}

// Routes lists the patterns Register mounts, for the sweeps.
func Routes() []string { return []string{"POST /hooks/github"} }

// Register mounts the routes on mux.
func (h *Handler) Register(mux *http.ServeMux) {
	if h.Log == nil {
		h.Log = slog.Default()
	}
	mux.HandleFunc("POST /hooks/github", h.github)
}

// maxDelivery is GitHub's own cap on a webhook payload.
const maxDelivery = 25 << 20

// github takes one delivery: ping says hello; issues, issue_comment and
// label events of a linked repository wake its mirrors. A bad or missing
// signature is 401 and nothing happens.
func (h *Handler) github(w http.ResponseWriter, r *http.Request) {
	if h.GitHubSecret == "" {
		authn.WriteError(w, r, h.Log, atrium.Errorf(atrium.ENotFound, "this server takes no GitHub webhooks: set ATRIUM_GITHUB_WEBHOOK_SECRET (the mirror polls meanwhile)"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDelivery))
	if err != nil {
		authn.WriteError(w, r, h.Log, err)
		return
	}
	if !validSignature(h.GitHubSecret, body, r.Header.Get("X-Hub-Signature-256")) {
		authn.WriteError(w, r, h.Log, atrium.Errorf(atrium.EUnauthenticated, "the delivery's signature (X-Hub-Signature-256) does not match the webhook secret"))
		return
	}
	event := r.Header.Get("X-GitHub-Event")
	var payload struct {
		Action     string `json:"action"`
		Repository struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
		Issue struct {
			Number int `json:"number"`
		} `json:"issue"`
	}
	if err := json.Unmarshal(body, &payload); err != nil {
		authn.WriteError(w, r, h.Log, atrium.Errorf(atrium.EInvalid, "the delivery is not JSON: send it as application/json"))
		return
	}
	switch event {
	case "ping":
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "repository": payload.Repository.FullName})
		return
	case "issues", "issue_comment", "label":
	default:
		writeJSON(w, http.StatusAccepted, map[string]any{"ignored": event})
		return
	}
	// A deletion is seen only by reading what is left: the delivery names
	// the issue whose comments (or itself) to read whole.
	issue := 0
	if payload.Action == "deleted" || payload.Action == "transferred" {
		issue = payload.Issue.Number
	}
	res, err := h.Tasks.TrackerHook(r.Context(), "github", payload.Repository.FullName, r.Header.Get("X-GitHub-Delivery"), event, issue)
	if err != nil {
		authn.WriteError(w, r, h.Log, err)
		return
	}
	status := http.StatusAccepted
	if res.Duplicate && len(res.Workspaces) == 0 {
		status = http.StatusOK
	}
	writeJSON(w, status, res)
}

// validSignature reports whether sig is "sha256=" and the hex HMAC-SHA256
// of body under secret, compared in constant time.
func validSignature(secret string, body []byte, sig string) bool {
	got, ok := strings.CutPrefix(sig, "sha256=")
	if !ok {
		return false
	}
	want, err := hex.DecodeString(got)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hmac.Equal(mac.Sum(nil), want)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
