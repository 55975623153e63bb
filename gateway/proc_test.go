package gateway

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
