package atrium

import "context"

type actorKey struct{}

// NewContextWithActor returns a context carrying a.
func NewContextWithActor(ctx context.Context, a *Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFromContext returns the caller of ctx, or nil.
func ActorFromContext(ctx context.Context) *Actor {
	a, _ := ctx.Value(actorKey{}).(*Actor)
	return a
}

// RequireActor returns the caller of ctx with at least role need, or an error
// that says what is missing.
func RequireActor(ctx context.Context, need Role) (*Actor, error) {
	a := ActorFromContext(ctx)
	if a == nil || a.Principal.ID == 0 {
		return nil, Errorf(EUnauthenticated, "this needs a signed-in caller: send a bearer token")
	}
	if !a.Role.Allows(need) {
		return nil, Errorf(EPermission, "%s is %s in workspace %s; this needs %s", a.Principal.Handle, a.Role, a.Workspace.Name, need)
	}
	return a, nil
}
