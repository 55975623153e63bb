package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/internal/vaultgen"
	"github.com/atrium-hq/atrium/pages"
)

// This file holds the commands that move pages between the workspace and a
// folder of Markdown files: import, export, and the vault generator used to
// benchmark them.

// maxListed bounds each list of files in a summary; a vault with thousands of
// stray files should not bury the counts.
const maxListed = 20

// maxPageFile is the largest .md file import reads. The docs service refuses
// pages far smaller than this with a precise message; the guard only keeps a
// stray multi-gigabyte file from being read into memory first.
const maxPageFile = 64 << 20

func newImportCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "import DIR",
		Short: "Import a folder of Markdown files (an Obsidian vault works) into the workspace",
		Long: `Import every .md file under DIR as a page at its path relative to DIR, and every
file directly inside an assets folder as an attachment of that folder's pages.

Hidden files and folders (.obsidian, .git, …) are left out silently. Symbolic links
are never followed: they are listed as ignored. Other files are listed as skipped.
A file that cannot be imported (bad frontmatter, invalid name, too large) is listed
as failed and the rest still go in; the exit status is then 1.

New pages are created, changed ones get a new revision, identical ones are left
alone: importing the same folder again changes nothing. Pages are written as
ATRIUM_AGENT in ATRIUM_WORKSPACE.`,
		Example: `  atrium import ~/Obsidian/Work
  ATRIUM_WORKSPACE=research atrium import ./notes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runImport(cmd.Context(), args[0])
		},
	}
}

// importReport is what an import did, for its summary.
type importReport struct {
	dir           string
	pages         pages.ImportResult
	pagesTime     time.Duration
	attAdded      int
	attUnchanged  int
	symlinks      []fileNote
	skipped       []fileNote // not failures: files import does not take
	failed        []fileNote
	elapsed       time.Duration
	attachmentsAt []string // files of assets folders, attached after the pages
}

func (g *globals) runImport(ctx context.Context, dir string) error {
	start := time.Now()
	root, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	a, actor, err := g.openLocal(ctx)
	if err != nil {
		return err
	}
	defer a.close()
	ctx = pages.WithOrigin(atrium.NewContextWithActor(ctx, actor), "import")

	var prog *progressLine
	if isTerminal(g.stderr) {
		// Counting first costs one more walk of names only, far cheaper than
		// the import, and lets the progress line show a total and a percentage.
		total := 0
		if err := walkVault(root, func(f vaultFile) error {
			if f.kind == pageFile {
				total++
			}
			return ctx.Err()
		}); err != nil {
			return err
		}
		prog = &progressLine{w: g.stderr, total: total, start: time.Now()}
	}

	rep := &importReport{dir: root}
	var walkErr error
	// The walk runs inside the sequence Import consumes, so files are read as
	// Import's workers ask for them: only what its channels buffer is in memory.
	files := func(yield func(pages.File) bool) {
		walkErr = walkVault(root, func(f vaultFile) error {
			switch f.kind {
			case pageFile:
				data, err := readFile(f.abs, maxPageFile)
				if err != nil {
					rep.fail(f.rel, err)
					return nil
				}
				if !yield(pages.File{Path: f.rel, Content: string(data)}) {
					return errStopWalk
				}
			case assetFile:
				rep.attachmentsAt = append(rep.attachmentsAt, f.rel)
			case symlinkFile:
				rep.symlinks = append(rep.symlinks, fileNote{path: f.rel})
			case otherFile:
				rep.skipped = append(rep.skipped, fileNote{f.rel, f.why})
			case unreadableFile:
				rep.failed = append(rep.failed, fileNote{f.rel, f.why})
			}
			return nil
		})
		if errors.Is(walkErr, errStopWalk) {
			walkErr = nil
		}
	}
	opts := pages.ImportOptions{}
	if prog != nil {
		opts.Progress = prog.pages
	}
	pagesStart := time.Now()
	res, err := a.docs.Import(ctx, files, opts)
	// Import has drained the sequence by the time it returns, so the walk's
	// records are complete and no longer written to.
	rep.pages = res
	rep.pagesTime = time.Since(pagesStart)
	for _, e := range res.Failed {
		rep.failed = append(rep.failed, fileNote{e.Path, e.Error})
	}
	if err == nil {
		err = walkErr
	}
	if err == nil {
		err = rep.attach(ctx, a.docs, root, prog)
	}
	prog.clear()
	rep.elapsed = time.Since(start)
	rep.print(g.stderr, err == nil)
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("import interrupted: %w", ctx.Err())
	case err != nil:
		return fmt.Errorf("import stopped: %w", err)
	case len(rep.failed) > 0:
		return exitError{code: 1}
	}
	return nil
}

// errStopWalk ends a walk early, when Import stops asking for files.
var errStopWalk = errors.New("stop walk")

// attach stores the files of assets folders. It runs after the pages so that
// each folder's page, which owns its attachments, exists.
func (r *importReport) attach(ctx context.Context, s *pages.Service, root string, prog *progressLine) error {
	for i, rel := range r.attachmentsAt {
		if err := ctx.Err(); err != nil {
			return err
		}
		prog.attachments(i, len(r.attachmentsAt))
		data, err := readFile(filepath.Join(root, filepath.FromSlash(rel)), s.MaxAttachmentBytes)
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
			r.attAdded++
		default:
			r.attUnchanged++
		}
	}
	return nil
}

// fail records a file that could not be imported.
func (r *importReport) fail(rel string, err error) {
	msg := atrium.ErrorMessage(err)
	if atrium.ErrorCode(err) == atrium.EInternal {
		// A local read error is safe and useful to show; only service errors
		// hide their internals.
		msg = err.Error()
	}
	r.failed = append(r.failed, fileNote{rel, msg})
}

// print writes the summary; complete is false when the import stopped early.
func (r *importReport) print(w io.Writer, complete bool) {
	p := r.pages
	n := p.Created + p.Updated + p.Unchanged
	rate := ""
	if secs := r.pagesTime.Seconds(); n > 0 && secs > 0 {
		rate = fmt.Sprintf(" (%s pages/s)", group(int(float64(n)/secs)))
	}
	if complete {
		fmt.Fprintf(w, "Imported %s in %s\n", r.dir, r.elapsed.Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "Import of %s stopped after %s; what it did:\n", r.dir, r.elapsed.Round(time.Millisecond))
	}
	fmt.Fprintf(w, "  pages:        %s created, %s updated, %s unchanged%s\n", group(p.Created), group(p.Updated), group(p.Unchanged), rate)
	fmt.Fprintf(w, "  attachments:  %s added, %s unchanged\n", group(r.attAdded), group(r.attUnchanged))
	if len(p.Private) > 0 {
		// Pages are private unless their frontmatter says access: public, and
		// a default list_pages shows public pages only: say so here, where a
		// user first meets it, not after an empty listing.
		fmt.Fprintf(w, "  private:      %s (no 'access: public' in their frontmatter): members see them; list_pages shows them with include_private=true\n", plural(len(p.Private), "page"))
		notes := make([]fileNote, len(p.Private))
		for i, path := range p.Private {
			notes[i] = fileNote{path: path}
		}
		listNotes(w, notes)
	}
	fmt.Fprintf(w, "  ignored:      %s (never followed)\n", plural(len(r.symlinks), "symlink"))
	listNotes(w, r.symlinks)
	fmt.Fprintf(w, "  skipped:      %s\n", plural(len(r.skipped), "file"))
	listNotes(w, r.skipped)
	// Import's workers finish in any order; sorted, two runs read alike.
	slices.SortFunc(r.failed, func(x, y fileNote) int { return strings.Compare(x.path, y.path) })
	fmt.Fprintf(w, "  failed:       %s\n", plural(len(r.failed), "file"))
	listNotes(w, r.failed)
}

// fileNote is a file a command passed over or failed on, and why (if the
// heading above it does not say).
type fileNote struct{ path, why string }

func listNotes(w io.Writer, notes []fileNote) {
	for i, n := range notes {
		switch {
		case i == maxListed:
			fmt.Fprintf(w, "    and %s more\n", group(len(notes)-maxListed))
			return
		case n.why == "":
			fmt.Fprintf(w, "    %s\n", n.path)
		default:
			fmt.Fprintf(w, "    %s: %s\n", n.path, n.why)
		}
	}
}

// fileKind is what import makes of a file it finds.
type fileKind int

const (
	pageFile       fileKind = iota // a .md file: a page
	assetFile                      // a file directly inside an assets folder
	symlinkFile                    // a symbolic link, never followed
	otherFile                      // anything else, skipped with a reason
	unreadableFile                 // a folder that could not be listed
)

// vaultFile is one entry of a vault walk.
type vaultFile struct {
	rel  string // slash-separated, relative to the vault
	abs  string
	kind fileKind
	why  string // for otherFile and unreadableFile
}

// walkVault calls fn with every file under root in lexical order, leaving out
// hidden files and folders and never following symbolic links.
func walkVault(root string, fn func(vaultFile) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p == root {
			return err
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return rerr
		}
		f := vaultFile{rel: filepath.ToSlash(rel), abs: p}
		switch {
		case strings.HasPrefix(d.Name(), "."):
			// .obsidian, .git, .DS_Store, editors' swap files: tools' state,
			// never content (and page names may not start with '.').
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case err != nil:
			f.kind, f.why = unreadableFile, err.Error()
		case d.Type()&fs.ModeSymlink != 0:
			// Following links could leave the vault or loop; a link inside
			// the vault would also import its target twice.
			f.kind = symlinkFile
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			f.kind, f.why = otherFile, "not a regular file"
		case strings.EqualFold(path.Ext(f.rel), ".md"):
			f.kind = pageFile
		case path.Base(path.Dir(f.rel)) == pages.AssetsFolder:
			f.kind = assetFile
		case strings.Contains("/"+f.rel, "/"+pages.AssetsFolder+"/"):
			f.kind, f.why = otherFile, "attachments go directly in an assets folder, not in a folder below it"
		default:
			f.kind, f.why = otherFile, "not a Markdown page (.md) and not in an assets folder"
		}
		return fn(f)
	})
}

// readFile reads a regular file of at most limit bytes.
func readFile(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, atrium.Errorf(atrium.ETooLarge, "the file is %d bytes; the limit is %d", fi.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}

// progressLine redraws one status line in place on a terminal. A nil
// *progressLine draws nothing, so callers need not check.
type progressLine struct {
	w     io.Writer
	total int
	start time.Time
	width int // of the line drawn last, to blank it out
}

// pages is Import's progress callback.
func (p *progressLine) pages(done int) {
	if p == nil {
		return
	}
	pct := 100
	if p.total > 0 {
		pct = min(100, done*100/p.total)
	}
	rate := 0
	if secs := time.Since(p.start).Seconds(); secs > 0 {
		rate = int(float64(done) / secs)
	}
	p.draw(fmt.Sprintf("  importing… %s / %s pages  %d%%  %s pages/s", group(done), group(p.total), pct, group(rate)))
}

func (p *progressLine) attachments(done, total int) {
	if p == nil {
		return
	}
	p.draw(fmt.Sprintf("  attaching… %s / %s files", group(done), group(total)))
}

func (p *progressLine) draw(line string) {
	w := utf8.RuneCountInString(line)
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", max(0, p.width-w)))
	p.width = w
}

// clear blanks the line so that the summary starts on a clean one.
func (p *progressLine) clear() {
	if p == nil || p.width == 0 {
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	p.width = 0
}

// isTerminal reports whether w is a terminal (a character device), where a
// line can be redrawn in place; a pipe or a file would collect every redraw.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// group writes n with its thousands separated by spaces: 100 000.
func group(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return group(n) + " " + noun + "s"
}

func newExportCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "export DIR",
		Short: "Write every page and attachment of the workspace to a folder",
		Long: `Write every page of the workspace to DIR/<its path>, with its exact content, and every
attachment to DIR/<its path> (Folder/assets/name), creating folders as needed.

Each file is written whole or not at all (a temporary file, then a rename). Files that
already hold the same bytes are left alone, so exporting again is cheap. Files in DIR
that are not pages are never removed. Nothing is written outside DIR, even through a
symbolic link inside it. The export of ATRIUM_WORKSPACE imports back as it was.`,
		Example: `  atrium export ./backup
  atrium export ~/Obsidian/Work && atrium --data-dir /tmp/copy import ~/Obsidian/Work`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return g.runExport(cmd.Context(), args[0])
		},
	}
}

// exportReport counts what an export wrote.
type exportReport struct {
	pagesWritten, pagesUnchanged int
	attWritten, attUnchanged     int
	failed                       []fileNote
}

func (g *globals) runExport(ctx context.Context, dir string) error {
	start := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// An os.Root resolves every path inside dir and refuses one that leaves
	// it, through ".." or a symbolic link: the confinement is the kernel's
	// openat walk, not a string check that a link could defeat.
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	a, actor, err := g.openLocal(ctx)
	if err != nil {
		return err
	}
	defer a.close()
	ctx = atrium.NewContextWithActor(ctx, actor)

	var rep exportReport
	write := func(p string, data []byte, written, unchanged *int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		changed, err := writeFileIn(root, p, data)
		switch {
		case err != nil:
			rep.failed = append(rep.failed, fileNote{p, err.Error()})
		case changed:
			*written++
		default:
			*unchanged++
		}
		return nil
	}
	err = a.docs.Export(ctx, func(p atrium.Page) error {
		return write(p.Path, []byte(p.Content), &rep.pagesWritten, &rep.pagesUnchanged)
	})
	if err == nil {
		err = a.docs.ExportAttachments(ctx, func(at atrium.Attachment, data []byte) error {
			return write(at.Path, data, &rep.attWritten, &rep.attUnchanged)
		})
	}
	w := g.stderr
	fmt.Fprintf(w, "Exported to %s in %s\n", dir, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(w, "  pages:        %s written, %s unchanged\n", group(rep.pagesWritten), group(rep.pagesUnchanged))
	fmt.Fprintf(w, "  attachments:  %s written, %s unchanged\n", group(rep.attWritten), group(rep.attUnchanged))
	fmt.Fprintf(w, "  failed:       %s\n", plural(len(rep.failed), "file"))
	listNotes(w, rep.failed)
	switch {
	case err != nil:
		return fmt.Errorf("export stopped: %w", err)
	case len(rep.failed) > 0:
		return exitError{code: 1}
	}
	return nil
}

// writeFileIn makes the file at slash-separated path p inside root hold data,
// and reports whether it had to write. Readers of the folder see the old file
// or the new one, never a part: the bytes go to a temporary file beside it,
// which is then renamed over it. There is no fsync: an export is a copy that
// running it again repairs, and syncing each of 100 000 files would make it
// many times slower.
func writeFileIn(root *os.Root, p string, data []byte) (bool, error) {
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

func newDevCmd(g *globals) *cobra.Command {
	// Hidden from the main help: these are for working on Atrium, not with it.
	cmd := &cobra.Command{Use: "dev", Short: "Tools for developing Atrium: test data for benchmarks and demos", Hidden: true}
	var (
		n    int
		seed uint64
	)
	gen := &cobra.Command{
		Use:   "gen-vault [-n N] [--seed S] DIR",
		Short: "Write a generated Markdown vault of N pages to DIR",
		Long: `Write the deterministic vault of internal/vaultgen to DIR: N pages in nested folders,
with frontmatter, headings, wikilinks, Markdown links and marker words of known
frequency. The same N and seed always write the same files.`,
		Example: `  atrium dev gen-vault -n 100000 /tmp/vault100k && time atrium --data-dir /tmp/imp import /tmp/vault100k`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 0 {
				return fmt.Errorf("-n must be 0 or more, not %d", n)
			}
			start := time.Now()
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			root, err := os.OpenRoot(args[0])
			if err != nil {
				return err
			}
			defer root.Close()
			made := map[string]bool{}
			err = vaultgen.Generate(seed, n, func(p vaultgen.Page) error {
				if err := cmd.Context().Err(); err != nil {
					return err
				}
				name := filepath.FromSlash(p.Path)
				// Pages share a few hundred folders; creating each once
				// saves a stat per page.
				if dir := filepath.Dir(name); !made[dir] {
					if err := root.MkdirAll(dir, 0o755); err != nil {
						return err
					}
					made[dir] = true
				}
				return root.WriteFile(name, []byte(p.Content), 0o644)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stderr, "Wrote %s pages (seed %d) to %s in %s\n", group(n), seed, args[0], time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	gen.Flags().IntVarP(&n, "pages", "n", 1000, "how many pages")
	gen.Flags().Uint64Var(&seed, "seed", 1, "the generator's seed")
	cmd.AddCommand(gen)
	return cmd
}
