// Package vault reads and writes a folder of Markdown files, such as an
// Obsidian vault: which files are pages, which are attachments, which are
// passed over and why. Import and export of a whole folder live here, over
// the pages service, so that the command line, the mirror and the web UI
// read a vault by one set of rules. It never follows a symbolic link, never
// opens a file that is not a regular file, and never writes outside the
// folder it was given.
package vault

import (
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium"
)

// Kind is what a vault makes of a file.
type Kind int

const (
	Page       Kind = iota // a Markdown file of a page extension
	Attachment             // any other regular file, wherever it is: Obsidian keeps images anywhere
	Symlink                // a symbolic link, never followed
	Skipped                // passed over, with a reason
	Unreadable             // a folder that could not be listed
)

// An Entry is one file of a vault walk.
type Entry struct {
	Rel  string // slash-separated, relative to the vault
	Abs  string
	Kind Kind
	Why  string // for Skipped and Unreadable
}

// Options say how to read a vault; the zero value reads .md files as pages.
type Options struct {
	// Extensions are the file extensions read as pages besides .md
	// (".mdx", "markdown"; the dot is optional, case does not matter).
	Extensions []string
}

// markdownFlavours are extensions of Markdown dialects that are pages only
// when asked for: an .mdx page holds JSX that a plain Markdown reader shows
// as text, so taking them silently (or storing them as attachments) would
// surprise. Without the option, they are skipped and the summary says how.
var markdownFlavours = []string{".mdx", ".markdown", ".mdown", ".mkd", ".mkdn", ".qmd", ".rmd"}

func (o Options) exts() []string {
	out := []string{".md"}
	for _, e := range o.Extensions {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		out = append(out, e)
	}
	return out
}

// Classify says what the file at slash-separated path rel is, by its name
// alone: a page, an attachment, or skipped (with the reason). Hidden files
// are not asked about: walks leave them out.
func (o Options) Classify(rel string) (Kind, string) {
	ext := strings.ToLower(path.Ext(rel))
	if slices.Contains(o.exts(), ext) {
		return Page, ""
	}
	if slices.Contains(markdownFlavours, ext) {
		return Skipped, "a Markdown page of another flavour (" + ext + "): import it with --ext " + ext
	}
	return Attachment, ""
}

// PagePath is the page path of a page file: the file's path, with another
// Markdown extension (.mdx) read as .md, since every page is a .md file.
func PagePath(rel string) string {
	ext := path.Ext(rel)
	if strings.EqualFold(ext, ".md") {
		return rel
	}
	return strings.TrimSuffix(rel, ext) + ".md"
}

// IsHidden reports whether a slash-separated path has a segment starting with
// '.': .obsidian, .git, .DS_Store, editors' swap files, the mirror's
// temporary files. Tools' state, never content; page names may not start
// with '.' either.
func IsHidden(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return false
}

// Walk calls fn with every file under root in lexical order, leaving out
// hidden files and folders and never following symbolic links.
func Walk(root string, o Options, fn func(Entry) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if p == root {
			return err
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil {
			return rerr
		}
		e := Entry{Rel: filepath.ToSlash(rel), Abs: p}
		switch {
		case strings.HasPrefix(d.Name(), "."):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case err != nil:
			e.Kind, e.Why = Unreadable, err.Error()
		case d.Type()&fs.ModeSymlink != 0:
			// Following links could leave the vault or loop; a link inside
			// the vault would also import its target twice.
			e.Kind = Symlink
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			e.Kind, e.Why = Skipped, "not a regular file"
		default:
			e.Kind, e.Why = o.Classify(e.Rel)
		}
		return fn(e)
	})
}

// ReadFile reads a regular file of at most limit bytes. A file that is not
// regular (a FIFO put in place since the walk) is refused before it is
// opened, where opening could block.
func ReadFile(name string, limit int64) ([]byte, error) {
	if fi, err := os.Lstat(name); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, atrium.Errorf(atrium.EInvalid, "not a regular file")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, atrium.Errorf(atrium.EInvalid, "not a regular file")
	}
	if fi.Size() > limit {
		return nil, atrium.Errorf(atrium.ETooLarge, "the file is %d bytes; the limit is %d", fi.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}
