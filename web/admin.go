package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/identity"
)

// The admin page of a workspace: its members and their roles, its tokens
// (a new one's secret shown once) and its signed-in browsers. The identity
// service decides who may do what; these handlers only ask it.

// browserName says which browser a User-Agent names, for people: "Chrome
// 131 on macOS", "Safari 17 on iPad"; "" when it names none it knows.
func browserName(ua string) string {
	var name, version string
	for _, b := range []struct{ token, name string }{
		{"Edg/", "Edge"}, {"OPR/", "Opera"}, {"Firefox/", "Firefox"}, {"FxiOS/", "Firefox"}, {"HeadlessChrome/", "Headless Chrome"},
		{"CriOS/", "Chrome"}, {"Chrome/", "Chrome"}, {"Version/", "Safari"}, {"curl/", "curl"},
	} {
		if i := strings.Index(ua, b.token); i >= 0 {
			name, version = b.name, ua[i+len(b.token):]
			if j := strings.IndexAny(version, ". ;)"); j >= 0 {
				version = version[:j]
			}
			break
		}
	}
	if name == "" {
		return ""
	}
	out := strings.TrimSpace(name + " " + version)
	for _, o := range []struct{ token, name string }{
		{"iPad", "iPad"}, {"iPhone", "iPhone"}, {"Android", "Android"}, {"Windows", "Windows"}, {"CrOS", "ChromeOS"},
		{"Macintosh", "macOS"}, {"Linux", "Linux"},
	} {
		if strings.Contains(ua, o.token) {
			return out + " on " + o.name
		}
	}
	return out
}

// adminView is the admin page; Issued is set only in the answer to the
// request that made a token, the one time its secret is shown.
type adminView struct {
	view
	identity.Administration
	Roles  []atrium.Role
	Issued *identity.Issued
}

func (h *Handler) admin(w http.ResponseWriter, r *http.Request) {
	h.showAdmin(w, r, http.StatusOK, &adminView{})
}

// showAdmin renders the admin page with v's notice or error.
func (h *Handler) showAdmin(w http.ResponseWriter, r *http.Request, status int, v *adminView) {
	adm, err := h.Auth.Identity.Administration(r.Context())
	if err != nil {
		h.adminRefused(w, r, err)
		return
	}
	v.Administration, v.Roles = adm, []atrium.Role{atrium.RoleReader, atrium.RoleWriter, atrium.RoleAdmin}
	h.render(w, r, status, "admin", v)
}

// adminDone answers an action: back to the page, or, when err refused it,
// the page again saying why.
func (h *Handler) adminDone(w http.ResponseWriter, r *http.Request, err error, anchor string) {
	if err == nil {
		http.Redirect(w, r, "/admin#"+anchor, http.StatusSeeOther)
		return
	}
	a := atrium.ActorFromContext(r.Context())
	if a == nil || a.Role != atrium.RoleAdmin {
		h.adminRefused(w, r, err)
		return
	}
	code := atrium.ErrorCode(err)
	if code == atrium.EInternal {
		h.fail(w, r, err)
		return
	}
	h.showAdmin(w, r, authn.Status(code), &adminView{view: view{Error: atrium.ErrorMessage(err)}})
}

// adminRefused sends an anonymous visitor to sign in and shows anyone else
// who is not the workspace's admin why not.
func (h *Handler) adminRefused(w http.ResponseWriter, r *http.Request, err error) {
	if atrium.ErrorCode(err) == atrium.EUnauthenticated && r.Method == http.MethodGet {
		http.Redirect(w, r, "/login", http.StatusSeeOther)
		return
	}
	if a := atrium.ActorFromContext(r.Context()); a != nil && a.Role.Valid() && a.Role != atrium.RoleAdmin {
		err = atrium.Errorf(atrium.EPermission, "Only the admins of workspace %s can open its admin page: you are %s here.", a.Workspace.Name, a.Role)
	}
	h.fail(w, r, err)
}

// adminCreateToken makes a token and shows its secret in the answer, never
// again: the page that follows is the one place it is written.
func (h *Handler) adminCreateToken(w http.ResponseWriter, r *http.Request) {
	is, err := h.Auth.Identity.IssueWorkspaceToken(r.Context(), identity.WorkspaceTokenRequest{
		Principal: r.PostFormValue("principal"), Kind: atrium.PrincipalKind(r.PostFormValue("kind")),
		Role: atrium.Role(r.PostFormValue("role")), Name: r.PostFormValue("name")})
	if err != nil {
		h.adminDone(w, r, err, "tokens")
		return
	}
	h.showAdmin(w, r, http.StatusCreated, &adminView{Issued: &is})
}

func (h *Handler) adminRevokeToken(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "token")
	if err == nil {
		_, err = h.Auth.Identity.RevokeWorkspaceToken(r.Context(), id)
	}
	h.adminDone(w, r, err, "tokens")
}

func (h *Handler) adminRevokeSession(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "session")
	if err == nil {
		err = h.Auth.Identity.RevokeWorkspaceSession(r.Context(), id)
	}
	h.adminDone(w, r, err, "sessions")
}

// adminSetRole changes a member's role; an admin who steps down goes home,
// since the admin page is no longer theirs.
func (h *Handler) adminSetRole(w http.ResponseWriter, r *http.Request) {
	handle, role := r.PathValue("handle"), atrium.Role(r.PostFormValue("role"))
	_, err := h.Auth.Identity.SetMemberRole(r.Context(), handle, role)
	if err == nil && handle == atrium.ActorFromContext(r.Context()).Principal.Handle && role != atrium.RoleAdmin {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	h.adminDone(w, r, err, "members")
}

func (h *Handler) adminRemoveMember(w http.ResponseWriter, r *http.Request) {
	handle := r.PathValue("handle")
	err := h.Auth.Identity.RemoveMember(r.Context(), handle)
	if err == nil && handle == atrium.ActorFromContext(r.Context()).Principal.Handle {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	h.adminDone(w, r, err, "members")
}

// pathID is the number in the {id} segment of r's path.
func pathID(r *http.Request, what string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, atrium.Errorf(atrium.EInvalid, "%s ID %q: want the number the admin page shows", what, r.PathValue("id"))
	}
	return id, nil
}
