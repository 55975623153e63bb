package identity_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// A browser holds a session of its own, never the token it signed in with:
// the session ends on sign-out, on expiry, with its token, or when revoked.
func TestBrowserSessions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		var now atomic.Int64
		now.Store(time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC).UnixMicro())
		db := storetest.MustOpen(t, e, &store.Options{Now: func() time.Time { return time.UnixMicro(now.Load()) }})
		ids := identitytest.New(t, db)
		ctx := context.Background()
		token, tok, err := ids.CreateToken(ctx, identity.TokenRequest{Principal: "dede", Workspace: atrium.DefaultWorkspace, Role: atrium.RoleWriter})
		if err != nil {
			t.Fatal(err)
		}
		login := func() string {
			t.Helper()
			secret, a, err := ids.Login(ctx, token, "", "test-browser")
			if err != nil || a.Principal.Handle != "dede" || !strings.HasPrefix(secret, identity.SessionPrefix) || strings.Contains(secret, token) {
				t.Fatalf("login = %q, %+v, %v", secret, a, err)
			}
			return secret
		}
		ended := func(secret, why string) {
			t.Helper()
			if _, err := ids.AuthenticateSession(ctx, secret, ""); atrium.ErrorCode(err) != atrium.EUnauthenticated {
				t.Fatalf("a session %s still signs in: %v", why, err)
			}
		}

		first := login()
		if a, err := ids.AuthenticateSession(ctx, first, ""); err != nil || a.Principal.Handle != "dede" || a.Role != atrium.RoleWriter {
			t.Fatalf("session = %+v, %v", a, err)
		}
		if _, err := ids.AuthenticateSession(ctx, token, ""); atrium.ErrorCode(err) != atrium.EUnauthenticated {
			t.Fatalf("a bearer token taken for a session: %v", err)
		}
		if _, _, err := ids.Login(ctx, "atr_NOTATOKEN", "", ""); atrium.ErrorCode(err) != atrium.EUnauthenticated {
			t.Fatalf("login with a bad token: %v", err)
		}

		second := login()
		list, err := ids.Sessions(ctx, "dede")
		if err != nil || len(list) != 2 || list[0].UserAgent != "test-browser" {
			t.Fatalf("sessions = %+v, %v", list, err)
		}
		if err := ids.Logout(ctx, first); err != nil {
			t.Fatal(err)
		}
		ended(first, "signed out")
		if err := ids.Logout(ctx, first); err != nil {
			t.Fatalf("signing out twice: %v", err)
		}
		if err := ids.RevokeSession(ctx, list[0].ID); err != nil {
			t.Fatal(err)
		}
		ended(second, "revoked")

		third := login()
		now.Add((identity.SessionLifetime + time.Minute).Microseconds())
		ended(third, "expired")

		fourth := login()
		if _, err := ids.RevokeToken(ctx, tok.ID); err != nil {
			t.Fatal(err)
		}
		ended(fourth, "whose token was revoked")
		if list, err := ids.Sessions(ctx, ""); err != nil || len(list) != 0 {
			t.Fatalf("live sessions after all ended = %+v, %v", list, err)
		}
	})
}

func TestRevokingAMissingSessionSaysSo(t *testing.T) {
	ids := identitytest.New(t, storetest.MustOpen(t, store.SQLite, nil))
	if err := ids.RevokeSession(context.Background(), 42); atrium.ErrorCode(err) != atrium.ENotFound {
		t.Fatalf("revoke session 42: %v, want not_found", err)
	}
}
