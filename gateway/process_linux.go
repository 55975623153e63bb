//go:build linux

package gateway

import (
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts a stdio server (its guardian, see guardian_linux.go) in
// a process group of its own, so that it and whatever it forks (npx's node,
// a shell's sleep) can be signalled together.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// awaitExit blocks until the process pid has exited, without reaping it:
// while it is a zombie its pid, and so its process group's id, cannot be
// reused, and the group can be killed without any risk of hitting another.
func awaitExit(pid int) {
	var si unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PID, pid, &si, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			return
		}
	}
}

// signalGroup sends sig to every process of the group pgid.
func signalGroup(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }

// guard makes cmd start under the guardian (guardian_linux.go). release
// closes Atrium's end of the guardian's pipe: the guardian then kills the
// server and every descendant; Atrium calls it once the server has been
// reaped, or to end a server that SIGTERM did not, and the kernel does when
// Atrium dies.
func guard(cmd *exec.Cmd) (release func(), err error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(guardianExe); err == nil {
		cmd.Args = append([]string{guardianName, cmd.Path}, cmd.Args...)
		cmd.Path = guardianExe
	} else if _, err := os.Stat(shell); err == nil {
		// No /proc: a shell guards the group at least, and the kernel
		// ends the server itself with Atrium.
		cmd.Args = append([]string{shell, "-c", guardScript, "atrium-gateway", cmd.Path}, cmd.Args[1:]...)
		cmd.Path = shell
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	} else {
		r.Close()
		w.Close()
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		return func() {}, nil
	}
	cmd.ExtraFiles = []*os.File{r}
	var once sync.Once
	return func() { once.Do(func() { w.Close(); r.Close() }) }, nil
}

// shell runs the guardian of last resort, where /proc is missing.
const shell = "/bin/sh"

// guardScript starts a guardian in the server's process group, then becomes
// the server. The guardian blocks reading fd 3; when Atrium dies the pipe
// ends and the guardian kills the whole group. It cannot reach a descendant
// that left the group (setsid): the guardian of guardian_linux.go can.
const guardScript = `{ read -r x <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 & exec 3<&-; exec "$@"`
