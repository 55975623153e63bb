package agents

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/creack/pty"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/identity"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/tasks"
)

// Session states.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateExited   = "exited"  // the process ended by itself, with ExitCode
	StateStopped  = "stopped" // someone stopped it
	StateFailed   = "failed"  // it could not start, or Atrium ended under it (Reason)
)

// A Session is one run of an agent.
type Session struct {
	ID        string
	Agent     string
	Task      int64 // 0: none
	State     string
	ExitCode  *int
	Reason    string
	Dir       string // the working folder: a worktree, or a fresh folder
	Branch    string // the worktree's branch; empty without a repository
	Base      string
	Replica   string
	StartedAt time.Time
	EndedAt   time.Time
	// Live, only on the replica that runs it:
	PID       int
	CPU       time.Duration
	RSS       int64
	LastLines []string
}

// Enable makes this server run sessions (atrium serve does; a stdio server
// does not: its sessions would end with its client). Sessions this replica
// left open when it last stopped are marked failed.
func (s *Service) Enable(ctx context.Context, cfg RunnerConfig) error {
	if cfg.DataDir == "" || cfg.URL == "" || cfg.Binary == "" || cfg.Replica == "" {
		return fmt.Errorf("agents: a runner needs a data folder, the server's URL, the atrium binary and the replica's name")
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		open, err := tx.OpenAgentSessions(ctx, cfg.Replica)
		if err != nil {
			return err
		}
		for _, r := range open {
			if err := tx.SetAgentSession(ctx, r.ID, StateFailed, "Atrium stopped while it ran", nil, 0, true); err != nil {
				return err
			}
			if r.TokenID != 0 {
				if err := tx.RevokeToken(ctx, r.TokenID); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.runner = &Runner{cfg: cfg}
	s.mu.Unlock()
	return nil
}

// StartRequest starts a session.
type StartRequest struct {
	Agent string
	Task  int64 // 0: none
	// Why is said in the first prompt (a person started it, a question woke
	// it); empty: started by the caller.
	Why        string
	Rows, Cols uint16
}

// Start starts a session of an agent, for a task or none. Writers only.
func (s *Service) Start(ctx context.Context, r StartRequest) (Session, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleWriter)
	if err != nil {
		return Session{}, err
	}
	s.mu.Lock()
	runner := s.runner
	s.mu.Unlock()
	if runner == nil {
		return Session{}, atrium.Errorf(atrium.EUnavailable, "agent sessions run inside atrium serve: start them there (its MCP endpoint, the browser, or atrium agent start --url)")
	}
	ag, err := s.Agent(ctx, r.Agent)
	if err != nil {
		return Session{}, err
	}
	var packet string
	var task atrium.Task
	if r.Task != 0 {
		c, err := s.tasks.GetContext(ctx, r.Task)
		if err != nil {
			return Session{}, err
		}
		task = c.Task
		packet = contextPacket(s.tasks.ContextOutput(c))
	}
	if err := s.oneAtATime(ctx, a.Workspace.ID, ag.Handle, r.Task); err != nil {
		return Session{}, err
	}
	uid := "ses_" + strings.ToLower(rand.Text()[:16])
	row := store.AgentSessionRow{UID: uid, WorkspaceID: a.Workspace.ID, State: StateStarting, Replica: runner.cfg.Replica, StartedBy: a.Principal.ID}
	if r.Task != 0 {
		row.TaskID = task.ID
	}
	// The working folder first: a session that cannot have its own never
	// starts (and never falls back to the main checkout).
	var wt worktree
	if ag.Repo != "" {
		name := strings.TrimPrefix(tasks.WorktreePath(task), "../")
		if r.Task == 0 {
			name = ag.Handle + "-" + uid[4:12]
		}
		if wt, err = addWorktree(ctx, ag.Repo, name); err != nil {
			return Session{}, err
		}
	} else {
		wt.Dir = filepath.Join(runner.sessionDir(uid), "work")
		if err := mkdir(wt.Dir); err != nil {
			return Session{}, err
		}
	}
	row.Dir, row.Branch, row.Base = wt.Dir, wt.Branch, wt.Base
	issued, err := s.ids.IssueToken(context.WithoutCancel(ctx), identity.TokenRequest{Principal: ag.Handle, Kind: atrium.KindAgent, Workspace: a.Workspace.Name, Name: "session " + uid})
	if err != nil {
		return Session{}, err
	}
	row.TokenID = issued.Token.ID
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := tx.PrincipalByHandle(ctx, ag.Handle)
		if err != nil {
			return err
		}
		row.PrincipalID = p.ID
		if err := tx.InsertAgentSession(ctx, &row); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventSessionStarted, "@"+ag.Handle, sessionEvent(row, ag.Handle, r.Task))
	})
	if err != nil {
		s.revoke(issued.Token.ID)
		return Session{}, err
	}
	why := r.Why
	if why == "" {
		why = fmt.Sprintf("@%s started this session", a.Principal.Handle)
	}
	argv, env, err := s.launch(runner, ag, a, uid, r.Task, wt, issued.Secret, firstPrompt(ag, why, packet))
	if err == nil {
		var ru *run
		if ru, err = runner.startProcess(uid, argv, env, wt.Dir, &pty.Winsize{Rows: max(r.Rows, 24), Cols: max(r.Cols, 80)}); err == nil {
			s.mu.Lock()
			s.running[uid] = ru
			s.mu.Unlock()
			s.setState(row, StateRunning, "", nil, false)
			go s.supervise(row, ag, wt, ru, r.Task, task.Title)
			return s.Session(ctx, uid)
		}
	}
	s.revoke(issued.Token.ID)
	s.setState(row, StateFailed, err.Error(), nil, true)
	return s.Session(ctx, uid)
}

// oneAtATime refuses a second live session of one agent on one task.
func (s *Service) oneAtATime(ctx context.Context, ws int64, agent string, task int64) error {
	var rows []store.AgentSessionRow
	err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		rows, err = tx.AgentSessions(ctx, ws, 500)
		return err
	})
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.Agent == agent && r.TaskNumber == task && r.EndedAt.IsZero() {
			return atrium.Errorf(atrium.EConflict, "@%s already has a session on this task: %s (%s); stop it first", agent, r.UID, r.State)
		}
	}
	return nil
}

// supervise waits for the session's process to end, then records how, takes
// back its token and commits its work on its branch.
func (s *Service) supervise(row store.AgentSessionRow, ag Agent, wt worktree, ru *run, task int64, title string) {
	<-ru.done
	s.mu.Lock()
	delete(s.running, row.UID)
	s.mu.Unlock()
	s.revoke(row.TokenID)
	ru.mu.Lock()
	code, stopped := ru.exitCode, ru.stopping
	ru.mu.Unlock()
	state, reason := StateExited, ""
	if stopped {
		state = StateStopped
	}
	if wt.Branch != "" {
		msg := fmt.Sprintf("atrium: @%s's session %s", ag.Handle, row.UID)
		if task != 0 {
			msg = fmt.Sprintf("atrium: @%s on #%d %s", ag.Handle, task, title)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if head, err := commitWork(ctx, wt, ag.Handle, msg); err != nil {
			reason = "its work could not be committed: " + err.Error()
		} else if head != "" {
			reason = "its work is committed on " + wt.Branch + " as " + head[:12]
		}
		cancel()
	}
	s.setState(row, state, reason, &code, true)
	ru.endViewers(state)
	close(ru.ended)
}

// setState records a session's state and tells everyone.
func (s *Service) setState(row store.AgentSessionRow, state, reason string, code *int, ended bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.SetAgentSession(ctx, row.ID, state, reason, code, row.TokenID, ended); err != nil {
			return err
		}
		row.State, row.Reason = state, reason
		return tx.EmitJSON(ctx, row.WorkspaceID, 0, EventSessionChanged, row.UID, map[string]any{"session": row.UID, "state": state, "reason": reason, "exit_code": code})
	})
	if err != nil {
		s.log.Error("record an agent session's state", "session", row.UID, "state", state, "err", err)
	}
}

func (s *Service) revoke(tokenID int64) {
	if tokenID == 0 {
		return
	}
	if _, err := s.ids.RevokeToken(context.Background(), tokenID); err != nil {
		s.log.Error("revoke an agent session's token", "token", tokenID, "err", err)
	}
}

func sessionEvent(r store.AgentSessionRow, agent string, task int64) map[string]any {
	return map[string]any{"session": r.UID, "agent": agent, "task": task, "dir": r.Dir, "branch": r.Branch}
}

// Stop stops a running session: SIGTERM to its process group, SIGKILL after
// the grace. Writers only.
func (s *Service) Stop(ctx context.Context, uid string) (Session, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleWriter)
	if err != nil {
		return Session{}, err
	}
	cur, err := s.Session(ctx, uid)
	if err != nil {
		return Session{}, err
	}
	if !cur.EndedAt.IsZero() {
		return cur, atrium.Errorf(atrium.EConflict, "session %s has already ended (%s)", uid, cur.State)
	}
	s.mu.Lock()
	ru := s.running[uid]
	s.mu.Unlock()
	if ru == nil {
		return cur, atrium.Errorf(atrium.EUnavailable, "session %s runs on replica %s, not this one: stop it there", uid, cur.Replica)
	}
	s.log.Info("stopping an agent session", "session", uid, "by", a.Principal.Handle)
	ru.stop()
	select { // supervise records the end: answer with it
	case <-ru.ended:
	case <-ctx.Done():
		return cur, ctx.Err()
	}
	return s.Session(ctx, uid)
}

// Session is one session of the caller's workspace, with its live figures
// when this replica runs it.
func (s *Service) Session(ctx context.Context, uid string) (Session, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return Session{}, err
	}
	var row store.AgentSessionRow
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		row, err = tx.AgentSessionByUID(ctx, a.Workspace.ID, uid)
		return err
	})
	if err != nil {
		return Session{}, err
	}
	return s.sessionOf(row), nil
}

// Sessions lists the caller's workspace's sessions, newest first.
func (s *Service) Sessions(ctx context.Context, limit int) ([]Session, error) {
	a, err := atrium.RequireActor(ctx, atrium.RoleReader)
	if err != nil {
		return nil, err
	}
	var rows []store.AgentSessionRow
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		rows, err = tx.AgentSessions(ctx, a.Workspace.ID, min(max(limit, 1), 200))
		return err
	})
	out := make([]Session, len(rows))
	for i, r := range rows {
		out[i] = s.sessionOf(r)
	}
	return out, err
}

// lastLines is how many lines of output a listing shows of each session.
const lastLines = 10

func (s *Service) sessionOf(r store.AgentSessionRow) Session {
	out := Session{ID: r.UID, Agent: r.Agent, Task: r.TaskNumber, State: r.State, Reason: r.Reason, Dir: r.Dir, Branch: r.Branch, Base: r.Base,
		Replica: r.Replica, StartedAt: r.StartedAt, EndedAt: r.EndedAt}
	if r.ExitCode.Valid {
		c := int(r.ExitCode.Int64)
		out.ExitCode = &c
	}
	s.mu.Lock()
	ru := s.running[r.UID]
	s.mu.Unlock()
	if ru != nil {
		out.PID = ru.pgid
		out.CPU, out.RSS = ru.usage()
		b, _ := ru.out.Snapshot()
		out.LastLines = tail(plainText(b), lastLines)
	} else if r.Dir != "" {
		// An ended session's last lines come from its transcript.
		s.mu.Lock()
		runner := s.runner
		s.mu.Unlock()
		if runner != nil {
			if b, err := readTail(filepath.Join(runner.sessionDir(r.UID), TranscriptName), 16<<10); err == nil {
				out.LastLines = tail(plainText(b), lastLines)
			}
		}
	}
	return out
}

// Transcript is the path of a session's transcript file.
func (s *Service) Transcript(ctx context.Context, uid string) (string, error) {
	if _, err := s.Session(ctx, uid); err != nil {
		return "", err
	}
	s.mu.Lock()
	runner := s.runner
	s.mu.Unlock()
	if runner == nil {
		return "", atrium.Errorf(atrium.EUnavailable, "transcripts are kept by atrium serve")
	}
	p := filepath.Join(runner.sessionDir(uid), TranscriptName)
	if _, err := os.Stat(p); err != nil {
		return "", atrium.Errorf(atrium.ENotFound, "session %s has no transcript on this replica", uid)
	}
	return p, nil
}

// Shutdown stops every session this server runs, as the server stops.
func (s *Service) Shutdown() {
	s.mu.Lock()
	runs := make([]*run, 0, len(s.running))
	for _, ru := range s.running {
		runs = append(runs, ru)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ru := range runs {
		wg.Go(func() {
			ru.stop()
			select { // supervise records the end
			case <-ru.ended:
			case <-time.After(30 * time.Second):
			}
		})
	}
	wg.Wait()
}

// launch is the session's command line and environment, and writes its MCP
// configuration.
func (s *Service) launch(r *Runner, ag Agent, a *atrium.Actor, uid string, task int64, wt worktree, token, prompt string) (argv, env []string, err error) {
	sdir := r.sessionDir(uid)
	if err := mkdir(sdir); err != nil {
		return nil, nil, err
	}
	config := filepath.Join(sdir, "mcp.json")
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"atrium": map[string]any{"command": r.cfg.Binary, "args": []string{"mcp"}}}}, "", "  ")
	if err := os.WriteFile(config, b, 0o600); err != nil {
		return nil, nil, err
	}
	vars := map[string]string{"config": config, "atrium": r.cfg.Binary, "prompt": prompt}
	argv = append([]string{ag.Command}, ag.Args...)
	argv = append(argv, expand(ag.MCPArgs, vars)...)
	if ag.PromptMode == PromptArg && prompt != "" {
		argv = append(argv, expand(ag.PromptArgs, vars)...)
	}
	env = sessionEnv(ag, a, uid, task, wt.Dir, strings.TrimSuffix(r.cfg.URL, "/")+"/mcp", token)
	return argv, env, nil
}

// sessionEnv is a session's whole environment: what a CLI needs of the host
// (its PATH, HOME for its own login, locale, temp), the agent's own, and its
// identity. Nothing else of Atrium's passes: no database URL, no token but
// the session's, no CLAUDECODE (a nested claude refuses to start).
func sessionEnv(ag Agent, a *atrium.Actor, uid string, task int64, dir, url, token string) []string {
	keep := map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "LANG": true, "TZ": true, "TMPDIR": true}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if keep[k] || strings.HasPrefix(k, "LC_") {
			env = append(env, kv)
		}
	}
	env = append(env, "TERM=xterm-256color", "COLORTERM=truecolor")
	for k, v := range ag.Env {
		env = append(env, k+"="+v)
	}
	env = append(env,
		"ATRIUM_AGENT="+ag.Handle,
		"ATRIUM_WORKSPACE="+a.Workspace.Name,
		"AGENT_WORKSPACE="+dir,
		"ATRIUM_SESSION="+uid,
		"ATRIUM_URL="+url,
		"ATRIUM_TOKEN="+token,
	)
	if task != 0 {
		env = append(env, fmt.Sprintf("ATRIUM_TASK=%d", task))
	}
	return env
}
