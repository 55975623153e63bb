package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
)

// newAgentCmd configures agents on the local store and starts sessions in
// the running server.
func newAgentCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "Configure coding agents, and start their sessions in the running server"}
	var (
		preset, command, repo, wake string
		args, envs                  []string
		maxSessions                 int
	)
	add := &cobra.Command{
		Use:   "add HANDLE (--preset NAME | --command CMD [--arg A]…) [--env K=V]… [--repo PATH]",
		Short: "Add or change an agent: a principal of kind agent and how to launch it",
		Long: `Add or change an agent of the workspace (ATRIUM_WORKSPACE): which CLI it runs — a built-in
preset (` + strings.Join(agents.PresetNames(), ", ") + `) or a command — with its arguments
and environment, and the git repository it works in. Its sessions run in worktrees beside the
repository. A preset runs programs on this host: only the store's operator (this command) or a
workspace admin configures one.`,
		Example: "  atrium agent add duc --preset claude --repo ~/src/app\n  atrium agent add sh --command /bin/bash --arg -l",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			env := map[string]string{}
			for _, kv := range envs {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("--env %q: use NAME=VALUE", kv)
				}
				env[k] = v
			}
			return g.asOperator(cmd, func(ctx context.Context, app *app) (any, error) {
				ag, err := app.Agents.SetAgent(ctx, agents.AgentRequest{Handle: a[0], Preset: preset, Command: command, Args: args, Env: env, Repo: repo, Wake: wake, MaxSessions: maxSessions})
				return agentOut(ag), err
			})
		},
	}
	add.Flags().StringVar(&preset, "preset", "", "a built-in preset: "+strings.Join(agents.PresetNames(), ", "))
	add.Flags().StringVar(&command, "command", "", "the command to run instead of a preset")
	add.Flags().StringArrayVar(&args, "arg", nil, "an argument (repeat for more)")
	add.Flags().StringArrayVar(&envs, "env", nil, "NAME=VALUE in the agent's environment (repeat for more)")
	add.Flags().StringVar(&repo, "repo", "", "the git repository it works in")
	add.Flags().StringVar(&wake, "wake", "", "how a message reaches its running session: "+strings.Join(agents.WakeModes, ", ")+" (default: the preset's; none for a command)")
	add.Flags().IntVar(&maxSessions, "max-sessions", 0, "its sessions at once (default 4)")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the workspace's agents",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, actor, err := g.openLocal(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			list, err := a.Agents.Agents(atrium.NewContextWithActor(cmd.Context(), actor))
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "AGENT\tPRESET\tWAKE\tCOMMAND\tREPO")
			for _, ag := range list {
				wake := ag.Wake
				if ag.Paused {
					wake += " (paused)"
				}
				fmt.Fprintf(w, "@%s\t%s\t%s\t%s\t%s\n", ag.Handle, ag.Name, wake, strings.Join(append([]string{ag.Command}, ag.Args...), " "), ag.Repo)
			}
			return w.Flush()
		},
	}
	rm := &cobra.Command{
		Use:   "rm HANDLE",
		Short: "Remove an agent's launch settings (the principal and its history stay)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			return g.asOperator(cmd, func(ctx context.Context, app *app) (any, error) {
				return map[string]any{"removed": a[0]}, app.Agents.RemoveAgent(ctx, a[0])
			})
		},
	}
	var (
		task int64
		url  string
	)
	start := &cobra.Command{
		Use:   "start HANDLE [--task N]",
		Short: "Start a session of an agent in the running server",
		Long: `Asks the running atrium serve (--url, env ATRIUM_URL, e.g. http://127.0.0.1:8080/mcp, with the
token in ATRIUM_TOKEN) to start a session of the agent, for task N or none: sessions run inside
the server, which supervises them, so that they outlive this command and not the server.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, a []string) error {
			if url == "" {
				return fmt.Errorf("which server? give --url (or ATRIUM_URL) of the running atrium serve's MCP endpoint, and its token in ATRIUM_TOKEN")
			}
			s, done, err := g.callSession(cmd.Context(), &surfaceFlags{}, url, "")
			if err != nil {
				return err
			}
			defer done()
			argsMap := map[string]any{"agent": a[0]}
			if task != 0 {
				argsMap["issue_number"] = task
			}
			res, err := s.CallTool(cmd.Context(), &mcp.CallToolParams{Name: "agent_start", Arguments: argsMap})
			if err != nil {
				return err
			}
			return g.printResult(res)
		},
	}
	start.Flags().Int64Var(&task, "task", 0, "the task it works on")
	start.Flags().StringVar(&url, "url", os.Getenv("ATRIUM_URL"), "the running server's MCP endpoint (env ATRIUM_URL; token in ATRIUM_TOKEN)")
	cmd.AddCommand(add, list, rm, start, newAgentAttachCmd(g))
	cmd.AddCommand(newDeliveryCmds(g)...)
	return cmd
}

// asOperator runs fn on the local store as the workspace's admin: whoever
// can run this command holds the database itself.
func (g *globals) asOperator(cmd *cobra.Command, fn func(ctx context.Context, a *app) (any, error)) error {
	return g.withLocal(cmd, true, func(ctx context.Context, a *app) error {
		out, err := fn(ctx, a)
		if err != nil {
			return err
		}
		return g.printJSON(out)
	})
}

func agentOut(ag agents.Agent) map[string]any {
	return map[string]any{"agent": ag.Handle, "preset": ag.Name, "command": ag.Command, "args": ag.Args, "env": keys(ag.Env), "repo": ag.Repo,
		"wake": ag.Wake, "paused": ag.Paused, "max_sessions": ag.MaxSessions}
}

// keys names an environment's variables, never their values: they may be secrets.
func keys(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k := range env {
		out = append(out, k)
	}
	return out
}
