package pages_test

import (
	"context"
	"testing"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/identity/identitytest"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// env is a pages service over a fresh store, with a writer's context.
type env struct {
	db   *store.DB
	svc  *pages.Service
	ids  *identity.Service
	ctx  context.Context // a writer in workspace default
	anon context.Context // an anonymous reader of workspace default
}

func mustEnv(t testing.TB, e store.Engine) *env {
	t.Helper()
	return newEnv(t, storetest.MustOpen(t, e, nil))
}

// newEnv is the pages service over db, with a writer of workspace default.
func newEnv(t testing.TB, db *store.DB) *env {
	t.Helper()
	ids := identitytest.New(t, db)
	a := identitytest.Agent(t, ids, "writer", "")
	ctx := context.Background()
	return &env{db: db, svc: pages.New(db, nil), ids: ids, ctx: atrium.NewContextWithActor(ctx, a),
		anon: atrium.NewContextWithActor(ctx, &atrium.Actor{Workspace: a.Workspace})}
}

func (v *env) write(t testing.TB, path, content string) pages.WriteResult {
	t.Helper()
	r, err := v.svc.WritePage(v.ctx, pages.WriteRequest{Path: path, Content: content, Overwrite: true})
	if err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
	return r
}

func (v *env) read(t testing.TB, path string) pages.ReadResult {
	t.Helper()
	r, err := v.svc.ReadPage(v.ctx, pages.ReadRequest{Path: path})
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return r
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if got := atrium.ErrorCode(err); got != code {
		t.Fatalf("error %v (code %q), want code %q", err, got, code)
	}
}

// withRole is a context of principal handle with role in workspace default.
func (v *env) withRole(t testing.TB, handle string, role atrium.Role) context.Context {
	t.Helper()
	secret, _, err := v.ids.CreateToken(context.Background(), identity.TokenRequest{Principal: handle, Role: role})
	if err != nil {
		t.Fatal(err)
	}
	a, err := v.ids.Authenticate(context.Background(), secret, "")
	if err != nil {
		t.Fatal(err)
	}
	return atrium.NewContextWithActor(context.Background(), a)
}
