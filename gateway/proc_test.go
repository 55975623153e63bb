package gateway

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readStat returns the process group of pid from /proc.
func readStat(pid string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return "", err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", errors.New("bad stat")
	}
	f := strings.Fields(string(b[i+1:])) // state ppid pgrp …
	if len(f) < 3 {
		return "", errors.New("bad stat")
	}
	return f[2], nil
}

func writeRaw(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

// When Atrium dies with no chance to clean up (kill -9), the guardian of
// each server sees its pipe end and kills the server and every descendant:
// the grandchildren in its group, and one that left the group and the
// session (setsid), which the guardian, a subreaper, still holds. Closing
// Atrium's end of the pipe, and nothing else, stands for that death here.
func TestGuardianEndsTheGroupWhenAtriumDies(t *testing.T) {
	h := newHarness(t)
	k, v, _ := strings.Cut(h.mark, "=")
	sp, err := Resolve("fork", &ServerConfig{Command: "sh", Args: []string{"-c", "sleep 997 & setsid sleep 994 & exec " + upstreamBin}}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p, err := startProcess(sp, []string{"PATH=" + os.Getenv("PATH"), k + "=" + v}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop(time.Second)
	running := func(prefix string) bool {
		for _, m := range h.marked() {
			if _, cmd, _ := strings.Cut(m, " "); strings.HasPrefix(cmd, prefix) {
				return true
			}
		}
		return false
	}
	waitFor(t, "the grandchildren to start", func() bool { return running("sleep 997") && running("sleep 994") })
	p.release() // as the kernel does when Atrium dies
	waitFor(t, "the server to be killed", func() bool {
		select {
		case <-p.exited:
			return true
		default:
			return false
		}
	})
	if ee, ok := p.err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("the server ended with %v, want killed by SIGKILL", p.err)
	}
	waitFor(t, "the grandchild to be killed", func() bool { return !running("sleep 997") })
	waitFor(t, "the grandchild in a session of its own to be killed", func() bool { return !running("sleep 994") })
}
