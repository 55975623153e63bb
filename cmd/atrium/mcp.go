package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/authn"
	"github.com/atrium-hq/atrium/mcpserver"
	"github.com/atrium-hq/atrium/mirror"
	"github.com/atrium-hq/atrium/oauthclient"
)

func newMCPCmd(g *globals) *cobra.Command {
	var (
		surface   surfaceFlags
		mirrorDir mirrorFlag
		gw        gatewayFlag
		url       string
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP on stdio, over the local store or a remote atrium serve",
		Long: `Serve MCP on stdin/stdout: what an MCP client (Claude Code, Cursor, mcporter) spawns.

Over the local store, you act as the agent ATRIUM_AGENT (without it: your user name, as a
person; created on first use) in ATRIUM_WORKSPACE (default: default).

With --url (or ATRIUM_URL) it forwards everything to a remote 'atrium serve' instead,
authenticating with the token in ATRIUM_TOKEN: keep the token in the client's config, never
on a command line.`,
		Example: `  claude mcp add atrium -- atrium mcp
  ATRIUM_URL=https://atrium.example.com/mcp ATRIUM_TOKEN=atr_… atrium mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if url != "" {
				return runProxy(ctx, g, url)
			}
			return serveStdio(ctx, g, &surface, &mirrorDir, &gw)
		},
	}
	surface.register(cmd)
	mirrorDir.register(cmd)
	gw.register(cmd)
	cmd.Flags().StringVar(&url, "url", os.Getenv("ATRIUM_URL"), "forward to the MCP endpoint of a remote atrium serve, e.g. https://host/mcp (env ATRIUM_URL; token in ATRIUM_TOKEN)")
	return cmd
}

// serveStdio serves MCP on stdio over the local store. The server answers the
// handshake and lists its tools while the store opens (in a few milliseconds,
// or for minutes when a migration rewrites a large table): a client that
// spawns atrium mcp is never kept waiting for an answer, and its calls wait
// for the store instead.
func serveStdio(ctx context.Context, g *globals, surface *surfaceFlags, mirrorDir *mirrorFlag, gwFlag *gatewayFlag) error {
	log := g.logger()
	var (
		a   *app
		mir *mirror.Mirror
	)
	gw, err := gwFlag.start(g, log)
	if err != nil {
		return err
	}
	if gw != nil {
		defer gw.Close() // last: no server it started outlives this process
	}
	cfg := surface.config(log, gw, true)
	cfg.Open = func(ctx context.Context, cfg *mcpserver.Config) error {
		var actor *atrium.Actor
		var err error
		if a, actor, err = g.openLocal(ctx); err != nil {
			return err
		}
		a.supply(cfg, gw, actor)
		go a.PurgeTrash(ctx)
		log.Debug("serving MCP on stdio", "actor", actor.String())
		mir, err = mirrorDir.start(ctx, a, actor.Workspace.Name)
		return err
	}
	srv, err := mcpserver.New(cfg)
	if err != nil {
		return err
	}
	// Most opens take a few milliseconds, and the handshake is quicker after
	// them than beside them: SQLite's start-up and the SDK's would share two
	// cores and a page table. Only a slow open is served around.
	wait, stop := context.WithTimeout(ctx, slowOpen)
	srv.Opened(wait)
	stop()
	ss, err := srv.Local().Connect(ctx, stdio(g), nil)
	if err != nil {
		srv.Close()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	failed := make(chan error, 1)
	go func() {
		// The session ends when the client leaves, on a signal, or when
		// the store cannot be opened: there is nothing to serve then.
		err := srv.Opened(ctx)
		if err == nil {
			<-ctx.Done()
		} else if ctx.Err() == nil {
			failed <- err
		}
		ss.Close()
	}()
	runErr := ss.Wait()
	cancel()
	srv.Close()                          // ends an Open still under way: the client has left
	_ = srv.Opened(context.Background()) // and waits for it, so that a and mir are settled
	if mir != nil {
		mir.Close()
	}
	if a != nil {
		a.Close()
	}
	select {
	case err := <-failed:
		return err
	default:
		return ignoreEOF(runErr)
	}
}

// stdio is MCP on the command's stdin and stdout. When the client closes
// stdin, the calls it sent are still answered, for up to drainCalls.
func stdio(g *globals) mcp.Transport {
	return mcpserver.Stdio(readCloser(g.stdin), writeCloser(g.stdout), drainCalls)
}

const drainCalls = 30 * time.Second

// slowOpen is how long atrium mcp lets the store open before it answers the
// client's handshake anyway: well under the time clients give a server to
// start, well over a normal open.
const slowOpen = 250 * time.Millisecond

// runProxy serves stdio by forwarding to the remote server at url.
func runProxy(ctx context.Context, g *globals, url string) error {
	log := g.logger()
	t, done, err := g.remoteTransport(url)
	if err != nil {
		return err
	}
	defer done()
	p, err := mcpserver.DialProxy(ctx, t, log)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", url, err)
	}
	defer p.Close()
	return ignoreEOF(p.Server().Run(ctx, stdio(g)))
}

// remoteTransport is a Streamable HTTP client transport to url that sends
// ATRIUM_TOKEN and ATRIUM_WORKSPACE with every request. Without a token, a
// server that answers 401 with OAuth metadata is signed in to instead (see
// signIn); done releases what that holds.
func (g *globals) remoteTransport(url string) (mcp.Transport, func(), error) {
	t := &mcp.StreamableClientTransport{
		Endpoint:   url,
		MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &authTransport{
			token:     os.Getenv("ATRIUM_TOKEN"),
			workspace: os.Getenv("ATRIUM_WORKSPACE"),
			next:      http.DefaultTransport,
		}},
	}
	if os.Getenv("ATRIUM_TOKEN") != "" {
		return t, func() {}, nil
	}
	h, err := g.signIn(url)
	if err != nil {
		return nil, nil, err
	}
	t.OAuthHandler = h
	return t, func() { h.Close() }, nil
}

// signIn is the OAuth client of a remote server: the person is sent to the
// authorization page (by $BROWSER when it is set, and always by a line on
// stderr), and the tokens are kept, encrypted, under the data folder, so
// that they sign in once. ATRIUM_OAUTH_CLIENT_ID (and _SECRET) name a
// client registered beforehand, ATRIUM_OAUTH_CLIENT_METADATA_URL the
// client's metadata document; otherwise it registers dynamically.
func (g *globals) signIn(server string) (*oauthclient.Handler, error) {
	store, err := oauthclient.OpenStore(filepath.Join(g.dataDir, "oauth-tokens"))
	if err != nil {
		return nil, fmt.Errorf("the OAuth token folder: %w", err)
	}
	return oauthclient.New(oauthclient.Config{
		Store: store, Key: server, ClientName: "Atrium CLI",
		ClientID: os.Getenv("ATRIUM_OAUTH_CLIENT_ID"), ClientSecret: os.Getenv("ATRIUM_OAUTH_CLIENT_SECRET"),
		MetadataURL: os.Getenv("ATRIUM_OAUTH_CLIENT_METADATA_URL"),
		Open:        func(ctx context.Context, u string) error { return openBrowser(ctx, g.stderr, server, u) },
		Logger:      g.logger(),
	})
}

// openBrowser tells the person where to sign in to server, and opens it
// with $BROWSER when that is set.
func openBrowser(ctx context.Context, stderr io.Writer, server, u string) error {
	fmt.Fprintf(stderr, "%s asks you to sign in. Open this address in a browser:\n\n    %s\n\n", server, u)
	b := os.Getenv("BROWSER")
	if b == "" {
		return nil
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", b+` "$1"`, "browser", u)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	return cmd.Start()
}

type authTransport struct {
	token, workspace string
	next             http.RoundTripper
}

func (t *authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if t.token != "" {
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	if t.workspace != "" {
		r.Header.Set(authn.WorkspaceHeader, t.workspace)
	}
	return t.next.RoundTrip(r)
}

// ignoreEOF treats the client closing stdin as the normal end of a session.
func ignoreEOF(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

type nopCloseReader struct{ io.Reader }

func (nopCloseReader) Close() error { return nil }

type nopCloseWriter struct{ io.Writer }

func (nopCloseWriter) Close() error { return nil }

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return nopCloseReader{r}
}

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopCloseWriter{w}
}
