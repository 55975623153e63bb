package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
)

func newHandoffCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "handoff", Short: "The workspace's hand-off rules: who takes a task over when it is completed"}
	var nextPhase string
	set := &cobra.Command{
		Use:   "set phase=NAME|label=NAME NEXT",
		Short: "Hand tasks completed in a phase (or with a label) to NEXT, moving them to --next-phase if given",
		Long: `Hand tasks completed in a phase, or carrying a label, to another principal.

  atrium handoff set phase=PHASE_3_PLANS baron --next-phase PHASE_4_IMPLEMENT
  atrium handoff set label=frontend dede

task_signal_complete uses the rule for the task's phase, else the first for one
of its labels, else hands the task back to its creator. With --next-phase the task
moves on to that phase, open and assigned to NEXT; without, it is done.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, value, ok := strings.Cut(args[0], "=")
			if !ok {
				return fmt.Errorf("match %q: write phase=NAME or label=NAME", args[0])
			}
			a, err := g.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			admin, err := a.Identity.AdminActor(cmd.Context(), os.Getenv("ATRIUM_WORKSPACE"))
			if err != nil {
				return err
			}
			ctx := atrium.NewContextWithActor(cmd.Context(), admin)
			if err := a.Tasks.SetHandoffRule(ctx, atrium.HandoffRule{MatchKind: kind, MatchValue: value, Next: args[1], NextPhase: nextPhase}); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "tasks completed with %s=%s go to @%s\n", kind, value, strings.TrimPrefix(args[1], "@"))
			return nil
		},
	}
	set.Flags().StringVar(&nextPhase, "next-phase", "", "the phase the task moves to (default: the task is done)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the hand-off rules",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, actor, err := g.openLocal(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			rules, err := a.Tasks.HandoffRules(atrium.NewContextWithActor(cmd.Context(), actor))
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "MATCH\tNEXT\tNEXT PHASE")
			for _, r := range rules {
				fmt.Fprintf(w, "%s=%s\t@%s\t%s\n", r.MatchKind, r.MatchValue, r.Next, r.NextPhase)
			}
			return w.Flush()
		},
	}
	cmd.AddCommand(set, list)
	return cmd
}
