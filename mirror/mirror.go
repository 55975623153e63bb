// Package mirror keeps a folder of Markdown files and a workspace's pages in
// step, both ways. A write through any surface lands in the folder (atomically,
// by rename); an edit, new file, move or deletion in the folder (an editor,
// git pull) reaches the store through the docs service like any other write.
//
// The store is the truth. A file edited from an older revision than the
// store's is a conflict: the store's version stays, the file's is kept beside
// it as NAME.conflict-<time>.md, and the conflict is reported — nothing is
// lost. The mirror never follows a symlink and never writes outside its folder.
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
	"github.com/atrium-hq/atrium/docs"
	"github.com/atrium-hq/atrium/store"
)

// Origin marks the writes the mirror makes, so that their events are known.
const Origin = "mirror"

// Config configures a mirror.
type Config struct {
	Dir   string
	Docs  *docs.Service
	Actor *atrium.Actor // who the folder's edits are written as
	// Events subscribes to the store's events (all workspaces; the mirror
	// keeps its own).
	Events func() (<-chan atrium.Event, func())
	Logger *slog.Logger
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

	watcher *fsnotify.Watcher
	events  <-chan atrium.Event
	stopEv  func()
	done    chan struct{}

	states  map[string]docs.SyncState // by path key
	pending map[string]bool           // changed paths, relative, slash-separated
	ignored map[string]bool           // reported once

	mu        sync.Mutex
	conflicts []Conflict
	ready     chan struct{} // closed after the first reconcile
}

// Start reconciles the folder and the store, then keeps them in step until
// Close. The folder is created if missing.
func Start(ctx context.Context, cfg Config) (*Mirror, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
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
	m := &Mirror{cfg: cfg, dir: abs, log: cfg.Logger.With("mirror", abs), ws: cfg.Actor.Workspace.ID,
		pending: map[string]bool{}, ignored: map[string]bool{}, done: make(chan struct{}), ready: make(chan struct{})}
	m.ctx, m.cancel = context.WithCancel(docs.WithOrigin(atrium.NewContextWithActor(context.WithoutCancel(ctx), cfg.Actor), Origin))
	// Subscribe before reconciling, so that no write in between is missed.
	m.events, m.stopEv = cfg.Events()
	if m.watcher, err = fsnotify.NewWatcher(); err != nil {
		m.stopEv()
		return nil, err
	}
	if m.states, err = cfg.Docs.MirrorStates(m.ctx, m.dir); err != nil {
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
			m.flush()
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

// writeFile writes data at rel atomically: a temporary file beside it, then a
// rename, so that editors and git never see half a page.
func (m *Mirror) writeFile(rel string, data []byte) error {
	if err := m.safeTarget(rel); err != nil {
		return err
	}
	target := m.abs(rel)
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	if err := m.safeTarget(rel); err != nil { // a folder made meanwhile
		return err
	}
	tmp := filepath.Join(filepath.Dir(target), ".atrium-"+strings.ToLower(rand.Text()[:10])+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		os.Remove(tmp)
		return err
	}
	return m.watchDirOf(rel)
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

func (m *Mirror) removeFile(rel string) {
	if m.safeTarget(rel) != nil {
		return
	}
	if err := os.Remove(m.abs(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		m.log.Warn("remove file", "path", rel, "err", err)
	}
	// Drop folders the removal emptied, up to the mirror's root.
	for dir := path.Dir(rel); dir != "." && dir != ""; dir = path.Dir(dir) {
		if os.Remove(m.abs(dir)) != nil {
			break
		}
	}
}

func (m *Mirror) setState(rel, hash string, rev int64) {
	key := store.PathKey(rel)
	st := docs.SyncState{Path: rel, Hash: hash, Revision: rev}
	if cur, ok := m.states[key]; ok && cur == st {
		return
	}
	if err := m.cfg.Docs.SetMirrorState(m.ctx, m.dir, st); err != nil {
		m.log.Warn("record sync state", "path", rel, "err", err)
		return
	}
	if hash == "" {
		delete(m.states, key)
	} else {
		m.states[key] = st
	}
}

func (m *Mirror) state(rel string) (docs.SyncState, bool) {
	st, ok := m.states[store.PathKey(rel)]
	return st, ok
}

// report says once that a file is left alone, and why.
func (m *Mirror) report(rel, why string) {
	if m.ignored[rel+why] {
		return
	}
	m.ignored[rel+why] = true
	m.log.Warn("mirror ignores a file", "path", rel, "why", why)
}

// conflict keeps the folder's version of a page beside it and reports it.
func (m *Mirror) conflict(rel string, fileContent []byte) {
	kept := strings.TrimSuffix(rel, path.Ext(rel)) + ".conflict-" + m.cfg.Now().UTC().Format("20060102T150405Z") + path.Ext(rel)
	if err := m.writeFile(kept, fileContent); err != nil {
		m.log.Error("could not keep the folder's version of a conflicting page", "path", rel, "err", err)
		return
	}
	m.mu.Lock()
	m.conflicts = append(m.conflicts, Conflict{Path: rel, Kept: kept, At: m.cfg.Now()})
	m.mu.Unlock()
	m.log.Warn("conflict: the page changed in the store since the file was written; the store's version stays, the file's is kept beside it", "path", rel, "kept_as", kept)
	if err := m.cfg.Docs.RecordMirrorConflict(m.ctx, rel, kept); err != nil {
		m.log.Warn("record conflict", "err", err)
	}
}

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
	case docs.EventPageCreated, docs.EventPageUpdated:
		m.pageToFile(p.Path)
	case docs.EventPageMoved:
		if st, ok := m.state(p.From); ok {
			if b, ok, _ := m.readFile(p.From); ok && hashBytes(b) == st.Hash {
				m.removeFile(p.From)
			}
			m.setState(p.From, "", 0)
		}
		m.pageToFile(p.Path)
	case docs.EventPageDeleted:
		m.deletedInStore(p.Path)
		for _, a := range p.Attachments {
			m.deletedInStore(a)
		}
	case docs.EventPageRestored:
		m.pageToFile(p.Path)
		for _, a := range p.Attachments {
			m.attachmentToFile(a)
		}
	case docs.EventAttachmentAdded:
		m.attachmentToFile(p.Path)
	case docs.EventAttachmentMoved:
		m.attachmentToFile(p.Path)
		if st, ok := m.state(p.From); ok {
			if b, ok, _ := m.readFile(p.From); ok && hashBytes(b) == st.Hash {
				m.removeFile(p.From)
			}
			m.setState(p.From, "", 0)
		}
	case docs.EventAttachmentDeleted:
		m.deletedInStore(p.Path)
	}
}

// pageToFile writes a page's current content to its file, keeping a local
// edit the store has not seen as a conflict copy.
func (m *Mirror) pageToFile(rel string) {
	r, err := m.cfg.Docs.ReadPage(m.ctx, docs.ReadRequest{Path: rel})
	if atrium.ErrorCode(err) == atrium.ENotFound {
		return // deleted since; its own event follows
	}
	if err != nil {
		m.log.Warn("read page for the folder", "path", rel, "err", err)
		return
	}
	p := r.Page
	cur, exists, err := m.readFile(p.Path)
	if err != nil {
		m.log.Warn("read file", "path", p.Path, "err", err)
		return
	}
	st, synced := m.state(p.Path)
	switch {
	case !exists:
	case hashBytes(cur) == p.ContentHash:
		m.setState(p.Path, p.ContentHash, p.Revision)
		return
	case synced && st.Revision == p.Revision && st.Hash == p.ContentHash:
		// The store has nothing the folder has not seen (the echo of the
		// mirror's own write): the file's newer edit is on its way to the
		// store and is no conflict.
		return
	case !synced || hashBytes(cur) != st.Hash:
		m.conflict(p.Path, cur) // the folder changed too: keep its version
	}
	m.writePage(p)
}

// writePage writes a page's content to its file and records the sync.
func (m *Mirror) writePage(p atrium.Page) {
	if err := m.writeFile(p.Path, []byte(p.Content)); err != nil {
		m.report(p.Path, err.Error())
		return
	}
	m.setState(p.Path, p.ContentHash, p.Revision)
}

func (m *Mirror) attachmentToFile(rel string) {
	att, data, err := m.cfg.Docs.Attachment(m.ctx, rel)
	if err != nil {
		return
	}
	if cur, ok, _ := m.readFile(att.Path); ok && hashBytes(cur) == att.SHA256 {
		m.setState(att.Path, att.SHA256, 0)
		return
	}
	if err := m.writeFile(att.Path, data); err != nil {
		m.report(att.Path, err.Error())
		return
	}
	m.setState(att.Path, att.SHA256, 0)
}

// deletedInStore removes the file of a page or attachment the store no longer
// has — unless the file changed since it was synced, which keeps it as a
// conflict copy.
func (m *Mirror) deletedInStore(rel string) {
	st, ok := m.state(rel)
	cur, exists, _ := m.readFile(rel)
	if exists && (!ok || hashBytes(cur) != st.Hash) && isPage(rel) {
		m.conflict(rel, cur)
	}
	if exists {
		m.removeFile(rel)
	}
	m.setState(rel, "", 0)
}
