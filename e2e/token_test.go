package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// atrium token create grants nothing it was not asked to, and says what the
// new token grants. Without --workspace, a principal keeps exactly the roles
// it has; one with none is refused rather than made a writer in default.
func TestTokenCreateGrantsOnlyWhatItSays(t *testing.T) {
	srv := startServe(t, "")
	if _, errOut, code := srv.cli(t, nil, "workspace", "create", "team"); code != 0 {
		t.Fatalf("workspace create: %s", errOut)
	}
	create := func(args ...string) (secret, said string) {
		t.Helper()
		out, errOut, code := srv.cli(t, nil, append([]string{"token", "create"}, args...)...)
		if code != 0 || !strings.HasPrefix(out, "atr_") {
			t.Fatalf("token create %v: exit %d, %s %s", args, code, out, errOut)
		}
		return strings.TrimSpace(out), errOut
	}
	// access is what a token may do, in workspace ws ("" for the default).
	access := func(token, ws string) (int, string) {
		t.Helper()
		path := "/api/access"
		if ws != "" {
			path = "/w/" + ws + path
		}
		status, _, body := get(t, "GET", srv.URL+path, "Bearer "+token, "")
		var a struct{ Role string }
		json.Unmarshal([]byte(body), &a)
		return status, a.Role
	}
	wantSaid := func(said string, parts ...string) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(said, p) {
				t.Errorf("token create said:\n%s\nwant it to say %q", said, p)
			}
		}
	}

	_, said := create("--principal", "bob", "--workspace", "team", "--role", "reader")
	wantSaid(said, "created principal bob", "bob joined workspace team as reader", "works only in workspace team (reader)")

	// bob belongs only to team: a token without --workspace keeps him there.
	anyWS, said := create("--principal", "bob")
	wantSaid(said, "works in every workspace bob belongs to, now: team (reader)")
	if strings.Contains(said, "joined") || strings.Contains(said, "default") {
		t.Errorf("token create without --workspace changed a membership:\n%s", said)
	}
	if status, role := access(anyWS, "team"); status != 200 || role != "reader" {
		t.Errorf("bob in team: %d %q, want reader", status, role)
	}
	if status, role := access(anyWS, ""); status != 403 {
		t.Errorf("bob in default: %d %q, want 403: he was never made a member", status, role)
	}

	// A principal that belongs nowhere gets no token, and is not created.
	out, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "newbie")
	if code == 0 || strings.Contains(out, "atr_") || !strings.Contains(errOut, "belongs to no workspace") || !strings.Contains(errOut, "--workspace") {
		t.Errorf("token create for a principal of no workspace: exit %d, %s %s", code, out, errOut)
	}
	if _, errOut, code := srv.cli(t, nil, "token", "list", "--principal", "newbie"); code == 0 || !strings.Contains(errOut, "not found") {
		t.Errorf("the refused request created principal newbie: exit %d, %s", code, errOut)
	}

	// Asked for, a role is granted, and said.
	_, said = create("--principal", "bob", "--role", "writer")
	wantSaid(said, "bob joined workspace default as writer", "now: default (writer), team (reader)")
	_, said = create("--principal", "bob", "--workspace", "team", "--role", "admin")
	wantSaid(said, "bob's role in workspace team changed from reader to admin", "works only in workspace team (admin)")
	if status, role := access(anyWS, "team"); status != 200 || role != "admin" {
		t.Errorf("bob in team after --role admin: %d %q", status, role)
	}

	if _, errOut, code := srv.cli(t, nil, "token", "create", "--principal", "bob", "--workspace", "nowhere"); code == 0 || !strings.Contains(errOut, `workspace "nowhere" not found`) {
		t.Errorf("unknown workspace: exit %d, %s", code, errOut)
	}
}
