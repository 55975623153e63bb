// Package agenttools is the agents toolset: start, stop and watch the
// sessions that run coding agents in their own worktrees.
package agenttools

import (
	"context"
	"embed"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/agents"
	"github.com/atrium-hq/atrium/mcpserver"
)

// Name is the toolset's name, as --toolsets and clients name it.
const Name = "agents"

//go:embed defs/*.json
var defs embed.FS

// New is the agents toolset. It is part of "all" on a server that runs
// sessions (atrium serve); elsewhere it must be named, and its calls say
// where sessions run.
func New(runs bool) mcpserver.NewToolset {
	return func(s *mcpserver.Server) *mcpserver.Toolset {
		r := &ref{s}
		return &mcpserver.Toolset{
			Name:        Name,
			Description: "Coding agents Atrium runs, each session in its own worktree: start, stop, watch.",
			Default:     runs,
			Tools:       []*mcpserver.Tool{startTool(r), stopTool(r), sessionsTool(r)},
			Defs:        defs,
		}
	}
}

type ref struct{ s *mcpserver.Server }

func (r *ref) get() *agents.Service {
	if r.s.Services() == nil {
		panic("agenttools: agent tool called on a server built without services")
	}
	return r.s.Services().Agents
}

// SessionOut is a session as the tools answer it.
type SessionOut struct {
	SessionID    string   `json:"session_id"`
	Agent        string   `json:"agent"`
	IssueNumber  int64    `json:"issue_number,omitempty" jsonschema:"the task it works on, if any"`
	State        string   `json:"state" jsonschema:"starting, running, exited, stopped or failed"`
	Status       string   `json:"status" jsonschema:"what the agent is doing: pending, active, awaiting_input, complete, error, stale, or unknown when its terminal cannot tell"`
	Generation   int64    `json:"generation" jsonschema:"the session's number: a delivery names the one it is for"`
	ExitCode     *int     `json:"exit_code,omitempty"`
	Reason       string   `json:"reason,omitempty" jsonschema:"why it failed, or where its work was committed"`
	WorktreePath string   `json:"worktree_path" jsonschema:"its working folder: a git worktree beside the repository, or a folder of its own"`
	Branch       string   `json:"branch,omitempty"`
	StartedAt    string   `json:"started_at"`
	EndedAt      string   `json:"ended_at,omitempty"`
	LastLines    []string `json:"last_lines,omitempty" jsonschema:"the last lines of its terminal"`
}

func sessionOut(s agents.Session) SessionOut {
	out := SessionOut{SessionID: s.ID, Agent: s.Agent, IssueNumber: s.Task, State: s.State, Status: s.Status, Generation: s.Generation, ExitCode: s.ExitCode, Reason: s.Reason,
		WorktreePath: s.Dir, Branch: s.Branch, StartedAt: s.StartedAt.UTC().Format(time.RFC3339), LastLines: s.LastLines}
	if !s.EndedAt.IsZero() {
		out.EndedAt = s.EndedAt.UTC().Format(time.RFC3339)
	}
	return out
}

// StartInput starts a session.
type StartInput struct {
	Agent       string `json:"agent" jsonschema:"the agent's handle, e.g. duc"`
	IssueNumber int64  `json:"issue_number,omitempty" jsonschema:"the task it works on; its context is its first prompt"`
}

func startTool(r *ref) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "agent_start", Title: "Start agent",
		Description: "Starts a session of an agent for a task (or none): in its own git worktree at ../<n>-<slug> on branch atrium/<n>-<slug>, with the task's context as its first prompt. Answers the session with its id, state and worktree_path.",
		Annotations: &mcp.ToolAnnotations{Title: "Start agent", DestructiveHint: new(false), OpenWorldHint: new(true)},
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in StartInput) (SessionOut, error) {
		s, err := r.get().Start(ctx, agents.StartRequest{Agent: in.Agent, Task: in.IssueNumber})
		return sessionOut(s), err
	})
}

// StopInput stops a session.
type StopInput struct {
	SessionID string `json:"session_id" jsonschema:"the session, as agent_start or agent_sessions named it"`
}

func stopTool(r *ref) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "agent_stop", Title: "Stop agent",
		Description: "Stops a running session: SIGTERM to its processes, SIGKILL after a grace. Its work so far is committed on its branch.",
		Annotations: mcpserver.Writes("Stop agent", true, true),
	}, atrium.RoleWriter, func(ctx context.Context, _ *mcp.CallToolRequest, in StopInput) (SessionOut, error) {
		s, err := r.get().Stop(ctx, in.SessionID)
		return sessionOut(s), err
	})
}

// SessionsInput lists sessions.
type SessionsInput struct {
	Limit int `json:"limit,omitempty" jsonschema:"sessions to list, newest first: 1 to 200 (default 20)"`
}

// SessionsOut lists sessions.
type SessionsOut struct {
	Sessions []SessionOut `json:"sessions"`
}

func sessionsTool(r *ref) *mcpserver.Tool {
	return mcpserver.NewTool(&mcp.Tool{
		Name: "agent_sessions", Title: "Agent sessions",
		Description: "Lists the workspace's agent sessions, newest first: agent, task, state, worktree and the last lines of each one's terminal.",
		Annotations: mcpserver.Reads("Agent sessions"),
	}, atrium.RoleReader, func(ctx context.Context, _ *mcp.CallToolRequest, in SessionsInput) (SessionsOut, error) {
		limit := in.Limit
		if limit == 0 {
			limit = 20
		}
		list, err := r.get().Sessions(ctx, limit)
		out := SessionsOut{Sessions: make([]SessionOut, len(list))}
		for i, s := range list {
			out.Sessions[i] = sessionOut(s)
		}
		return out, err
	})
}
