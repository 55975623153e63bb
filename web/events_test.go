package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/review"
	"github.com/atrium-hq/atrium/services/servicestest"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
	"github.com/atrium-hq/atrium/web"
)

// liveSite is the browser surface on a real HTTP listener, over a store
// whose clock a test moves, with a short heartbeat: what the event stream
// does over time.
type liveSite struct {
	url   string
	ids   *identity.Service
	docs  *pages.Service
	rs    *review.Service
	admin context.Context
	skew  atomic.Int64 // added to the store's clock
}

func newLiveSite(t *testing.T, e store.Engine) *liveSite {
	t.Helper()
	return newLiveSiteBeating(t, e, 100*time.Millisecond)
}

// newLiveSiteBeating is newLiveSite with the streams' heartbeat every beat.
func newLiveSiteBeating(t *testing.T, e store.Engine, beat time.Duration) *liveSite {
	t.Helper()
	s := &liveSite{}
	db := storetest.MustOpen(t, e, &store.Options{Conns: 4, EventPoll: 20 * time.Millisecond,
		Now: func() time.Time { return time.Now().Add(time.Duration(s.skew.Load())) }})
	svc := servicestest.Over(t, db)
	s.ids, s.docs, s.rs = svc.Identity, svc.Pages, svc.Review
	secret, _, err := s.ids.CreateToken(context.Background(), identity.TokenRequest{Principal: "dede", Workspace: atrium.DefaultWorkspace, Role: atrium.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.ids.Authenticate(context.Background(), secret, "")
	if err != nil {
		t.Fatal(err)
	}
	s.admin = atrium.NewContextWithActor(context.Background(), a)
	logger := slog.New(slog.DiscardHandler)
	h := &web.Handler{Auth: &authn.Authenticator{Mode: authn.ModeToken, Identity: s.ids, Logger: logger}, Services: svc, Heartbeat: beat}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { h.Close(); srv.Close() })
	s.url = srv.URL
	return s
}

func (s *liveSite) rev(*testing.T) *review.Service { return s.rs }

// token makes a token of principal with role, and returns it and its ID.
func (s *liveSite) token(t *testing.T, principal string, role atrium.Role, name string) (string, int64) {
	t.Helper()
	secret, tok, err := s.ids.CreateToken(s.admin, identity.TokenRequest{Principal: principal, Workspace: atrium.DefaultWorkspace, Role: role, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return secret, tok.ID
}

func (s *liveSite) write(t *testing.T, path string) {
	t.Helper()
	if _, err := s.docs.WritePage(s.admin, pages.WriteRequest{Path: path, Content: "# " + path, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
}

// sseEvent is one message of an event stream.
type sseEvent struct {
	ID    int64
	Kind  string
	Data  map[string]any
	Retry string // a retry: field
	Note  string // a comment line, such as ": heartbeat"
}

// stream is an open GET /events, read message by message.
type stream struct {
	t      *testing.T
	res    *http.Response
	msgs   chan sseEvent
	ended  chan struct{}
	cancel func()
}

// open connects to /events with headers (a bearer token or a cookie, a
// Last-Event-ID) and query; it fails the test unless the answer is a stream.
func (s *liveSite) open(t *testing.T, query string, headers map[string]string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/events"+query, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		res.Body.Close()
		cancel()
		t.Fatalf("GET /events%s: %d %s", query, res.StatusCode, res.Header.Get("Content-Type"))
	}
	st := &stream{t: t, res: res, msgs: make(chan sseEvent, 1000), ended: make(chan struct{}), cancel: cancel}
	go st.read()
	t.Cleanup(st.close)
	return st
}

func (st *stream) close() {
	st.cancel()
	st.res.Body.Close()
	<-st.ended
}

// read parses the stream as EventSource does: fields up to a blank line.
func (st *stream) read() {
	defer close(st.ended)
	defer close(st.msgs)
	sc := bufio.NewScanner(st.res.Body)
	var m sseEvent
	seen := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if seen {
				st.msgs <- m
			}
			m, seen = sseEvent{}, false
			continue
		}
		seen = true
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			m.Note = value
		case "id":
			m.ID, _ = strconv.ParseInt(value, 10, 64)
		case "event":
			m.Kind = value
		case "retry":
			m.Retry = value
		case "data":
			_ = json.Unmarshal([]byte(value), &m.Data)
		}
	}
}

// next returns the next message that is an event (not a comment or a
// retry), or fails after a while.
func (st *stream) next() sseEvent {
	st.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-st.msgs:
			if !ok {
				st.t.Fatal("the stream ended")
			}
			if m.Kind != "" {
				return m
			}
		case <-deadline:
			st.t.Fatal("no event in 10s")
		}
	}
}

// until collects events up to and including the first of kind about subject.
func (st *stream) until(kind, subject string) []sseEvent {
	st.t.Helper()
	var out []sseEvent
	for {
		e := st.next()
		out = append(out, e)
		if e.Kind == kind && e.Data["subject"] == subject {
			return out
		}
	}
}

// endsWithin waits for the server to end the stream.
func (st *stream) endsWithin(d time.Duration) bool {
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-st.msgs:
			if !ok {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// The stream says how long to wait before reconnecting, sends an id with
// every event, says it is alive when idle, and a browser that reconnects
// with Last-Event-ID gets what it missed, and only that.
func TestEventsReplayFromLastEventID(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		s := newLiveSite(t, e)
		auth := map[string]string{"Authorization": "Bearer " + mustToken(t, s)}
		s.write(t, "Before.md")

		st := s.open(t, "", auth)
		first := <-st.msgs
		if first.Retry != "2000" {
			t.Fatalf("the stream opens with %+v, want retry: 2000", first)
		}
		// Idle: a heartbeat comment, so that proxies keep it and the server
		// notices a gone browser.
		if m := <-st.msgs; m.Note != "heartbeat" || m.Kind != "" {
			t.Fatalf("an idle stream sends %+v, want the heartbeat comment", m)
		}
		s.write(t, "Seen.md")
		seen := st.next()
		if seen.Kind != "page.created" || seen.Data["subject"] != "Seen.md" || seen.ID == 0 || seen.Data["id"] != float64(seen.ID) {
			t.Fatalf("a new listener's first event is %+v, want page.created of Seen.md with its id (not Before.md)", seen)
		}
		st.close()

		s.write(t, "Missed1.md")
		s.write(t, "Missed2.md")
		// ?after=0 would replay everything: Last-Event-ID wins, as the
		// browser sends it on reconnecting.
		again := s.open(t, "?after=0", map[string]string{"Authorization": auth["Authorization"], "Last-Event-ID": strconv.FormatInt(seen.ID, 10)})
		got := again.until("page.created", "Missed2.md")
		var subjects []string
		last := seen.ID
		for _, ev := range got {
			if ev.ID <= last {
				t.Errorf("event %d after %d: ids must grow", ev.ID, last)
			}
			last = ev.ID
			subjects = append(subjects, ev.Data["subject"].(string))
		}
		if strings.Join(subjects, ",") != "Missed1.md,Missed2.md" {
			t.Fatalf("after reconnecting from %d the stream sends %v, want only what was missed", seen.ID, subjects)
		}

		// ?after= replays too, for a page that knows where it started.
		from := s.open(t, "?after="+strconv.FormatInt(seen.ID, 10), auth)
		if ev := from.next(); ev.Data["subject"] != "Missed1.md" {
			t.Fatalf("?after=%d starts with %+v", seen.ID, ev)
		}
	})
}

func mustToken(t *testing.T, s *liveSite) string {
	t.Helper()
	secret, _ := s.token(t, "wim", atrium.RoleWriter, "")
	return secret
}

// adminKind says whether an event kind is about administering the
// workspace's members and their credentials.
func adminKind(kind string) bool {
	for _, p := range []string{"token.", "session.", "member.", "principal.", "workspace."} {
		if strings.HasPrefix(kind, p) {
			return true
		}
	}
	return false
}

// A reader follows the work of the workspace, not its administration: no
// token (or its name), session, member or role event reaches them, in the
// replay or live; an admin sees them all.
func TestEventsKeepAdministrationFromReaders(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	reader, _ := s.token(t, "rita", atrium.RoleReader, "")
	const secretName = "deploy-key-for-prod"
	_, id := s.token(t, "ci", atrium.RoleWriter, secretName)
	if _, err := s.ids.RevokeWorkspaceToken(s.admin, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ids.SetMemberRole(s.admin, "ci", atrium.RoleReader); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ids.Login(context.Background(), reader, "", "test"); err != nil {
		t.Fatal(err)
	}
	s.write(t, "Replayed.md")

	check := func(who string, evs []sseEvent, wantAdmin bool) {
		t.Helper()
		admin := 0
		for _, ev := range evs {
			if adminKind(ev.Kind) {
				admin++
				if !wantAdmin {
					t.Errorf("%s receives %s %v", who, ev.Kind, ev.Data)
				}
			}
			if b, _ := json.Marshal(ev.Data); !wantAdmin && strings.Contains(string(b), secretName) {
				t.Errorf("%s learns a token's name from %s", who, ev.Kind)
			}
		}
		if wantAdmin && admin == 0 {
			t.Errorf("%s receives no administration event: %v", who, evs)
		}
	}
	readerStream := s.open(t, "?after=0", map[string]string{"Authorization": "Bearer " + reader})
	check("a reader's replay", readerStream.until("page.created", "Replayed.md"), false)
	adminStream := s.open(t, "?after=0", map[string]string{"Authorization": "Bearer " + mustAdmin(t, s)})
	check("an admin's replay", adminStream.until("page.created", "Replayed.md"), true)

	// Live: the same.
	if _, _, err := s.ids.CreateToken(s.admin, identity.TokenRequest{Principal: "ci", Workspace: atrium.DefaultWorkspace, Name: secretName + "-2"}); err != nil {
		t.Fatal(err)
	}
	s.write(t, "Live.md")
	check("a reader, live", readerStream.until("page.created", "Live.md"), false)
	check("an admin, live", adminStream.until("page.created", "Live.md"), true)
}

func mustAdmin(t *testing.T, s *liveSite) string {
	t.Helper()
	secret, _ := s.token(t, "ada", atrium.RoleAdmin, "")
	return secret
}

// An open stream ends when what opened it ends: its token revoked, its
// session revoked (by an admin, by the command line, or signed out), its
// member's role changed or membership removed — all at once, by the event
// the change writes, not at the next heartbeat (an hour here) — or its
// session expired, at the next heartbeat.
func TestEventsEndWithTheirSession(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		s := newLiveSiteBeating(t, e, time.Hour)
		testEventsEndAtOnce(t, s)
	})
	s := newLiveSite(t, store.SQLite)
	session := func(t *testing.T, token string) map[string]string {
		t.Helper()
		secret, _, err := s.ids.Login(context.Background(), token, "", "test")
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{"Cookie": authn.SessionCookie + "=" + secret}
	}
	// On a site of its own, as it moves the clock for everyone.
	t.Run("session expired", func(t *testing.T) {
		tok, _ := s.token(t, "r6", atrium.RoleReader, "")
		cookie := session(t, tok)
		st := s.open(t, "", cookie)
		if st.endsWithin(300 * time.Millisecond) {
			t.Fatal("a good session's stream ended")
		}
		s.skew.Store(int64(identity.SessionLifetime + time.Hour))
		if !st.endsWithin(3 * time.Second) {
			t.Fatal("the stream of an expired session goes on")
		}
	})
}

func testEventsEndAtOnce(t *testing.T, s *liveSite) {
	session := func(t *testing.T, token string) (map[string]string, int64) {
		t.Helper()
		secret, _, err := s.ids.Login(context.Background(), token, "", "test")
		if err != nil {
			t.Fatal(err)
		}
		list, err := s.ids.Sessions(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		for _, bs := range list {
			id = max(id, bs.ID)
		}
		return map[string]string{"Cookie": authn.SessionCookie + "=" + secret}, id
	}
	// unbound is a reader's token that works in any of their workspaces:
	// what ends its sessions is no one workspace's event.
	unbound := func(t *testing.T, handle string) (string, int64) {
		t.Helper()
		secret, tok, err := s.ids.CreateToken(context.Background(), identity.TokenRequest{Principal: handle, Role: atrium.RoleReader})
		if err != nil {
			t.Fatal(err)
		}
		return secret, tok.ID
	}
	const soon = 3 * time.Second
	t.Run("token revoked", func(t *testing.T) {
		tok, id := s.token(t, "r1", atrium.RoleReader, "")
		st := s.open(t, "", map[string]string{"Authorization": "Bearer " + tok})
		if _, err := s.ids.RevokeWorkspaceToken(s.admin, id); err != nil {
			t.Fatal(err)
		}
		if !st.endsWithin(soon) {
			t.Fatal("the stream of a revoked token goes on")
		}
	})
	t.Run("token of any workspace revoked from the command line", func(t *testing.T) {
		tok, id := unbound(t, "r1b")
		st := s.open(t, "", map[string]string{"Authorization": "Bearer " + tok})
		if _, err := s.ids.RevokeToken(context.Background(), id); err != nil { // atrium token revoke
			t.Fatal(err)
		}
		if !st.endsWithin(soon) {
			t.Fatal("the stream of a token revoked from the command line goes on")
		}
	})
	t.Run("session revoked", func(t *testing.T) {
		tok, _ := s.token(t, "r2", atrium.RoleReader, "")
		cookie, id := session(t, tok)
		st := s.open(t, "", cookie)
		if err := s.ids.RevokeWorkspaceSession(s.admin, id); err != nil {
			t.Fatal(err)
		}
		if !st.endsWithin(soon) {
			t.Fatal("the stream of a revoked session goes on")
		}
	})
	for i, c := range []struct {
		name  string
		token func(t *testing.T, handle string) (string, int64)
	}{
		{"bound to the workspace", func(t *testing.T, handle string) (string, int64) { return s.token(t, handle, atrium.RoleReader, "") }},
		{"of any workspace", unbound},
	} {
		t.Run("session revoked from the command line, token "+c.name, func(t *testing.T) {
			tok, _ := c.token(t, fmt.Sprintf("r2c%d", i))
			cookie, id := session(t, tok)
			st := s.open(t, "", cookie)
			other := s.open(t, "", map[string]string{"Authorization": "Bearer " + mustToken(t, s)})
			if err := s.ids.RevokeSession(context.Background(), id); err != nil { // atrium session revoke
				t.Fatal(err)
			}
			if !st.endsWithin(soon) {
				t.Fatal("the stream of a session revoked from the command line goes on")
			}
			if other.endsWithin(100 * time.Millisecond) {
				t.Fatal("another member's stream ended with it")
			}
		})
		t.Run("signed out, token "+c.name, func(t *testing.T) {
			tok, _ := c.token(t, fmt.Sprintf("r3c%d", i))
			cookie, _ := session(t, tok)
			st := s.open(t, "", cookie)
			secret := strings.TrimPrefix(cookie["Cookie"], authn.SessionCookie+"=")
			if err := s.ids.Logout(context.Background(), secret); err != nil {
				t.Fatal(err)
			}
			if !st.endsWithin(soon) {
				t.Fatal("the stream of a signed-out session goes on")
			}
			// Signing out twice is no error, and says nothing more.
			if err := s.ids.Logout(context.Background(), secret); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("member removed", func(t *testing.T) {
		tok, _ := s.token(t, "r4", atrium.RoleWriter, "")
		st := s.open(t, "", map[string]string{"Authorization": "Bearer " + tok})
		if err := s.ids.RemoveMember(s.admin, "r4"); err != nil {
			t.Fatal(err)
		}
		if !st.endsWithin(soon) {
			t.Fatal("the stream of a removed member goes on")
		}
	})
	t.Run("role changed", func(t *testing.T) {
		tok, _ := s.token(t, "r5", atrium.RoleAdmin, "")
		st := s.open(t, "", map[string]string{"Authorization": "Bearer " + tok})
		if _, err := s.ids.SetMemberRole(s.admin, "r5", atrium.RoleReader); err != nil {
			t.Fatal(err)
		}
		if !st.endsWithin(soon) {
			t.Fatal("the stream of a demoted admin goes on (with what only admins see)")
		}
	})
}

// A draft comment is its author's until they submit it: the events of
// making, editing and deleting it reach only them and admins — not another
// member, who would learn that a draft exists — in the replay and live, and
// the home page's feed. Submitting it tells everyone.
func TestEventsKeepDraftsToTheirAuthors(t *testing.T) {
	s := newLiveSite(t, store.SQLite)
	s.write(t, "Drafted.md")
	author, _ := s.token(t, "wim", atrium.RoleWriter, "")
	other, _ := s.token(t, "olga", atrium.RoleWriter, "")
	as := func(token string) context.Context {
		a, err := s.ids.Authenticate(context.Background(), token, "")
		if err != nil {
			t.Fatal(err)
		}
		return atrium.NewContextWithActor(context.Background(), a)
	}
	bearer := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	authorStream, otherStream, adminStream := s.open(t, "", bearer(author)), s.open(t, "", bearer(other)), s.open(t, "", bearer(mustAdmin(t, s)))

	draft, _, err := s.rs.Create(as(author), review.CreateRequest{DocPath: "Drafted.md", Content: "not yet"})
	if err != nil {
		t.Fatal(err)
	}
	if draft.Status != atrium.StatusDraft {
		t.Fatalf("a new thread is %s, want a draft", draft.Status)
	}
	if _, err := s.rs.Edit(as(author), draft.UID, "not yet, really"); err != nil {
		t.Fatal(err)
	}
	gone, _, err := s.rs.Create(as(author), review.CreateRequest{DocPath: "Drafted.md", Content: "never mind"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.rs.Delete(as(author), gone.UID); err != nil {
		t.Fatal(err)
	}
	s.write(t, "Marker.md") // what everyone sees next

	drafts := func(evs []sseEvent) (n int) {
		for _, e := range evs {
			if strings.HasPrefix(e.Kind, "annotation.") || strings.HasPrefix(e.Kind, "review.") {
				n++
			}
		}
		return n
	}
	if n := drafts(authorStream.until("page.created", "Marker.md")); n != 4 {
		t.Errorf("the draft's author receives %d events of their drafts, want 4 (created, edited, created, deleted)", n)
	}
	if n := drafts(adminStream.until("page.created", "Marker.md")); n != 4 {
		t.Errorf("an admin receives %d events of drafts, want 4", n)
	}
	if n := drafts(otherStream.until("page.created", "Marker.md")); n != 0 {
		t.Errorf("another member receives %d events of someone's drafts, want none", n)
	}
	if n := drafts(s.open(t, "?after=0", bearer(other)).until("page.created", "Marker.md")); n != 0 {
		t.Errorf("another member's replay holds %d events of someone's drafts, want none", n)
	}

	if _, err := s.rs.Submit(as(author), review.SubmitRequest{DocPath: "Drafted.md"}); err != nil {
		t.Fatal(err)
	}
	if e := otherStream.next(); e.Kind != "review.created" || e.Data["subject"] != "Drafted.md" {
		t.Fatalf("another member's next event is %s %v, want the submitted review", e.Kind, e.Data)
	}
}
