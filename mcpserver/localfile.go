package mcpserver

import (
	"io"
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
	f, err := os.Open(real)
	if err != nil {
		return nil, "", atrium.Errorf(atrium.ENotFound, "cannot open %s", name)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !st.Mode().IsRegular() {
		return nil, "", atrium.Errorf(atrium.EInvalid, "%s is not a regular file", name)
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
