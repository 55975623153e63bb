package web

import (
	"net/http"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
)

// loginPage signs in from the login link when the person opened it
// themselves (typed, pasted, or followed from this site); a link followed
// from another site only shows a button. Otherwise any site could sign a
// visitor in as someone else — to read what they then write (login CSRF).
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if token != "" {
		switch r.Header.Get("Sec-Fetch-Site") {
		case "none", "same-origin":
			h.signIn(w, r, token)
			return
		}
	}
	h.render(w, r, http.StatusOK, "login", &loginView{Token: token, Next: safeNext(r.URL.Query().Get("next"))})
}

func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	if err := authn.CheckSameOrigin(r); err != nil {
		h.render(w, r, http.StatusForbidden, "login", &loginView{view: view{Error: atrium.ErrorMessage(err)}})
		return
	}
	h.signIn(w, r, r.PostFormValue("token"))
}

// signIn makes a session from token and sends the browser home, without the
// token in its address bar or its cookie.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request, token string) {
	secret, _, err := h.Auth.Identity.Login(r.Context(), token, authn.Workspace(r), r.UserAgent())
	if err != nil {
		status := authn.Status(atrium.ErrorCode(err))
		h.render(w, r, status, "login", &loginView{view: view{Error: atrium.ErrorMessage(err)}, Next: safeNext(r.FormValue("next"))})
		return
	}
	authn.SetSession(w, r, secret)
	http.Redirect(w, r, safeNext(r.FormValue("next")), http.StatusSeeOther)
}

// loginView is the sign-in page; Next is where to go after (an OAuth
// client's consent page, say).
type loginView struct {
	view
	Token string
	Next  string
}

func (h *Handler) logoutPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "logout", &view{})
}

// logout ends the browser's session on the server, not only its cookie.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if err := authn.CheckSameOrigin(r); err != nil {
		h.fail(w, r, err)
		return
	}
	if c, err := r.Cookie(authn.SessionCookie); err == nil && c.Value != "" {
		if err := h.Auth.Identity.Logout(r.Context(), c.Value); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	authn.ClearSession(w, r)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
