package mirror

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/vault"
)

// reconcile brings the folder and the store together at start, by content
// hash against the last synced state of each file, as the running mirror
// would have had it seen each change:
//
//   - same content: in step;
//   - only the store changed since the last sync: the file is rewritten;
//   - only the file changed: the page is written from it (a stale save is a
//     conflict, as while running);
//   - both changed, or they differ with no sync on record: the store wins and
//     the file's version is kept as a conflict copy;
//   - a file the mirror wrote that is gone deletes its page, through the
//     service like any delete, unless the store changed the page since;
//   - a page the mirror never wrote to this folder gets its file; a new file
//     its page;
//   - a file synced before whose page is gone is removed, unless it was edited
//     since (then it makes the page again).
//
// A folder that holds none of the files the mirror wrote to it (a new
// folder at the same place, one unmounted or swapped) is a new folder: every
// page is written out, never taken for deleted.
func (m *Mirror) reconcile() error {
	files := map[string]string{} // path key -> path, of .md and asset files present
	err := filepath.WalkDir(m.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, ok := m.rel(p)
		if !ok {
			return nil
		}
		if skipped(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			if hiddenPage(rel) {
				m.report(rel, hiddenWhy)
			}
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			m.report(rel, "symlinks are not followed")
		case d.Type().IsRegular():
			files[store.PathKey(rel)] = rel
		}
		return nil
	})
	if err != nil {
		return err
	}
	present := 0
	for key := range m.states {
		if _, ok := files[key]; ok {
			present++
		}
	}
	if present == 0 && len(m.states) > 0 {
		m.log.Warn("the mirror folder holds none of the files written to it before; taking it for a new folder and writing every page out", "files_on_record", len(m.states))
		for _, st := range m.states {
			m.forget(st.Path)
		}
	}
	seen := map[string]bool{}
	err = m.cfg.Services.Pages.Export(m.ctx, func(p atrium.Page) error {
		key := store.PathKey(p.Path)
		seen[key] = true
		rel, exists := files[key]
		if !exists {
			rel = p.Path
		}
		b, ok, err := m.readFile(rel)
		if err != nil {
			return err
		}
		st, synced := m.state(rel)
		switch fileHash := hashBytes(b); {
		case !ok && synced && p.Revision == st.Revision:
			m.log.Info("a page's file was deleted while the mirror was away; deleting the page", "path", p.Path)
			if _, err := m.cfg.Services.Pages.DeletePage(m.ctx, p.Path); err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
				return err
			}
			m.forget(rel)
		case !ok:
			m.forget(rel) // written afresh: nothing of the file is left to keep
			m.writePage(p)
		case fileHash == p.ContentHash:
			if !synced || st.Hash != fileHash || st.Revision != p.Revision {
				m.adopt(rel, p)
			}
		case synced && fileHash == st.Hash:
			m.writePage(p) // only the store changed
		case synced && p.ContentHash == st.Hash:
			m.pageFromFile(rel, b) // only the file changed
		default:
			// Both changed: the file's version is kept as a conflict copy.
			m.lostToStore(rel, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = m.cfg.Services.Pages.ExportAttachments(m.ctx, func(a atrium.Attachment, data []byte) error {
		key := store.PathKey(a.Path)
		seen[key] = true
		b, ok, err := m.readFile(a.Path)
		if err != nil {
			return err
		}
		st, synced := m.state(a.Path)
		switch fileHash := hashBytes(b); {
		case !ok && synced && st.Hash == a.SHA256:
			if err := m.cfg.Services.Pages.DeleteAttachment(m.ctx, a.Path); err != nil && atrium.ErrorCode(err) != atrium.ENotFound {
				return err
			}
			m.forget(a.Path)
		case ok && fileHash == a.SHA256:
			m.setState(pages.SyncState{Path: a.Path, Hash: a.SHA256})
		case ok && synced && st.Hash != fileHash && st.Hash == a.SHA256:
			m.attachmentFromFile(a.Path, b) // the file changed
		default:
			m.attachmentToFile(a.Path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Files without a page or attachment: new ones come in; ones synced before
	// (their page was deleted while the mirror was away) go, unless edited.
	rest := make([]string, 0, len(files))
	for key, rel := range files {
		if !seen[key] {
			rest = append(rest, rel)
		}
	}
	slices.Sort(rest)
	for _, pass := range []bool{true, false} { // pages first, so attachments find them
		for _, rel := range rest {
			if isPage(rel) != pass {
				continue
			}
			b, ok, err := m.readFile(rel)
			if err != nil || !ok {
				continue
			}
			if st, synced := m.state(rel); synced && st.Hash == hashBytes(b) {
				m.removeFile(rel, st.Hash)
				m.forget(rel)
				continue
			}
			if isPage(rel) {
				m.forget(rel)
				m.pageFromFile(rel, b)
			} else if kind, _ := (vault.Options{}).Classify(rel); kind == vault.Attachment {
				m.attachmentFromFile(rel, b)
			}
		}
	}
	return nil
}
