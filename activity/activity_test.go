package activity_test

import (
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
)

// Members see the work; only admins see who may enter and with what.
func TestVisible(t *testing.T) {
	ws := atrium.Workspace{ID: 7}
	reader := &atrium.Actor{Workspace: ws, Role: atrium.RoleReader}
	writer := &atrium.Actor{Workspace: ws, Role: atrium.RoleWriter}
	admin := &atrium.Actor{Workspace: ws, Role: atrium.RoleAdmin}
	anonymous := &atrium.Actor{Workspace: ws}
	for _, c := range []struct {
		kind  string
		ws    int64
		who   *atrium.Actor
		shown bool
	}{
		{"page.updated", 7, reader, true},
		{"annotation.created", 7, writer, true},
		{"review.created", 7, reader, true},
		{"task.commented", 7, reader, true},
		{"page.updated", 8, admin, false}, // another workspace's
		{"page.updated", 7, anonymous, false},
		{"page.updated", 7, nil, false},
		{"token.created", 7, reader, false},
		{"token.revoked", 7, writer, false},
		{"session.created", 7, writer, false},
		{"session.revoked", 7, reader, false},
		{"member.role_set", 7, writer, false},
		{"member.added", 7, reader, false},
		{"member.removed", 7, reader, false},
		{"principal.created", 7, reader, false},
		{"workspace.created", 7, reader, false},
		{"token.created", 7, admin, true},
		{"session.revoked", 7, admin, true},
		{"member.role_set", 7, admin, true},
	} {
		if got := activity.Visible(c.who, atrium.Event{WorkspaceID: c.ws, Kind: c.kind}); got != c.shown {
			t.Errorf("Visible(%+v, %s in workspace %d) = %v, want %v", c.who, c.kind, c.ws, got, c.shown)
		}
	}
}
