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

	acp "github.com/coder/acp-go-sdk"
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
	ID string
	// Generation numbers the sessions: a delivery names the one it is for,
	// and a message meant for an earlier one never acts on a later one.
	Generation int64
	// Status is what the agent is doing (Status*), from the best source the
	// session has; CLISession the CLI's own session id, when it said it.
	Status     string
	CLISession string
	Agent      string
	Task       int64 // 0: none
	State      string
	ExitCode   *int
	Reason     string
	Dir        string // the working folder: a worktree, or a fresh folder
	Branch     string // the worktree's branch; empty without a repository
	Base       string
	Replica    string
	StartedAt  time.Time
	EndedAt    time.Time
	// Live, only on the replica that runs it:
	PID       int
	CPU       time.Duration
	RSS       int64
	LastLines []string
}

// Enable makes this server run sessions (atrium serve does; a stdio server
// does not: its sessions would end with its client). Sessions this replica
// left open when it last stopped are marked failed: what went into them
// unread is due again, and an agent that had read what woke it is woken
// again to go on (ResumeRead).
func (s *Service) Enable(ctx context.Context, cfg RunnerConfig) error {
	if cfg.DataDir == "" || cfg.URL == "" || cfg.Binary == "" || cfg.Replica == "" {
		return fmt.Errorf("agents: a runner needs a data folder, the server's URL, the atrium binary and the replica's name")
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.ReleaseClaims(ctx, cfg.Replica); err != nil {
			return err
		}
		open, err := tx.OpenAgentSessions(ctx, cfg.Replica)
		if err != nil {
			return err
		}
		for _, r := range open {
			if err := tx.SetAgentSession(ctx, r.ID, StateFailed, "Atrium stopped while it ran", nil, 0, true); err != nil {
				return err
			}
			// Atrium's own end is no fault of the delivery: again at once;
			// and what the agent had read, it was at work on: woken again,
			// it goes on.
			if _, err := returnUnread(r, "the session "+r.UID+" ended with Atrium before the agent read it")(ctx, tx); err != nil {
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
	dctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	d := &dispatcher{s: s, cfg: cfg, kick: make(chan struct{}, 1), busy: map[store.DeliveryGroup]bool{}, sem: make(chan struct{}, dispatchers)}
	done := make(chan struct{})
	s.mu.Lock()
	s.runner = &Runner{cfg: cfg}
	s.disp, s.stopDisp, s.dispDone = d, stop, done
	s.mu.Unlock()
	go func() {
		defer close(done)
		d.run(dctx)
	}()
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
	ses, _, err := s.start(ctx, a, r, nil)
	return ses, err
}

// start starts a session as a (a person, or the dispatcher acting for who
// caused a delivery) and returns its run, nil when it did not start. onRow,
// if set, is called once the session has its row (its generation), before
// anything of it runs; an error from it stops the start.
func (s *Service) start(ctx context.Context, a *atrium.Actor, r StartRequest, onRow func(row store.AgentSessionRow, wake string) error) (Session, *run, error) {
	s.mu.Lock()
	runner := s.runner
	s.mu.Unlock()
	if runner == nil {
		return Session{}, nil, atrium.Errorf(atrium.EUnavailable, "agent sessions run inside atrium serve: start them there (its MCP endpoint, the browser, or atrium agent start --url)")
	}
	ctx = atrium.NewContextWithActor(ctx, a)
	ag, err := s.Agent(ctx, r.Agent)
	if err != nil {
		return Session{}, nil, err
	}
	var packet string
	var task atrium.Task
	if r.Task != 0 {
		c, err := s.tasks.GetContext(ctx, r.Task)
		if err != nil {
			return Session{}, nil, err
		}
		task = c.Task
		packet = contextPacket(s.tasks.ContextOutput(c))
	}
	uid := "ses_" + strings.ToLower(rand.Text()[:16])
	row := store.AgentSessionRow{UID: uid, WorkspaceID: a.Workspace.ID, State: StateStarting, Replica: runner.cfg.Replica, StartedBy: a.Principal.ID}
	if r.Task != 0 {
		row.TaskID = task.ID
	}
	// The row first: the store holds one open session per agent and task,
	// so of two starts at once one is refused before it makes a worktree.
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		p, err := tx.PrincipalByHandle(ctx, ag.Handle)
		if err != nil {
			return err
		}
		row.PrincipalID = p.ID
		if err := withinLimits(ctx, tx, a.Workspace.ID, p.ID, ag, runner.cfg.maxSessions()); err != nil {
			return err
		}
		return tx.InsertAgentSession(ctx, &row)
	})
	if err != nil {
		return Session{}, nil, err
	}
	fail := func(err error) (Session, *run, error) {
		fate := failUnread(row, "the session "+uid+" could not start: "+err.Error())
		if ctx.Err() != nil { // Atrium is stopping: no fault of the deliveries
			fate = returnUnread(row, "the session "+uid+" ended with Atrium (it stopped) as it started")
		}
		s.endSession(row, StateFailed, err.Error(), nil, fate)
		ses, _ := s.Session(ctx, uid)
		return ses, nil, err
	}
	if onRow != nil {
		if err := onRow(row, ag.Wake); err != nil {
			return fail(err)
		}
	}
	// The working folder: a session that cannot have its own never starts
	// (and never falls back to the main checkout).
	var wt worktree
	if ag.Repo != "" {
		name := strings.TrimPrefix(tasks.WorktreePath(task), "../")
		if r.Task == 0 {
			name = ag.Handle + "-" + uid[4:12]
		}
		if wt, err = addWorktree(ctx, ag.Repo, name); err != nil {
			return fail(err)
		}
	} else {
		wt.Dir = filepath.Join(runner.sessionDir(uid), "work")
		if err := mkdir(wt.Dir); err != nil {
			return fail(err)
		}
	}
	row.Dir, row.Branch, row.Base = wt.Dir, wt.Branch, wt.Base
	issued, err := s.ids.IssueToken(context.WithoutCancel(ctx), identity.TokenRequest{Principal: ag.Handle, Kind: atrium.KindAgent, Workspace: a.Workspace.Name, Name: "session " + uid})
	if err != nil {
		return fail(err)
	}
	row.TokenID = issued.Token.ID
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.SetAgentSessionPlace(ctx, row.ID, row.Dir, row.Branch, row.Base, row.TokenID); err != nil {
			return err
		}
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventSessionStarted, "@"+ag.Handle, sessionEvent(row, ag.Handle, r.Task))
	})
	if err != nil {
		s.revoke(issued.Token.ID)
		return fail(err)
	}
	why := r.Why
	if why == "" {
		why = fmt.Sprintf("@%s started this session", a.Principal.Handle)
	}
	// The CLI's own conversation on this task goes on where the last
	// session left it, when the CLI can resume; the first prompt still says
	// who it is and why it runs again (a bare resume wakes it knowing neither).
	var resume string
	if r.Task != 0 && len(ag.Resume) > 0 {
		_ = s.db.View(ctx, func(tx *store.Tx) (err error) {
			resume, err = tx.LastCLISession(ctx, row.WorkspaceID, row.PrincipalID, row.TaskID)
			return err
		})
	}
	prompt := firstPrompt(ag, why, packet)
	sp, err := s.launch(runner, ag, a, uid, r.Task, wt, issued.Secret, prompt, resume)
	if err != nil {
		s.revoke(issued.Token.ID)
		return fail(err)
	}
	sp.size = &pty.Winsize{Rows: max(r.Rows, 24), Cols: max(r.Cols, 80)}
	ru, err := runner.startProcess(uid, sp)
	if err != nil {
		s.revoke(issued.Token.ID)
		return fail(err)
	}
	ru.onStatus = s.statusRecorder(row)
	s.mu.Lock()
	s.running[uid] = ru
	s.mu.Unlock()
	s.setState(row, StateRunning)
	go s.supervise(row, ag, wt, ru, r.Task, task.Title)
	switch {
	case ag.Wake == WakeStreamJSON || ag.Wake == WakeACP:
		// The first prompt is the first message: instructions, then why.
		if err := ru.ch.send(prompt); err != nil {
			ru.say("the first prompt could not be sent: %v", err)
		}
	case ag.PromptMode == PromptStdin:
		go typeWhenIdle(ru, prompt)
	}
	ses, err := s.Session(ctx, uid)
	return ses, ru, err
}

// typeWhenIdle types a first prompt into a terminal once the CLI has drawn
// its screen and gone quiet (at most 10 s after it starts).
func typeWhenIdle(ru *run, prompt string) {
	typist := &ptyChannel{ru: ru, typed: true}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ok, _ := typist.ready(); ok {
			break
		}
		select {
		case <-ru.done:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	_ = typist.send(prompt)
}

// withinLimits refuses a session past the agent's limit or the workspace's;
// the workspace's starts are serialised for the count (LockSessions).
func withinLimits(ctx context.Context, tx *store.Tx, ws, principal int64, ag Agent, workspaceMax int) error {
	if err := tx.LockSessions(ctx, ws); err != nil {
		return err
	}
	mine, all, err := tx.OpenSessionsOf(ctx, ws, principal)
	if err != nil {
		return err
	}
	agentMax := cmp(ag.MaxSessions, defaultAgentSessions)
	switch {
	case mine >= agentMax:
		return atrium.Errorf(atrium.EConflict, "@%s has %d sessions running, its limit: stop one first, or raise it (atrium agent add %s --max-sessions N)", ag.Handle, mine, ag.Handle)
	case all >= workspaceMax:
		return atrium.Errorf(atrium.EConflict, "the workspace has %d agent sessions running, the server's limit (atrium serve --max-sessions): stop one first", all)
	}
	return nil
}

// statusRecorder records a session's status as its channel reports it.
func (s *Service) statusRecorder(row store.AgentSessionRow) func(status, cli string) {
	return func(status, cli string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			if err := tx.SetSessionStatus(ctx, row.ID, status, cli, tx.Now()); err != nil {
				return err
			}
			return tx.EmitJSON(ctx, row.WorkspaceID, 0, EventSessionChanged, row.UID, map[string]any{"session": row.UID, "status": status})
		})
		if err != nil {
			s.log.Error("record an agent session's status", "session", row.UID, "status", status, "err", err)
		}
	}
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
	code, stopped, withAtrium := ru.exitCode, ru.stopping, ru.withAtrium || s.stopping.Load()
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
	fate := failUnread(row, fmt.Sprintf("the session %s ended (%s, exit code %d) before the agent read it", row.UID, state, code))
	if withAtrium {
		fate = returnUnread(row, "the session "+row.UID+" ended with Atrium (it stopped) before the agent read it")
	}
	s.endSession(row, state, reason, &code, fate)
	ru.endViewers(state)
	close(ru.ended)
}

// setState records the state of a session that goes on, and tells
// everyone; endSession records its end.
func (s *Service) setState(row store.AgentSessionRow, state string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		return recordState(ctx, tx, row, state, "", nil, false)
	})
	if err != nil {
		s.log.Error("record an agent session's state", "session", row.UID, "state", state, "err", err)
	}
}

func recordState(ctx context.Context, tx *store.Tx, row store.AgentSessionRow, state, reason string, code *int, ended bool) error {
	if err := tx.SetAgentSession(ctx, row.ID, state, reason, code, row.TokenID, ended); err != nil {
		return err
	}
	return tx.EmitJSON(ctx, row.WorkspaceID, 0, EventSessionChanged, row.UID, map[string]any{"session": row.UID, "state": state, "reason": reason, "exit_code": code})
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
	ru.stop(false)
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
	out := Session{ID: r.UID, Generation: r.ID, Agent: r.Agent, Task: r.TaskNumber, State: r.State, Reason: r.Reason, Dir: r.Dir, Branch: r.Branch, Base: r.Base,
		Replica: r.Replica, StartedAt: r.StartedAt, EndedAt: r.EndedAt, Status: r.Status, CLISession: r.CLISession}
	switch {
	case !r.EndedAt.IsZero() && (r.State == StateExited && r.ExitCode.Valid && r.ExitCode.Int64 == 0 || r.State == StateStopped):
		out.Status = StatusComplete
	case !r.EndedAt.IsZero():
		out.Status = StatusError
	case !r.ActivityAt.IsZero() && time.Since(r.ActivityAt) > staleAfter && r.Status != StatusAwaitingInput:
		out.Status = StatusStale
	}
	if r.ExitCode.Valid {
		c := int(r.ExitCode.Int64)
		out.ExitCode = &c
	}
	s.mu.Lock()
	ru := s.running[r.UID]
	s.mu.Unlock()
	if ru != nil {
		out.Status = ru.liveStatus()
		ru.mu.Lock()
		out.CLISession = cmpStr(ru.cliSession, out.CLISession)
		ru.mu.Unlock()
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

// Shutdown stops every session this server runs, as the server stops; the
// dispatcher first, so that no session starts as the others end.
func (s *Service) Shutdown() {
	s.Stopping()
	s.mu.Lock()
	stop, done := s.stopDisp, s.dispDone
	s.disp, s.stopDisp = nil, nil
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	s.mu.Lock()
	runs := make([]*run, 0, len(s.running))
	for _, ru := range s.running {
		runs = append(runs, ru)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ru := range runs {
		wg.Go(func() {
			ru.stop(true)
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
// resume is the CLI's own session to resume, if its preset can.
func (s *Service) launch(r *Runner, ag Agent, a *atrium.Actor, uid string, task int64, wt worktree, token, prompt, resume string) (procSpec, error) {
	sdir := r.sessionDir(uid)
	if err := mkdir(sdir); err != nil {
		return procSpec{}, err
	}
	config := filepath.Join(sdir, "mcp.json")
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"atrium": map[string]any{"command": r.cfg.Binary, "args": []string{"mcp"}}}}, "", "  ")
	if err := os.WriteFile(config, b, 0o600); err != nil {
		return procSpec{}, err
	}
	vars := map[string]string{"config": config, "atrium": r.cfg.Binary, "prompt": prompt}
	argv := append([]string{ag.Command}, ag.Args...)
	argv = append(argv, expand(ag.MCPArgs, vars)...)
	if ag.PromptMode == PromptArg && prompt != "" {
		argv = append(argv, expand(ag.PromptArgs, vars)...)
	}
	if resume != "" && len(ag.Resume) > 0 {
		argv = append(argv, expand(ag.Resume, map[string]string{"id": resume})...)
	}
	url := strings.TrimSuffix(r.cfg.URL, "/") + "/mcp"
	env := sessionEnv(ag, a, uid, task, wt.Dir, url, token)
	sp := procSpec{argv: argv, env: env, dir: wt.Dir, wake: ag.Wake}
	if ag.Wake == WakeACP {
		sp.mcp = acp.McpServerStdio{Name: "atrium", Command: r.cfg.Binary, Args: []string{"mcp"},
			Env: []acp.EnvVariable{{Name: "ATRIUM_URL", Value: url}, {Name: "ATRIUM_TOKEN", Value: token}}}
	}
	return sp, nil
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
