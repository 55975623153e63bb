package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/gateway"
	"github.com/atrium-hq/atrium/oauthclient"
)

// gatewayFlag is --gateway: a file of other MCP servers to put behind Atrium.
type gatewayFlag struct {
	file string
	// redirect is the gateway page's sign-in route on this server's public
	// address (serve), where an upstream's authorization server sends the
	// admin back; callbacks hands those answers on. Empty: a loopback
	// listener (atrium mcp, the CLI).
	redirect  string
	callbacks *oauthclient.Callbacks
}

func (f *gatewayFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.file, "gateway", os.Getenv("ATRIUM_GATEWAY"), "start the MCP servers of this file (the mcpServers JSON of Claude Desktop, Cursor or .mcp.json) and expose their tools as <server>_<tool> (env ATRIUM_GATEWAY)")
}

// start starts the gateway, if a file was given. Its servers start in the
// background; the caller closes it, which ends every process it started.
// A server that takes only OAuth is reached with the tokens `atrium gateway
// login` kept for it in the data folder; the gateway never asks a person
// itself (a server has no one to ask), it says who should sign in.
func (f *gatewayFlag) start(g *globals, log *slog.Logger) (*gateway.Gateway, error) {
	if f.file == "" {
		return nil, nil
	}
	return gateway.Start(f.file, gateway.Options{Logger: log, SignIn: func(sp *gateway.Spec, open func(context.Context, string) error) (gateway.OAuthClient, error) {
		name := sp.Name
		if open == nil {
			open = func(context.Context, string) error {
				return fmt.Errorf("%s takes OAuth and nobody has signed in to it yet, or its sign-in has ended: an admin signs it in on the gateway page, or runs  atrium gateway login %s", name, name)
			}
		}
		return g.upstreamSignIn(sp, open, f.redirect, f.callbacks)
	}})
}

// upstreamSignIn is the OAuth client of gateway server name at url, its
// tokens kept in the data folder under the server's name and URL; open
// sends a person to the authorization page.
func (g *globals) upstreamSignIn(sp *gateway.Spec, open func(context.Context, string) error, redirect string, callbacks *oauthclient.Callbacks) (*oauthclient.Handler, error) {
	store, err := oauthclient.OpenStore(filepath.Join(g.dataDir, "oauth-tokens"))
	if err != nil {
		return nil, fmt.Errorf("the OAuth token folder: %w", err)
	}
	metadata := sp.OAuth.ClientMetadataURL
	if metadata == "" {
		metadata = os.Getenv("ATRIUM_OAUTH_CLIENT_METADATA_URL")
	}
	return oauthclient.New(oauthclient.Config{Store: store, Key: "gateway:" + sp.Name + " " + sp.URL, ClientName: "Atrium gateway",
		ClientID: sp.OAuth.ClientID, ClientSecret: sp.OAuth.ClientSecret, MetadataURL: metadata,
		Open: open, RedirectURL: redirect, Callbacks: callbacks, Logger: g.logger()})
}

func newGatewayCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "gateway", Short: "Sign the gateway in to the MCP servers behind it that take OAuth"}
	var file string
	login := &cobra.Command{
		Use:   "login NAME",
		Short: "Sign the gateway in to server NAME of the gateway file, in your browser",
		Long: `Sign the gateway in to an HTTP server of the gateway file that takes OAuth (PostHog, Vercel,
Neon … host such servers): the command prints the address of the server's sign-in page (and
opens it with $BROWSER when that is set), waits for you to approve, and keeps the tokens,
encrypted, in the data folder. A running atrium serve or atrium mcp with the same data folder
and gateway file picks them up on its next attempt to reach the server, and refreshes them
as they expire. The tokens are never shown.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := gateway.LoadFile(file)
			if err != nil {
				return err
			}
			sc, ok := f.Servers[args[0]]
			if !ok {
				return fmt.Errorf("no server %q in %s (it has: %s)", args[0], file, strings.Join(f.Names(), ", "))
			}
			sp, err := gateway.Resolve(args[0], sc, os.LookupEnv)
			if err != nil {
				return err
			}
			if sp.Transport == "stdio" {
				return fmt.Errorf("%s runs on stdio: it has no OAuth sign-in", args[0])
			}
			h, err := g.upstreamSignIn(sp, func(ctx context.Context, u string) error { return openBrowser(ctx, g.stderr, sp.Name, u) }, "", nil)
			if err != nil {
				return err
			}
			defer h.Close()
			client := mcp.NewClient(&mcp.Implementation{Name: "atrium-gateway", Version: atrium.Version}, nil)
			sess, err := client.Connect(cmd.Context(), &mcp.StreamableClientTransport{Endpoint: sp.URL, OAuthHandler: h, MaxRetries: -1}, nil)
			if err != nil {
				return fmt.Errorf("sign in to %s: %w", sp.Name, err)
			}
			defer sess.Close()
			n := 0
			for _, err := range sess.Tools(cmd.Context(), nil) {
				if err != nil {
					return fmt.Errorf("list %s's tools: %w", sp.Name, err)
				}
				n++
			}
			fmt.Fprintf(g.stdout, "signed in to %s: %d tools; the gateway uses these tokens from its next attempt\n", sp.Name, n)
			return nil
		},
	}
	login.Flags().StringVar(&file, "gateway", os.Getenv("ATRIUM_GATEWAY"), "the gateway file (env ATRIUM_GATEWAY)")
	cmd.AddCommand(login)
	return cmd
}
