// Package identity is the service for workspaces, principals, roles and bearer
// tokens: it turns a token, or the local environment of a stdio process, into
// the Actor every other service acts for. It holds the access rules; transports
// only ask it.
package identity

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// TokenPrefix starts every token secret, so that a leaked one is easy to find.
const TokenPrefix = "atr_"

// AdminHandle is the principal created on first start, and the one every HTTP
// caller acts as with --auth none.
const AdminHandle = "admin"

// touchEvery bounds how often a token's last-used time is written: once a
// minute is precise enough for people and keeps authentication read-only.
const touchEvery = time.Minute

// Service is the identity service.
type Service struct {
	db  *store.DB
	log *slog.Logger

	mu      sync.Mutex
	touched map[any]time.Time // token IDs and session hashes, when last recorded
	wg      sync.WaitGroup
}

// New returns the identity service over db.
func New(db *store.DB, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{db: db, log: log, touched: map[any]time.Time{}}
}

// Close waits for pending last-used writes.
func (s *Service) Close() { s.wg.Wait() }

// HashToken returns the stored form of a token secret.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Bootstrap is what first start created.
type Bootstrap struct {
	// AdminToken is the secret of the admin's first token, set only when this
	// call created it: it is never shown again.
	AdminToken string
}

// Bootstrap makes sure the default workspace exists and, with createAdmin, that
// it has an admin who can log in: on first start it creates principal "admin"
// and a token for it.
func (s *Service) Bootstrap(ctx context.Context, createAdmin bool) (Bootstrap, error) {
	var b Bootstrap
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		ws, err := tx.WorkspaceByName(ctx, atrium.DefaultWorkspace)
		if atrium.ErrorCode(err) == atrium.ENotFound {
			if ws, err = tx.CreateWorkspace(ctx, atrium.DefaultWorkspace); err == nil {
				err = tx.EmitJSON(ctx, ws.ID, 0, "workspace.created", ws.Name, nil)
			}
		}
		if err != nil || !createAdmin {
			return err
		}
		if _, done, err := tx.Meta(ctx, "admin_bootstrapped"); err != nil || done {
			return err
		}
		admin, err := ensurePrincipal(ctx, tx, AdminHandle, atrium.KindHuman, "Administrator")
		if err != nil {
			return err
		}
		if err := tx.SetRole(ctx, ws.ID, admin.ID, atrium.RoleAdmin); err != nil {
			return err
		}
		secret, _, err := createToken(ctx, tx, admin, atrium.Workspace{}, "first start", 0)
		if err != nil {
			return err
		}
		b.AdminToken = secret
		return tx.SetMeta(ctx, "admin_bootstrapped", tx.Now().Format(time.RFC3339))
	})
	return b, err
}

func ensurePrincipal(ctx context.Context, tx *store.Tx, handle string, kind atrium.PrincipalKind, display string) (atrium.Principal, error) {
	p, err := tx.PrincipalByHandle(ctx, handle)
	if atrium.ErrorCode(err) != atrium.ENotFound {
		return p, err
	}
	if display == "" {
		display = handle
	}
	p, err = tx.CreatePrincipal(ctx, atrium.Principal{Handle: handle, Kind: kind, DisplayName: display})
	if err != nil {
		return p, err
	}
	return p, tx.EmitJSON(ctx, 0, p.ID, "principal.created", p.Handle, map[string]any{"kind": p.Kind})
}

func createToken(ctx context.Context, tx *store.Tx, p atrium.Principal, ws atrium.Workspace, name string, actor int64) (string, atrium.Token, error) {
	secret := TokenPrefix + rand.Text()
	if name == "" {
		name = "token"
	}
	t, err := tx.CreateToken(ctx, atrium.Token{PrincipalID: p.ID, Principal: p.Handle, WorkspaceID: ws.ID, Workspace: ws.Name, Name: name}, HashToken(secret))
	if err != nil {
		return "", t, err
	}
	if actor == 0 {
		actor = p.ID
	}
	return secret, t, tx.EmitJSON(ctx, ws.ID, actor, "token.created", p.Handle, map[string]any{"token_id": t.ID, "name": name})
}

// Authenticate resolves a bearer token to the actor it stands for in the
// workspace the request chose (empty: the token's own workspace, else
// "default"). A token bound to one workspace is refused elsewhere. It is one
// query: every HTTP request pays for it.
func (s *Service) Authenticate(ctx context.Context, secret, workspace string) (*atrium.Actor, error) {
	if !strings.HasPrefix(secret, TokenPrefix) {
		return nil, atrium.Errorf(atrium.EUnauthenticated, "invalid token")
	}
	var g store.Grant
	err := s.db.Read(ctx, func(tx *store.Tx) (err error) {
		g, err = tx.TokenGrant(ctx, HashToken(secret), workspace)
		return err
	})
	switch {
	case atrium.ErrorCode(err) == atrium.ENotFound || err == nil && g.Revoked:
		return nil, atrium.Errorf(atrium.EUnauthenticated, "invalid or revoked token")
	case err != nil:
		return nil, err
	case g.BoundTo != "" && workspace != "" && workspace != g.BoundTo:
		return nil, atrium.Errorf(atrium.EPermission, "this token is for workspace %q, not %q", g.BoundTo, workspace)
	}
	a, err := actorOf(g, workspace)
	if err != nil {
		return nil, err
	}
	s.touch(g.TokenID)
	return a, nil
}

// actorOf is the actor of a grant, or why there is none. Whether a workspace
// exists is itself private to its members, so both cases read the same.
func actorOf(g store.Grant, workspace string) (*atrium.Actor, error) {
	if g.Workspace.ID == 0 || g.Role == "" {
		if workspace == "" {
			workspace = atrium.DefaultWorkspace
		}
		return nil, atrium.Errorf(atrium.EPermission, "no access to workspace %q", workspace)
	}
	return &atrium.Actor{Principal: g.Principal, Workspace: g.Workspace, Role: g.Role, Token: g.TokenID}, nil
}

// touch records a token's use in the background, at most once per touchEvery.
func (s *Service) touch(id int64) {
	s.recordUse(id, func(ctx context.Context, tx *store.Tx, now time.Time) error { return tx.TouchToken(ctx, id, now) })
}

// recordUse writes that key (a token or a session) was used, in the
// background and at most once per touchEvery: authentication stays a read.
func (s *Service) recordUse(key any, write func(context.Context, *store.Tx, time.Time) error) {
	now := s.db.Now()
	s.mu.Lock()
	last, ok := s.touched[key]
	if ok && now.Sub(last) < touchEvery {
		s.mu.Unlock()
		return
	}
	s.touched[key] = now
	s.mu.Unlock()
	s.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.db.Update(ctx, func(tx *store.Tx) error { return write(ctx, tx, now) }); err != nil {
			s.log.Warn("record a token's or session's use", "err", err)
		}
	})
}

// LocalActor is the identity of a local (stdio or command-line) caller: the
// principal handle in workspace, created on first use as an agent with the
// writer role. The workspace must exist.
func (s *Service) LocalActor(ctx context.Context, handle, workspace string, kind atrium.PrincipalKind) (*atrium.Actor, error) {
	if err := atrium.ValidateName("principal handle", handle); err != nil {
		return nil, err
	}
	if workspace == "" {
		workspace = atrium.DefaultWorkspace
	}
	var g store.Grant
	err := s.db.Read(ctx, func(tx *store.Tx) (err error) {
		g, err = tx.HandleGrant(ctx, handle, workspace)
		return err
	})
	if err == nil && g.Role != "" {
		return &atrium.Actor{Principal: g.Principal, Workspace: g.Workspace, Role: g.Role}, nil
	}
	if err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
		return nil, err
	}
	// First use: create what is missing, in one write.
	var a atrium.Actor
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		ws, err := tx.WorkspaceByName(ctx, workspace)
		if atrium.ErrorCode(err) == atrium.ENotFound {
			return atrium.Errorf(atrium.ENotFound, "workspace %q not found; create it with: atrium workspace create %s", workspace, workspace)
		}
		if err != nil {
			return err
		}
		p, err := ensurePrincipal(ctx, tx, handle, kind, "")
		if err != nil {
			return err
		}
		role, err := tx.Role(ctx, ws.ID, p.ID)
		if err != nil {
			return err
		}
		if role == "" {
			role = atrium.RoleWriter
			if err := tx.SetRole(ctx, ws.ID, p.ID, role); err != nil {
				return err
			}
			if err := tx.EmitJSON(ctx, ws.ID, p.ID, "member.added", p.Handle, map[string]any{"role": role}); err != nil {
				return err
			}
		}
		a = atrium.Actor{Principal: p, Workspace: ws, Role: role}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// AdminActor is the local administrator in workspace: every HTTP caller under
// --auth none, which only a loopback listener allows.
func (s *Service) AdminActor(ctx context.Context, workspace string) (*atrium.Actor, error) {
	a, err := s.LocalActor(ctx, AdminHandle, workspace, atrium.KindHuman)
	if err != nil || a.Role == atrium.RoleAdmin {
		return a, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetRole(ctx, a.Workspace.ID, a.Principal.ID, atrium.RoleAdmin) })
	a.Role = atrium.RoleAdmin
	return a, err
}

// TokenRequest asks for a new token.
type TokenRequest struct {
	Principal string               // handle; created when missing
	Kind      atrium.PrincipalKind // kind of a principal created here; default human
	Workspace string               // bind the token to this workspace; empty: any of the principal's
	Role      atrium.Role          // set the principal's role in Workspace (in the default workspace when Workspace is empty)
	Name      string               // what the token is for
}

// A Membership is a principal's role in a workspace.
type Membership struct {
	Workspace string
	Role      atrium.Role
}

// Issued is a new token and what it grants.
type Issued struct {
	Secret       string // shown once, never stored
	Token        atrium.Token
	NewPrincipal bool // the request created the principal
	// Changed is the membership the request set, if it changed one: a new
	// member (From empty) or a new role.
	Changed *RoleChange
	// Grants are what the token may do: the one workspace it is bound to, or
	// every workspace of its principal.
	Grants []Membership
}

// RoleChange is a membership set by a token request.
type RoleChange struct {
	Workspace string
	From, To  atrium.Role
}

// CreateToken creates a token and returns its secret, which is never shown
// again. See IssueToken.
func (s *Service) CreateToken(ctx context.Context, r TokenRequest) (string, atrium.Token, error) {
	is, err := s.IssueToken(ctx, r)
	return is.Secret, is.Token, err
}

// IssueToken creates a token and says what it grants. The principal is
// created if needed. Memberships change only when asked: with Workspace, a
// principal that is not a member joins it (as Role, default writer); with
// Role, its role there (in the default workspace when Workspace is empty) is
// set. Without either, the principal keeps exactly the roles it has, and one
// with none is refused: a token that grants nothing is a mistake, and making
// it a member somewhere unasked would be a silent grant.
func (s *Service) IssueToken(ctx context.Context, r TokenRequest) (Issued, error) {
	var is Issued
	if err := checkTokenRequest(r.Principal, &r.Kind, r.Role); err != nil {
		return is, err
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.PrincipalByHandle(ctx, r.Principal)
		if code := atrium.ErrorCode(err); err != nil && code != atrium.ENotFound {
			return err
		}
		is.NewPrincipal = err != nil
		p, err := ensurePrincipal(ctx, tx, r.Principal, r.Kind, "")
		if err != nil {
			return err
		}
		member := r.Workspace
		if member == "" && r.Role != "" {
			member = atrium.DefaultWorkspace
		}
		var bound atrium.Workspace
		if member != "" {
			ws, err := tx.WorkspaceByName(ctx, member)
			if atrium.ErrorCode(err) == atrium.ENotFound {
				return atrium.Errorf(atrium.ENotFound, "workspace %q not found; create it with: atrium workspace create %s", member, member)
			}
			if err != nil {
				return err
			}
			if r.Workspace != "" {
				bound = ws
			}
			if is.Changed, err = setMembership(ctx, tx, ws, p, r.Role); err != nil {
				return err
			}
		}
		if is.Grants, err = memberships(ctx, tx, p, bound); err != nil {
			return err
		}
		if len(is.Grants) == 0 {
			return atrium.Errorf(atrium.EInvalid, "principal %q belongs to no workspace, so its token would grant nothing: name the workspace it should join (atrium token create --principal %s --workspace NAME [--role reader|writer|admin])", p.Handle, p.Handle)
		}
		is.Secret, is.Token, err = createToken(ctx, tx, p, bound, r.Name, 0)
		return err
	})
	if err != nil {
		return Issued{}, err
	}
	return is, nil
}

// checkTokenRequest checks what a token request names; kind defaults to
// human, and an empty role keeps what the principal has.
func checkTokenRequest(handle string, kind *atrium.PrincipalKind, role atrium.Role) error {
	if err := atrium.ValidateName("principal handle", handle); err != nil {
		return err
	}
	if *kind == "" {
		*kind = atrium.KindHuman
	}
	if !kind.Valid() {
		return atrium.Errorf(atrium.EInvalid, "invalid kind %q: use human or agent", *kind)
	}
	if role != "" {
		return checkRole(role)
	}
	return nil
}

func checkRole(role atrium.Role) error {
	if !role.Valid() {
		return atrium.Errorf(atrium.EInvalid, "invalid role %q: use reader, writer or admin", role)
	}
	return nil
}

// setMembership makes p a member of ws with role (writer for a new member
// when role is empty), and reports what changed, if anything.
func setMembership(ctx context.Context, tx *store.Tx, ws atrium.Workspace, p atrium.Principal, role atrium.Role) (*RoleChange, error) {
	had, err := tx.Role(ctx, ws.ID, p.ID)
	if err != nil {
		return nil, err
	}
	if role == "" {
		if had != "" {
			return nil, nil
		}
		role = atrium.RoleWriter
	}
	if role == had {
		return nil, nil
	}
	if err := tx.SetRole(ctx, ws.ID, p.ID, role); err != nil {
		return nil, err
	}
	if err := tx.EmitJSON(ctx, ws.ID, 0, "member.role_set", p.Handle, map[string]any{"role": role, "was": had}); err != nil {
		return nil, err
	}
	return &RoleChange{Workspace: ws.Name, From: had, To: role}, nil
}

// memberships are p's roles: in bound only, when it is set, else in every
// workspace.
func memberships(ctx context.Context, tx *store.Tx, p atrium.Principal, bound atrium.Workspace) ([]Membership, error) {
	if bound.ID != 0 {
		role, err := tx.Role(ctx, bound.ID, p.ID)
		if err != nil || role == "" {
			return nil, err
		}
		return []Membership{{Workspace: bound.Name, Role: role}}, nil
	}
	all, err := tx.Memberships(ctx, p.ID)
	out := make([]Membership, len(all))
	for i, m := range all {
		out[i] = Membership{Workspace: m.Workspace.Name, Role: m.Role}
	}
	return out, err
}

// Tokens lists tokens, of one principal when handle is not empty.
func (s *Service) Tokens(ctx context.Context, handle string) ([]atrium.Token, error) {
	var out []atrium.Token
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var id int64
		if handle != "" {
			p, err := tx.PrincipalByHandle(ctx, handle)
			if err != nil {
				return err
			}
			id = p.ID
		}
		var err error
		out, err = tx.Tokens(ctx, id)
		return err
	})
	return out, err
}

// RevokeToken revokes a token by ID; it stops working at once.
func (s *Service) RevokeToken(ctx context.Context, id int64) (atrium.Token, error) {
	var t atrium.Token
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if t, err = tx.TokenByID(ctx, id); err != nil {
			return err
		}
		if err := tx.RevokeToken(ctx, id); err != nil {
			return err
		}
		if t, err = tx.TokenByID(ctx, id); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, t.WorkspaceID, 0, "token.revoked", t.Principal, map[string]any{"token_id": id})
	})
	return t, err
}

// CreateWorkspace creates a workspace and makes admin, when not empty, its admin.
func (s *Service) CreateWorkspace(ctx context.Context, name, admin string) (atrium.Workspace, error) {
	if err := atrium.ValidateName("workspace name", name); err != nil {
		return atrium.Workspace{}, err
	}
	var ws atrium.Workspace
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var err error
		if ws, err = tx.CreateWorkspace(ctx, name); err != nil {
			return err
		}
		if err := tx.EmitJSON(ctx, ws.ID, 0, "workspace.created", ws.Name, nil); err != nil {
			return err
		}
		if admin == "" {
			return nil
		}
		p, err := tx.PrincipalByHandle(ctx, admin)
		if err != nil {
			return err
		}
		return tx.SetRole(ctx, ws.ID, p.ID, atrium.RoleAdmin)
	})
	return ws, err
}

// Workspaces lists every workspace.
func (s *Service) Workspaces(ctx context.Context) ([]atrium.Workspace, error) {
	var out []atrium.Workspace
	err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		out, err = tx.Workspaces(ctx)
		return err
	})
	return out, err
}

// Workspace returns the named workspace ("" for the default). Anonymous
// readers are told only that they have no access, whether it exists or not.
func (s *Service) Workspace(ctx context.Context, name string) (atrium.Workspace, error) {
	if name == "" {
		name = atrium.DefaultWorkspace
	}
	var ws atrium.Workspace
	err := s.db.Read(ctx, func(tx *store.Tx) (err error) {
		ws, err = tx.WorkspaceByName(ctx, name)
		return err
	})
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return ws, atrium.Errorf(atrium.EPermission, "no access to workspace %q", name)
	}
	return ws, err
}
