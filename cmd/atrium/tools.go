package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium/mcpserver"
)

func newToolsCmd(g *globals) *cobra.Command {
	var (
		surface surfaceFlags
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List the tools the MCP surface exposes, with their annotations",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := mcpserver.New(surface.config(g.logger(), nil, false))
			if err != nil {
				return err
			}
			defer srv.Close()
			if asJSON {
				defs := make([]any, 0, len(srv.Tools()))
				for _, t := range srv.Tools() {
					defs = append(defs, t.Def())
				}
				b, err := json.MarshalIndent(defs, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintln(g.stdout, string(b))
				return nil
			}
			w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TOOL\tTOOLSET\tREAD-ONLY\tDESTRUCTIVE\tIDEMPOTENT\tOPEN-WORLD\tTITLE")
			for _, t := range srv.Tools() {
				a := t.Def().Annotations
				fmt.Fprintf(w, "%s\t%s\t%v\t%v\t%v\t%v\t%s\n", t.Def().Name, t.Toolset, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint, t.Def().Title)
			}
			return w.Flush()
		},
	}
	surface.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the full tool definitions (schemas included) as JSON")
	return cmd
}
