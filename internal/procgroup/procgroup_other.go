//go:build !linux

// Package procgroup keeps the processes Atrium starts and what they fork
// together; outside Linux it ends a process only, not what it forked.
package procgroup

import (
	"os"
	"os/exec"
	"syscall"
)

// Guard does nothing outside Linux: release is a no-op.
func Guard(cmd *exec.Cmd) (release func(), err error) { return func() {}, cmd.Err }

// AwaitExit returns at once outside Linux.
func AwaitExit(int) {}

// Signal ends the process pid outside Linux, whatever sig.
func Signal(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
