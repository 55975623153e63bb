package gateway

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/atrium-hq/atrium/internal/procgroup"
)

// A process is a running stdio server: its pipes, and a channel closed once
// it has exited, its whole group has been killed and it has been reaped.
type process struct {
	cmd     *exec.Cmd
	stdin   *os.File // Atrium's ends of the pipes
	stdout  *os.File
	release func() // ends the guardian's watch (see guard), once reaped
	exited  chan struct{}
	err     error // how it exited, once exited is closed
}

// startedHook, when set (by tests), is told the process group of every
// server started, so that leak checks can look for what is left of each
// group, whatever its processes did to their environment.
var startedHook func(pgid int)

// startProcess starts sp's command with env, its stderr copied into stderr.
//
// The pipes are Atrium's own, not exec's: exec's Wait would wait for the copy
// of stderr to end, which a forked grandchild holding the pipe delays for as
// long as it lives, and it would close stdout under the MCP reader.
func startProcess(sp *Spec, env []string, stderr io.Writer) (*process, error) {
	cmd := exec.Command(sp.Command, sp.Args...)
	cmd.Env, cmd.Dir, cmd.SysProcAttr = env, sp.Cwd, sysProcAttr()
	release, err := procgroup.Guard(cmd)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	pipe := func() (r, w *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil
		}
		files = append(files, r, w)
		return r, w
	}
	inR, inW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	if len(files) != 6 {
		closeAll()
		release()
		return nil, errors.New("cannot create pipes: too many open files?")
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		release()
		return nil, err
	}
	inR.Close()
	outW.Close()
	errW.Close()
	for _, f := range cmd.ExtraFiles {
		f.Close() // the child's copies; Atrium keeps only its own ends
	}
	go func() {
		_, _ = io.Copy(stderr, errR) // ends when the last writer in the group is gone
		errR.Close()
	}()
	if startedHook != nil {
		startedHook(cmd.Process.Pid)
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, release: release, exited: make(chan struct{})}
	go p.reap()
	return p, nil
}

// reap waits for the server to exit, kills what is left of its group (the
// children it forked: a server that dies must not leave them behind) and
// reaps it.
func (p *process) reap() {
	pid := p.cmd.Process.Pid
	procgroup.AwaitExit(pid)
	procgroup.Signal(pid, syscall.SIGKILL)
	p.err = p.cmd.Wait()
	p.release()
	close(p.exited)
}

// stop ends the server: first politely (its stdin closes, which the MCP stdio
// transport defines as the end), then with SIGTERM to its group, then by its
// guardian (every descendant), then SIGKILL to the group. It returns once the process has been reaped.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	if p.wait(grace) {
		return
	}
	procgroup.Signal(p.cmd.Process.Pid, syscall.SIGTERM)
	if p.wait(grace) {
		return
	}
	// The guardian kills the server and every descendant, those that left
	// the group too; SIGKILL to the group is the last resort.
	p.release()
	if p.wait(grace) {
		return
	}
	procgroup.Signal(p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.exited
}

func (p *process) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// describeExit says how a server's process ended, for status.
func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String()
		}
		return "exited with " + ee.ProcessState.String()
	}
	if err == nil {
		return "exited with status 0"
	}
	return err.Error()
}
