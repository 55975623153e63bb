package agents

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/creack/pty"

	"github.com/atrium-hq/atrium/internal/procgroup"
)

// RunnerConfig is what a server that runs sessions knows of itself.
type RunnerConfig struct {
	// DataDir holds each session's folder: its transcript, its MCP
	// configuration and, for an agent without a repository, its work.
	DataDir string
	// URL is where the server answers, e.g. http://127.0.0.1:8080: the
	// session's atrium mcp forwards to URL/mcp.
	URL string
	// Binary is the atrium binary the agents' MCP configuration runs.
	Binary string
	// Replica names this server among replicas; its sessions' rows say it.
	Replica string
	// StopGrace is how long a stopping session has between SIGTERM and
	// SIGKILL (5 s).
	StopGrace time.Duration
	// RingBytes is how much recent output each session keeps in memory, for
	// viewers that connect later (256 KiB); TranscriptBytes bounds the
	// transcript file (16 MiB).
	RingBytes, TranscriptBytes int
	// MaxSessions bounds a workspace's sessions at once (8).
	MaxSessions int
	// Lease is how long a claim on deliveries lasts before another replica
	// may take them over (2 min); Poll how often the dispatcher looks for
	// due deliveries besides being told of new ones (1 s).
	Lease, Poll time.Duration
}

func (c RunnerConfig) maxSessions() int { return cmp(c.MaxSessions, defaultWorkspaceSessions) }

// A Runner starts and supervises sessions' processes.
type Runner struct{ cfg RunnerConfig }

// Default sizes and times.
const (
	defaultRing       = 256 << 10
	defaultTranscript = 16 << 20
	defaultGrace      = 5 * time.Second
	// defaultAgentSessions and defaultWorkspaceSessions bound sessions at
	// once, per agent and per workspace, unless set.
	defaultAgentSessions     = 4
	defaultWorkspaceSessions = 8
)

// run is one session's process.
type run struct {
	uid     string
	cmd     *exec.Cmd
	tty     *os.File
	release func()
	pgid    int
	out     *ring
	vs      viewers
	script  *transcript
	done    chan struct{} // closed once the process is reaped and its group ended
	ended   chan struct{} // closed once its end is recorded (supervise)
	grace   time.Duration

	// wake is how messages reach the agent (Wake*), ch the channel itself.
	wake string
	ch   channel

	mu         sync.Mutex
	exitCode   int
	stopping   bool // a stop was asked: it ends as stopped, not exited
	withAtrium bool // the stop is Atrium's own shutdown, no fault of the session's deliveries
	status     string
	cliSession string
	lastOutput time.Time
	line       []byte // what a viewer has typed into a structured session, not yet sent
	onStatus   func(status, cliSession string)
}

// procSpec is what a session's process is started with.
type procSpec struct {
	argv, env []string
	dir       string
	size      *pty.Winsize
	wake      string
	// mcp is the MCP server an ACP agent is given for Atrium.
	mcp acp.McpServerStdio
}

// startProcess starts argv in dir with env, guarded so that nothing of it
// outlives Atrium: in a PTY of its own session when its channel is the
// terminal, or with pipes to a structured channel (stream-json, ACP) whose
// output is shown to viewers as it is rendered.
func (r *Runner) startProcess(uid string, sp procSpec) (*run, error) {
	argv, env, dir, wake := sp.argv, sp.env, sp.dir, sp.wake
	path, err := lookPath(argv[0], env)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env, cmd.Dir = env, dir
	structured := wake == WakeStreamJSON || wake == WakeACP
	// Its own session (with the terminal as its controlling one); the
	// guardian leads it and holds every descendant (procgroup).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: !structured}
	release, err := procgroup.Guard(cmd)
	if err != nil {
		return nil, err
	}
	var tty *os.File
	var stdin io.WriteCloser
	var stdout io.ReadCloser
	if structured {
		if stdin, err = cmd.StdinPipe(); err == nil {
			stdout, err = cmd.StdoutPipe()
		}
		if err == nil {
			cmd.Stderr = nil // to /dev/null: a CLI's diagnostics are not its protocol; its stream says what failed
			err = cmd.Start()
		}
	} else {
		tty, err = pty.StartWithAttrs(cmd, sp.size, cmd.SysProcAttr)
	}
	if err != nil {
		release()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	for _, f := range cmd.ExtraFiles {
		f.Close() // the child's copy of the guardian's pipe
	}
	sdir := r.sessionDir(uid)
	script, err := newTranscript(sdir, cmp(r.cfg.TranscriptBytes, defaultTranscript))
	if err != nil {
		r.kill(cmd.Process.Pid)
		if tty != nil {
			tty.Close()
		}
		release()
		return nil, err
	}
	ru := &run{uid: uid, cmd: cmd, tty: tty, release: release, pgid: cmd.Process.Pid, out: newRing(cmp(r.cfg.RingBytes, defaultRing)),
		vs: viewers{set: map[*Viewer]struct{}{}}, script: script, done: make(chan struct{}), ended: make(chan struct{}), grace: time.Duration(cmp(int(r.cfg.StopGrace), int(defaultGrace))),
		wake: wake, status: StatusPending, lastOutput: time.Now()}
	switch wake {
	case WakeStreamJSON:
		ru.ch = &streamJSON{ru: ru, in: stdin}
		go ru.reap(func() { readStreamJSON(ru, stdout) })
	case WakeACP:
		c := newACP(ru, stdin, stdout, dir)
		c.mcp = sp.mcp
		ru.ch = c
		go ru.reap(ru.ch.(*acpChannel).serve)
	default:
		ru.ch = &ptyChannel{ru: ru, typed: wake == WakePTY}
		go ru.reap(ru.pumpTTY)
	}
	return ru, nil
}

func cmp(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// lookPath finds a command in the PATH of the session's environment, not
// Atrium's.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		// Checked here: past the guardian, a missing program is only an
		// exit code 127.
		if fi, err := os.Stat(name); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not installed here (no such executable file)", name)
		}
		return name, nil
	}
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range strings.Split(p, ":") {
				if dir == "" {
					continue
				}
				full := dir + "/" + name
				if fi, err := os.Stat(full); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return full, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s is not installed here (not found in the session's PATH)", name)
}

// pumpTTY copies the terminal's output into the ring and the transcript
// until the process and everything holding its terminal are gone.
func (ru *run) pumpTTY() {
	buf := make([]byte, 32<<10)
	for {
		n, err := ru.tty.Read(buf)
		if n > 0 {
			ru.output(buf[:n])
		}
		if err != nil {
			return // EIO: no process holds the terminal any more
		}
	}
}

// reap runs read (which returns once the process's output ends), then reaps
// the process and ends what is left of its group.
func (ru *run) reap(read func()) {
	read()
	err := ru.cmd.Wait()
	// Whatever of the group is left (a grandchild that kept no terminal).
	procgroup.Signal(ru.pgid, syscall.SIGKILL)
	if ru.tty != nil {
		ru.tty.Close()
	}
	ru.release()
	ru.script.Close()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	ru.mu.Lock()
	ru.exitCode = code
	ru.mu.Unlock()
	close(ru.done)
}

// stop ends the session: SIGTERM to its group, then SIGKILL after the grace.
// withAtrium says that Atrium is shutting down.
func (ru *run) stop(withAtrium bool) {
	ru.mu.Lock()
	ru.stopping = true
	ru.withAtrium = ru.withAtrium || withAtrium
	ru.mu.Unlock()
	procgroup.Signal(ru.pgid, syscall.SIGTERM)
	select {
	case <-ru.done:
	case <-time.After(ru.grace):
		procgroup.Signal(ru.pgid, syscall.SIGKILL)
		<-ru.done
	}
}

func (r *Runner) kill(pgid int) { procgroup.Signal(pgid, syscall.SIGKILL) }

// Write types p into the session's terminal; a structured session takes
// typed lines as turns.
func (ru *run) Write(p []byte) (int, error) {
	if ru.tty == nil {
		return ru.typeLine(p)
	}
	return ru.tty.Write(p)
}

// resize sets the terminal's size; the process hears SIGWINCH. A structured
// session has no terminal to size.
func (ru *run) resize(rows, cols uint16) error {
	if ru.tty == nil {
		return nil
	}
	return pty.Setsize(ru.tty, &pty.Winsize{Rows: rows, Cols: cols})
}

// usage reads the session leader's CPU time and resident memory from /proc.
func (ru *run) usage() (cpu time.Duration, rss int64) {
	pid := ru.pgid
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 {
			f := strings.Fields(s[i+1:])
			if len(f) > 13 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				cpu = time.Duration(ut+st) * time.Second / 100 // USER_HZ
			}
		}
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm"); err == nil {
		f := strings.Fields(string(b))
		if len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			rss = pages * int64(os.Getpagesize())
		}
	}
	return cpu, rss
}

// A transcript is the session's output in a file, up to a bound.
type transcript struct {
	mu      sync.Mutex
	f       *os.File
	left    int
	clipped bool
}

// TranscriptName is the transcript's file in a session's folder.
const TranscriptName = "transcript.log"

func newTranscript(dir string, limit int) (*transcript, error) {
	if err := mkdir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(dir+"/"+TranscriptName, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &transcript{f: f, left: limit}, nil
}

func (t *transcript) Write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.clipped {
		return
	}
	if len(p) > t.left {
		p = p[:t.left]
		t.clipped = true
	}
	t.left -= len(p)
	_, _ = t.f.Write(p)
	if t.clipped {
		_, _ = io.WriteString(t.f, "\r\n[atrium: the transcript reached its limit; the rest is in the live terminal only]\r\n")
	}
}

func (t *transcript) Close() { t.mu.Lock(); t.f.Close(); t.mu.Unlock() }
