//go:build !linux

package gateway

import "syscall"

// Outside Linux the gateway ends a server's process only, not the group it
// may have forked: process groups and the exit wait without reaping are
// Linux's here.
func sysProcAttr() *syscall.SysProcAttr { return nil }
