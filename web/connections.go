package web

import (
	"net/http"

	"github.com/atrium-hq/atrium"
)

// connectionsView is /connections: the OAuth clients a person signed in to
// Atrium (as themselves, or as an agent they administer), each revocable by
// them — not only by an admin.
type connectionsView struct {
	view
	Connections []atrium.Token
}

func (h *Handler) connections(w http.ResponseWriter, r *http.Request) {
	list, err := h.Auth.Identity.Connections(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "connections", &connectionsView{Connections: list})
}

func (h *Handler) revokeConnection(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "connection")
	if err == nil {
		err = h.Auth.Identity.RevokeConnection(r.Context(), id)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/connections", http.StatusSeeOther)
}
