package identity_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// adminWorld is two workspaces: default, run by admin, with rita (reader)
// and sam (writer, who also belongs to beta); beta, run by bob.
type adminWorld struct {
	ids                         *identity.Service
	db                          *store.DB
	admin, rita, sam, bob       string // token secrets
	ritaTok, samTok, bobTok     int64
	adminCtx, bobCtx, ritaCtx   context.Context
	anonymous                   context.Context
	ritaSession, samSession     string // browser session secrets
	ritaSessionID, samSessionID int64
}

func newAdminWorld(t *testing.T, e store.Engine) *adminWorld {
	t.Helper()
	ctx := context.Background()
	db := storetest.MustOpen(t, e, nil)
	w := &adminWorld{ids: newSvc(t, db), db: db, anonymous: ctx}
	b, err := w.ids.Bootstrap(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	w.admin = b.AdminToken
	if _, err := w.ids.CreateWorkspace(ctx, "beta", ""); err != nil {
		t.Fatal(err)
	}
	issue := func(r identity.TokenRequest) (string, int64) {
		t.Helper()
		secret, tok, err := w.ids.CreateToken(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		return secret, tok.ID
	}
	w.rita, w.ritaTok = issue(identity.TokenRequest{Principal: "rita", Workspace: "default", Role: atrium.RoleReader})
	w.bob, w.bobTok = issue(identity.TokenRequest{Principal: "bob", Workspace: "beta", Role: atrium.RoleAdmin})
	w.sam, w.samTok = issue(identity.TokenRequest{Principal: "sam", Role: atrium.RoleWriter})
	issue(identity.TokenRequest{Principal: "sam", Workspace: "beta", Role: atrium.RoleWriter})
	w.adminCtx, w.bobCtx, w.ritaCtx = w.as(t, w.admin), w.as(t, w.bob), w.as(t, w.rita)
	w.ritaSession, w.ritaSessionID = w.login(t, w.rita, "rita")
	w.samSession, w.samSessionID = w.login(t, w.sam, "sam")
	return w
}

// as is the context of the token's holder, in its own workspace.
func (w *adminWorld) as(t *testing.T, token string) context.Context {
	t.Helper()
	a, err := w.ids.Authenticate(context.Background(), token, "")
	if err != nil {
		t.Fatal(err)
	}
	return atrium.NewContextWithActor(context.Background(), a)
}

func (w *adminWorld) login(t *testing.T, token, handle string) (string, int64) {
	t.Helper()
	secret, _, err := w.ids.Login(context.Background(), token, "", "browser of "+handle)
	if err != nil {
		t.Fatal(err)
	}
	list, err := w.ids.Sessions(context.Background(), handle)
	if err != nil || len(list) == 0 {
		t.Fatalf("sessions of %s: %v, %v", handle, list, err)
	}
	return secret, list[0].ID
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := atrium.ErrorCode(err); got != code {
		t.Fatalf("%s: %v (code %q), want %q", what, err, got, code)
	}
}

// Only an admin of the workspace administers it; anyone else is refused
// before anything is read or changed.
func TestAdministrationNeedsAnAdmin(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		w := newAdminWorld(t, e)
		for _, c := range []struct {
			who  string
			ctx  context.Context
			code string
		}{{"a reader", w.ritaCtx, atrium.EPermission}, {"anonymous", w.anonymous, atrium.EUnauthenticated}} {
			_, err := w.ids.Administration(c.ctx)
			wantCode(t, c.who+" reads the administration", err, c.code)
			_, err = w.ids.RevokeWorkspaceToken(c.ctx, w.samTok)
			wantCode(t, c.who+" revokes a token", err, c.code)
			_, err = w.ids.IssueWorkspaceToken(c.ctx, identity.WorkspaceTokenRequest{Principal: "mallory", Role: atrium.RoleAdmin})
			wantCode(t, c.who+" issues a token", err, c.code)
			_, err = w.ids.SetMemberRole(c.ctx, "rita", atrium.RoleAdmin)
			wantCode(t, c.who+" sets a role", err, c.code)
			wantCode(t, c.who+" removes a member", w.ids.RemoveMember(c.ctx, "sam"), c.code)
			wantCode(t, c.who+" revokes a session", w.ids.RevokeWorkspaceSession(c.ctx, w.samSessionID), c.code)
		}
		if a, err := w.ids.Authenticate(context.Background(), w.rita, ""); err != nil || a.Role != atrium.RoleReader {
			t.Fatalf("rita after the refusals: %+v, %v", a, err)
		}
		if _, err := w.ids.Authenticate(context.Background(), w.sam, ""); err != nil {
			t.Fatalf("sam's token after the refusals: %v", err)
		}
		if _, err := w.ids.AuthenticateSession(context.Background(), w.samSession, ""); err != nil {
			t.Fatalf("sam's session after the refusals: %v", err)
		}
		toks, err := w.ids.Tokens(context.Background(), "mallory")
		if atrium.ErrorCode(err) != atrium.ENotFound {
			t.Fatalf("a refused request made principal mallory: %v, %v", toks, err)
		}
	})
}

// An admin sees the members, tokens and sessions of their workspace and
// nothing of another's; a token that also works elsewhere is shown but is
// not theirs to revoke. No secret is ever in what they read.
func TestAdministrationShowsOneWorkspace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		w := newAdminWorld(t, e)
		adm, err := w.ids.Administration(w.adminCtx)
		if err != nil {
			t.Fatal(err)
		}
		var members []string
		for _, m := range adm.Members {
			members = append(members, m.Principal.Handle+":"+string(m.Role))
		}
		if want := []string{"admin:admin", "rita:reader", "sam:writer"}; !slices.Equal(members, want) {
			t.Fatalf("members = %v, want %v", members, want)
		}
		tokens := map[string]bool{} // principal/bound to: revocable
		for _, tok := range adm.Tokens {
			tokens[tok.Principal+"/"+tok.Workspace] = tok.Revocable
		}
		if want := map[string]bool{"admin/": true, "rita/default": true, "sam/": false}; fmt.Sprint(tokens) != fmt.Sprint(want) {
			t.Fatalf("tokens (principal/bound to: revocable) = %v, want %v", tokens, want)
		}
		sessions := map[string]bool{}
		for _, s := range adm.Sessions {
			sessions[s.Principal] = s.Revocable
		}
		if want := map[string]bool{"rita": true, "sam": false}; fmt.Sprint(sessions) != fmt.Sprint(want) {
			t.Fatalf("sessions (principal: revocable) = %v, want %v", sessions, want)
		}
		if len(adm.Workspaces) != 1 || adm.Workspaces[0] != (identity.Membership{Workspace: "default", Role: atrium.RoleAdmin}) {
			t.Fatalf("admin's workspaces = %+v", adm.Workspaces)
		}
		dump := fmt.Sprintf("%+v", adm)
		for _, secret := range []string{w.admin, w.rita, w.sam, w.bob, w.ritaSession, w.samSession} {
			if strings.Contains(dump, secret) {
				t.Fatal("a secret is in the administration")
			}
		}

		bobs, err := w.ids.Administration(w.bobCtx)
		if err != nil {
			t.Fatal(err)
		}
		if dump := fmt.Sprintf("%+v", bobs); strings.Contains(dump, "rita") || strings.Contains(dump, "admin/") || len(bobs.Members) != 2 {
			t.Fatalf("beta's admin sees: %s", dump)
		}
	})
}

// Revoking: a workspace's own tokens and sessions yes, another workspace's
// not (not found: its existence is none of the caller's business), a shared
// member's unbound token not (permission).
func TestAdministrationRevokes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		w := newAdminWorld(t, e)
		ctx := context.Background()
		_, err := w.ids.RevokeWorkspaceToken(w.bobCtx, w.ritaTok)
		wantCode(t, "beta's admin revokes rita's token", err, atrium.ENotFound)
		wantCode(t, "beta's admin ends rita's session", w.ids.RevokeWorkspaceSession(w.bobCtx, w.ritaSessionID), atrium.ENotFound)
		_, err = w.ids.RevokeWorkspaceToken(w.adminCtx, w.bobTok)
		wantCode(t, "admin revokes bob's token", err, atrium.ENotFound)
		_, err = w.ids.RevokeWorkspaceToken(w.adminCtx, w.samTok)
		wantCode(t, "admin revokes sam's token, which also works in beta", err, atrium.EPermission)
		wantCode(t, "admin ends sam's session", w.ids.RevokeWorkspaceSession(w.adminCtx, w.samSessionID), atrium.EPermission)
		_, err = w.ids.RevokeWorkspaceToken(w.adminCtx, 999)
		wantCode(t, "admin revokes a token that is not there", err, atrium.ENotFound)
		for _, tok := range []string{w.rita, w.bob, w.sam} {
			if _, err := w.ids.Authenticate(ctx, tok, ""); err != nil {
				t.Fatalf("a refused revocation revoked: %v", err)
			}
		}
		for _, s := range []string{w.ritaSession, w.samSession} {
			if _, err := w.ids.AuthenticateSession(ctx, s, ""); err != nil {
				t.Fatalf("a refused revocation ended a session: %v", err)
			}
		}

		if err := w.ids.RevokeWorkspaceSession(w.adminCtx, w.ritaSessionID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "rita's revoked session", func() error { _, err := w.ids.AuthenticateSession(ctx, w.ritaSession, ""); return err }(), atrium.EUnauthenticated)
		if _, err := w.ids.Authenticate(ctx, w.rita, ""); err != nil {
			t.Fatalf("ending rita's session revoked her token: %v", err)
		}
		tok, err := w.ids.RevokeWorkspaceToken(w.adminCtx, w.ritaTok)
		if err != nil || tok.RevokedAt == nil || tok.Principal != "rita" {
			t.Fatalf("revoke rita's token = %+v, %v", tok, err)
		}
		wantCode(t, "rita's revoked token", func() error { _, err := w.ids.Authenticate(ctx, w.rita, ""); return err }(), atrium.EUnauthenticated)
		// Their own unbound token, an admin may always revoke.
		if _, err := w.ids.RevokeWorkspaceToken(w.adminCtx, 1); err != nil {
			t.Fatalf("admin revokes their own token: %v", err)
		}
		events := recentKinds(t, w.db, "default")
		for _, want := range []string{"session.revoked rita by admin", "token.revoked rita by admin", "token.revoked admin by admin"} {
			if !slices.Contains(events, want) {
				t.Fatalf("events %v lack %q", events, want)
			}
		}
	})
}

// recentKinds are the workspace's events as "kind subject by actor".
func recentKinds(t *testing.T, db *store.DB, workspace string) []string {
	t.Helper()
	var out []string
	err := db.View(context.Background(), func(tx *store.Tx) error {
		ws, err := tx.WorkspaceByName(context.Background(), workspace)
		if err != nil {
			return err
		}
		evs, err := tx.RecentEvents(context.Background(), ws.ID, 0, 100)
		for _, e := range evs {
			out = append(out, e.Kind+" "+e.Subject+" by "+e.Actor)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A token made on the admin page is bound to the workspace; its principal is
// new, or belongs only where the caller is admin, or is the caller.
func TestAdministrationIssuesTokens(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		w := newAdminWorld(t, e)
		ctx := context.Background()
		is, err := w.ids.IssueWorkspaceToken(w.adminCtx, identity.WorkspaceTokenRequest{Principal: "carol", Kind: atrium.KindAgent, Role: atrium.RoleWriter, Name: "ci"})
		if err != nil {
			t.Fatal(err)
		}
		if !is.NewPrincipal || is.Token.Workspace != "default" || is.Changed == nil || is.Changed.To != atrium.RoleWriter || !strings.HasPrefix(is.Secret, identity.TokenPrefix) {
			t.Fatalf("issued = %+v", is)
		}
		a, err := w.ids.Authenticate(ctx, is.Secret, "")
		if err != nil || a.Principal.Handle != "carol" || a.Role != atrium.RoleWriter || a.Principal.Kind != atrium.KindAgent {
			t.Fatalf("carol's token = %+v, %v", a, err)
		}
		wantCode(t, "carol's token in beta", func() error { _, err := w.ids.Authenticate(ctx, is.Secret, "beta"); return err }(), atrium.EPermission)
		// A second for a member keeps its role unless asked.
		again, err := w.ids.IssueWorkspaceToken(w.adminCtx, identity.WorkspaceTokenRequest{Principal: "rita"})
		if err != nil || again.Changed != nil || again.NewPrincipal {
			t.Fatalf("a second token for rita = %+v, %v", again, err)
		}
		if _, err := w.ids.IssueWorkspaceToken(w.adminCtx, identity.WorkspaceTokenRequest{Principal: "admin", Name: "laptop"}); err != nil {
			t.Fatalf("an admin's token for themselves: %v", err)
		}

		for _, c := range []struct {
			who  string
			r    identity.WorkspaceTokenRequest
			code string
		}{
			{"bob, of beta only", identity.WorkspaceTokenRequest{Principal: "bob"}, atrium.EPermission},
			{"sam, also of beta", identity.WorkspaceTokenRequest{Principal: "sam"}, atrium.EPermission},
			{"a bad handle", identity.WorkspaceTokenRequest{Principal: "Not A Handle"}, atrium.EInvalid},
			{"a bad role", identity.WorkspaceTokenRequest{Principal: "dan", Role: "owner"}, atrium.EInvalid},
			{"a bad kind", identity.WorkspaceTokenRequest{Principal: "dan", Kind: "robot"}, atrium.EInvalid},
			{"the last admin stepping down", identity.WorkspaceTokenRequest{Principal: "admin", Role: atrium.RoleReader}, atrium.EConflict},
		} {
			_, err := w.ids.IssueWorkspaceToken(w.adminCtx, c.r)
			wantCode(t, "a token for "+c.who, err, c.code)
		}
		if a, err := w.ids.Authenticate(ctx, w.bob, ""); err != nil || a.Workspace.Name != "beta" {
			t.Fatalf("bob after the refusal: %+v, %v", a, err)
		}
		adm, err := w.ids.Administration(w.bobCtx)
		if err != nil {
			t.Fatal(err)
		}
		if len(adm.Members) != 2 {
			t.Fatalf("beta's members after refusals: %+v", adm.Members)
		}
		if events := recentKinds(t, w.db, "default"); !slices.Contains(events, "token.created carol by admin") || !slices.Contains(events, "member.role_set carol by admin") {
			t.Fatalf("events = %v", events)
		}
	})
}

// Roles: an admin changes a member's role and takes members out; the last
// admin cannot step down or leave, and says so.
func TestAdministrationRoles(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		w := newAdminWorld(t, e)
		ctx := context.Background()
		for _, step := range []func() error{
			func() error { _, err := w.ids.SetMemberRole(w.adminCtx, "admin", atrium.RoleWriter); return err },
			func() error { return w.ids.RemoveMember(w.adminCtx, "admin") },
		} {
			err := step()
			wantCode(t, "the last admin steps down", err, atrium.EConflict)
			if !strings.Contains(atrium.ErrorMessage(err), "you are the last admin of workspace default") {
				t.Fatalf("the refusal says %q", atrium.ErrorMessage(err))
			}
		}
		if a, err := w.ids.Authenticate(ctx, w.admin, ""); err != nil || a.Role != atrium.RoleAdmin {
			t.Fatalf("admin after the refusals: %+v, %v", a, err)
		}
		_, err := w.ids.SetMemberRole(w.adminCtx, "bob", atrium.RoleReader)
		wantCode(t, "a role for bob, not a member here", err, atrium.ENotFound)
		_, err = w.ids.SetMemberRole(w.adminCtx, "nobody", atrium.RoleReader)
		wantCode(t, "a role for no one", err, atrium.ENotFound)
		_, err = w.ids.SetMemberRole(w.adminCtx, "rita", "owner")
		wantCode(t, "a made-up role", err, atrium.EInvalid)
		_, err = w.ids.SetMemberRole(w.bobCtx, "rita", atrium.RoleAdmin)
		wantCode(t, "beta's admin promotes rita", err, atrium.ENotFound)
		wantCode(t, "beta's admin removes admin from default", w.ids.RemoveMember(w.bobCtx, "admin"), atrium.ENotFound)

		c, err := w.ids.SetMemberRole(w.adminCtx, "rita", atrium.RoleAdmin)
		if err != nil || c == nil || c.From != atrium.RoleReader || c.To != atrium.RoleAdmin {
			t.Fatalf("promote rita = %+v, %v", c, err)
		}
		if a, err := w.ids.Authenticate(ctx, w.rita, ""); err != nil || a.Role != atrium.RoleAdmin {
			t.Fatalf("rita = %+v, %v", a, err)
		}
		// Now there are two, admin may step down; then rita is the last.
		if _, err := w.ids.SetMemberRole(w.adminCtx, "admin", atrium.RoleWriter); err != nil {
			t.Fatalf("admin steps down beside another admin: %v", err)
		}
		ritaCtx := w.as(t, w.rita)
		err = w.ids.RemoveMember(ritaCtx, "rita")
		wantCode(t, "rita, now the last admin, leaves", err, atrium.EConflict)
		if err := w.ids.RemoveMember(ritaCtx, "sam"); err != nil {
			t.Fatal(err)
		}
		wantCode(t, "sam's token in default after removal", func() error { _, err := w.ids.Authenticate(ctx, w.sam, "default"); return err }(), atrium.EPermission)
		if a, err := w.ids.Authenticate(ctx, w.sam, "beta"); err != nil || a.Role != atrium.RoleWriter {
			t.Fatalf("sam in beta after leaving default: %+v, %v", a, err)
		}
		events := recentKinds(t, w.db, "default")
		for _, want := range []string{"member.role_set rita by admin", "member.role_set admin by admin", "member.removed sam by rita"} {
			if !slices.Contains(events, want) {
				t.Fatalf("events %v lack %q", events, want)
			}
		}
	})
}
