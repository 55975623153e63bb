package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/activity"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/api"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/httpserve"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mcptools"
	"github.com/atrium-hq/atrium/mirror"
	"github.com/atrium-hq/atrium/oauth"
	"github.com/atrium-hq/atrium/oauthclient"
	"github.com/atrium-hq/atrium/oauthhttp"
	"github.com/atrium-hq/atrium/oidc"
	"github.com/atrium-hq/atrium/web"
	"github.com/atrium-hq/atrium/webhooks"
)

// surfaceFlags are the flags that choose what the MCP surface exposes.
type surfaceFlags struct {
	toolsets     string
	readOnly     bool
	skillsFolder string
}

func (f *surfaceFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.toolsets, "toolsets", env("ATRIUM_TOOLSETS", "all"), "comma-separated toolsets to expose: all, or names such as conformance (env ATRIUM_TOOLSETS)")
	cmd.Flags().BoolVar(&f.readOnly, "read-only", false, "expose only tools that change nothing")
	cmd.Flags().StringVar(&f.skillsFolder, "skills-folder", env("ATRIUM_SKILLS_FOLDER", "Skills"), "workspace folder whose Skills/<name>/SKILL.md pages are served as agent skills over MCP; - for none (env ATRIUM_SKILLS_FOLDER)")
}

// options are the toolsets' options the flags ask for.
func (f *surfaceFlags) options(gw *gateway.Gateway) mcptools.Options {
	return mcptools.Options{Gateway: gw, SkillsFolder: f.skillsFolder}
}

// mirrorFlag is --mirror: a folder kept in step with a workspace's pages.
type mirrorFlag struct{ dir string }

func (f *mirrorFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.dir, "mirror", os.Getenv("ATRIUM_MIRROR"), "keep this folder of .md files in step with the workspace's pages, both ways (env ATRIUM_MIRROR)")
}

// start runs the mirror for workspace (empty: the default), if a folder was
// given. Edits made in the folder are written as the local principal: the
// person who runs Atrium over their own folder (or ATRIUM_AGENT).
func (f *mirrorFlag) start(ctx context.Context, a *app, workspace string) (*mirror.Mirror, error) {
	if f.dir == "" {
		return nil, nil
	}
	actor, err := a.localActorIn(ctx, workspace)
	if err != nil {
		return nil, err
	}
	m, err := mirror.Start(ctx, mirror.Config{Dir: f.dir, Services: a.Services, Actor: actor})
	if err != nil {
		return nil, fmt.Errorf("mirror %s: %w", f.dir, err)
	}
	a.Log.Info("mirroring pages", "folder", m.Dir(), "workspace", actor.Workspace.Name)
	return m, nil
}

// config is the MCP surface the flags ask for, over the gateway gw (nil
// for none), logging to log. A local server's callers (stdio, in-process) may
// also attach files from the working folder and ask which store it uses;
// HTTP callers may not.
func (f *surfaceFlags) config(log *slog.Logger, gw *gateway.Gateway, local bool) mcpserver.Config {
	cfg := mcpserver.Config{
		Toolsets: mcptools.All(f.options(gw)),
		Enable:   mcpserver.ParseToolsets(f.toolsets),
		ReadOnly: f.readOnly,
		Logger:   log,
		Local:    local,
	}
	if local {
		if wd, err := os.Getwd(); err == nil {
			cfg.LocalFiles = wd
		}
	}
	return cfg
}

// supply gives an MCP surface what it needs of the store: the services and,
// for a local server, its caller; and has the gateway's calls audited.
func (a *app) supply(cfg *mcpserver.Config, gw *gateway.Gateway, actor *atrium.Actor) {
	cfg.Actor, cfg.Services = actor, a.Services
	if gw != nil {
		gw.SetAudit(func(ctx context.Context, c gateway.CallRecord) error {
			u := activity.UpstreamCall{Tool: c.Tool, Server: c.Server, Upstream: c.Upstream, Outcome: c.Outcome, Code: c.Code, DurationMS: c.Duration.Milliseconds()}
			if c.Outcome == "refused" {
				// A refusal is written before the caller hears of it: it is
				// what an admin looks for in the log, it is rare, and it is
				// answered at once, so that a client that ends atrium mcp
				// right after (mcporter kills it within 1.4 s) could end it
				// before the background writer's commit.
				return a.Activity.RecordUpstreamCall(ctx, u)
			}
			return a.Calls.Record(ctx, u)
		})
	}
}

func newServeCmd(g *globals) *cobra.Command {
	var (
		surface        surfaceFlags
		mirrorDir      mirrorFlag
		gwFlag         gatewayFlag
		addr           string
		authMode       string
		allowedHosts   string
		sessionTimeout time.Duration
		maxSessions    int
		metricsOpen    bool
		oauthOn        bool
		oidcClaim      string
		oauthDCR       bool
		publicURL      string
		embedder       embedderFlags
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the web UI, REST API and MCP over HTTP",
		Long: `Serve Atrium over HTTP: MCP Streamable HTTP at /mcp (and /w/WORKSPACE/mcp), legacy
HTTP+SSE at /mcp/sse, health at /healthz, metrics at /metrics (for an admin's token,
or anyone with --metrics-open).

Callers authenticate with bearer tokens (--auth token, the default). On first start
Atrium creates an admin and prints its token and a login link, once. --auth none makes
every caller the local admin and is only allowed on a loopback address.

MCP clients that cannot send a token (Claude's and ChatGPT's connectors, Cursor) sign
in with OAuth (--oauth, on by default): Atrium is their authorization server, and a
person approves each client in the browser. Behind a TLS proxy or a tunnel, set
--public-url (env ATRIUM_PUBLIC_URL) to the address clients use.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			mode := authn.Mode(authMode)
			var verifier *oidc.Verifier
			if issuer, ok := strings.CutPrefix(authMode, "oidc="); ok {
				v, err := oidc.New(oidc.Config{Issuer: issuer, Claim: oidcClaim})
				if err != nil {
					return err
				}
				verifier, mode = v, authn.ModeToken
			}
			if mode != authn.ModeToken && mode != authn.ModeNone {
				return fmt.Errorf("--auth %q: use token, none or oidc=ISSUER", authMode)
			}
			if mode == authn.ModeNone && !httpserve.IsLoopbackListen(addr) {
				return fmt.Errorf("--auth none serves every caller as admin, so it needs a loopback --addr (such as 127.0.0.1:8080), not %q", addr)
			}
			publicURL, err := checkPublicURL(publicURL)
			if err != nil {
				return err
			}
			oauthOn = oauthOn && mode == authn.ModeToken && verifier == nil
			ctx := cmd.Context()
			a, err := g.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			a.ConfigureOAuth(oauth.Config{DCR: oauthDCR, AllowPrivateDocuments: os.Getenv("ATRIUM_OAUTH_PRIVATE_DOCUMENTS") == "1"})
			go a.PurgeTrash(ctx)
			stopEmbed, err := embedder.start(ctx, a)
			if err != nil {
				return err
			}
			defer stopEmbed()
			go syncTrackers(ctx, a.Tasks, a.Log)
			boot, err := a.Identity.Bootstrap(ctx, mode == authn.ModeToken)
			if err != nil {
				return err
			}
			gw, err := gwFlag.start(g, a.Log)
			if err != nil {
				return err
			}
			if gw != nil {
				defer gw.Close()
			}
			cfg := surface.config(a.Log, gw, false)
			opts := surface.options(gw)
			opts.RunsAgents = true
			cfg.Toolsets = mcptools.All(opts)
			cfg.Metrics = a.Metrics
			a.supply(&cfg, gw, nil)
			mcp, err := mcpserver.New(cfg)
			if err != nil {
				return err
			}
			mir, err := mirrorDir.start(ctx, a, os.Getenv("ATRIUM_WORKSPACE"))
			if err != nil {
				return err
			}
			if mir != nil {
				defer mir.Close()
			}
			auth := &authn.Authenticator{Mode: mode, Identity: a.Identity, Logger: a.Log, OAuth: oauthOn, PublicURL: publicURL, OIDC: verifier}
			mcpHTTP := mcp.HTTP(mcpserver.HTTPOptions{Auth: auth, SessionTimeout: sessionTimeout})
			gwFlag.callbacks = &oauthclient.Callbacks{}
			ui := &web.Handler{Auth: auth, Services: a.Services, Gateway: gw, OAuthCallbacks: gwFlag.callbacks}
			rest := &api.Handler{Auth: auth, Services: a.Services}
			hosts := mcpserver.ParseToolsets(allowedHosts)
			if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" {
				hosts = append(hosts, u.Hostname())
			}
			srv := httpserve.New(httpserve.Config{
				Addr: addr,
				Register: func(mux *http.ServeMux) {
					mcpHTTP.Register(mux)
					rest.Register(mux)
					ui.Register(mux)
					(&webhooks.Handler{Tasks: a.Tasks, GitHubSecret: os.Getenv("ATRIUM_GITHUB_WEBHOOK_SECRET"), Log: a.Log}).Register(mux)
					switch {
					case oauthOn:
						(&oauthhttp.Handler{OAuth: a.OAuth, Auth: auth, Log: a.Log}).Register(mux)
					case verifier != nil:
						(&oauthhttp.Handler{Auth: auth, Log: a.Log, Issuer: verifier.Issuer()}).Register(mux)
					}
				},
				CrossOrigin:  oauthhttp.Public,
				CloseStreams: func() { mcpHTTP.Close(); ui.Close() },
				Health:       a.Ping,
				Engine:       a.Engine(),
				AllowedHosts: hosts,
				Auth:         auth,
				MetricsOpen:  metricsOpen,
				Metrics:      a.Metrics,
				Logger:       a.Log,
			})
			if err := srv.Listen(); err != nil {
				return err
			}
			base := "http://" + displayAddr(srv.Addr().String())
			if publicURL != "" {
				gwFlag.redirect = publicURL + "/gateway/oauth/callback"
			} else {
				gwFlag.redirect = base + "/gateway/oauth/callback"
			}
			if err := a.enableAgents(ctx, base, maxSessions); err != nil {
				return err
			}
			defer a.Agents.Shutdown() // before the store closes: sessions record their end
			// From the signal on, not only once the server has drained: an
			// agent whose calls fail meanwhile and exits was cut short too.
			stopAgents := context.AfterFunc(ctx, a.Agents.Stopping)
			defer stopAgents()
			if a.Tasks.BaseURL == "" {
				a.Tasks.BaseURL = base
			}
			if err := a.Tasks.Announce(ctx, a.Tasks.BaseURL); err != nil {
				a.Log.Warn("record the UI's address for local agents", "err", err)
			}
			if oauthOn && publicURL == "" && !httpserve.IsLoopbackListen(addr) {
				a.Log.Warn("OAuth is on and --public-url is not set: the issuer and the MCP URLs tokens are bound to follow each request's Host; set --public-url to the address clients use")
			}
			a.Log.Info("Atrium is serving", "url", base, "mcp", base+"/mcp", "engine", a.Engine(), "auth", mode, "toolsets", strings.Join(mcp.ToolsetNames(), ","))
			if boot.AdminToken != "" {
				fmt.Fprintf(g.stderr, "\n    First start: created the admin principal %q. Its token, shown only this once:\n\n        %s\n\n    Log in to the web UI:  %s/login?token=%s\n    Use it from an MCP client: Authorization: Bearer <token>, endpoint %s/mcp\n\n",
					"admin", boot.AdminToken, base, boot.AdminToken, base)
			}
			// A line on stdout for scripts and tests that start the server on port 0.
			fmt.Fprintf(g.stdout, "listening on %s\n", base)
			err = srv.Serve(ctx)
			a.Log.Info("stopped")
			return err
		},
	}
	surface.register(cmd)
	mirrorDir.register(cmd)
	gwFlag.register(cmd)
	embedder.register(cmd)
	cmd.Flags().StringVar(&addr, "addr", env("ATRIUM_ADDR", "127.0.0.1:8080"), "address to listen on (env ATRIUM_ADDR)")
	cmd.Flags().StringVar(&authMode, "auth", env("ATRIUM_AUTH", "token"), "token: bearer tokens; none: everyone is the local admin (loopback only); oidc=ISSUER: also the JWTs an external OpenID Connect issuer signs for this server's MCP URL")
	cmd.Flags().StringVar(&oidcClaim, "oidc-claim", env("ATRIUM_OIDC_CLAIM", "preferred_username"), "with --auth oidc=ISSUER: the claim whose value is the principal's handle (env ATRIUM_OIDC_CLAIM)")
	cmd.Flags().StringVar(&allowedHosts, "allowed-hosts", os.Getenv("ATRIUM_ALLOWED_HOSTS"), "comma-separated host names, besides loopback, that browsers may use to reach a loopback listener")
	cmd.Flags().BoolVar(&metricsOpen, "metrics-open", false, "serve /metrics without a token (for a scraper on a private network); otherwise it needs an admin's token")
	cmd.Flags().BoolVar(&oauthOn, "oauth", envBool("ATRIUM_OAUTH", true), "sign in MCP clients with OAuth 2.1, Atrium as the authorization server (with --auth token; env ATRIUM_OAUTH)")
	cmd.Flags().BoolVar(&oauthDCR, "oauth-dcr", envBool("ATRIUM_OAUTH_DCR", true), "let OAuth clients register dynamically (RFC 7591; Claude and VS Code need it; env ATRIUM_OAUTH_DCR)")
	cmd.Flags().StringVar(&publicURL, "public-url", os.Getenv("ATRIUM_PUBLIC_URL"), "the address clients reach this server at, e.g. https://atrium.example.com: the OAuth issuer and the base of the MCP URLs tokens are bound to (env ATRIUM_PUBLIC_URL; default: the address of each request)")
	cmd.Flags().IntVar(&maxSessions, "max-sessions", 8, "agent sessions a workspace runs at once")
	cmd.Flags().DurationVar(&sessionTimeout, "session-timeout", 30*time.Minute, "close 2025-era MCP sessions idle this long")
	return cmd
}

// checkPublicURL checks --public-url: an absolute http(s) URL with no path,
// query or fragment, returned without a trailing slash.
func checkPublicURL(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("--public-url %q: give the scheme and host clients use, such as https://atrium.example.com (no path)", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// displayAddr turns a listen address into one a browser can open.
func displayAddr(addr string) string {
	for _, any := range []string{"0.0.0.0:", "[::]:"} {
		if strings.HasPrefix(addr, any) {
			return "127.0.0.1:" + strings.TrimPrefix(addr, any)
		}
	}
	return addr
}

// enableAgents makes this server run agent sessions, kept under the data
// folder; the sessions' atrium mcp forwards to base. The replica is named by
// its host and data folder, which a restart keeps (replicas on one host each
// have their own): the sessions it left open are then marked failed.
func (a *app) enableAgents(ctx context.Context, base string, maxSessions int) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the atrium binary for agent sessions: %w", err)
	}
	host, _ := os.Hostname()
	return a.Agents.Enable(ctx, agents.RunnerConfig{DataDir: a.Where.DataDir, URL: base, Binary: exe, Replica: host + ":" + a.Where.DataDir, MaxSessions: maxSessions})
}
