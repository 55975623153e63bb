//go:build linux

// Package procgroup keeps the processes Atrium starts — a gateway's stdio
// server, an agent's CLI — and everything they fork under a guardian that
// ends them with the process, with Atrium, or with a kill -9 of Atrium,
// grandchildren that left the group (setsid) included.
package procgroup

import (
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Guard makes cmd start under the guardian (guardian_linux.go). cmd must
// start in a group of its own (SysProcAttr with Setpgid or Setsid, set
// before Guard) and have no ExtraFiles. release closes Atrium's end of the
// guardian's pipe: the guardian then kills the process and every
// descendant; Atrium calls it once the process has been reaped, or to end
// one that SIGTERM did not, and the kernel does when Atrium dies.
func Guard(cmd *exec.Cmd) (release func(), err error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
		// ends the process itself with Atrium.
		cmd.Args = append([]string{shell, "-c", guardScript, "atrium-guardian", cmd.Path}, cmd.Args[1:]...)
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

// guardScript starts a guardian in the process's group, then becomes the
// process. The guardian blocks reading fd 3; when Atrium dies the pipe ends
// and the guardian kills the whole group. It cannot reach a descendant that
// left the group (setsid): the guardian of guardian_linux.go can.
const guardScript = `{ read -r x <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 & exec 3<&-; exec "$@"`

// AwaitExit blocks until the process pid has exited, without reaping it:
// while it is a zombie its pid, and so its process group's id, cannot be
// reused, and the group can be killed without any risk of hitting another.
func AwaitExit(pid int) {
	var si unix.Siginfo
	for {
		if err := unix.Waitid(unix.P_PID, pid, &si, unix.WEXITED|unix.WNOWAIT, nil); err != unix.EINTR {
			return
		}
	}
}

// Signal sends sig to every process of the group pgid.
func Signal(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }
