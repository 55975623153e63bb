//go:build unix

package mirror

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without waiting. flock locks belong
// to the open file, so a second mirror in the same process is refused too.
func tryLock(f *os.File) error {
	for range 100 { // EINTR: a signal arrived; bounded, as every loop is
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		case !errors.Is(err, syscall.EINTR):
			return err
		}
	}
	return syscall.EINTR
}
