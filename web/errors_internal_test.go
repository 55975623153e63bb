package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium/services"
)

// A request the browser abandoned (a reload, a closed tab) is not an error
// of the server's: it is not logged as one. A failure of the server is.
func TestAnAbandonedRequestIsNoServerError(t *testing.T) {
	var logged strings.Builder
	h := &Handler{Services: &services.Services{Log: slog.New(slog.NewTextHandler(&logged, nil))}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequest("GET", "/tree", nil).WithContext(ctx)
	if code := h.errorCode(req, fmt.Errorf("begin read: %w", ctx.Err())); code == "internal" || strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("an abandoned request is %s, logged:\n%s", code, logged.String())
	}
	live := httptest.NewRequest("GET", "/tree", nil)
	if code := h.errorCode(live, fmt.Errorf("begin read: disk on fire")); code != "internal" || !strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("a server failure is %s, logged:\n%s", code, logged.String())
	}
}
