package pages

import (
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// The desk rule: a member's desk plan and draft (Desks/<handle>/Plan.md and
// Desks/<handle>/Draft.md, kept by the desk tools) are theirs. Only they, or
// an admin of the workspace, may create, change, move, delete or restore
// them — as only they or an admin may change their todos. Everyone else
// comments in review threads. The rule lives here, where every write of a
// page passes (MCP, REST, the browser, the mirror, import), so no surface can
// forget it. A move that only rewrites a desk page's links to a page that
// moved keeps those links working and is not the mover's edit of the desk.

// deskOwner is the handle whose desk page path is, or "" when it is none.
func deskOwner(path string) string {
	parts := strings.Split(store.PathKey(path), "/")
	if len(parts) != 3 || parts[0] != "desks" || (parts[2] != "plan.md" && parts[2] != "draft.md") {
		return ""
	}
	return strings.Split(path, "/")[1]
}

// mayChangeDesk refuses a's change of the page at path when it is another
// member's desk plan or draft and a is not an admin.
func mayChangeDesk(a *atrium.Actor, path string) error {
	owner := deskOwner(path)
	if owner == "" || strings.EqualFold(owner, a.Principal.Handle) || a.Role.Allows(atrium.RoleAdmin) {
		return nil
	}
	which := "plan"
	if strings.HasSuffix(store.PathKey(path), "draft.md") {
		which = "draft"
	}
	return atrium.Errorf(atrium.EPermission,
		"%s is @%s's desk %s: by the desk rule only @%s or an admin of the workspace may change, move or delete it (comment on it in a review thread instead)",
		path, owner, which, owner).WithDetails(map[string]any{"rule": "desk", "desk": owner, "path": path})
}

// deskRule checks a page change against the desk rule.
func deskRule(a *atrium.Actor, c Change) error {
	if c.linksOnly {
		return nil
	}
	if c.From != "" {
		if err := mayChangeDesk(a, c.From); err != nil {
			return err
		}
	}
	return mayChangeDesk(a, c.Page.Path)
}
