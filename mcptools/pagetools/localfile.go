package pagetools

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/atrium-hq/atrium"
)

// readLocalFile reads a file a stdio caller names, confined to root (the
// server's working folder): relative paths resolve inside it, and neither
// ".." nor a symlink may lead out. An HTTP server has no root, so remote
// callers cannot make it read its own disk.
func readLocalFile(root, name string, max int64) ([]byte, string, error) {
	if root == "" {
		return nil, "", atrium.Errorf(atrium.EInvalid, "file_path is only for local (stdio) callers; send the bytes as content_base64")
	}
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, "", err
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(rootReal, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, "", atrium.Errorf(atrium.ENotFound, "file not found: %s", name)
	}
	if rel, err := filepath.Rel(rootReal, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, "", atrium.Errorf(atrium.EPermission, "file_path %s is outside the working folder %s", name, rootReal)
	}
	// Opening a FIFO without a writer blocks until one comes, and a device
	// may never end: open without blocking, then decide on what was opened
	// (not on the path, which may have been swapped since).
	f, err := os.OpenFile(real, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, "", atrium.Errorf(atrium.ENotFound, "cannot open %s", name)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !st.Mode().IsRegular() {
		return nil, "", atrium.Errorf(atrium.EInvalid, "%s is not a regular file (%s): only files can be attached", name, kindOf(st.Mode()))
	}
	if st.Size() > max {
		return nil, "", atrium.Errorf(atrium.ETooLarge, "%s is %d bytes; attachments may be at most %d", name, st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > max {
		return nil, "", atrium.Errorf(atrium.ETooLarge, "%s is larger than %d bytes", name, max)
	}
	return data, filepath.Base(real), nil
}

// kindOf names a file type in a user's words.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
