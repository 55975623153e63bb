//go:build unix

package pages_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has spent: on a machine other work
// shares, searches' CPU time per search says more than their wall time.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
