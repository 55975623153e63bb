package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
)

// deliveriesView is /agents/deliveries: what woke, or is to wake, which
// agent, for admins; one delivery with its history at /agents/deliveries/N.
type deliveriesView struct {
	view
	Deliveries []agents.Delivery
	One        *agents.Delivery
	States     []string
	Agent      string
	State      string
	LastEvent  int64
}

func (h *Handler) deliveriesPage(w http.ResponseWriter, r *http.Request) {
	q := agents.DeliveryQuery{Agent: r.URL.Query().Get("agent"), State: r.URL.Query().Get("state"), Limit: 200}
	v := &deliveriesView{States: agents.DeliveryStates, Agent: q.Agent, State: q.State}
	var err error
	if v.LastEvent, err = h.Services.Activity.Latest(r.Context()); err == nil {
		v.Deliveries, err = h.Services.Agents.Deliveries(r.Context(), q)
	}
	if err != nil {
		h.renderError(w, r, err, "deliveries", v)
		return
	}
	h.render(w, r, http.StatusOK, "deliveries", v)
}

func (h *Handler) deliveryPage(w http.ResponseWriter, r *http.Request) {
	h.renderDelivery(w, r, nil)
}

func (h *Handler) renderDelivery(w http.ResponseWriter, r *http.Request, failed error) {
	v := &deliveriesView{States: agents.DeliveryStates}
	id, err := deliveryID(r)
	if err == nil {
		var d agents.Delivery
		if d, err = h.Services.Agents.Delivery(r.Context(), id); err == nil {
			v.One = &d
		}
	}
	if err == nil {
		err = failed
	}
	if err != nil {
		h.renderError(w, r, err, "deliveries", v)
		return
	}
	h.render(w, r, http.StatusOK, "deliveries", v)
}

func (h *Handler) retryDelivery(w http.ResponseWriter, r *http.Request) {
	h.moveDelivery(w, r, h.Services.Agents.RetryDelivery)
}

func (h *Handler) cancelDelivery(w http.ResponseWriter, r *http.Request) {
	h.moveDelivery(w, r, h.Services.Agents.CancelDelivery)
}

func (h *Handler) moveDelivery(w http.ResponseWriter, r *http.Request, move func(ctx context.Context, id int64) (agents.Delivery, error)) {
	id, err := deliveryID(r)
	if err == nil {
		_, err = move(r.Context(), id)
	}
	if err != nil {
		h.renderDelivery(w, r, err)
		return
	}
	http.Redirect(w, r, "/agents/deliveries/"+strconv.FormatInt(id, 10), http.StatusSeeOther)
}

func deliveryID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, atrium.Errorf(atrium.EInvalid, "%q is not a delivery: /agents/deliveries lists them", r.PathValue("id"))
	}
	return id, nil
}

func (h *Handler) pauseAgent(w http.ResponseWriter, r *http.Request)  { h.setPaused(w, r, true) }
func (h *Handler) resumeAgent(w http.ResponseWriter, r *http.Request) { h.setPaused(w, r, false) }

func (h *Handler) setPaused(w http.ResponseWriter, r *http.Request, paused bool) {
	if _, err := h.Services.Agents.Pause(r.Context(), r.PathValue("handle"), paused); err != nil {
		h.renderAgents(w, r, nil, err)
		return
	}
	http.Redirect(w, r, "/admin/agents", http.StatusSeeOther)
}
