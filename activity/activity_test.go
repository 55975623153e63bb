package activity_test

import (
	"encoding/json"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
)

// Members see the work; only admins see who may enter and with what.
func TestVisible(t *testing.T) {
	ws := atrium.Workspace{ID: 7}
	reader := &atrium.Actor{Workspace: ws, Role: atrium.RoleReader}
	writer := &atrium.Actor{Workspace: ws, Role: atrium.RoleWriter, Principal: atrium.Principal{Handle: "wim"}}
	other := &atrium.Actor{Workspace: ws, Role: atrium.RoleWriter, Principal: atrium.Principal{Handle: "olga"}}
	admin := &atrium.Actor{Workspace: ws, Role: atrium.RoleAdmin, Principal: atrium.Principal{Handle: "ada"}}
	anonymous := &atrium.Actor{Workspace: ws}
	for _, c := range []struct {
		kind    string
		ws      int64
		who     *atrium.Actor
		shown   bool
		payload string
	}{
		{"page.updated", 7, reader, true, ""},
		{"annotation.created", 7, writer, true, ""},
		{"review.created", 7, reader, true, ""},
		{"task.commented", 7, reader, true, ""},
		{"page.updated", 8, admin, false, ""}, // another workspace's
		{"page.updated", 7, anonymous, false, ""},
		{"page.updated", 7, nil, false, ""},
		{"token.created", 7, reader, false, ""},
		{"token.revoked", 7, writer, false, ""},
		{"session.created", 7, writer, false, ""},
		{"session.revoked", 7, reader, false, ""},
		{"member.role_set", 7, writer, false, ""},
		{"member.added", 7, reader, false, ""},
		{"member.removed", 7, reader, false, ""},
		{"principal.created", 7, reader, false, ""},
		{"workspace.created", 7, reader, false, ""},
		{"token.created", 7, admin, true, ""},
		{"session.revoked", 7, admin, true, ""},
		{"member.role_set", 7, admin, true, ""},
		// A draft, and what is done to it, is its author's and the admins'.
		{"annotation.created", 7, writer, true, `{"doc_path":"A.md","id":"x","draft_of":"wim"}`},
		{"annotation.created", 7, other, false, `{"doc_path":"A.md","id":"x","draft_of":"wim"}`},
		{"annotation.created", 7, reader, false, `{"doc_path":"A.md","id":"x","draft_of":"wim"}`},
		{"annotation.created", 7, admin, true, `{"doc_path":"A.md","id":"x","draft_of":"wim"}`},
		{"annotation.updated", 7, other, false, `{"draft_of":"wim"}`},
		{"annotation.deleted", 7, other, false, `{"draft_of":"wim"}`},
		{"review.created", 7, other, false, `{"draft_of":"wim"}`},
		{"review.updated", 7, writer, true, `{"draft_of":"wim"}`},
		{"annotation.created", 7, other, true, `{"doc_path":"A.md","id":"x"}`},
		{"annotation.created", 7, other, true, `{"doc_path":"A.md","id":"x","draft_of":""}`},
		{"page.created", 7, other, true, `{"path":"draft_of.md"}`},
	} {
		e := atrium.Event{WorkspaceID: c.ws, Kind: c.kind, Payload: json.RawMessage(c.payload)}
		if got := activity.Visible(c.who, e); got != c.shown {
			t.Errorf("Visible(%+v, %s %s in workspace %d) = %v, want %v", c.who, c.kind, c.payload, c.ws, got, c.shown)
		}
	}
}
