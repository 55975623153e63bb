//go:build linux

package procgroup

import (
	"bytes"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The guardian stands between Atrium and each process it starts (a gateway's
// stdio server, an agent's CLI): Atrium starts its own executable again under
// this name, in a new process group (or session, with a terminal), and the
// guardian starts the process in it. It is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so every descendant of the server that loses its
// parent — a daemon that double-forks, a grandchild that calls setsid and so
// leaves the group and the session — becomes the guardian's child instead of
// init's: however a descendant hides, the guardian still holds it. When the
// server exits, or Atrium dies (kill -9 included: the pipe on fd 3, whose
// other end only Atrium holds, ends) or asks it to, the guardian kills every
// descendant and the group, reaps them, and exits as the server did.
const guardianName = "atrium-guardian"

func init() {
	if len(os.Args) > 2 && os.Args[0] == guardianName {
		os.Exit(runGuardian(os.Args[1], os.Args[2:]))
	}
}

// guardianExe is the executable to start as the guardian: this one, as the
// kernel knows it (even if its file has been replaced since).
const guardianExe = "/proc/self/exe"

// runGuardian runs the server path with argv and guards it; its result is
// the guardian's exit status.
func runGuardian(path string, argv []string) int {
	runtime.LockOSThread() // the server's Pdeathsig follows this thread
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	syscall.CloseOnExec(3) // Atrium's pipe is the guardian's alone
	watch := os.NewFile(3, "atrium")
	// The group's polite signals (Atrium's SIGTERM) are the server's to act
	// on; the guardian ends when the server has. Caught, not ignored: the
	// server must not inherit an ignored SIGTERM.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}})
	if err != nil {
		_, _ = io.WriteString(os.Stderr, "atrium: cannot start "+path+": "+err.Error()+"\n")
		return 127
	}
	// Only the server holds its pipes: their ends tell Atrium that it is gone.
	os.Stdin.Close()
	os.Stdout.Close()
	os.Stderr.Close()

	dead := make(chan struct{}) // Atrium is gone, or wants everything ended
	go func() {
		_, _ = io.Copy(io.Discard, watch)
		close(dead)
	}()
	type exit struct {
		pid int
		ws  syscall.WaitStatus
	}
	exits := make(chan exit)
	go func() {
		defer close(exits)
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			switch {
			case err == syscall.EINTR:
				continue
			case err != nil:
				return // no child left
			}
			exits <- exit{pid, ws}
		}
	}()
	var (
		status  syscall.WaitStatus
		ended   bool // the server exited
		ending  <-chan time.Time
		ticker  *time.Ticker
		endTree = func() {
			killTree()
			if ticker == nil {
				// Until the last descendant is reaped: one forked in
				// the moment of a sweep is caught by the next.
				ticker = time.NewTicker(20 * time.Millisecond)
				ending = ticker.C
			}
		}
	)
	for {
		select {
		case e, ok := <-exits:
			if !ok {
				if !ended {
					return 1
				}
				if status.Signaled() {
					// Exit as the server did: killed by its signal.
					signal.Reset()
					_ = syscall.Kill(os.Getpid(), status.Signal())
					time.Sleep(time.Second)
					return 128 + int(status.Signal())
				}
				return status.ExitStatus()
			}
			if e.pid == proc.Pid {
				status, ended = e.ws, true
				endTree()
			}
		case <-dead:
			dead = nil
			endTree()
		case <-ending:
			killTree()
		case <-sigs:
		}
	}
}

// killTree sends SIGKILL to every live descendant of the guardian and every
// other process of its group.
func killTree() {
	self := os.Getpid()
	group := syscall.Getpgrp()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		_ = syscall.Kill(-group, syscall.SIGKILL) // the group at least (the guardian with it)
		return
	}
	children := map[int][]int{}
	var kill []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		state, ppid, pgrp, ok := procStat(pid)
		if !ok || state == "Z" {
			continue
		}
		children[ppid] = append(children[ppid], pid)
		if pgrp == group {
			kill = append(kill, pid)
		}
	}
	for queue := children[self]; len(queue) > 0; {
		pid := queue[0]
		queue = append(queue[1:], children[pid]...)
		kill = append(kill, pid)
	}
	for _, pid := range kill {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// procStat reads a process's state, parent and group from /proc.
func procStat(pid int) (state string, ppid, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, 0, false
	}
	f := strings.Fields(string(b[i+1:])) // state ppid pgrp …
	if len(f) < 3 {
		return "", 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	return f[0], ppid, pgrp, err1 == nil && err2 == nil
}
