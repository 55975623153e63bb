package mirror

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/atrium-hq/atrium"
)

// LockName is the file in a mirrored folder that the running mirror holds
// locked. Two mirrors of one folder would each take the other's writes for
// edits and echo them back; the lock lets only one run. The lock goes with
// its process, so a mirror that crashed leaves nothing to clean up.
const LockName = ".atrium.lock"

// errLocked is what tryLock returns when another holds the lock.
var errLocked = errors.New("locked")

// lockFolder takes the folder's mirror lock, or says who holds it.
func lockFolder(dir string) (*os.File, error) {
	name := filepath.Join(dir, LockName)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("mirror lock %s: %w", name, err)
	}
	if err := tryLock(f); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, errLocked) {
			return nil, atrium.Errorf(atrium.EConflict, "the folder %s is already mirrored by another atrium process%s; a folder has one mirror at a time: stop that one, or mirror another folder", dir, holder)
		}
		return nil, fmt.Errorf("mirror lock %s: %w", name, err)
	}
	// Who holds it, for the error a second mirror gets.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// readHolder is " (pid N)" from the lock file, or "".
func readHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
		return fmt.Sprintf(" (pid %d)", pid)
	}
	return ""
}
