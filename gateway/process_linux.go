//go:build linux

package gateway

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts a stdio server in a process group of its own, so that it
// and whatever it forks (npx's node, a shell's sleep) can be ended together,
// and asks the kernel to kill it if Atrium dies without a chance to (kill
// -9): the one case where Atrium's own clean-up cannot run.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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

// shell runs the guardian; without it a server runs unguarded (Pdeathsig
// still ends the server itself).
const shell = "/bin/sh"

// guardScript starts a guardian in the server's process group, then becomes
// the server. The guardian blocks reading fd 3, a pipe whose other end only
// Atrium holds: when Atrium dies, however it dies (kill -9 included), the
// pipe ends and the guardian kills the whole group — the grandchildren a
// server forked, which Pdeathsig (not inherited across fork) would leave
// running. The server itself gets neither fd 3 nor the guardian's stdio.
const guardScript = `{ read -r x <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 & exec 3<&-; exec "$@"`

// guard makes cmd start under the guardian. release, called once the
// server has been reaped, closes Atrium's end of the guardian's pipe.
func guard(cmd *exec.Cmd) (release func(), err error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if _, err := os.Stat(shell); err != nil {
		return func() {}, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Args = append([]string{shell, "-c", guardScript, "atrium-gateway", cmd.Path}, cmd.Args[1:]...)
	cmd.Path = shell
	cmd.ExtraFiles = []*os.File{r}
	return func() { w.Close(); r.Close() }, nil
}
