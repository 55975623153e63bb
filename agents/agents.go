// Package agents is the service that runs coding agents: an agent is a
// principal of kind agent with a launch preset (which CLI, how it takes its
// first prompt and its instructions, how it resumes) and, optionally, the git
// repository it works in; a session runs one agent for one task (or none)
// inside the server, in its own git worktree, in a PTY in its own supervised
// process group, with an environment that holds its identity and nothing of
// Atrium's secrets.
//
// Its rules hold for every surface:
//   - only admins configure agents: a preset runs programs on the host;
//   - writers start and stop sessions; one session per agent and task runs
//     at a time;
//   - a session's working folder is a verified worktree of the agent's
//     repository outside it (../<n>-<slug>, branch atrium/<n>-<slug>), or a
//     fresh folder when the agent has no repository — never the main
//     checkout;
//   - its token is minted for the session and revoked when it ends;
//   - no process of a session outlives it, the server, or a kill -9 of the
//     server.
package agents

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/tasks"
)

// Event kinds.
const (
	EventAgentSet       = "agent.set"
	EventAgentRemoved   = "agent.removed"
	EventSessionStarted = "agent.session_started"
	EventSessionChanged = "agent.session_changed"
)

// Service configures agents and runs their sessions.
type Service struct {
	db    *store.DB
	log   *slog.Logger
	ids   *identity.Service
	tasks *tasks.Service

	mu       sync.Mutex
	runner   *Runner         // nil until Enable: sessions run in atrium serve only
	running  map[string]*run // by session uid
	disp     *dispatcher     // wakes agents, from Enable to Shutdown
	stopDisp context.CancelFunc
	dispDone chan struct{}
	// stopping: Atrium has begun to stop (Stopping). A session that ends
	// from then on ended with Atrium, even before Shutdown stops it: its
	// agent's calls fail while the server drains, and it may exit on that.
	stopping atomic.Bool
}

// Stopping tells the service that Atrium has begun to stop: sessions that
// end from now on are cut short by Atrium (their unread deliveries given
// back, the read ones resumed), as those Shutdown stops are.
func (s *Service) Stopping() { s.stopping.Store(true) }

// New returns the service over db; it runs no session until Enable.
func New(db *store.DB, log *slog.Logger, ids *identity.Service, t *tasks.Service) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{db: db, log: log, ids: ids, tasks: t, running: map[string]*run{}}
}

// An Agent is an agent principal and how to launch it.
type Agent struct {
	Handle string
	Preset
	// Repo is the git repository the agent works in; empty for none.
	Repo string
	// Paused: its deliveries queue and none wakes it.
	Paused bool
	// MaxSessions bounds its sessions at once (0: the server's default).
	MaxSessions int
}

// AgentRequest adds or changes an agent.
type AgentRequest struct {
	Handle  string
	Preset  string // a built-in preset; or empty with Command
	Command string
	Args    []string
	Env     map[string]string
	Repo    string
	// Wake overrides the preset's channel into a running session (Wake*).
	Wake        string
	MaxSessions int
}

// SetAgent adds or changes the agent r.Handle (created as a principal of
// kind agent and a writer of the workspace when new). Admins only.
func (s *Service) SetAgent(ctx context.Context, r AgentRequest) (Agent, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return Agent{}, err
	}
	r.Handle = strings.TrimPrefix(strings.TrimSpace(r.Handle), "@")
	if err := atrium.ValidateName("agent handle", r.Handle); err != nil {
		return Agent{}, err
	}
	var p Preset
	switch {
	case r.Preset != "" && r.Command != "":
		return Agent{}, atrium.Errorf(atrium.EInvalid, "give a preset or a command, not both")
	case r.Preset != "":
		var ok bool
		if p, ok = presets[r.Preset]; !ok {
			return Agent{}, atrium.Errorf(atrium.EInvalid, "no preset %q (presets: %s)", r.Preset, strings.Join(PresetNames(), ", "))
		}
	case r.Command != "":
		p = Preset{Name: "custom", Command: r.Command, PromptMode: PromptNone}
	default:
		return Agent{}, atrium.Errorf(atrium.EInvalid, "give a preset (%s) or a command", strings.Join(PresetNames(), ", "))
	}
	if len(r.Args) > 0 {
		p.Args = r.Args
	}
	switch {
	case r.Wake != "" && !slices.Contains(WakeModes, r.Wake):
		return Agent{}, atrium.Errorf(atrium.EInvalid, "no wake channel %q (channels: %s)", r.Wake, strings.Join(WakeModes, ", "))
	case r.Wake != "":
		p.Wake = r.Wake
	case p.Wake == "":
		p.Wake = WakeNone // a command of its own: nothing is typed into it unless asked
	}
	if r.Command != "" && p.Wake == WakePTY {
		p.PromptMode = PromptStdin // a terminal CLI of its own takes its first prompt typed, as later ones
	}
	if r.MaxSessions < 0 || r.MaxSessions > 100 {
		return Agent{}, atrium.Errorf(atrium.EInvalid, "max sessions is 1 to 100 (0: the server's default), not %d", r.MaxSessions)
	}
	p.Env = maps.Clone(p.Env)
	for k, v := range r.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return Agent{}, atrium.Errorf(atrium.EInvalid, "environment variable name %q is not valid", k)
		}
		if p.Env == nil {
			p.Env = map[string]string{}
		}
		p.Env[k] = v
	}
	if r.Repo != "" {
		root, err := repoRoot(ctx, r.Repo)
		if err != nil {
			return Agent{}, err
		}
		r.Repo = root
	}
	// The principal: created as an agent and a writer of the workspace when new.
	if _, err := s.ids.LocalActor(ctx, r.Handle, a.Workspace.Name, atrium.KindAgent); err != nil {
		return Agent{}, err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		pr, err := tx.PrincipalByHandle(ctx, r.Handle)
		if err != nil {
			return err
		}
		if pr.Kind != atrium.KindAgent {
			return atrium.Errorf(atrium.EInvalid, "@%s is a person, not an agent", r.Handle)
		}
		row := store.AgentRow{WorkspaceID: a.Workspace.ID, PrincipalID: pr.ID, Preset: p.Name, Command: p.Command, Args: p.Args, Env: p.Env,
			InstructionsFile: p.InstructionsFile, PromptMode: p.PromptMode, Resume: p.Resume, Repo: r.Repo, Wake: p.Wake, MaxSessions: r.MaxSessions}
		if err := tx.PutAgent(ctx, row); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventAgentSet, "@"+r.Handle, map[string]any{"agent": r.Handle, "preset": p.Name, "repo": r.Repo})
	})
	if err != nil {
		return Agent{}, err
	}
	return s.Agent(ctx, r.Handle)
}

// Agent is the agent handle of the caller's workspace.
func (s *Service) Agent(ctx context.Context, handle string) (Agent, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return Agent{}, err
	}
	var row store.AgentRow
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		row, err = tx.AgentByHandle(ctx, a.Workspace.ID, strings.TrimPrefix(handle, "@"))
		return err
	})
	return agentOf(row), err
}

// Agents lists the caller's workspace's agents.
func (s *Service) Agents(ctx context.Context) ([]Agent, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return nil, err
	}
	var rows []store.AgentRow
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		rows, err = tx.Agents(ctx, a.Workspace.ID)
		return err
	})
	out := make([]Agent, len(rows))
	for i, r := range rows {
		out[i] = agentOf(r)
	}
	return out, err
}

// RemoveAgent removes an agent's launch settings (the principal stays, with
// its history). Admins only.
func (s *Service) RemoveAgent(ctx context.Context, handle string) error {
	a, err := atrium.RequireActor(ctx, atrium.RoleAdmin)
	if err != nil {
		return err
	}
	handle = strings.TrimPrefix(handle, "@")
	return s.db.Update(ctx, func(tx *store.Tx) error {
		row, err := tx.AgentByHandle(ctx, a.Workspace.ID, handle)
		if err != nil {
			return err
		}
		if _, err := tx.DeleteAgent(ctx, a.Workspace.ID, row.PrincipalID); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventAgentRemoved, "@"+handle, map[string]any{"agent": handle})
	})
}

func agentOf(r store.AgentRow) Agent {
	wake := r.Wake
	if wake == "" { // set before wake channels were
		wake = cmpStr(presets[r.Preset].Wake, WakeNone)
	}
	return Agent{Handle: r.Handle, Repo: r.Repo, Paused: r.Paused, MaxSessions: r.MaxSessions, Preset: Preset{Name: r.Preset, Command: r.Command, Args: r.Args, Env: r.Env,
		InstructionsFile: r.InstructionsFile, PromptMode: r.PromptMode, Resume: r.Resume, PromptArgs: presets[r.Preset].PromptArgs, MCPArgs: presets[r.Preset].MCPArgs, Wake: wake}}
}

func cmpStr(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// dataDir is where sessions without a repository work, and where every
// session's transcript and MCP configuration are kept.
func (r *Runner) sessionDir(uid string) string { return filepath.Join(r.cfg.DataDir, "sessions", uid) }

// mkdir makes a folder only its owner reads.
func mkdir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}
