//go:build linux

// Package procgroup keeps the processes Atrium starts — an agent's CLI, a
// gateway's upstream server — and everything they fork inside one process
// group that ends with them, with Atrium, or with a kill -9 of Atrium.
package procgroup

import (
	"os"
	"os/exec"
	"syscall"
)

// shell runs the guardian; without it a process runs unguarded (Pdeathsig
// still ends the process itself).
const shell = "/bin/sh"

// guardScript starts a guardian in the process's group, then becomes the
// process. The guardian blocks reading fd 3, a pipe whose other end only
// Atrium holds: when Atrium dies, however it dies (kill -9 included), the
// pipe ends and the guardian kills the whole group — the grandchildren the
// process forked, which Pdeathsig (not inherited across fork) would leave
// running. The process itself gets neither fd 3 nor the guardian's stdio.
const guardScript = `{ read -r x <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 & exec 3<&-; exec "$@"`

// Guard makes cmd start under the guardian, as name in process listings.
// release, called once the process has been reaped, closes Atrium's end of
// the guardian's pipe. cmd must start in a group of its own (Setpgid or
// Setsid) and its ExtraFiles must be empty.
func Guard(cmd *exec.Cmd, name string) (release func(), err error) {
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
	cmd.Args = append([]string{shell, "-c", guardScript, name, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = shell
	cmd.ExtraFiles = []*os.File{r}
	return func() { w.Close(); r.Close() }, nil
}

// Signal sends sig to every process of the group pgid.
func Signal(pgid int, sig syscall.Signal) { _ = syscall.Kill(-pgid, sig) }
