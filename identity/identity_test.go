package identity_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

func mustService(t *testing.T, e store.Engine) *identity.Service {
	t.Helper()
	return newSvc(t, storetest.MustOpen(t, e, nil))
}

func newSvc(tb testing.TB, db *store.DB) *identity.Service {
	svc := identity.New(db, nil)
	tb.Cleanup(svc.Close)
	return svc
}

func TestBootstrapCreatesAdminOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		svc := mustService(t, e)
		b, err := svc.Bootstrap(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.AdminToken, identity.TokenPrefix) {
			t.Fatalf("first bootstrap token = %q", b.AdminToken)
		}
		again, err := svc.Bootstrap(ctx, true)
		if err != nil || again.AdminToken != "" {
			t.Fatalf("second bootstrap = %+v, %v; want no new token", again, err)
		}
		a, err := svc.Authenticate(ctx, b.AdminToken, "")
		if err != nil {
			t.Fatal(err)
		}
		if a.Principal.Handle != identity.AdminHandle || a.Role != atrium.RoleAdmin || a.Workspace.Name != atrium.DefaultWorkspace || a.Principal.Kind != atrium.KindHuman {
			t.Fatalf("admin actor = %+v", a)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		svc := mustService(t, e)
		if _, err := svc.Bootstrap(ctx, false); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateWorkspace(ctx, "team", ""); err != nil {
			t.Fatal(err)
		}
		anyWS, _, err := svc.CreateToken(ctx, identity.TokenRequest{Principal: "dede", Role: atrium.RoleReader})
		if err != nil {
			t.Fatal(err)
		}
		teamOnly, tok, err := svc.CreateToken(ctx, identity.TokenRequest{Principal: "bot", Kind: atrium.KindAgent, Workspace: "team", Role: atrium.RoleWriter, Name: "ci"})
		if err != nil {
			t.Fatal(err)
		}
		if tok.Workspace != "team" || tok.Principal != "bot" {
			t.Fatalf("token = %+v", tok)
		}
		tests := []struct {
			name, token, workspace string
			wantCode               string
			wantHandle, wantWS     string
			wantRole               atrium.Role
		}{
			{"unbound token, default workspace", anyWS, "", "", "dede", "default", atrium.RoleReader},
			{"unbound token names its workspace", anyWS, "default", "", "dede", "default", atrium.RoleReader},
			{"unbound token, workspace it is not a member of", anyWS, "team", atrium.EPermission, "", "", ""},
			{"bound token, its own workspace by default", teamOnly, "", "", "bot", "team", atrium.RoleWriter},
			{"bound token, another workspace", teamOnly, "default", atrium.EPermission, "", "", ""},
			{"unknown workspace", anyWS, "nope", atrium.EPermission, "", "", ""},
			{"wrong secret", identity.TokenPrefix + "AAAA", "", atrium.EUnauthenticated, "", "", ""},
			{"not a token at all", "hello", "", atrium.EUnauthenticated, "", "", ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				a, err := svc.Authenticate(ctx, tc.token, tc.workspace)
				if got := atrium.ErrorCode(err); got != tc.wantCode {
					t.Fatalf("code = %q (%v), want %q", got, err, tc.wantCode)
				}
				if tc.wantCode != "" {
					return
				}
				if a.Principal.Handle != tc.wantHandle || a.Workspace.Name != tc.wantWS || a.Role != tc.wantRole {
					t.Fatalf("actor = %s %s, want %s@%s %s", a, a.Role, tc.wantHandle, tc.wantWS, tc.wantRole)
				}
			})
		}

		if _, err := svc.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Authenticate(ctx, teamOnly, ""); atrium.ErrorCode(err) != atrium.EUnauthenticated {
			t.Fatalf("revoked token: %v, want unauthenticated", err)
		}
		toks, err := svc.Tokens(ctx, "bot")
		if err != nil || len(toks) != 1 || toks[0].RevokedAt == nil {
			t.Fatalf("bot's tokens = %+v, %v", toks, err)
		}
		if _, err := svc.RevokeToken(ctx, 9999); atrium.ErrorCode(err) != atrium.ENotFound {
			t.Fatalf("revoke unknown: %v, want not_found", err)
		}
	})
}

func TestLocalActorIsCreatedOnFirstUse(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		svc := mustService(t, e)
		if _, err := svc.Bootstrap(ctx, false); err != nil {
			t.Fatal(err)
		}
		a, err := svc.LocalActor(ctx, "claude", "", atrium.KindAgent)
		if err != nil {
			t.Fatal(err)
		}
		if a.Principal.Handle != "claude" || a.Principal.Kind != atrium.KindAgent || a.Role != atrium.RoleWriter || a.Workspace.Name != "default" {
			t.Fatalf("first use = %+v", a)
		}
		b, err := svc.LocalActor(ctx, "claude", "default", atrium.KindAgent)
		if err != nil || b.Principal.ID != a.Principal.ID {
			t.Fatalf("second use = %+v, %v; want the same principal", b, err)
		}
		if _, err := svc.LocalActor(ctx, "claude", "nowhere", atrium.KindAgent); atrium.ErrorCode(err) != atrium.ENotFound {
			t.Fatalf("unknown workspace: %v, want not_found", err)
		}
		if _, err := svc.LocalActor(ctx, "Not A Handle", "", atrium.KindAgent); atrium.ErrorCode(err) != atrium.EInvalid {
			t.Fatalf("bad handle: %v, want invalid_argument", err)
		}
		admin, err := svc.AdminActor(ctx, "")
		if err != nil || admin.Role != atrium.RoleAdmin {
			t.Fatalf("admin actor = %+v, %v", admin, err)
		}
	})
}

func TestCreateTokenRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	svc := mustService(t, store.SQLite)
	if _, err := svc.Bootstrap(ctx, false); err != nil {
		t.Fatal(err)
	}
	for _, r := range []identity.TokenRequest{
		{Principal: ""},
		{Principal: "UPPER"},
		{Principal: "ok", Kind: "robot"},
		{Principal: "ok", Role: "owner"},
		{Principal: "ok", Workspace: "missing"},
	} {
		if _, _, err := svc.CreateToken(ctx, r); err == nil {
			t.Errorf("CreateToken(%+v) succeeded", r)
		}
	}
	if toks, err := svc.Tokens(ctx, ""); err != nil || len(toks) != 0 {
		t.Fatalf("tokens after refused requests = %+v, %v; want none", toks, err)
	}
}

// A token request changes memberships only when it names a workspace or a
// role, and says what the token grants.
func TestIssueTokenGrantsOnlyWhatIsAsked(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		ctx := context.Background()
		svc := mustService(t, e)
		if _, err := svc.Bootstrap(ctx, false); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateWorkspace(ctx, "team", ""); err != nil {
			t.Fatal(err)
		}
		is, err := svc.IssueToken(ctx, identity.TokenRequest{Principal: "bob", Workspace: "team"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(identity.Issued{NewPrincipal: true, Changed: &identity.RoleChange{Workspace: "team", To: atrium.RoleWriter}, Grants: []identity.Membership{{Workspace: "team", Role: atrium.RoleWriter}}}, is, cmpopts.IgnoreFields(identity.Issued{}, "Secret", "Token")); diff != "" {
			t.Errorf("bound to team (-want +got):\n%s", diff)
		}
		is, err = svc.IssueToken(ctx, identity.TokenRequest{Principal: "bob"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(identity.Issued{Grants: []identity.Membership{{Workspace: "team", Role: atrium.RoleWriter}}}, is, cmpopts.IgnoreFields(identity.Issued{}, "Secret", "Token")); diff != "" {
			t.Errorf("no workspace (-want +got):\n%s", diff)
		}
		if _, err := svc.Authenticate(ctx, is.Secret, atrium.DefaultWorkspace); atrium.ErrorCode(err) != atrium.EPermission {
			t.Errorf("bob in default: %v, want permission_denied", err)
		}
		_, err = svc.IssueToken(ctx, identity.TokenRequest{Principal: "nobody"})
		if atrium.ErrorCode(err) != atrium.EInvalid || !strings.Contains(err.Error(), "belongs to no workspace") {
			t.Errorf("principal of no workspace: %v", err)
		}
		if _, err := svc.Tokens(ctx, "nobody"); atrium.ErrorCode(err) != atrium.ENotFound {
			t.Errorf("the refused request created its principal: %v", err)
		}
	})
}
