//go:build linux

package gateway

import (
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
