package main

import (
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func newSessionCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "session", Short: "List and end browser sessions"}
	var principal string
	list := &cobra.Command{
		Use:   "list",
		Short: "List the browsers signed in (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			sessions, err := a.Identity.Sessions(cmd.Context(), principal)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tPRINCIPAL\tTOKEN\tSIGNED IN\tLAST SEEN\tEXPIRES\tBROWSER")
			for _, s := range sessions {
				fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%s\t%s\t%s\n", s.ID, s.Principal, s.TokenID, s.CreatedAt.Format(time.RFC3339),
					s.LastSeen.Format(time.RFC3339), s.ExpiresAt.Format(time.RFC3339), s.UserAgent)
			}
			return w.Flush()
		},
	}
	list.Flags().StringVar(&principal, "principal", "", "only this principal's sessions")
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Sign a browser out; its next request is anonymous",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return fmt.Errorf("session ID %q: want the number shown by 'atrium session list'", args[0])
			}
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			if err := a.Identity.RevokeSession(cmd.Context(), id); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "ended session %d\n", id)
			return nil
		},
	}
	cmd.AddCommand(list, revoke)
	return cmd
}
