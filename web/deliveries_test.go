package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/tasks"
)

// An admin sees what was delivered to which agent, with its history, and
// retries or cancels it from the page; pauses and resumes an agent from
// /admin/agents. A writer sees none of it.
func TestDeliveriesPage(t *testing.T) {
	s := newSite(t)
	if _, err := s.svc.Agents.SetAgent(s.ctx, agents.AgentRequest{Handle: "ghost", Command: "/nonexistent/cli", Wake: agents.WakeStreamJSON}); err != nil {
		t.Fatal(err)
	}
	task, err := s.svc.Tasks.Create(s.ctx, tasks.CreateRequest{Fields: tasks.Fields{Title: new("Haunted")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.svc.Tasks.Ask(s.ctx, task.Number, "ghost", "Anyone <b>there</b>?"); err != nil {
		t.Fatal(err)
	}
	var d agents.Delivery
	for deadline := time.Now().Add(10 * time.Second); d.State != "failed"; time.Sleep(20 * time.Millisecond) {
		ds, err := s.svc.Agents.Deliveries(s.ctx, agents.DeliveryQuery{})
		if err != nil || len(ds) != 1 {
			t.Fatalf("deliveries %+v, %v", ds, err)
		}
		if d = ds[0]; time.Now().After(deadline) {
			t.Fatalf("delivery %+v", d)
		}
	}
	status, body := s.get("/agents/deliveries")
	if status != 200 || !strings.Contains(body, "@dede asked you a question") || !strings.Contains(body, "is not installed here") {
		t.Errorf("/agents/deliveries: %d\n%.2000s", status, body)
	}
	one := "/agents/deliveries/" + strconv.FormatInt(d.ID, 10)
	status, body = s.get(one)
	if status != 200 || !strings.Contains(body, "Anyone &lt;b&gt;there&lt;/b&gt;?") || !strings.Contains(body, "<strong>waking</strong>") || !strings.Contains(body, "<strong>failed</strong>") {
		t.Errorf("%s: %d\n%.3000s", one, status, body)
	}
	if status, _ := s.do("POST", one+"/cancel", url.Values{}, nil, false); status != http.StatusSeeOther {
		t.Errorf("cancel: %d", status)
	}
	if d, _ = s.svc.Agents.Delivery(s.ctx, d.ID); d.State != "cancelled" {
		t.Errorf("after cancel: %+v", d)
	}
	if status, body := s.do("POST", one+"/cancel", url.Values{}, nil, false); status != http.StatusConflict || !strings.Contains(body, "is cancelled") {
		t.Errorf("cancel twice: %d %.500s", status, body)
	}
	if status, _ := s.get("/agents/deliveries/nope"); status != http.StatusBadRequest {
		t.Errorf("a delivery that is not a number: %d", status)
	}
	if status, _ := s.get("/agents/deliveries?state=lost"); status != http.StatusBadRequest {
		t.Errorf("a state that is not one: %d", status)
	}
	if status, _ := s.do("POST", "/admin/agents/ghost/pause", url.Values{}, nil, false); status != http.StatusSeeOther {
		t.Errorf("pause: %d", status)
	}
	if ag, _ := s.svc.Agents.Agent(s.ctx, "ghost"); !ag.Paused {
		t.Error("the agent is not paused")
	}
	if _, body := s.get("/admin/agents"); !strings.Contains(body, `action="/admin/agents/ghost/resume"`) {
		t.Error("/admin/agents offers no resume for a paused agent")
	}

	// A writer: refused, and shown nothing of it.
	secret, _, err := s.ids.CreateToken(context.Background(), identity.TokenRequest{Principal: "wendy", Workspace: atrium.DefaultWorkspace, Role: atrium.RoleWriter})
	if err != nil {
		t.Fatal(err)
	}
	as := http.Header{"Authorization": {"Bearer " + secret}}
	for _, c := range []struct{ method, target string }{{"GET", "/agents/deliveries"}, {"GET", one}, {"POST", one + "/retry"}, {"POST", "/admin/agents/ghost/resume"}} {
		var form url.Values
		if c.method == "POST" {
			form = url.Values{}
		}
		if status, body := s.do(c.method, c.target, form, as, true); status != http.StatusForbidden || strings.Contains(body, "Anyone") {
			t.Errorf("%s %s by a writer: %d", c.method, c.target, status)
		}
	}
}
