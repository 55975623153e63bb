//go:build linux

package gateway

import "syscall"

// sysProcAttr puts a stdio server (its guardian, see package procgroup) in
// a process group of its own, so that it and whatever it forks (npx's node,
// a shell's sleep) can be signalled together.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
