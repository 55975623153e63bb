package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/oauth"
)

// consentView is the consent page: which client asks, what for, and what
// the person may give it.
type consentView struct {
	view
	Client   oauth.Client
	Redirect string // where the browser goes next: the client's redirect URI's origin
	Resource string
	Person   atrium.Principal
	Choices  []oauth.Choice
	Fields   url.Values // the request, carried on by the form
}

// authorizePage is /oauth/authorize: a remote MCP client sends the person
// here to sign it in. Nothing is granted until they approve on this page,
// signed in with their browser session (sent to sign in first, and back).
func (h *Handler) authorizePage(w http.ResponseWriter, r *http.Request) {
	h.consent(w, r, r.URL.Query())
}

// authorize is the consent form's answer: approve (with the workspace, role
// and principal chosen) or deny. The request is checked again from the
// form, and the consent against the store as it is now.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) {
	if err := authn.CheckSameOrigin(r); err != nil {
		h.fail(w, r, err)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, atrium.Errorf(atrium.EInvalid, "the form could not be read"))
		return
	}
	h.consent(w, r, r.PostForm)
}

func (h *Handler) consent(w http.ResponseWriter, r *http.Request, v url.Values) {
	o := h.Services.OAuth
	if !h.Auth.OAuth || o == nil {
		h.fail(w, r, atrium.Errorf(atrium.ENotFound, "this server does not sign in OAuth clients (serve --oauth)"))
		return
	}
	// A token sent along is who answers, and is checked first: a revoked
	// one is refused whatever the request, as on every page. A browser's
	// session is looked up once the request is known to be good.
	var (
		person   atrium.Principal
		bound    string
		resolved bool
	)
	if authn.BearerToken(r) != "" {
		if person, bound, resolved = h.person(w, r); !resolved {
			return
		}
	}
	p, err := o.CheckAuthorize(r.Context(), h.Auth.Base(r), oauth.AuthRequestOf(v))
	var re *oauth.RedirectError
	if errors.As(err, &re) {
		http.Redirect(w, r, re.To, http.StatusFound)
		return
	}
	if err != nil {
		h.oauthFail(w, r, err)
		return
	}
	if !resolved {
		if person, bound, resolved = h.person(w, r); !resolved {
			return
		}
	}
	if r.Method == http.MethodPost {
		to := p.Denied()
		if v.Get("decision") == "approve" {
			ws := v.Get("workspace")
			if bound != "" && ws != bound {
				h.fail(w, r, atrium.Errorf(atrium.EPermission, "you signed in with a token for workspace %q: it grants no other", bound))
				return
			}
			to, err = o.Approve(r.Context(), person, p, oauth.Consent{Workspace: ws, Role: atrium.Role(v.Get("role_" + ws)), As: v.Get("as_" + ws)})
			if err != nil {
				h.fail(w, r, err)
				return
			}
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
		return
	}
	choices, err := o.Choices(r.Context(), person.ID, p)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if bound != "" { // a session from a workspace's token grants only there
		choices = slices.DeleteFunc(choices, func(c oauth.Choice) bool { return c.Workspace != bound })
	}
	if len(choices) == 0 {
		where := "any workspace"
		if p.Workspace != "" {
			where = "workspace " + p.Workspace
		}
		h.fail(w, r, atrium.Errorf(atrium.EPermission, "%s asks for %s, and you have no role there to give it", p.Client.Name, where))
		return
	}
	// The approval redirects to the client: the page's form-action must
	// allow its origin, or the browser stops there.
	redirect := origin(p.Request.RedirectURI)
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self' "+redirect+"; base-uri 'none'; frame-ancestors 'none'")
	h.render(w, r, http.StatusOK, "consent", &consentView{Client: p.Client, Redirect: redirect, Resource: p.Request.Resource, Person: person, Choices: choices, Fields: p.Request.Values()})
}

// person is who answers the consent page: the holder of the API token the
// request carries (a script), or who is signed in to this browser; one who
// is not is sent to sign in, and back here after.
func (h *Handler) person(w http.ResponseWriter, r *http.Request) (atrium.Principal, string, bool) {
	if tok := authn.BearerToken(r); tok != "" {
		p, bound, err := h.Auth.Identity.TokenPerson(r.Context(), tok)
		if err != nil {
			h.fail(w, r, err)
			return p, "", false
		}
		return p, bound, true
	}
	if c, err := r.Cookie(authn.SessionCookie); err == nil && c.Value != "" {
		p, bound, err := h.Auth.Identity.SessionPerson(r.Context(), c.Value)
		if err == nil {
			return p, bound, true
		}
		if atrium.ErrorCode(err) != atrium.EUnauthenticated {
			h.fail(w, r, err)
			return p, "", false
		}
		authn.ClearSession(w, r)
	}
	next := r.URL.Path + "?" + r.URL.RawQuery
	if r.Method == http.MethodPost {
		next = r.URL.Path + "?" + r.PostForm.Encode()
	}
	http.Redirect(w, r, "/login?next="+url.QueryEscape(next), http.StatusSeeOther)
	return atrium.Principal{}, "", false
}

// oauthFail shows an error that must not go to the client's redirect URI
// (the client or the URI is unknown), in OAuth's words.
func (h *Handler) oauthFail(w http.ResponseWriter, r *http.Request, err error) {
	var oe *oauth.Error
	if errors.As(err, &oe) {
		code := atrium.EInvalid
		if oe.Status == http.StatusUnauthorized {
			code = atrium.EPermission
		}
		err = atrium.Errorf(code, "this sign-in request cannot go on (%s): %s", oe.Code, oe.Description)
	}
	h.fail(w, r, err)
}

// origin is the scheme and host of u, as a CSP source ("cursor:" for a
// native app's scheme).
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "'none'"
	}
	if p.Host == "" || p.Scheme != "http" && p.Scheme != "https" {
		return p.Scheme + ":"
	}
	return p.Scheme + "://" + p.Host
}

// safeNext is where to go after signing in: a path on this server, or home.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}
