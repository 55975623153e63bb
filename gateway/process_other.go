//go:build !linux

package gateway

import (
	"os"
	"os/exec"
	"syscall"
)

// Outside Linux the gateway ends a server's process only, not the group it
// may have forked: process groups and the exit wait without reaping are
// Linux's here.
func sysProcAttr() *syscall.SysProcAttr { return nil }

func awaitExit(int) {}

func signalGroup(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func guard(cmd *exec.Cmd) (func(), error) { return func() {}, cmd.Err }
