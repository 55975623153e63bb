//go:build !linux

// Package procgroup keeps the processes Atrium starts and what they fork in
// one process group; outside Linux it only signals the group.
package procgroup

import (
	"os/exec"
	"syscall"
)

// Guard does nothing outside Linux: release is a no-op.
func Guard(cmd *exec.Cmd, name string) (release func(), err error) { return func() {}, cmd.Err }

// Signal sends sig to every process of the group pgid.
func Signal(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }
