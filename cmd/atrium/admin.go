package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
)

func newTokenCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "token", Short: "Create, list and revoke bearer tokens"}
	var r identity.TokenRequest
	var kind, role string
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a token (its secret is printed once)",
		Long: `Create a bearer token for a principal, creating the principal if needed, and
say what it grants. The secret goes to stdout; what it grants, to stderr.

--workspace binds the token to one workspace, and makes the principal a member there if
it is not one (as --role, default writer). Without --workspace the token works in every
workspace its principal belongs to (chosen per request with X-Atrium-Workspace or a
/w/NAME/mcp path), and the principal keeps exactly the roles it has: a principal that
belongs to no workspace needs --workspace. --role sets the principal's role in
--workspace (in the default workspace when --workspace is not given).`,
		Example: `  atrium token create --principal dede
  atrium token create --principal ci-bot --kind agent --workspace default --role reader --name "CI"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			r.Kind, r.Role = atrium.PrincipalKind(kind), atrium.Role(role)
			is, err := a.Identity.IssueToken(cmd.Context(), r)
			if err != nil {
				return err
			}
			fmt.Fprintln(g.stdout, is.Secret)
			describeToken(g.stderr, is)
			return nil
		},
	}
	create.Flags().StringVar(&r.Principal, "principal", localHandle(), "handle of the principal the token acts as")
	create.Flags().StringVar(&kind, "kind", "human", "kind of a principal created here: human or agent")
	create.Flags().StringVar(&r.Workspace, "workspace", "", "bind the token to this workspace (the principal joins it if needed)")
	create.Flags().StringVar(&role, "role", "", "set the principal's role in --workspace (or in default): reader, writer or admin")
	create.Flags().StringVar(&r.Name, "name", "", "what the token is for")

	var (
		principal string
		asJSON    bool
	)
	list := &cobra.Command{
		Use:   "list",
		Short: "List tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			toks, err := a.Identity.Tokens(cmd.Context(), principal)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(toks)
			}
			w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tPRINCIPAL\tWORKSPACE\tNAME\tCREATED\tLAST USED\tREVOKED")
			for _, t := range toks {
				ws := t.Workspace
				if ws == "" {
					ws = "(any)"
				}
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Principal, ws, t.Name, t.CreatedAt.Format(time.RFC3339), when(t.LastUsedAt), when(t.RevokedAt))
			}
			return w.Flush()
		},
	}
	list.Flags().StringVar(&principal, "principal", "", "only this principal's tokens (and the OAuth grants they consented to for agents)")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON: with each OAuth grant's client, MCP URL and consented role")

	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token; it stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return fmt.Errorf("token ID %q: want the number shown by 'atrium token list'", args[0])
			}
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			t, err := a.Identity.RevokeToken(cmd.Context(), id)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "revoked token %d of %s\n", t.ID, t.Principal)
			return nil
		},
	}
	cmd.AddCommand(create, list, revoke)
	return cmd
}

// describeToken says what a new token grants, and what its creation changed,
// so that no grant goes unseen.
func describeToken(w io.Writer, is identity.Issued) {
	t := is.Token
	if is.NewPrincipal {
		fmt.Fprintf(w, "created principal %s\n", t.Principal)
	}
	if c := is.Changed; c != nil {
		if c.From == "" {
			fmt.Fprintf(w, "%s joined workspace %s as %s\n", t.Principal, c.Workspace, c.To)
		} else {
			fmt.Fprintf(w, "%s's role in workspace %s changed from %s to %s\n", t.Principal, c.Workspace, c.From, c.To)
		}
	}
	grants := make([]string, len(is.Grants))
	for i, m := range is.Grants {
		grants[i] = m.Workspace + " (" + string(m.Role) + ")"
	}
	if t.Workspace != "" {
		fmt.Fprintf(w, "token %d for %s works only in workspace %s\n", t.ID, t.Principal, strings.Join(grants, ", "))
	} else {
		fmt.Fprintf(w, "token %d for %s works in every workspace %s belongs to, now: %s\n", t.ID, t.Principal, t.Principal, strings.Join(grants, ", "))
	}
	fmt.Fprintln(w, "the secret above is shown only now")
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func newWorkspaceCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "workspace", Short: "Create and list workspaces"}
	var admin string
	create := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a workspace",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			ws, err := a.Identity.CreateWorkspace(cmd.Context(), args[0], admin)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "created workspace %s\n", ws.Name)
			return nil
		},
	}
	create.Flags().StringVar(&admin, "admin", "", "make this principal the workspace's admin")
	list := &cobra.Command{
		Use:   "list",
		Short: "List workspaces",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			wss, err := a.Identity.Workspaces(cmd.Context())
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tCREATED")
			for _, ws := range wss {
				fmt.Fprintf(w, "%s\t%s\n", ws.Name, ws.CreatedAt.Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
	cmd.AddCommand(create, list)
	return cmd
}

func newMigrateCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Bring the database schema up to date (serve and mcp also do it on start)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			v, err := a.SchemaVersion(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "%s schema at version %d\n", a.Engine(), v)
			return nil
		},
	}
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(*cobra.Command, []string) {
			fmt.Fprintf(g.stdout, "atrium %s\n", atrium.Version)
		},
	}
}
