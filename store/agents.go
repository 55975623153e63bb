package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/atrium-hq/atrium"
)

// An AgentRow is an agent's launch settings in a workspace.
type AgentRow struct {
	WorkspaceID, PrincipalID int64
	Handle                   string
	Preset                   string
	Command                  string
	Args                     []string
	Env                      map[string]string
	InstructionsFile         string
	PromptMode               string
	Resume                   []string
	Repo                     string
	// Wake is how a delivery reaches the agent's running session (empty:
	// its preset's way).
	Wake string
	// Paused: its deliveries queue and none wakes it.
	Paused bool
	// MaxSessions bounds its sessions at once (0: the server's default).
	MaxSessions          int
	CreatedAt, UpdatedAt time.Time
}

const agentCols = "a.workspace_id, a.principal_id, p.handle, a.preset, a.command, a.args, a.env, a.instructions_file, a.prompt_mode, a.resume, a.repo, a.wake, a.paused, a.max_sessions, a.created_at, a.updated_at"

func scanAgent(sc scanner) (AgentRow, error) {
	var (
		r                    AgentRow
		args, env, resume    string
		createdUs, updatedUs int64
	)
	err := sc.Scan(&r.WorkspaceID, &r.PrincipalID, &r.Handle, &r.Preset, &r.Command, &args, &env, &r.InstructionsFile, &r.PromptMode, &resume, &r.Repo, &r.Wake, &r.Paused, &r.MaxSessions, &createdUs, &updatedUs)
	if err != nil {
		return r, err
	}
	_ = json.Unmarshal([]byte(args), &r.Args)
	_ = json.Unmarshal([]byte(env), &r.Env)
	_ = json.Unmarshal([]byte(resume), &r.Resume)
	r.CreatedAt, r.UpdatedAt = fromMicros(createdUs), fromMicros(updatedUs)
	return r, nil
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// PutAgent creates or replaces the agent r.PrincipalID's settings in its
// workspace.
func (tx *Tx) PutAgent(ctx context.Context, r AgentRow) error {
	_, err := tx.exec(ctx, `INSERT INTO agents (workspace_id, principal_id, preset, command, args, env, instructions_file, prompt_mode, resume, repo, wake, max_sessions, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (workspace_id, principal_id) DO UPDATE SET preset = excluded.preset, command = excluded.command, args = excluded.args, env = excluded.env,
			instructions_file = excluded.instructions_file, prompt_mode = excluded.prompt_mode, resume = excluded.resume, repo = excluded.repo, wake = excluded.wake, max_sessions = excluded.max_sessions, updated_at = excluded.updated_at`,
		r.WorkspaceID, r.PrincipalID, r.Preset, r.Command, jsonOf(nonNilStrings(r.Args)), jsonOf(nonNilMap(r.Env)), r.InstructionsFile, r.PromptMode,
		jsonOf(nonNilStrings(r.Resume)), r.Repo, r.Wake, r.MaxSessions, micros(tx.now), micros(tx.now))
	return err
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// Agents lists workspace ws's agents by handle.
func (tx *Tx) Agents(ctx context.Context, ws int64) ([]AgentRow, error) {
	return queryAll(ctx, tx, scanAgent, "SELECT "+agentCols+" FROM agents a JOIN principals p ON p.id = a.principal_id WHERE a.workspace_id = ? ORDER BY p.handle", ws)
}

// AgentByHandle is the agent handle of workspace ws.
func (tx *Tx) AgentByHandle(ctx context.Context, ws int64, handle string) (AgentRow, error) {
	r, err := scanAgent(tx.queryRow(ctx, "SELECT "+agentCols+" FROM agents a JOIN principals p ON p.id = a.principal_id WHERE a.workspace_id = ? AND p.handle = ?", ws, handle))
	if errors.Is(err, sql.ErrNoRows) {
		return r, atrium.Errorf(atrium.ENotFound, "no agent @%s in this workspace: an admin adds one with atrium agent add %s", handle, handle)
	}
	return r, err
}

// DeleteAgent removes the agent principal's settings from workspace ws and
// reports whether it had any.
func (tx *Tx) DeleteAgent(ctx context.Context, ws, principal int64) (bool, error) {
	res, err := tx.exec(ctx, "DELETE FROM agents WHERE workspace_id = ? AND principal_id = ?", ws, principal)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// An AgentSessionRow is one run of an agent.
type AgentSessionRow struct {
	ID, WorkspaceID, PrincipalID int64
	UID                          string
	Agent                        string // the agent's handle
	TaskID, TaskNumber           int64  // 0: no task
	State                        string
	ExitCode                     sql.NullInt64
	Reason                       string
	Dir, Branch, Base            string
	Replica                      string
	TokenID                      int64
	StartedBy                    int64
	StartedAt                    time.Time
	EndedAt                      time.Time // zero while it runs
	// Status is what the session is doing, from its best source (see
	// agents); CLISession the CLI's own session id, for a resume.
	Status, CLISession string
	ActivityAt         time.Time
}

const agentSessionCols = "s.id, s.uid, s.workspace_id, s.principal_id, p.handle, COALESCE(s.task_id, 0), COALESCE(t.number, 0), s.state, s.exit_code, s.reason, s.dir, s.branch, s.base, s.replica, COALESCE(s.token_id, 0), COALESCE(s.started_by, 0), s.started_at, COALESCE(s.ended_at, 0), s.status, s.cli_session, COALESCE(s.activity_at, 0)"

const agentSessionFrom = " FROM agent_sessions s JOIN principals p ON p.id = s.principal_id LEFT JOIN tasks t ON t.id = s.task_id"

func scanAgentSession(sc scanner) (AgentSessionRow, error) {
	var (
		r                        AgentSessionRow
		started, ended, activity int64
	)
	err := sc.Scan(&r.ID, &r.UID, &r.WorkspaceID, &r.PrincipalID, &r.Agent, &r.TaskID, &r.TaskNumber, &r.State, &r.ExitCode, &r.Reason,
		&r.Dir, &r.Branch, &r.Base, &r.Replica, &r.TokenID, &r.StartedBy, &started, &ended, &r.Status, &r.CLISession, &activity)
	r.ActivityAt = maybeMicros(activity)
	r.StartedAt = fromMicros(started)
	if ended != 0 {
		r.EndedAt = fromMicros(ended)
	}
	return r, err
}

// InsertAgentSession records a new session; it sets r.ID and r.StartedAt.
// A second open session of the agent on the same task is a conflict.
func (tx *Tx) InsertAgentSession(ctx context.Context, r *AgentSessionRow) error {
	r.StartedAt = tx.now
	err := tx.queryRow(ctx, `INSERT INTO agent_sessions (uid, workspace_id, principal_id, task_id, state, reason, dir, branch, base, replica, token_id, started_by, started_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.UID, r.WorkspaceID, r.PrincipalID, nullID(r.TaskID), r.State, r.Reason, r.Dir, r.Branch, r.Base, r.Replica, nullID(r.TokenID), nullID(r.StartedBy), micros(r.StartedAt)).Scan(&r.ID)
	if err != nil && isUniqueViolation(err) {
		return atrium.Errorf(atrium.EConflict, "the agent already has a session on this task: stop it first")
	}
	return err
}

// isUniqueViolation reports whether err is a unique index refusing a row,
// in either engine's words.
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505"
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// SetAgentSession records a session's state, how it ended (exitCode nil
// while it has not exited) and its token; a state that ends it stamps its end.
func (tx *Tx) SetAgentSession(ctx context.Context, id int64, state, reason string, exitCode *int, tokenID int64, ended bool) error {
	var code sql.NullInt64
	if exitCode != nil {
		code = sql.NullInt64{Int64: int64(*exitCode), Valid: true}
	}
	var end sql.NullInt64
	if ended {
		end = sql.NullInt64{Int64: micros(tx.now), Valid: true}
	}
	_, err := tx.exec(ctx, "UPDATE agent_sessions SET state = ?, reason = ?, exit_code = COALESCE(?, exit_code), token_id = ?, ended_at = COALESCE(ended_at, ?) WHERE id = ?",
		state, reason, code, nullID(tokenID), end, id)
	return err
}

// AgentSessions lists workspace ws's sessions, newest first, at most limit.
func (tx *Tx) AgentSessions(ctx context.Context, ws int64, limit int) ([]AgentSessionRow, error) {
	return queryAll(ctx, tx, scanAgentSession, "SELECT "+agentSessionCols+agentSessionFrom+" WHERE s.workspace_id = ? ORDER BY s.id DESC LIMIT ?", ws, limit)
}

// AgentSessionByUID is workspace ws's session uid.
func (tx *Tx) AgentSessionByUID(ctx context.Context, ws int64, uid string) (AgentSessionRow, error) {
	r, err := scanAgentSession(tx.queryRow(ctx, "SELECT "+agentSessionCols+agentSessionFrom+" WHERE s.workspace_id = ? AND s.uid = ?", ws, uid))
	if errors.Is(err, sql.ErrNoRows) {
		return r, atrium.Errorf(atrium.ENotFound, "no agent session %s in this workspace (agent_sessions lists them)", uid)
	}
	return r, err
}

// OpenAgentSessions lists the sessions of every workspace that have not
// ended, run by replica.
func (tx *Tx) OpenAgentSessions(ctx context.Context, replica string) ([]AgentSessionRow, error) {
	return queryAll(ctx, tx, scanAgentSession, "SELECT "+agentSessionCols+agentSessionFrom+" WHERE s.ended_at IS NULL AND s.replica = ?", replica)
}

// SetAgentSessionPlace records where a starting session works and its token.
func (tx *Tx) SetAgentSessionPlace(ctx context.Context, id int64, dir, branch, base string, tokenID int64) error {
	_, err := tx.exec(ctx, "UPDATE agent_sessions SET dir = ?, branch = ?, base = ?, token_id = ? WHERE id = ?", dir, branch, base, nullID(tokenID), id)
	return err
}

// LastCLISession is the CLI's own session id of agent principal's last
// session on task that said one, or "".
func (tx *Tx) LastCLISession(ctx context.Context, ws, principal, task int64) (string, error) {
	var id string
	err := tx.queryRow(ctx, "SELECT cli_session FROM agent_sessions WHERE workspace_id = ? AND principal_id = ? AND task_id = ? AND cli_session <> '' ORDER BY id DESC LIMIT 1",
		ws, principal, task).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// OpenAgentSession is agent principal's open session on task in workspace
// ws, on any replica; a zero row when none is open.
func (tx *Tx) OpenAgentSession(ctx context.Context, ws, principal, task int64) (AgentSessionRow, error) {
	r, err := scanAgentSession(tx.queryRow(ctx, "SELECT "+agentSessionCols+agentSessionFrom+" WHERE s.workspace_id = ? AND s.principal_id = ? AND s.task_id = ? AND s.ended_at IS NULL", ws, principal, task))
	if errors.Is(err, sql.ErrNoRows) {
		return AgentSessionRow{}, nil
	}
	return r, err
}

// LockSessions serialises the starts of workspace ws's sessions until the
// transaction ends, so that a count of those open holds for the insert that
// follows it (SQLite's one writer is serial already).
func (tx *Tx) LockSessions(ctx context.Context, ws int64) error {
	if tx.db.engine != Postgres {
		return nil
	}
	var id int64
	return tx.queryRow(ctx, "SELECT id FROM workspaces WHERE id = ? FOR NO KEY UPDATE", ws).Scan(&id)
}
