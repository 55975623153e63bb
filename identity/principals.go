package identity

import (
	"context"
	"slices"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// Principals returns the principals with the given handles, by handle; a
// handle nobody has is left out. An export names the authors it holds with
// their kinds (a person or an agent) from here.
func (s *Service) Principals(ctx context.Context, handles []string) ([]atrium.Principal, error) {
	if _, err := atrium.RequireActor(ctx, atrium.RoleReader); err != nil {
		return nil, err
	}
	handles = slices.Clone(handles)
	slices.Sort(handles)
	handles = slices.Compact(handles)
	var out []atrium.Principal
	err := s.db.View(ctx, func(tx *store.Tx) error {
		for _, h := range handles {
			p, err := tx.PrincipalByHandle(ctx, h)
			switch {
			case atrium.ErrorCode(err) == atrium.ENotFound:
			case err != nil:
				return err
			default:
				out = append(out, p)
			}
		}
		return nil
	})
	return out, err
}

// Ensured is what EnsureMembers did.
type Ensured struct {
	Created []atrium.Principal // principals that did not exist
	Joined  []string           // handles made writers of the workspace
	// OtherKind are handles that exist with another kind than asked: they
	// keep theirs (a principal's kind is never changed behind its back).
	OtherKind []string
}

// EnsureMembers makes every principal of ps a member of the caller's
// workspace, in one write: a handle nobody has becomes a principal of its
// kind and display name, and one that is not a member becomes a writer.
// Existing principals keep their kind and name, members their role. Admins
// only: the import of an export calls it for the authors the export names.
func (s *Service) EnsureMembers(ctx context.Context, ps []atrium.Principal) (Ensured, error) {
	var out Ensured
	for _, p := range ps {
		if err := atrium.ValidateName("principal handle", p.Handle); err != nil {
			return out, err
		}
		if !p.Kind.Valid() {
			return out, atrium.Errorf(atrium.EInvalid, "principal %s: kind is human or agent, not %q", p.Handle, p.Kind)
		}
	}
	err := s.administer(ctx, func(tx *store.Tx, a *atrium.Actor) error {
		out = Ensured{}
		for _, want := range ps {
			p, err := tx.PrincipalByHandle(ctx, want.Handle)
			switch {
			case atrium.ErrorCode(err) == atrium.ENotFound:
				if p, err = ensurePrincipal(ctx, tx, want.Handle, want.Kind, want.DisplayName); err != nil {
					return err
				}
				out.Created = append(out.Created, p)
			case err != nil:
				return err
			case p.Kind != want.Kind:
				out.OtherKind = append(out.OtherKind, p.Handle)
			}
			ch, err := setMembership(ctx, tx, a.Workspace, p, "")
			if err != nil {
				return err
			}
			if ch != nil {
				out.Joined = append(out.Joined, p.Handle)
			}
		}
		return nil
	})
	return out, err
}
