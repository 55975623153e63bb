package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium/mcpserver"
)

func newSkillCmd(g *globals) *cobra.Command {
	var (
		surface surfaceFlags
		output  string
	)
	cmd := &cobra.Command{
		Use:   "skill",
		Short: "Write the agent skill (SKILL.md) for the tools this server exposes",
		Long: `Write SKILL.md, the document that teaches an agent to use Atrium: every tool of the
enabled toolsets with its parameters and an example through 'atrium call' and mcporter,
the workflow recipes, and how the toolsets fit together. It is generated from the live
tool registry, so it never drifts from the server; it names no URL and no token.`,
		Example: `  atrium skill -o ~/.claude/skills/atrium/SKILL.md
  atrium skill --toolsets docs`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := mcpserver.New(surface.config(g.logger(), nil, false))
			if err != nil {
				return err
			}
			defer srv.Close()
			var w io.Writer = g.stdout
			if output != "" && output != "-" {
				f, err := os.Create(output)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			return srv.WriteSkill(w)
		},
	}
	surface.register(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "-", "file to write (default: standard output)")
	return cmd
}
