// Package githubfake is a GitHub REST server for tests, on 127.0.0.1: the
// issue, comment and label endpoints the tracker adapter uses, speaking
// GitHub's wire format — pagination by Link headers, ETags and 304s (which
// cost no budget), the primary rate-limit headers, secondary limits (403
// with Retry-After), 401, 404 and 422 errors. Nothing in it reaches out.
package githubfake

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a fake GitHub holding one or more repositories.
type Server struct {
	*httptest.Server
	// Token is the one token accepted ("": any).
	Token string
	// Login is who the token acts as.
	Login string
	// Limit is the primary budget per hour (default 5000).
	Limit int
	// MaxPerPage caps per_page (GitHub's is 100), so tests page with few items.
	MaxPerPage int

	mu        sync.Mutex
	repos     map[string]*repo
	remaining int
	reset     time.Time
	calls     int
	secondary int // the next writes answered with a secondary rate limit
	// onCreate runs after an issue or comment is made, before the answer.
	onCreate func(kind string, number int)
	now      func() time.Time
	// hookURL and hookSecret: where changes made on "github.com" (FileIssue,
	// AddComment, Edit) are delivered, signed like GitHub's webhooks.
	hookURL, hookSecret string
	deliveries          int
	lastDelivery        delivery
	// latency delays each answer (outside the lock: answers overlap as
	// GitHub's do); failWrites answers the next writes with failCode.
	latency    atomic.Int64
	failWrites int
	failCode   int
	// Collaborators are who may be assigned (nil: anyone); others are
	// dropped from an issue's assignees silently, as GitHub does.
	Collaborators []string
	apps          appState // app.go
}

// SetLatency delays every answer by d, as a distant GitHub would.
func (s *Server) SetLatency(d time.Duration) { s.latency.Store(int64(d)) }

// FailWrites answers the next n writes with HTTP status code (a 5xx: GitHub
// failing; the adapter retries those itself).
func (s *Server) FailWrites(n, code int) {
	s.mu.Lock()
	s.failWrites, s.failCode = n, code
	s.mu.Unlock()
}

// DeleteIssue deletes issue n as a repository's admin would on github.com:
// from then on it answers 410 Gone and no list shows it.
func (s *Server) DeleteIssue(full string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range s.repo(full).issues {
		if i.Number == n {
			i.Deleted = true
		}
	}
	s.deliver("issues", "deleted", full, n)
}

// EditComment changes comment id's body as its author would on github.com.
func (s *Server) EditComment(full string, id int64, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, cs := range s.repo(full).comments {
		for _, c := range cs {
			if c.ID == id {
				c.Body, c.UpdatedAt = body, s.now()
				s.deliver("issue_comment", "edited", full, n)
			}
		}
	}
}

// DeleteComment deletes comment id as its author would on github.com.
func (s *Server) DeleteComment(full string, id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(full)
	for n, cs := range r.comments {
		for k, c := range cs {
			if c.ID == id {
				r.comments[n] = append(cs[:k:k], cs[k+1:]...)
				s.deliver("issue_comment", "deleted", full, n)
				return
			}
		}
	}
}

// delivery is one webhook delivery as sent.
type delivery struct {
	id, event string
	body      []byte
}

// Hook has changes made on "github.com" delivered to url as GitHub's
// webhooks are: X-GitHub-Event, X-GitHub-Delivery and X-Hub-Signature-256
// (HMAC-SHA256 of the body under secret). "" stops them.
func (s *Server) Hook(url, secret string) {
	s.mu.Lock()
	s.hookURL, s.hookSecret = url, secret
	s.mu.Unlock()
}

// Redeliver sends the last delivery again, with its ID, as GitHub's
// "Redeliver" does; it returns the status of the answer.
func (s *Server) Redeliver() (int, error) {
	s.mu.Lock()
	d, url, secret := s.lastDelivery, s.hookURL, s.hookSecret
	s.mu.Unlock()
	return send(url, secret, d)
}

// deliver sends event about repo full (and issue n) to the hook, after the
// change: s.mu is held, so it goes from a goroutine.
func (s *Server) deliver(event, action, full string, n int) {
	if s.hookURL == "" {
		return
	}
	s.deliveries++
	body, _ := json.Marshal(map[string]any{"action": action, "issue": map[string]any{"number": n},
		"repository": map[string]any{"full_name": full}, "sender": map[string]any{"login": "octo"}})
	d := delivery{id: fmt.Sprintf("%08x-fake-%04d", time.Now().UnixNano()&0xffffffff, s.deliveries), event: event, body: body}
	s.lastDelivery = d
	url, secret := s.hookURL, s.hookSecret
	go send(url, secret, d)
}

func send(url, secret string, d delivery) (int, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.body))
	if err != nil {
		return 0, err
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(d.body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/fake")
	req.Header.Set("X-GitHub-Event", d.event)
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	res.Body.Close()
	return res.StatusCode, nil
}

type repo struct {
	issues   []*Issue
	comments map[int][]*Comment
	nextID   int64
}

// An Issue as the fake keeps it.
type Issue struct {
	Number    int
	Title     string
	Body      string
	State     string
	Labels    []string
	Assignees []string
	Login     string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Deleted: an admin deleted it; GitHub answers 410 for it and lists it
	// nowhere.
	Deleted bool
}

// A Comment as the fake keeps it.
type Comment struct {
	ID        int64
	Body      string
	Login     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Start starts a fake on a loopback port; Close stops it.
func Start() *Server {
	s := &Server{Login: "atrium-bot", Limit: 5000, MaxPerPage: 100, repos: map[string]*repo{}}
	s.now = func() time.Time { return time.Now().UTC().Truncate(time.Second) }
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// OnCreate sets fn to run after each issue ("issue") or comment ("comment")
// is made and before GitHub answers: a test kills its client there.
func (s *Server) OnCreate(fn func(kind string, number int)) {
	s.mu.Lock()
	s.onCreate = fn
	s.mu.Unlock()
}

// SecondaryLimit answers the next n writes with a secondary rate limit.
func (s *Server) SecondaryLimit(n int) {
	s.mu.Lock()
	s.secondary = n
	s.mu.Unlock()
}

// Calls is the number of requests served.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// NewWindow starts a new rate-limit window of limit calls at once, as the
// hour's end would.
func (s *Server) NewWindow(limit int) {
	s.mu.Lock()
	s.Limit, s.reset = limit, time.Time{}
	s.window()
	s.mu.Unlock()
}

// Used is the primary budget spent so far in this window.
func (s *Server) Used() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.window()
	return s.Limit - s.remaining
}

func (s *Server) window() {
	if now := s.now(); now.After(s.reset) {
		s.reset, s.remaining = now.Add(time.Hour), s.Limit
	}
}

func (s *Server) repo(full string) *repo {
	r := s.repos[full]
	if r == nil {
		r = &repo{comments: map[int][]*Comment{}, nextID: 1000}
		s.repos[full] = r
	}
	return r
}

// Issues lists OWNER/REPO's issues, in number order (copies).
func (s *Server) Issues(full string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Issue
	for _, i := range s.repo(full).issues {
		c := *i
		c.Labels = append([]string{}, i.Labels...)
		out = append(out, c)
	}
	return out
}

// Comments lists issue n's comments (copies).
func (s *Server) Comments(full string, n int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.repo(full).comments[n] {
		out = append(out, *c)
	}
	return out
}

// FileIssue makes an issue as login would on github.com.
func (s *Server) FileIssue(full, login, title, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.newIssue(s.repo(full), login, title, body, nil).Number
	s.deliver("issues", "opened", full, n)
	return n
}

// AddComment comments on issue n as login would on github.com.
func (s *Server) AddComment(full string, n int, login, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(full)
	c := s.newComment(r, n, login, body)
	s.deliver("issue_comment", "created", full, n)
	return c.ID
}

// Edit changes issue n as a person on github.com would: fn edits it.
func (s *Server) Edit(full string, n int, fn func(*Issue)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, i := range s.repo(full).issues {
		if i.Number == n {
			fn(i)
			i.UpdatedAt = s.now()
		}
	}
	s.deliver("issues", "edited", full, n)
}

func (s *Server) newIssue(r *repo, login, title, body string, labels []string) *Issue {
	now := s.now()
	i := &Issue{Number: len(r.issues) + 1, Title: title, Body: body, State: "open", Labels: append([]string{}, labels...), Login: login, CreatedAt: now, UpdatedAt: now}
	r.issues = append(r.issues, i)
	return i
}

func (s *Server) newComment(r *repo, n int, login, body string) *Comment {
	r.nextID++
	now := s.now()
	c := &Comment{ID: r.nextID, Body: body, Login: login, CreatedAt: now, UpdatedAt: now}
	r.comments[n] = append(r.comments[n], c)
	for _, i := range r.issues {
		if i.Number == n {
			i.UpdatedAt = now
		}
	}
	return c
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	if d := time.Duration(s.latency.Load()); d > 0 {
		time.Sleep(d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.window()
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	if s.serveApp(w, req) {
		return
	}
	if !s.authorized(req) {
		s.fail(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if s.remaining == 0 {
		// The primary budget is spent until the window resets: GitHub says
		// so with a 403 and X-RateLimit-Remaining: 0.
		s.rate(h, false)
		s.fail(w, http.StatusForbidden, "API rate limit exceeded for user ID 1.")
		return
	}
	if req.Method != http.MethodGet && s.secondary > 0 {
		s.secondary--
		h.Set("Retry-After", "1")
		s.rate(h, false)
		s.fail(w, http.StatusForbidden, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")
		return
	}
	if req.Method != http.MethodGet && s.failWrites > 0 {
		s.failWrites--
		s.rate(h, true)
		s.fail(w, s.failCode, "Server Error")
		return
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) < 4 || parts[0] != "repos" || parts[3] != "issues" {
		s.rate(h, true)
		s.fail(w, http.StatusNotFound, "Not Found")
		return
	}
	r := s.repo(parts[1] + "/" + parts[2])
	rest := parts[4:]
	switch {
	case len(rest) == 1 && rest[0] == "comments" && req.Method == http.MethodGet:
		s.listRepoComments(w, req, r)
	case len(rest) == 0 && req.Method == http.MethodGet:
		s.listIssues(w, req, r)
	case len(rest) == 0 && req.Method == http.MethodPost:
		var in struct {
			Title     string   `json:"title"`
			Body      string   `json:"body"`
			Labels    []string `json:"labels"`
			Assignees []string `json:"assignees"`
		}
		if json.NewDecoder(req.Body).Decode(&in) != nil || strings.TrimSpace(in.Title) == "" || len(in.Title) > 256 || len(in.Body) > maxBody {
			s.rate(h, true)
			s.fail(w, http.StatusUnprocessableEntity, "Validation Failed")
			return
		}
		i := s.newIssue(r, s.login(req), in.Title, in.Body, in.Labels)
		i.Assignees = s.assignable(in.Assignees)
		s.created("issue", i.Number)
		s.rate(h, true)
		s.write(w, http.StatusCreated, s.issueJSON(req, i))
	default:
		n, err := strconv.Atoi(rest[0])
		var i *Issue
		for _, x := range r.issues {
			if err == nil && x.Number == n {
				i = x
			}
		}
		if i == nil {
			s.rate(h, true)
			s.fail(w, http.StatusNotFound, "Not Found")
			return
		}
		if i.Deleted {
			s.rate(h, true)
			s.fail(w, http.StatusGone, "This issue was deleted")
			return
		}
		s.issue(w, req, r, i, rest[1:])
	}
}

func (s *Server) issue(w http.ResponseWriter, req *http.Request, r *repo, i *Issue, rest []string) {
	h := w.Header()
	switch {
	case len(rest) == 0 && req.Method == http.MethodGet:
		s.conditional(w, req, s.issueJSON(req, i), nil)
	case len(rest) == 0 && req.Method == http.MethodPatch:
		var in struct {
			Title     *string   `json:"title"`
			Body      *string   `json:"body"`
			State     *string   `json:"state"`
			Labels    *[]string `json:"labels"`
			Assignees *[]string `json:"assignees"`
		}
		if json.NewDecoder(req.Body).Decode(&in) != nil || in.Title != nil && (strings.TrimSpace(*in.Title) == "" || len(*in.Title) > 256) ||
			in.Body != nil && len(*in.Body) > maxBody ||
			in.State != nil && *in.State != "open" && *in.State != "closed" {
			s.rate(h, true)
			s.fail(w, http.StatusUnprocessableEntity, "Validation Failed")
			return
		}
		if in.Title != nil {
			i.Title = *in.Title
		}
		if in.Body != nil {
			i.Body = *in.Body
		}
		if in.State != nil {
			i.State = *in.State
		}
		if in.Labels != nil {
			i.Labels = append([]string{}, *in.Labels...)
		}
		if in.Assignees != nil {
			i.Assignees = s.assignable(*in.Assignees)
		}
		i.UpdatedAt = s.now()
		s.rate(h, true)
		s.write(w, http.StatusOK, s.issueJSON(req, i))
	case len(rest) == 1 && rest[0] == "comments" && req.Method == http.MethodGet:
		var all []any
		for _, c := range r.comments[i.Number] {
			all = append(all, s.commentJSON(req, i.Number, c))
		}
		s.conditional(w, req, nil, all)
	case len(rest) == 1 && rest[0] == "comments" && req.Method == http.MethodPost:
		var in struct {
			Body string `json:"body"`
		}
		if json.NewDecoder(req.Body).Decode(&in) != nil || in.Body == "" || len(in.Body) > maxBody {
			s.rate(h, true)
			s.fail(w, http.StatusUnprocessableEntity, "Validation Failed")
			return
		}
		c := s.newComment(r, i.Number, s.login(req), in.Body)
		s.created("comment", i.Number)
		s.rate(h, true)
		s.write(w, http.StatusCreated, s.commentJSON(req, i.Number, c))
	case len(rest) == 1 && rest[0] == "labels" && req.Method == http.MethodPost:
		var in []string
		if json.NewDecoder(req.Body).Decode(&in) != nil {
			s.rate(h, true)
			s.fail(w, http.StatusUnprocessableEntity, "Validation Failed")
			return
		}
		for _, l := range in {
			if !contains(i.Labels, l) {
				i.Labels = append(i.Labels, l)
			}
		}
		i.UpdatedAt = s.now()
		s.rate(h, true)
		s.write(w, http.StatusOK, labelsJSON(req, i.Labels))
	case len(rest) == 2 && rest[0] == "labels" && req.Method == http.MethodDelete:
		name, _ := url.PathUnescape(rest[1])
		if !contains(i.Labels, name) {
			s.rate(h, true)
			s.fail(w, http.StatusNotFound, "Label does not exist")
			return
		}
		var keep []string
		for _, l := range i.Labels {
			if l != name {
				keep = append(keep, l)
			}
		}
		i.Labels = keep
		i.UpdatedAt = s.now()
		s.rate(h, true)
		s.write(w, http.StatusOK, labelsJSON(req, i.Labels))
	default:
		s.rate(h, true)
		s.fail(w, http.StatusNotFound, "Not Found")
	}
}

func (s *Server) created(kind string, n int) {
	if fn := s.onCreate; fn != nil {
		s.mu.Unlock()
		fn(kind, n)
		s.mu.Lock()
	}
}

func (s *Server) listIssues(w http.ResponseWriter, req *http.Request, r *repo) {
	q := req.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	since, ok := s.since(w, q)
	if !ok {
		return
	}
	var sel []*Issue
	for _, i := range r.issues {
		if !i.Deleted && (state == "all" || i.State == state) && !i.UpdatedAt.Before(since) {
			sel = append(sel, i)
		}
	}
	key := func(i *Issue) time.Time { return i.CreatedAt }
	if q.Get("sort") == "updated" {
		key = func(i *Issue) time.Time { return i.UpdatedAt }
	}
	asc := q.Get("direction") == "asc"
	sort.SliceStable(sel, func(a, b int) bool {
		ka, kb := key(sel[a]), key(sel[b])
		if ka.Equal(kb) {
			return (sel[a].Number < sel[b].Number) == asc
		}
		return ka.Before(kb) == asc
	})
	var all []any
	for _, i := range sel {
		all = append(all, s.issueJSON(req, i))
	}
	s.conditional(w, req, nil, all)
}

// conditional answers a GET: one object, or a page of a list with its Link
// header; with its ETag, or 304 when the client holds it already (free).
func (s *Server) conditional(w http.ResponseWriter, req *http.Request, one any, all []any) {
	h := w.Header()
	var v any = one
	if one == nil {
		per, _ := strconv.Atoi(req.URL.Query().Get("per_page"))
		if per <= 0 {
			per = 30
		}
		per = min(per, s.MaxPerPage)
		page, _ := strconv.Atoi(req.URL.Query().Get("page"))
		page = max(page, 1)
		last := max((len(all)+per-1)/per, 1)
		lo, hi := min((page-1)*per, len(all)), min(page*per, len(all))
		v = append([]any{}, all[lo:hi]...)
		var links []string
		link := func(p int, rel string) {
			u := *req.URL
			u.Scheme, u.Host = "http", req.Host
			qq := u.Query()
			qq.Set("page", strconv.Itoa(p))
			u.RawQuery = qq.Encode()
			links = append(links, fmt.Sprintf(`<%s>; rel="%s"`, u.String(), rel))
		}
		if page < last {
			link(page+1, "next")
			link(last, "last")
		}
		if page > 1 {
			link(1, "first")
			link(page-1, "prev")
		}
		if len(links) > 0 {
			h.Set("Link", strings.Join(links, ", "))
		}
	}
	b, _ := json.Marshal(v)
	sum := sha256.Sum256(append(b, h.Get("Link")...))
	etag := `W/"` + hex.EncodeToString(sum[:16]) + `"`
	h.Set("ETag", etag)
	h.Set("Cache-Control", "private, max-age=60, s-maxage=60")
	if req.Header.Get("If-None-Match") == etag {
		s.rate(h, false)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.rate(h, true)
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// rate spends one unit of the primary budget (unless free) and sets the
// headers; an exhausted budget is the caller's 403 to answer, not here.
func (s *Server) rate(h http.Header, spend bool) {
	if spend && s.remaining > 0 {
		s.remaining--
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(s.remaining))
	h.Set("X-RateLimit-Used", strconv.Itoa(s.Limit-s.remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(s.reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
}

func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	s.write(w, code, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest", "status": strconv.Itoa(code)})
}

func (s *Server) write(w http.ResponseWriter, code int, v any) {
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func base(req *http.Request) string { return "http://" + req.Host }

func (s *Server) issueJSON(req *http.Request, i *Issue) map[string]any {
	full := strings.Join(strings.Split(strings.Trim(req.URL.Path, "/"), "/")[1:3], "/")
	var closedAt any
	if i.State == "closed" {
		closedAt = i.UpdatedAt.Format(time.RFC3339)
	}
	return map[string]any{
		"id": 100000 + i.Number, "node_id": fmt.Sprintf("I_%d", i.Number), "number": i.Number,
		"url":      fmt.Sprintf("%s/repos/%s/issues/%d", base(req), full, i.Number),
		"html_url": fmt.Sprintf("https://github.com/%s/issues/%d", full, i.Number),
		"title":    i.Title, "body": i.Body, "state": i.State, "locked": false,
		"user":   map[string]any{"login": i.Login, "id": 1, "type": "User"},
		"labels": labelsJSON(req, i.Labels), "assignees": users(i.Assignees), "assignee": first(users(i.Assignees)), "comments": 0,
		"created_at": i.CreatedAt.Format(time.RFC3339), "updated_at": i.UpdatedAt.Format(time.RFC3339), "closed_at": closedAt,
		"author_association": "OWNER",
	}
}

func (s *Server) commentJSON(req *http.Request, n int, c *Comment) map[string]any {
	return map[string]any{
		"id": c.ID, "node_id": fmt.Sprintf("IC_%d", c.ID), "body": c.Body,
		"user":       map[string]any{"login": c.Login, "id": 2, "type": "User"},
		"created_at": c.CreatedAt.Format(time.RFC3339), "updated_at": c.UpdatedAt.Format(time.RFC3339),
		"issue_url":          fmt.Sprintf("%s/repos/%s/issues/%d", base(req), strings.Join(strings.Split(strings.Trim(req.URL.Path, "/"), "/")[1:3], "/"), n),
		"author_association": "OWNER",
	}
}

func labelsJSON(req *http.Request, ls []string) []any {
	out := []any{}
	for _, l := range ls {
		out = append(out, map[string]any{"name": l, "color": "ededed", "url": base(req) + "/labels/" + url.PathEscape(l)})
	}
	return out
}

func contains(ls []string, l string) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// maxBody is GitHub's limit on an issue's or a comment's body.
const maxBody = 65536

func (s *Server) assignable(logins []string) []string {
	out := []string{}
	for _, l := range logins {
		if s.Collaborators == nil || contains(s.Collaborators, l) {
			out = append(out, l)
		}
	}
	return out
}

func users(logins []string) []any {
	out := []any{}
	for _, l := range logins {
		out = append(out, map[string]any{"login": l, "id": 3, "type": "User"})
	}
	return out
}

func first(xs []any) any {
	if len(xs) == 0 {
		return nil
	}
	return xs[0]
}

// listRepoComments is GET /repos/{o}/{r}/issues/comments: every issue's
// comments, by creation or (sort=updated) last change, since a time.
func (s *Server) listRepoComments(w http.ResponseWriter, req *http.Request, r *repo) {
	q := req.URL.Query()
	since, ok := s.since(w, q)
	if !ok {
		return
	}
	type numbered struct {
		n int
		c *Comment
	}
	var sel []numbered
	for _, i := range r.issues {
		for _, c := range r.comments[i.Number] {
			if !i.Deleted && !c.UpdatedAt.Before(since) {
				sel = append(sel, numbered{i.Number, c})
			}
		}
	}
	key := func(c *Comment) time.Time { return c.CreatedAt }
	if q.Get("sort") == "updated" {
		key = func(c *Comment) time.Time { return c.UpdatedAt }
	}
	asc := q.Get("direction") != "desc"
	sort.SliceStable(sel, func(a, b int) bool {
		ka, kb := key(sel[a].c), key(sel[b].c)
		if ka.Equal(kb) {
			return (sel[a].c.ID < sel[b].c.ID) == asc
		}
		return ka.Before(kb) == asc
	})
	var all []any
	for _, x := range sel {
		all = append(all, s.commentJSON(req, x.n, x.c))
	}
	s.conditional(w, req, nil, all)
}

// since reads a list's since parameter (RFC 3339; absent: the start of
// time), answering a malformed one with GitHub's 422.
func (s *Server) since(w http.ResponseWriter, q url.Values) (time.Time, bool) {
	v := q.Get("since")
	if v == "" {
		return time.Time{}, true
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		s.rate(w.Header(), true)
		s.fail(w, http.StatusUnprocessableEntity, "Validation Failed")
		return time.Time{}, false
	}
	return t, true
}
