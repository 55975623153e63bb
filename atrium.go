// Package atrium holds Atrium's domain: the types every layer speaks (workspaces,
// principals, roles, events), the error type with its codes, and the caller's
// identity carried in a context. It does no I/O and imports nothing of the
// project; the store, the services and the transports all depend on it.
package atrium

import (
	"fmt"
	"time"
)

// Version is the release of this binary; the build sets it with -ldflags.
var Version = "dev"

// DefaultWorkspace is created on first start and used when nothing names another.
const DefaultWorkspace = "default"

// A Workspace is a tenant: every row belongs to exactly one, and nothing sees across.
type Workspace struct {
	ID        int64     `json:"-"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// PrincipalKind tells a person from an agent.
type PrincipalKind string

const (
	KindHuman PrincipalKind = "human"
	KindAgent PrincipalKind = "agent"
)

// Valid reports whether k is a known kind.
func (k PrincipalKind) Valid() bool { return k == KindHuman || k == KindAgent }

// A Principal is a person or an agent that acts in workspaces.
type Principal struct {
	ID          int64         `json:"-"`
	Handle      string        `json:"handle"`
	Kind        PrincipalKind `json:"kind"`
	DisplayName string        `json:"display_name"`
	CreatedAt   time.Time     `json:"created_at"`
}

// Role is what a principal may do in one workspace.
type Role string

const (
	RoleReader Role = "reader"
	RoleWriter Role = "writer"
	RoleAdmin  Role = "admin"
)

func (r Role) rank() int {
	switch r {
	case RoleReader:
		return 1
	case RoleWriter:
		return 2
	case RoleAdmin:
		return 3
	}
	return 0
}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r.rank() > 0 }

// Allows reports whether r includes everything need grants.
func (r Role) Allows(need Role) bool { return r.rank() >= need.rank() && need.rank() > 0 }

// The OAuth scopes that stand for roles: a client asks for them, and a
// person grants at most the role its scopes reach.
const (
	ScopeRead  = "workspace:read"
	ScopeWrite = "workspace:write"
	ScopeAdmin = "workspace:admin"
)

// Scope is the scope that stands for r: every scope up to it.
func (r Role) Scope() string {
	switch r {
	case RoleAdmin:
		return ScopeRead + " " + ScopeWrite + " " + ScopeAdmin
	case RoleWriter:
		return ScopeRead + " " + ScopeWrite
	}
	return ScopeRead
}

// A Token is a bearer credential of one principal. Its secret is shown once, at
// creation, and only its hash is kept.
type Token struct {
	ID         int64      `json:"id"`
	Principal  string     `json:"principal"`
	Workspace  string     `json:"workspace,omitempty"` // empty: any workspace the principal belongs to
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	// An OAuth grant (a remote MCP client a person signed in) names its
	// client, the one MCP URL it works at, the role the person consented
	// to, and who consented; an API token leaves them empty.
	Client      string `json:"client,omitempty"`
	Resource    string `json:"resource,omitempty"`
	RoleCap     Role   `json:"role_cap,omitempty"`
	ApprovedBy  string `json:"approved_by,omitempty"`
	PrincipalID int64  `json:"-"`
	WorkspaceID int64  `json:"-"`
}

// An Actor is who is calling, where, and with which role. Transports establish it
// (from a token, a session or the local environment); services read it from the
// context and never take identity as an argument.
type Actor struct {
	Principal Principal
	Workspace Workspace
	Role      Role
	// Token is the bearer token the caller came with (0: a local caller, or
	// a browser's session): an agent session's own token says which session
	// is calling.
	Token int64
	// Capped is the role the caller's membership gives when an OAuth grant
	// holds it to a lower Role ("" otherwise): a call that needs more than
	// Role but no more than Capped is one a client may step up to, with the
	// person's consent again.
	Capped Role
}

// ValidateName checks a workspace name or principal handle: lower case letters,
// digits, '.', '_' and '-', starting with a letter or digit, at most 63 long.
func ValidateName(what, s string) error {
	if !validName(s) {
		return Errorf(EInvalid, "invalid %s %q: use 1-63 lower-case letters, digits, '.', '_' or '-', starting with a letter or digit", what, s)
	}
	return nil
}

// validName matches ^[a-z0-9][a-z0-9._-]{0,62}$. It is written out because
// that regexp compiles to a 63-fold program at every start of the binary.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// String returns handle@workspace, for logs.
func (a *Actor) String() string {
	if a == nil {
		return "<nobody>"
	}
	return fmt.Sprintf("%s@%s", a.Principal.Handle, a.Workspace.Name)
}
