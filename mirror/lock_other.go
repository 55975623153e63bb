//go:build !unix && !windows

package mirror

import "os"

// tryLock: these systems have no advisory lock Atrium can use; the folder is
// not guarded.
func tryLock(*os.File) error { return nil }
