package vault

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// ExportReport counts what an export wrote.
type ExportReport struct {
	Dir                          string
	PagesWritten, PagesUnchanged int
	AttWritten, AttUnchanged     int
	Failed                       []Note
	Elapsed                      time.Duration
}

// Export writes every page and attachment of the workspace of ctx's actor to
// dir at its path, with its exact bytes, creating folders as needed. Files
// that already hold the same bytes are left alone; files that are not the
// workspace's are never removed; nothing is written outside dir, even
// through a symbolic link inside it.
func Export(ctx context.Context, s *pages.Service, dir string) (*ExportReport, error) {
	start := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// An os.Root resolves every path inside dir and refuses one that leaves
	// it, through ".." or a symbolic link: the confinement is the kernel's
	// openat walk, not a string check that a link could defeat.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	r := &ExportReport{Dir: dir}
	write := func(p string, data []byte, written, unchanged *int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		changed, err := WriteFileIn(root, p, data)
		switch {
		case err != nil:
			r.Failed = append(r.Failed, Note{p, err.Error()})
		case changed:
			*written++
		default:
			*unchanged++
		}
		return nil
	}
	err = s.Export(ctx, func(p atrium.Page) error {
		return write(p.Path, []byte(p.Content), &r.PagesWritten, &r.PagesUnchanged)
	})
	if err == nil {
		err = s.ExportAttachments(ctx, func(at atrium.Attachment, data []byte) error {
			return write(at.Path, data, &r.AttWritten, &r.AttUnchanged)
		})
	}
	r.Elapsed = time.Since(start)
	return r, err
}

// WriteFileIn makes the file at slash-separated path p inside root hold data,
// and reports whether it had to write. Readers of the folder see the old file
// or the new one, never a part: the bytes go to a temporary file beside it,
// which is then renamed over it. There is no fsync: an export is a copy that
// running it again repairs, and syncing each of 100 000 files would make it
// many times slower.
func WriteFileIn(root *os.Root, p string, data []byte) (bool, error) {
	name := filepath.FromSlash(p)
	if !filepath.IsLocal(name) {
		return false, fmt.Errorf("refusing to write %s: not a path inside the folder", p)
	}
	if fi, err := root.Lstat(name); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
		if cur, err := root.ReadFile(name); err == nil && bytes.Equal(cur, data) {
			return false, nil
		}
	}
	dir := filepath.Dir(name)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	// A leading dot keeps a temporary file that a crash left behind out of
	// the next import, which skips hidden files.
	tmp := filepath.Join(dir, ".atrium-"+rand.Text()[:12]+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		root.Remove(tmp)
		return false, err
	}
	return true, nil
}
