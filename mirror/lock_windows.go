//go:build windows

package mirror

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// tryLock locks a byte far past the holder's pid, so that the pid stays
// readable: Windows locks are mandatory for the range they cover.
func tryLock(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: 1}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return errLocked
	}
	return err
}
