package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// maxPageFile is the largest page file import reads. The pages service
// refuses pages far smaller than this with a precise message; the guard only
// keeps a stray multi-gigabyte file from being read into memory first.
const maxPageFile = 64 << 20

// A Note is a file an import or export passed over or failed on, and why
// (when the heading it is listed under does not say).
type Note struct{ Path, Why string }

// Progress hears how an import goes; a nil Progress hears nothing.
type Progress interface {
	Pages(done, total int)
	Attachments(done, total int)
}

// ImportOptions tune an import.
type ImportOptions struct {
	Options
	// Progress, if set, is told of each batch. Counting the pages first costs
	// one more walk of names only; it runs only when Progress is set and
	// Total is not.
	Progress Progress
	// Total is how many pages the folder holds (CountPages), when known.
	Total int
	// Batches tunes the writes (BatchSize, BatchBytes: pages.ImportOptionsFor).
	Batches pages.ImportOptions
}

// CountPages counts the page files Import would take from dir: a walk of
// names only.
func CountPages(ctx context.Context, dir string, o Options) (int, error) {
	total := 0
	err := Walk(dir, o, func(e Entry) error {
		if e.Kind == Page {
			total++
		}
		return ctx.Err()
	})
	return total, err
}

// ImportReport is what an import did, for its summary.
type ImportReport struct {
	Dir           string
	Pages         pages.ImportResult
	PagesTime     time.Duration
	AttAdded      int
	AttUnchanged  int
	Renamed       []Note // page files of another extension, stored as .md pages
	Symlinks      []Note
	Skipped       []Note // not failures: files import does not take, and why
	Failed        []Note
	Elapsed       time.Duration
	attachmentsAt []string
}

// Import brings the folder dir into the workspace of ctx's actor: every page
// file as a page at its path, every other file as an attachment at its path,
// wherever it is. New pages are created, changed ones get a new revision,
// identical ones are left alone. A file that cannot be imported is listed as
// failed and the rest still go in. The report is complete even when an
// error stops the import.
func Import(ctx context.Context, s *pages.Service, dir string, o ImportOptions) (*ImportReport, error) {
	start := time.Now()
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, atrium.Errorf(atrium.EInvalid, "%s is not a folder", dir)
	}
	ctx = pages.WithOrigin(ctx, "import")
	total := o.Total
	if o.Progress != nil && total == 0 {
		if total, err = CountPages(ctx, root, o.Options); err != nil {
			return nil, err
		}
	}
	r := &ImportReport{Dir: root}
	defer func() { r.Elapsed = time.Since(start) }()
	var walkErr error
	// The walk runs inside the sequence Import consumes, so files are read as
	// Import's workers ask for them: only what its channels buffer is in memory.
	files := func(yield func(pages.File) bool) {
		walkErr = Walk(root, o.Options, func(e Entry) error {
			switch e.Kind {
			case Page:
				data, err := ReadFile(e.Abs, maxPageFile)
				if err != nil {
					r.fail(e.Rel, err)
					return nil
				}
				p := PagePath(e.Rel)
				if p != e.Rel {
					r.Renamed = append(r.Renamed, Note{e.Rel, "stored as " + p})
				}
				if !yield(pages.File{Path: p, Content: string(data)}) {
					return errStopWalk
				}
			case Attachment:
				r.attachmentsAt = append(r.attachmentsAt, e.Rel)
			case Symlink:
				r.Symlinks = append(r.Symlinks, Note{Path: e.Rel})
			case Skipped:
				r.Skipped = append(r.Skipped, Note{e.Rel, e.Why})
			case Unreadable:
				r.Failed = append(r.Failed, Note{e.Rel, e.Why})
			}
			return nil
		})
		if errors.Is(walkErr, errStopWalk) {
			walkErr = nil
		}
	}
	opts := pages.ImportOptions{BatchSize: o.Batches.BatchSize, BatchBytes: o.Batches.BatchBytes}
	if o.Progress != nil {
		opts.Progress = func(done int) { o.Progress.Pages(done, total) }
	}
	pagesStart := time.Now()
	res, err := s.Import(ctx, files, opts)
	// Import has drained the sequence by the time it returns, so the walk's
	// records are complete and no longer written to.
	r.Pages = res
	r.PagesTime = time.Since(pagesStart)
	for _, e := range res.Failed {
		r.Failed = append(r.Failed, Note{e.Path, e.Error})
	}
	if err == nil {
		err = walkErr
	}
	if err == nil {
		err = r.attach(ctx, s, root, o.Progress)
	}
	// Import's workers finish in any order; sorted, two runs read alike.
	slices.SortFunc(r.Failed, func(x, y Note) int { return strings.Compare(x.Path, y.Path) })
	return r, err
}

// errStopWalk ends a walk early, when Import stops asking for files.
var errStopWalk = errors.New("stop walk")

// attach stores the attachments. It runs after the pages, so that the page
// each belongs to exists.
func (r *ImportReport) attach(ctx context.Context, s *pages.Service, root string, prog Progress) error {
	for i, rel := range r.attachmentsAt {
		if err := ctx.Err(); err != nil {
			return err
		}
		if prog != nil {
			prog.Attachments(i, len(r.attachmentsAt))
		}
		data, err := ReadFile(filepath.Join(root, filepath.FromSlash(rel)), s.MaxAttachmentBytes)
		if err != nil {
			r.fail(rel, err)
			continue
		}
		_, changed, err := s.AttachFile(ctx, rel, data)
		switch {
		case atrium.ErrorCode(err) == atrium.EInternal:
			// A database failure is not this file's fault; going on would
			// only repeat it for every file.
			return err
		case err != nil:
			r.fail(rel, err)
		case changed:
			r.AttAdded++
		default:
			r.AttUnchanged++
		}
	}
	return nil
}

// fail records a file that could not be imported.
func (r *ImportReport) fail(rel string, err error) {
	msg := atrium.ErrorMessage(err)
	if atrium.ErrorCode(err) == atrium.EInternal {
		// A local read error is safe and useful to show; only service errors
		// hide their internals.
		msg = err.Error()
	}
	r.Failed = append(r.Failed, Note{rel, msg})
}

// String is a short account of the report, for logs.
func (r *ImportReport) String() string {
	return fmt.Sprintf("%d created, %d updated, %d unchanged, %d attachments added, %d skipped, %d failed",
		r.Pages.Created, r.Pages.Updated, r.Pages.Unchanged, r.AttAdded, len(r.Skipped), len(r.Failed))
}
