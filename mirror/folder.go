package mirror

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/vault"
)

// --- folder → store ---

// watchTree watches the folder rel (relative; "" the root) and every folder
// below it, without following symlinks.
func (m *Mirror) watchTree(rel string) error {
	return filepath.WalkDir(m.abs(rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		r, _ := m.rel(p)
		if p != m.dir && skipped(r) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			m.report(r, "symlinks are not followed")
			return nil
		}
		if d.IsDir() {
			if err := m.watcher.Add(p); err != nil {
				return err
			}
		}
		return nil
	})
}

// watchDirOf makes sure the folder of a file the mirror wrote is watched.
func (m *Mirror) watchDirOf(rel string) error {
	dir := filepath.Dir(m.abs(rel))
	if slices.Contains(m.watcher.WatchList(), dir) {
		return nil
	}
	r, _ := m.rel(dir)
	return m.watchTree(r)
}

// noteFS records a change in the folder, to read when the folder is quiet.
func (m *Mirror) noteFS(fe fsnotify.Event) {
	rel, ok := m.rel(fe.Name)
	if !ok {
		return
	}
	if skipped(rel) {
		if hiddenPage(rel) && !fe.Has(fsnotify.Remove) && !fe.Has(fsnotify.Rename) {
			m.report(rel, hiddenWhy)
		}
		return
	}
	if fe.Has(fsnotify.Create) {
		if fi, err := os.Lstat(fe.Name); err == nil && fi.IsDir() {
			// A new folder (maybe moved in whole): watch it and read what it holds.
			if err := m.watchTree(rel); err != nil {
				m.log.Warn("watch new folder", "path", rel, "err", err)
			}
			filepath.WalkDir(fe.Name, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if r, ok := m.rel(p); ok && !skipped(r) {
						m.pending[r] = true
					}
				}
				return nil
			})
			return
		}
	}
	if fe.Has(fsnotify.Remove) || fe.Has(fsnotify.Rename) {
		// A folder that went away takes its files with it.
		prefix := store.PathKey(rel) + "/"
		for key, st := range m.states {
			if strings.HasPrefix(key, prefix) {
				m.pending[st.Path] = true
			}
		}
	}
	m.pending[rel] = true
}

// emptyGrace is how long a file found empty, whose page is not (or that has
// no page yet), is given to be written: an editor that saves in place (and
// os.WriteFile) empties or creates the file first, and one descheduled
// between the two under load leaves it empty past the debounce. Taken then,
// the empty save would be a revision, or, when another writer's revision
// comes in between, a conflict that is none.
const emptyGrace = 500 * time.Millisecond

var emptyHash = hashBytes(nil)

// flush reads the changed files and brings their changes to the store. It
// reports whether some are held (empty, maybe mid-save) to read again after
// emptyGrace.
func (m *Mirror) flush() (held bool) {
	changed := map[string][]byte{}
	var removed, again []string
	for rel := range m.pending {
		fi, err := os.Lstat(m.abs(rel))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			delete(m.held, rel)
			removed = append(removed, rel)
		case err != nil:
			m.log.Warn("read folder", "path", rel, "err", err)
		case fi.Mode()&fs.ModeSymlink != 0:
			m.report(rel, "symlinks are not followed")
		case fi.Mode().IsRegular():
			if st, ok := m.state(rel); fi.Size() == 0 && !(ok && st.Hash == emptyHash) && !m.held[rel] {
				m.held[rel] = true
				again = append(again, rel)
				continue
			}
			delete(m.held, rel)
			if b, ok, err := m.readFile(rel); ok && err == nil {
				changed[rel] = b
			}
		}
	}
	clear(m.pending)
	for _, rel := range again {
		m.pending[rel] = true
	}
	slices.Sort(removed)

	// A file that disappeared while another with its last synced content
	// appeared was moved: move the page, so that links follow.
	for i, from := range removed {
		st, ok := m.state(from)
		if !ok || !isPage(from) || st.Revision == 0 {
			continue
		}
		for to, b := range changed {
			if _, known := m.state(to); !known && isPage(to) && hashBytes(b) == st.Hash {
				if m.movedInFolder(from, to) {
					removed[i] = ""
					delete(changed, to)
				}
				break
			}
		}
	}
	for _, rel := range removed {
		if rel != "" {
			m.removedInFolder(rel)
		}
	}
	paths := make([]string, 0, len(changed))
	for rel := range changed {
		paths = append(paths, rel)
	}
	slices.Sort(paths) // pages before their assets folders' files, in order
	for _, rel := range paths {
		if isPage(rel) {
			m.pageFromFile(rel, changed[rel])
		}
	}
	for _, rel := range paths {
		if !isPage(rel) {
			m.attachmentFromFile(rel, changed[rel])
		}
	}
	return len(again) > 0
}

// movedInFolder makes a file moved in the folder a page move. The file at to
// holds what the mirror last synced at from, so that sync state moves with
// it: when the store rewrites the page's relative links on the move, the
// move's event then writes the new text over content the mirror knows, as
// an update, not over a save it has not read (a conflict copy).
func (m *Mirror) movedInFolder(from, to string) bool {
	st, _ := m.state(from)
	res, err := m.cfg.Services.Pages.MovePage(m.ctx, from, to)
	if err != nil {
		m.log.Warn("move in the folder could not become a page move; treating it as a delete and a new file", "from", from, "to", to, "err", atrium.ErrorMessage(err))
		return false
	}
	m.forget(from)
	st.Path = to
	if store.PathKey(res.NewPath) == store.PathKey(to) {
		st.Path = res.NewPath
	}
	m.setState(st)
	m.log.Info("page moved in the folder", "from", from, "to", res.NewPath, "pages_changed", res.PagesChanged)
	// The move's event writes the file back if link rewriting changed it.
	return true
}

// removedInFolder deletes the page (or attachment) of a removed file, unless
// the store changed it since the file was written: then the store wins and
// the file comes back. Deleting goes through the service like any delete.
func (m *Mirror) removedInFolder(rel string) {
	st, ok := m.state(rel)
	if !ok {
		return // never synced: nothing to delete
	}
	if !isPage(rel) {
		if err := m.cfg.Services.Pages.DeleteAttachment(m.ctx, rel); err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
			m.log.Warn("delete attachment", "path", rel, "err", err)
		}
		m.forget(rel)
		return
	}
	r, err := m.cfg.Services.Pages.ReadPage(m.ctx, pages.ReadRequest{Path: rel})
	switch {
	case atrium.ErrorCode(err) == atrium.ENotFound:
		m.forget(rel)
	case err != nil:
		m.log.Warn("read page", "path", rel, "err", err)
	case r.Page.Revision != st.Revision:
		m.log.Warn("a file was deleted but its page changed in the store since; the store wins and the file is written again", "path", rel)
		m.forget(rel)
		m.writePage(r.Page)
	default:
		if _, err := m.cfg.Services.Pages.DeletePage(m.ctx, rel); err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
			m.log.Warn("delete page", "path", rel, "err", err)
			return
		}
		m.forget(rel)
	}
}

// pageFromFile writes a file's content to its page, based on the revision
// the file was last synced at. A save made from an older base than the
// store's is a conflict: the store's version is written back to the file and
// the save is kept beside it.
func (m *Mirror) pageFromFile(rel string, b []byte) {
	hash := hashBytes(b)
	st, synced := m.state(rel)
	if synced && st.Hash == hash {
		return // the mirror's own write, or no change
	}
	if _, err := pages.NormalizePath(rel); err != nil {
		m.report(rel, atrium.ErrorMessage(err))
		return
	}
	r, err := m.cfg.Services.Pages.ReadPage(m.ctx, pages.ReadRequest{Path: rel})
	switch {
	case atrium.ErrorCode(err) == atrium.ENotFound:
		res, err := m.cfg.Services.Pages.WritePage(m.ctx, pages.WriteRequest{Path: rel, Content: string(b)})
		if err != nil {
			m.report(rel, atrium.ErrorMessage(err))
			return
		}
		m.adopt(rel, res.Page)
		return
	case err != nil:
		m.log.Warn("read page", "path", rel, "err", err)
		return
	}
	if r.Page.ContentHash == hash {
		m.adopt(rel, r.Page)
		return
	}
	// A file never synced that meets an existing page, a store that moved on
	// since the file was synced, or a save that shows it was made from an
	// older version than the one the mirror last wrote: all conflicts.
	meant := m.keptHash[store.PathKey(rel)] == hash
	if !synced || st.Revision != r.Page.Revision || !meant && m.staleSave(st, r.Page, b) {
		m.lostToStore(rel, r.Page)
		return
	}
	delete(m.keptHash, store.PathKey(rel))
	res, err := m.cfg.Services.Pages.WritePage(m.ctx, pages.WriteRequest{Path: r.Page.Path, Content: string(b), BaseRevision: st.Revision})
	switch {
	case err == nil:
		m.adopt(rel, res.Page)
	case atrium.ErrorCode(err) == atrium.EConflict:
		if r, err := m.cfg.Services.Pages.ReadPage(m.ctx, pages.ReadRequest{Path: rel}); err == nil {
			m.lostToStore(rel, r.Page)
		}
	default:
		m.report(rel, atrium.ErrorMessage(err))
	}
}

// lostToStore writes the store's page over a file save that lost to it: the
// save is not what the mirror last synced, so replaceFile keeps it as a
// conflict copy.
func (m *Mirror) lostToStore(rel string, p atrium.Page) {
	if rel != p.Path { // the file spells the path in another case
		m.forget(rel)
	}
	m.writePage(p)
}

// adopt records a page as synced with the file at rel, read from it, whose
// spelling of the path may differ in case only.
func (m *Mirror) adopt(rel string, p atrium.Page) {
	m.setState(pages.SyncState{Path: p.Path, Hash: p.ContentHash, Revision: p.Revision, Read: p.Revision})
	if rel != p.Path && store.PathKey(rel) != store.PathKey(p.Path) {
		m.forget(rel)
	}
}

func (m *Mirror) attachmentFromFile(rel string, b []byte) {
	// The folder's files are read by the vault's rules, as import reads
	// them: an attachment may live anywhere.
	if kind, why := (vault.Options{}).Classify(rel); kind != vault.Attachment {
		m.report(rel, why)
		return
	}
	hash := hashBytes(b)
	if st, ok := m.state(rel); ok && st.Hash == hash {
		return
	}
	att, _, err := m.cfg.Services.Pages.AttachFile(m.ctx, rel, b)
	if err != nil {
		m.report(rel, atrium.ErrorMessage(err))
		return
	}
	m.setState(pages.SyncState{Path: att.Path, Hash: att.SHA256})
}
