// Package mirror keeps a folder of Markdown files and a workspace's pages in
// step, both ways. A write through any surface lands in the folder
// atomically; an edit, new file, move or deletion in the folder (an editor,
// git pull) reaches the store through the pages service like any other write.
//
// The store is the truth, and no file content the mirror has not read is
// ever written over or removed (see replaceFile). A save made from an older
// revision than the store's is a conflict: the store's version stays, the
// file's is kept beside it as NAME.conflict-<time>[-N].md under a name of its
// own, and the conflict is reported. The mirror never follows a symlink and
// never writes outside its folder.
package mirror

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
	"github.com/atrium-hq/atrium/services"
	"github.com/atrium-hq/atrium/store"
)

// Origin marks the writes the mirror makes, so that their events are known.
const Origin = "mirror"

// Config configures a mirror.
type Config struct {
	Dir string
	// Services are what the mirror writes through, and whose events (all
	// workspaces: the mirror keeps its own) it follows.
	Services *services.Services
	Actor    *atrium.Actor // who the folder's edits are written as
	// Debounce is how long the folder must be quiet before its changes are
	// read: editors save in several steps. Default 100ms.
	Debounce time.Duration
	Now      func() time.Time
}

// Conflict is one file edit that lost to the store.
type Conflict struct {
	Path string // the page
	Kept string // where the folder's version was kept
	At   time.Time
}

// Mirror is a running folder mirror.
type Mirror struct {
	cfg    Config
	dir    string // absolute, symlinks resolved
	ctx    context.Context
	cancel context.CancelFunc
	log    *slog.Logger
	ws     int64

	lock    *os.File // held while the mirror runs (see LockName)
	watcher *fsnotify.Watcher
	events  <-chan atrium.Event
	stopEv  func()
	done    chan struct{}

	states map[string]pages.SyncState // by path key
	// keptHash is, by path key, the content last kept as a conflict copy:
	// saving exactly that again is taken as meant, not as a stale save.
	keptHash map[string]string
	pending  map[string]bool // changed paths, relative, slash-separated
	// held are files found empty whose page is not, read again later: an
	// editor that saves in place empties (or creates) the file before it
	// writes.
	held    map[string]bool
	ignored map[string]bool // reported once

	mu        sync.Mutex
	conflicts []Conflict
	ready     chan struct{} // closed after the first reconcile
}

// Start reconciles the folder and the store, then keeps them in step until
// Close. The folder is created if missing.
func Start(ctx context.Context, cfg Config) (*Mirror, error) {
	if cfg.Debounce <= 0 {
		cfg.Debounce = 100 * time.Millisecond
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("mirror folder: %w", err)
	}
	abs, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, err
	}
	lock, err := lockFolder(abs)
	if err != nil {
		return nil, err
	}
	m := &Mirror{cfg: cfg, dir: abs, lock: lock, log: cfg.Services.Log.With("mirror", abs), ws: cfg.Actor.Workspace.ID,
		keptHash: map[string]string{}, pending: map[string]bool{}, held: map[string]bool{}, ignored: map[string]bool{}, done: make(chan struct{}), ready: make(chan struct{})}
	m.ctx, m.cancel = context.WithCancel(pages.WithOrigin(atrium.NewContextWithActor(context.WithoutCancel(ctx), cfg.Actor), Origin))
	// Subscribe before reconciling, so that no write in between is missed.
	m.events, m.stopEv = cfg.Services.Events()
	if m.watcher, err = fsnotify.NewWatcher(); err != nil {
		m.stopEv()
		return nil, err
	}
	if m.states, err = cfg.Services.Pages.MirrorStates(m.ctx, m.dir); err != nil {
		m.close()
		return nil, err
	}
	if err := m.watchTree(""); err != nil {
		m.close()
		return nil, err
	}
	if err := m.reconcile(); err != nil {
		m.close()
		return nil, err
	}
	close(m.ready)
	go m.run()
	return m, nil
}

// Dir is the mirror's folder, absolute.
func (m *Mirror) Dir() string { return m.dir }

// Conflicts lists the conflicts since start.
func (m *Mirror) Conflicts() []Conflict {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Conflict(nil), m.conflicts...)
}

// Close stops the mirror.
func (m *Mirror) Close() error {
	m.cancel()
	<-m.done
	return nil
}

func (m *Mirror) close() {
	m.cancel()
	if m.stopEv != nil {
		m.stopEv()
	}
	if m.watcher != nil {
		m.watcher.Close()
	}
	m.lock.Close() // releases the lock
}

func (m *Mirror) run() {
	defer close(m.done)
	defer m.close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case ev, ok := <-m.events:
			if !ok {
				return
			}
			if ev.WorkspaceID == m.ws {
				m.fromStore(ev)
			}
		case fe, ok := <-m.watcher.Events:
			if !ok {
				return
			}
			m.noteFS(fe)
			timer.Reset(m.cfg.Debounce)
		case err, ok := <-m.watcher.Errors:
			if !ok {
				return
			}
			m.log.Warn("watching the folder", "err", err)
		case <-timer.C:
			if m.flush() {
				timer.Reset(max(m.cfg.Debounce, emptyGrace))
			}
		}
	}
}

// --- paths and files ---

// rel turns an absolute path inside the folder into a slash-separated relative one.
func (m *Mirror) rel(abs string) (string, bool) {
	r, err := filepath.Rel(m.dir, abs)
	if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func (m *Mirror) abs(rel string) string { return filepath.Join(m.dir, filepath.FromSlash(rel)) }

// skipped reports whether a path is none of the mirror's business: hidden
// files and folders (.git, .obsidian, our own temporary files) and the
// conflict copies the mirror itself leaves.
func skipped(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if strings.HasPrefix(seg, ".") {
			return true
		}
	}
	return strings.Contains(path.Base(rel), ".conflict-")
}

func isPage(rel string) bool { return strings.EqualFold(path.Ext(rel), ".md") }

func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// safeTarget checks that writing rel stays inside the folder: no component
// of its path may be a symlink (which could lead out).
func (m *Mirror) safeTarget(rel string) error {
	cur := m.dir
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symlink; the mirror never writes through one", strings.Join(parts[:i+1], "/"))
		}
	}
	return nil
}

// replaceFile puts data at rel (nil: removes the file), but never over
// content the mirror has not accounted for. expect is the hash of what the
// mirror last wrote or read there ("" when it knows of none): that content is
// in the store's history already. Anything else found there is a save the
// mirror has not read — made from an older base, since the store has moved
// on — and is kept as a conflict copy.
//
// A file cannot be compared and swapped in one step, so the new content is
// written to a temporary file beside it, synced, and exchanged with the
// current file in one step: the path always exists (an editor or a watcher
// never sees the file vanish), and whatever an editor saved there before
// that moment is in hand under the temporary name, to be judged. A path with
// no file yet gets the new one by a hard link, which fails rather than
// replaces when an editor saved a new file in between: that save stays, and
// the watcher brings it in. Where no exchange exists (see exchange) the
// current file is moved aside first, then the new one linked in, with the
// same guarantees and a moment without the file. It reports whether data
// was written.
func (m *Mirror) replaceFile(rel string, data []byte, expect string) (bool, error) {
	if err := m.safeTarget(rel); err != nil {
		return false, err
	}
	target := m.abs(rel)
	dir := filepath.Dir(target)
	var tmp string
	if data != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, err
		}
		if err := m.safeTarget(rel); err != nil { // a folder made meanwhile
			return false, err
		}
		var err error
		if tmp, err = writeTemp(dir, data); err != nil {
			return false, err
		}
	}
	if fi, err := os.Lstat(target); err == nil && !fi.Mode().IsRegular() {
		if tmp != "" {
			os.Remove(tmp)
		}
		return false, fmt.Errorf("%s is not a regular file; the mirror leaves it alone", rel)
	}
	if data != nil {
		switch err := exchange(tmp, target); {
		case err == nil:
			// tmp now holds what was at the path.
			m.judge(rel, tmp, expect, data)
			return true, m.watchDirOf(rel)
		case errors.Is(err, fs.ErrNotExist): // no file yet: linked in below
		case errors.Is(err, errNoExchange):
		default:
			os.Remove(tmp)
			return false, err
		}
		defer os.Remove(tmp)
	}
	aside := filepath.Join(dir, ".atrium-"+strings.ToLower(rand.Text()[:10])+".aside")
	switch err := os.Rename(target, aside); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return false, err
	default:
		m.judge(rel, aside, expect, data)
	}
	if data == nil {
		return false, nil
	}
	written, err := linkNew(tmp, target)
	if err != nil || !written {
		return false, err
	}
	return true, m.watchDirOf(rel)
}

// errNoExchange says that two names cannot be swapped in one step here.
var errNoExchange = errors.New("no atomic exchange on this system")

// judge removes old, a file taken from rel's path (under a hidden name),
// when it holds what the mirror accounted for (expect) or what replaces it
// (data); anything else is a save the mirror has not read, kept as a
// conflict copy.
func (m *Mirror) judge(rel, old, expect string, data []byte) {
	b, err := os.ReadFile(old)
	if h := hashBytes(b); err == nil && (h == expect || data != nil && h == hashBytes(data)) {
		os.Remove(old)
		return
	}
	m.keep(rel, old)
}

// writeTemp writes data to a new hidden file in dir, synced to disk.
func writeTemp(dir string, data []byte) (string, error) {
	tmp := filepath.Join(dir, ".atrium-"+strings.ToLower(rand.Text()[:10])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// linkNew gives the file at from the name to, unless to exists: false then.
// A hard link never replaces; on a file system without hard links a rename
// after a check is the fallback, which leaves a moment's race.
func linkNew(from, to string) (bool, error) {
	err := os.Link(from, to)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrExist):
		return false, nil
	}
	if _, serr := os.Lstat(to); serr == nil {
		return false, nil
	}
	if err := os.Rename(from, to); err != nil {
		return false, err
	}
	return true, nil
}

// keep gives the file at from (a hidden name in rel's folder) a conflict
// copy's name beside rel: a name of its own, never one already taken, so
// that no conflict copy ever replaces another.
func (m *Mirror) keep(rel, from string) {
	now := m.cfg.Now()
	stem := strings.TrimSuffix(rel, path.Ext(rel)) + ".conflict-" + now.UTC().Format("20060102T150405Z")
	for n := 1; n <= 1000; n++ {
		kept := stem + path.Ext(rel)
		if n > 1 {
			kept = fmt.Sprintf("%s-%d%s", stem, n, path.Ext(rel))
		}
		ok, err := linkNew(from, m.abs(kept))
		if err != nil {
			break
		}
		if !ok {
			continue
		}
		os.Remove(from)
		if b, err := os.ReadFile(m.abs(kept)); err == nil {
			m.keptHash[store.PathKey(rel)] = hashBytes(b)
		}
		m.mu.Lock()
		m.conflicts = append(m.conflicts, Conflict{Path: rel, Kept: kept, At: now})
		m.mu.Unlock()
		m.log.Warn("conflict: the file was saved from an older version than the store's; the store's version stays, the file's is kept beside it", "path", rel, "kept_as", kept)
		ctx, cancel := m.recordContext()
		defer cancel()
		if err := m.cfg.Services.Pages.RecordMirrorConflict(ctx, rel, kept); err != nil {
			m.log.Warn("record conflict", "err", err)
		}
		return
	}
	m.log.Error("could not name a conflict copy; the folder's version stays in a hidden file", "path", rel, "file", from)
}

// readFile reads rel if it is a regular file (not a symlink).
func (m *Mirror) readFile(rel string) ([]byte, bool, error) {
	fi, err := os.Lstat(m.abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, nil
	}
	b, err := os.ReadFile(m.abs(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return b, err == nil, err
}

// removeFile removes the file at rel unless it holds content the mirror has
// not accounted for (kept as a conflict copy instead), then the folders the
// removal emptied, up to the mirror's root.
func (m *Mirror) removeFile(rel, expect string) {
	if _, err := m.replaceFile(rel, nil, expect); err != nil {
		m.log.Warn("remove file", "path", rel, "err", err)
		return
	}
	for dir := path.Dir(rel); dir != "." && dir != ""; dir = path.Dir(dir) {
		if os.Remove(m.abs(dir)) != nil {
			break
		}
	}
}

// setState records what the file at rel holds: st.Hash "" forgets it.
func (m *Mirror) setState(st pages.SyncState) {
	key := store.PathKey(st.Path)
	if cur, ok := m.states[key]; ok && cur == st || !ok && st.Hash == "" {
		return
	}
	ctx, cancel := m.recordContext()
	defer cancel()
	if err := m.cfg.Services.Pages.SetMirrorState(ctx, m.dir, st); err != nil {
		m.log.Warn("record sync state", "path", st.Path, "err", err)
		return
	}
	if st.Hash == "" {
		delete(m.states, key)
	} else {
		m.states[key] = st
	}
}

// recordContext is for writing down what the folder now holds. The file is
// already there, so a Close that arrives meanwhile must not skip the record:
// a file the mirror wrote but did not note would look new at the next start,
// and a delete made while the mirror was away would then not be taken.
func (m *Mirror) recordContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(m.ctx), 10*time.Second)
}

func (m *Mirror) forget(rel string) { m.setState(pages.SyncState{Path: rel}) }

func (m *Mirror) state(rel string) (pages.SyncState, bool) {
	st, ok := m.states[store.PathKey(rel)]
	return st, ok
}

// report says once that a file is left alone, and why: in the log, and in
// the event log, where the activity feed and the browser's "needs
// attention" list show it to people.
func (m *Mirror) report(rel, why string) {
	if m.ignored[rel+why] {
		return
	}
	m.ignored[rel+why] = true
	m.log.Warn("mirror ignores a file", "path", rel, "why", why)
	ctx, cancel := m.recordContext()
	defer cancel()
	if err := m.cfg.Services.Pages.RecordMirrorSkipped(ctx, rel, why); err != nil {
		m.log.Warn("record skipped file", "err", err)
	}
}

// hiddenPage reports whether rel is a page file someone may expect synced
// but whose name starts with a dot: not one inside a hidden folder (.git,
// .obsidian), nor an editor's or the system's own (.#lock, ._fork), nor the
// mirror's temporary files.
func hiddenPage(rel string) bool {
	dir, base := path.Split(rel)
	if !isPage(rel) || !strings.HasPrefix(base, ".") || skipped(strings.TrimSuffix(dir, "/")) && dir != "" {
		return false
	}
	return !strings.HasPrefix(base, ".#") && !strings.HasPrefix(base, "._") && !strings.HasPrefix(base, ".atrium-")
}

const hiddenWhy = "hidden files (names starting with a dot) are not synced; rename it without the dot to make it a page"

// --- store → folder ---

type pageEvent struct {
	Path        string   `json:"path"`
	From        string   `json:"from"`
	Attachments []string `json:"attachments"`
}

func (m *Mirror) fromStore(ev atrium.Event) {
	var p pageEvent
	if json.Unmarshal(ev.Payload, &p) != nil || p.Path == "" {
		return
	}
	switch ev.Kind {
	case pages.EventPageCreated, pages.EventPageUpdated:
		m.pageToFile(p.Path)
	case pages.EventPageMoved:
		m.movedInStore(p.From)
		m.pageToFile(p.Path)
	case pages.EventPageDeleted:
		m.deletedInStore(p.Path)
		for _, a := range p.Attachments {
			m.deletedInStore(a)
		}
	case pages.EventPageRestored:
		m.pageToFile(p.Path)
		for _, a := range p.Attachments {
			m.attachmentToFile(a)
		}
	case pages.EventAttachmentAdded:
		m.attachmentToFile(p.Path)
	case pages.EventAttachmentMoved:
		m.attachmentToFile(p.Path)
		m.movedInStore(p.From)
	case pages.EventAttachmentDeleted:
		m.deletedInStore(p.Path)
	}
}

// movedInStore removes the file at a page's or attachment's old path.
func (m *Mirror) movedInStore(from string) {
	if st, ok := m.state(from); ok {
		m.removeFile(from, st.Hash)
		m.forget(from)
	}
}

// pageToFile writes a page's current content to its file. A save in the
// folder the mirror has not read yet is kept as a conflict copy.
func (m *Mirror) pageToFile(rel string) {
	r, err := m.cfg.Services.Pages.ReadPage(m.ctx, pages.ReadRequest{Path: rel})
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return // deleted since; its own event follows
	}
	if err != nil {
		m.log.Warn("read page for the folder", "path", rel, "err", err)
		return
	}
	p := r.Page
	st, synced := m.state(p.Path)
	if synced && st.Revision == p.Revision && st.Hash == p.ContentHash {
		// The file has had this revision (or it came from the file: the echo
		// of the mirror's own write). A newer save in the folder is on its
		// way to the store through the watcher.
		return
	}
	if cur, ok, _ := m.readFile(p.Path); ok && hashBytes(cur) == p.ContentHash {
		m.setState(pages.SyncState{Path: p.Path, Hash: p.ContentHash, Revision: p.Revision, Read: p.Revision})
		return
	}
	m.writePage(p)
}

// writePage writes a page's content to its file over what the mirror last
// synced there, and records it.
func (m *Mirror) writePage(p atrium.Page) {
	st, _ := m.state(p.Path)
	written, err := m.replaceFile(p.Path, []byte(p.Content), st.Hash)
	if err != nil {
		m.report(p.Path, err.Error())
		return
	}
	if written {
		// The file now holds the store's content, not one read from it:
		// Read stays, the base an editor may still hold. A file the mirror
		// wrote afresh has no older text any editor could hold.
		read := st.Read
		if st.Hash == "" {
			read = p.Revision
		}
		m.setState(pages.SyncState{Path: p.Path, Hash: p.ContentHash, Revision: p.Revision, Read: read})
	}
}

func (m *Mirror) attachmentToFile(rel string) {
	att, data, err := m.cfg.Services.Pages.Attachment(m.ctx, rel)
	if err != nil {
		return
	}
	if cur, ok, _ := m.readFile(att.Path); ok && hashBytes(cur) == att.SHA256 {
		m.setState(pages.SyncState{Path: att.Path, Hash: att.SHA256})
		return
	}
	st, _ := m.state(att.Path)
	written, err := m.replaceFile(att.Path, data, st.Hash)
	if err != nil {
		m.report(att.Path, err.Error())
		return
	}
	if written {
		m.setState(pages.SyncState{Path: att.Path, Hash: att.SHA256})
	}
}

// deletedInStore removes the file of a page or attachment the store no longer
// has; a save the mirror has not read is kept as a conflict copy.
func (m *Mirror) deletedInStore(rel string) {
	st, _ := m.state(rel)
	m.removeFile(rel, st.Hash)
	m.forget(rel)
}
