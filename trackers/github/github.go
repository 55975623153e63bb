// Package github is the GitHub Issues tracker adapter of the tasks service:
// it implements tasks.Tracker over go-github, which it wraps so that no
// go-github type leaves this package (go-github takes a new major version
// every few weeks; only this file follows it). It imports only the root,
// the tasks service's interface and its client.
package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v93/github"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/tasks"
)

// DefaultAPIURL is github.com's REST root.
const DefaultAPIURL = "https://api.github.com/"

// Config says which repository and how to reach it.
type Config struct {
	Owner, Repo string
	// APIURL is the REST root: empty for github.com; GitHub Enterprise
	// Server's https://HOST/api/v3/; a test's fake.
	APIURL string
	// Token authenticates the link (GITHUB_TOKEN); never taken from a
	// command line. App instead authenticates it as a GitHub App's
	// installation; one of them, not both.
	Token string
	App   *App
	// Apps are the agents' own GitHub Apps, by EnvHandle: an agent with
	// one posts its comments as its App's bot.
	Apps map[string]App
	// Transport carries the requests; nil: http.DefaultTransport.
	Transport http.RoundTripper
	// MaxRetries is how often a 5xx or a secondary rate limit is retried
	// (default 3); MaxWait caps one wait (default 1 minute).
	MaxRetries int
	MaxWait    time.Duration
}

// Client is a repository's issues as a tasks.Tracker.
type Client struct {
	c           *gh.Client
	owner, repo string
	t           *transport
	// agents are the clients of the agents' Apps, by EnvHandle; each has
	// its own transport, so its own ETags and its own token.
	agents map[string]identity
}

type identity struct {
	c *gh.Client
	t *transport
}

var _ tasks.Tracker = (*Client)(nil)

// New returns the client of cfg's repository.
func New(cfg Config) (*Client, error) {
	if cfg.Owner == "" || cfg.Repo == "" {
		return nil, atrium.Errorf(atrium.EInvalid, "a repository is OWNER/REPO")
	}
	base := cfg.APIURL
	if base == "" {
		base = DefaultAPIURL
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	if cfg.Token != "" && cfg.App != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "the link authenticates with a token or a GitHub App, not both")
	}
	rt := cfg.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	// Each identity's chain: our transport (budget, ETags, retries) over
	// its authentication (a token, or an App's installation token) over
	// the base transport.
	ident := func(token string, app *App) (identity, error) {
		next := rt
		if app != nil && (app.ID <= 0 || app.Key == nil) {
			return identity{}, atrium.Errorf(atrium.EInvalid, "a GitHub App needs its ID and its private key")
		}
		if app != nil {
			next = newInstallation(*app, rt, base, cfg.Owner, cfg.Repo)
		}
		t := &transport{next: next, token: token, etags: map[string]cached{}, retries: cfg.MaxRetries, maxWait: cfg.MaxWait}
		if t.retries == 0 {
			t.retries = 3
		}
		if t.maxWait == 0 {
			t.maxWait = time.Minute
		}
		c, err := gh.NewClient(gh.WithHTTPClient(&http.Client{Transport: t, Timeout: 30 * time.Second}), gh.WithURLs(&base, &base), gh.WithUserAgent("atrium/"+atrium.Version))
		if err != nil {
			return identity{}, atrium.Errorf(atrium.EInvalid, "api url %q: %v", base, err)
		}
		return identity{c: c, t: t}, nil
	}
	link, err := ident(cfg.Token, cfg.App)
	if err != nil {
		return nil, err
	}
	out := &Client{c: link.c, owner: cfg.Owner, repo: cfg.Repo, t: link.t, agents: map[string]identity{}}
	for h, a := range cfg.Apps {
		if out.agents[EnvHandle(h)], err = ident("", &a); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ParseRepo splits OWNER/REPO.
func ParseRepo(s string) (owner, repo string, err error) {
	owner, repo, ok := strings.Cut(s, "/")
	if !ok || owner == "" || repo == "" || strings.Contains(repo, "/") {
		return "", "", atrium.Errorf(atrium.EInvalid, "a repository is OWNER/REPO, not %q", s)
	}
	return owner, repo, nil
}

func (c *Client) Issue(ctx context.Context, number int) (tasks.Issue, error) {
	i, _, err := c.c.Issues.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return tasks.Issue{}, wrap(err, "get issue %d", number)
	}
	return issue(i), nil
}

func (c *Client) IssuesSince(ctx context.Context, since time.Time, etag string) ([]tasks.Issue, string, bool, error) {
	opt := &gh.IssueListByRepoOptions{State: "all", Sort: "updated", Direction: "asc", Since: since, ListOptions: gh.ListOptions{PerPage: 100}}
	return conditionalPages(ctx, etag, "list issues", issue, func(ctx context.Context, page int) ([]*gh.Issue, *gh.Response, error) {
		opt.ListOptions.Page = page
		return c.c.Issues.ListByRepo(ctx, c.owner, c.repo, opt)
	})
}

// conditionalPages reads a list page by page, its first page asked with
// the caller's ETag: a 304 to it (unchanged) says the whole list is as it
// was, and costs nothing. first is the first page's ETag.
func conditionalPages[G, T any](ctx context.Context, etag, what string, conv func(G) T, page func(ctx context.Context, page int) ([]G, *gh.Response, error)) (out []T, first string, unchanged bool, err error) {
	for n := 0; ; {
		pctx := ctx
		if n == 0 && etag != "" {
			pctx = context.WithValue(ctx, ifNoneMatch{}, etag)
		}
		xs, resp, err := page(pctx, n)
		if err != nil {
			return nil, "", false, wrap(err, "%s", what)
		}
		if n == 0 {
			first = resp.Header.Get("ETag")
			if resp.Header.Get(fromCache) != "" {
				return nil, first, true, nil // the first page is as it was: so is the rest
			}
		}
		for _, x := range xs {
			out = append(out, conv(x))
		}
		if resp.NextPage == 0 {
			return out, first, false, nil
		}
		n = resp.NextPage
	}
}

// ifNoneMatch carries, in a request's context, an ETag its caller kept.
type ifNoneMatch struct{}

func (c *Client) CreateIssue(ctx context.Context, f tasks.IssueFields) (tasks.Issue, error) {
	r := gh.CreateIssueRequest{Body: f.Body}
	if f.Title != nil {
		r.Title = *f.Title
	}
	if f.Labels != nil {
		r.Labels = *f.Labels
	}
	if f.Assignees != nil {
		r.Assignees = *f.Assignees
	}
	i, _, err := c.c.Issues.Create(ctx, c.owner, c.repo, r)
	if err != nil {
		return tasks.Issue{}, wrap(err, "create issue")
	}
	if f.Closed != nil && *f.Closed { // an issue is made open
		return c.UpdateIssue(ctx, i.GetNumber(), tasks.IssueFields{Closed: f.Closed})
	}
	return issue(i), nil
}

func (c *Client) UpdateIssue(ctx context.Context, number int, f tasks.IssueFields) (tasks.Issue, error) {
	r := gh.UpdateIssueRequest{Title: f.Title, Body: f.Body}
	if f.Labels != nil {
		r.Labels = append([]string{}, *f.Labels...)
	}
	if f.Assignees != nil {
		r.Assignees = append([]string{}, *f.Assignees...)
	}
	if f.Closed != nil {
		state := "open"
		if *f.Closed {
			state = "closed"
		}
		r.State = &state
	}
	i, _, err := c.c.Issues.Update(ctx, c.owner, c.repo, number, r)
	if err != nil {
		return tasks.Issue{}, wrap(err, "update issue %d", number)
	}
	return issue(i), nil
}

func (c *Client) Comments(ctx context.Context, number int) ([]tasks.IssueComment, error) {
	opt := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	var out []tasks.IssueComment
	for {
		cs, resp, err := c.c.Issues.ListComments(ctx, c.owner, c.repo, number, opt)
		if err != nil {
			return nil, wrap(err, "list comments of issue %d", number)
		}
		for _, x := range cs {
			out = append(out, comment(x))
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opt.Page = resp.NextPage
	}
}

func (c *Client) CommentsSince(ctx context.Context, since time.Time, etag string) ([]tasks.IssueComment, string, bool, error) {
	sort, dir := "updated", "asc"
	opt := &gh.IssueListCommentsOptions{Sort: &sort, Direction: &dir, ListOptions: gh.ListOptions{PerPage: 100}}
	if !since.IsZero() {
		opt.Since = &since
	}
	return conditionalPages(ctx, etag, "list comments", comment, func(ctx context.Context, page int) ([]*gh.IssueComment, *gh.Response, error) {
		opt.ListOptions.Page = page
		return c.c.Issues.ListComments(ctx, c.owner, c.repo, 0, opt) // 0: every issue's
	})
}

// Own reports whether author posts as its own App.
func (c *Client) Own(author string) bool {
	_, ok := c.agents[EnvHandle(author)]
	return ok
}

// PostComment posts as author's App when it has one, else as the link.
func (c *Client) PostComment(ctx context.Context, number int, author, body string) (tasks.IssueComment, error) {
	gc := c.c
	if a, ok := c.agents[EnvHandle(author)]; ok {
		gc = a.c
	}
	x, _, err := gc.Issues.CreateComment(ctx, c.owner, c.repo, number, gh.IssueCommentRequest{Body: body})
	if err != nil {
		return tasks.IssueComment{}, wrap(err, "comment on issue %d", number)
	}
	return comment(x), nil
}

func (c *Client) AddLabel(ctx context.Context, number int, label string) error {
	_, _, err := c.c.Issues.AddLabelsToIssue(ctx, c.owner, c.repo, number, []string{label})
	return wrap(err, "label issue %d", number)
}

func (c *Client) RemoveLabel(ctx context.Context, number int, label string) error {
	_, err := c.c.Issues.RemoveLabelForIssue(ctx, c.owner, c.repo, number, label)
	var e *gh.ErrorResponse
	if errors.As(err, &e) && e.Response != nil && e.Response.StatusCode == http.StatusNotFound {
		return nil // not there: what was asked
	}
	return wrap(err, "unlabel issue %d", number)
}

// Budget is the link's rate budget (each App's installation has its own;
// the link's makes nearly all the calls), with the calls of every
// identity.
func (c *Client) Budget() tasks.Budget {
	b := c.t.budget()
	for _, a := range c.agents {
		ab := a.t.budget()
		b.Calls += ab.Calls
		b.NotModified += ab.NotModified
	}
	return b
}

func issue(i *gh.Issue) tasks.Issue {
	out := tasks.Issue{Number: i.GetNumber(), Title: i.GetTitle(), Body: i.GetBody(), Closed: i.GetState() == "closed",
		Author: i.GetUser().GetLogin(), UpdatedAt: i.GetUpdatedAt().Time, PullRequest: i.PullRequestLinks != nil, Labels: []string{}, Assignees: []string{}}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	for _, u := range i.Assignees {
		out.Assignees = append(out.Assignees, u.GetLogin())
	}
	return out
}

func comment(x *gh.IssueComment) tasks.IssueComment {
	out := tasks.IssueComment{ID: x.GetID(), Body: x.GetBody(), Author: x.GetUser().GetLogin(), CreatedAt: x.GetCreatedAt().Time, UpdatedAt: x.GetUpdatedAt().Time}
	// The issue's number is only in its URL: …/issues/N.
	if u := x.GetIssueURL(); u != "" {
		out.Issue, _ = strconv.Atoi(u[strings.LastIndexByte(u, '/')+1:])
	}
	return out
}

// wrap gives go-github's errors Atrium's codes, and keeps no go-github type.
func wrap(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	var e *gh.ErrorResponse
	if errors.As(err, &e) && e.Response != nil {
		switch e.Response.StatusCode {
		case http.StatusNotFound, http.StatusGone:
			return atrium.Errorf(atrium.ENotFound, "github: %s: not found", what)
		case http.StatusUnprocessableEntity:
			return atrium.Errorf(atrium.EInvalid, "github: %s: %s", what, e.Message)
		case http.StatusUnauthorized, http.StatusForbidden:
			return atrium.Errorf(atrium.EPermission, "github: %s: %s", what, e.Message)
		}
		if e.Response.StatusCode >= 500 {
			return fmt.Errorf("github: %s: %d %s: %w", what, e.Response.StatusCode, e.Message, tasks.ErrTrackerFailed)
		}
		return fmt.Errorf("github: %s: %d %s", what, e.Response.StatusCode, e.Message)
	}
	var he *ghinstallation.HTTPError
	if errors.As(err, &he) && he.Response != nil && (he.Response.StatusCode == http.StatusUnauthorized || he.Response.StatusCode == http.StatusNotFound) {
		return atrium.Errorf(atrium.EPermission, "github: %s: GitHub refused the App's credentials for installation %d (%s)", what, he.InstallationID, he.Response.Status)
	}
	var rl *gh.RateLimitError
	if errors.As(err, &rl) {
		return fmt.Errorf("github: %s: rate limit exhausted until %s: %w", what, rl.Rate.Reset.Time.Format(time.RFC3339), tasks.ErrRateLimited)
	}
	var abuse *gh.AbuseRateLimitError
	if errors.As(err, &abuse) {
		return fmt.Errorf("github: %s: secondary rate limit: %w", what, tasks.ErrRateLimited)
	}
	return fmt.Errorf("github: %s: %w", what, err)
}

// fromCache marks a response the transport replayed from its ETag cache
// after a 304.
const fromCache = "X-Atrium-From-Cache"

type cached struct {
	etag   string
	header http.Header
	body   []byte
}

// transport authenticates, counts calls, reads the rate budget, makes GETs
// conditional (an ETag per URL, kept per client and so per token: a 304
// costs no budget), and retries secondary rate limits and 5xx answers.
type transport struct {
	next    http.RoundTripper
	token   string
	retries int
	maxWait time.Duration

	mu          sync.Mutex
	etags       map[string]cached
	calls, n304 int
	limit, rem  int
	reset       time.Time
	seen        bool
}

func (t *transport) budget() tasks.Budget {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := tasks.Budget{Calls: t.calls, NotModified: t.n304, Limit: -1, Remaining: -1}
	if t.seen {
		b.Limit, b.Remaining, b.Reset = t.limit, t.rem, t.reset
	}
	return b
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	key := req.URL.String()
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		if body != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if t.token != "" {
			r.Header.Set("Authorization", "Bearer "+t.token)
		}
		t.mu.Lock()
		c, ok := t.etags[key]
		t.calls++
		t.mu.Unlock()
		if kept, _ := req.Context().Value(ifNoneMatch{}).(string); kept != "" && (!ok || c.etag != kept) {
			// The caller's ETag, from an earlier process: a 304 to it says
			// nothing changed, which is all the caller asks, so no body.
			c, ok = cached{etag: kept, header: http.Header{"Etag": {kept}}, body: []byte("[]")}, true
		}
		if req.Method == http.MethodGet && ok {
			r.Header.Set("If-None-Match", c.etag)
		}
		resp, err := t.next.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		t.observe(resp.Header)
		if wait, retry := t.retryAfter(resp); retry && attempt < t.retries {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			select {
			case <-time.After(wait):
				continue
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		switch {
		case resp.StatusCode == http.StatusNotModified && ok:
			resp.Body.Close()
			t.mu.Lock()
			t.n304++
			t.mu.Unlock()
			h := c.header.Clone()
			h.Set(fromCache, "1")
			for _, k := range []string{"X-Ratelimit-Remaining", "X-Ratelimit-Limit", "X-Ratelimit-Reset"} {
				if v := resp.Header.Get(k); v != "" {
					h.Set(k, v)
				}
			}
			return &http.Response{Status: "200 OK", StatusCode: 200, Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
				Header: h, Body: io.NopCloser(bytes.NewReader(c.body)), ContentLength: int64(len(c.body)), Request: req}, nil
		case req.Method == http.MethodGet && resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return nil, err
			}
			t.mu.Lock()
			t.etags[key] = cached{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: b}
			t.mu.Unlock()
			resp.Body = io.NopCloser(bytes.NewReader(b))
		}
		return resp, nil
	}
}

func (t *transport) observe(h http.Header) {
	rem, err := strconv.Atoi(h.Get("X-RateLimit-Remaining"))
	if err != nil {
		return
	}
	limit, _ := strconv.Atoi(h.Get("X-RateLimit-Limit"))
	reset, _ := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	t.mu.Lock()
	t.seen, t.rem, t.limit, t.reset = true, rem, limit, time.Unix(reset, 0)
	t.mu.Unlock()
}

// retryAfter says whether resp is worth another try, and after how long: a
// secondary rate limit (403 or 429 with Retry-After, or with the primary
// budget left) or a 5xx. An exhausted primary budget is not waited out here:
// the caller stops and the next sync resumes.
func (t *transport) retryAfter(resp *http.Response) (time.Duration, bool) {
	var wait time.Duration
	switch {
	case resp.StatusCode >= 500:
		wait = 500 * time.Millisecond
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusForbidden:
		ra := resp.Header.Get("Retry-After")
		if ra == "" {
			return 0, false
		}
		s, err := strconv.Atoi(ra)
		if err != nil {
			return 0, false
		}
		wait = time.Duration(s) * time.Second
	default:
		return 0, false
	}
	return min(wait, t.maxWait), true
}
