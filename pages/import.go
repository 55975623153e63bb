package pages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"iter"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// A File is a page's path and content, as found in a folder.
type File struct {
	Path    string
	Content string
}

// ImportOptions tune an import.
type ImportOptions struct {
	// BatchSize is how many pages one transaction writes; bigger batches cost
	// fewer disk syncs, and rewrite the rows of the search index's lists
	// fewer times. Default 2000.
	BatchSize int
	// BatchBytes ends a batch early once its pages hold this much text:
	// what a batch keeps until it commits is about twenty times its text,
	// so big pages must not come two thousand at a time. Default 6 MB.
	BatchBytes int
	// Progress, if set, is called after each batch with the pages done so far.
	Progress func(done int)
}

// LargeImport is the size, in pages, of a workspace from which an import
// writes three times bigger batches (ImportOptionsFor).
const LargeImport = 250_000

// ImportOptionsFor returns the batches for an import that leaves the
// workspace with about pages pages, and the heap they need (for a soft
// memory limit: without one the collector lets an import's heap grow to
// three times its batch).
//
// What a commit writes grows with the store, not with its batch: it
// rewrites the last row of every list a batch adds to and a leaf of the
// links' index for most links, scattered over the file, and SQLite writes
// each of those pages twice (the log, then the database). At a million
// pages 2,000-page batches wrote 322 GB for a 6.9 GB store and took 36
// minutes; 6,000-page batches wrote 141 GB and took 23 minutes, for a heap
// of about 700 MiB rather than 224. Below LargeImport the smaller batches
// cost next to nothing more and keep an import under 300 MB.
func ImportOptionsFor(pages int) (opts ImportOptions, heap int64) {
	if pages >= LargeImport {
		return ImportOptions{BatchSize: 6000, BatchBytes: 18 << 20}, 672 << 20
	}
	return ImportOptions{BatchSize: defaultBatchSize, BatchBytes: defaultBatchBytes}, 224 << 20
}

// PageCount counts the pages of the caller's workspace (not those in the
// trash), private ones too: for a writer sizing an import (ImportOptionsFor).
func (s *Service) PageCount(ctx context.Context) (n int, err error) {
	a, err := writer(ctx)
	if err != nil {
		return 0, err
	}
	err = s.db.View(ctx, func(tx *store.Tx) error {
		n, err = tx.PageCount(ctx, a.Workspace.ID)
		return err
	})
	return n, err
}

const (
	defaultBatchSize  = 2000
	defaultBatchBytes = 6 << 20
)

// ImportError is a file that could not be imported, and why.
type ImportError struct {
	Path  string
	Error string
}

// ImportResult counts what an import did.
type ImportResult struct {
	Created, Updated, Unchanged int
	Failed                      []ImportError
	// Private are the pages this import created or changed that are private
	// (their frontmatter does not say access: public), in path order: members
	// see them, anonymous readers and a default list_pages do not.
	Private []string
}

// Import writes many pages: new paths are created, changed content becomes a
// new revision (history keeps the old), identical content is left alone — so
// importing the same folder twice changes nothing. Pages are parsed in
// parallel and written in batches, one transaction (and one event per page)
// each. A bad file is reported and skipped; the others go in.
func (s *Service) Import(ctx context.Context, files iter.Seq[File], opts ImportOptions) (ImportResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return ImportResult{}, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = defaultBatchBytes
	}
	type item struct {
		path, content string
		pc            *parsed
		idx           store.PageIndex
		err           error
	}
	in := make(chan File, 256)
	out := make(chan item, 256)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for f := range in {
				it := item{content: f.Content}
				if it.path, it.err = NormalizePath(f.Path); it.err == nil {
					it.err = checkFolders(it.path)
				}
				if it.err == nil {
					// Another's desk page is a file refused, not an
					// import stopped.
					it.err = mayChangeDesk(a, it.path)
				}
				if it.err == nil {
					it.pc, it.err = parse(it.path, f.Content)
				}
				if it.err == nil {
					it.idx = it.pc.index(it.path)
					it.idx.Packed = s.db.PackText(f.Content)
					// What the batch keeps until it commits: the parsed
					// document is no longer needed, and is most of a page's
					// memory.
					it.pc.doc = nil
				}
				if it.err != nil {
					it.path = f.Path
				}
				out <- it
			}
		})
	}
	feedCtx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	go func() {
		defer close(in)
		for f := range files {
			select {
			case in <- f:
			case <-feedCtx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(out)
	}()

	var res ImportResult
	batch := make([]item, 0, opts.BatchSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		// Counted apart and added only once the batch commits: a batch that
		// rolls back (an interrupted import) wrote nothing.
		var created, updated, unchanged int
		var private []string
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			created, updated, unchanged, private = 0, 0, 0, private[:0]
			for _, it := range batch {
				cur, err := tx.PageByPath(ctx, a.Workspace.ID, it.path)
				switch {
				case atrium.ErrorCode(err) == atrium.ENotFound:
					p := atrium.Page{WorkspaceID: a.Workspace.ID, Path: it.path}
					it.pc.apply(&p, it.content)
					if err := tx.InsertPage(ctx, &p, it.idx, a.Principal.ID); err != nil {
						return err
					}
					if err := s.emit(ctx, tx, a, EventPageCreated, p, ""); err != nil {
						return err
					}
					created++
					if p.Access != atrium.AccessPublic {
						private = append(private, p.Path)
					}
				case err != nil:
					return err
				case cur.ContentHash == contentHash(it.content):
					unchanged++
				default:
					it.pc.apply(&cur, it.content)
					cur.Path = it.path
					if err := tx.UpdatePage(ctx, &cur, it.idx, a.Principal.ID); err != nil {
						return err
					}
					if err := s.emit(ctx, tx, a, EventPageUpdated, cur, ""); err != nil {
						return err
					}
					updated++
					if cur.Access != atrium.AccessPublic {
						private = append(private, cur.Path)
					}
				}
			}
			return nil
		})
		clear(batch) // the next batch must not keep this one's pages alive
		batch = batch[:0]
		if err == nil {
			res.Created, res.Updated, res.Unchanged = res.Created+created, res.Updated+updated, res.Unchanged+unchanged
			res.Private = append(res.Private, private...)
		}
		return err
	}
	// The planner's figures are refreshed whenever the pages written have
	// doubled since (see store.DB.RefreshPlannerStats).
	done, refreshed, batchBytes := 0, 1000, 0
	for it := range out {
		if it.err != nil {
			res.Failed = append(res.Failed, ImportError{Path: it.path, Error: atrium.ErrorMessage(it.err)})
			continue
		}
		batch = append(batch, it)
		batchBytes += len(it.content)
		if len(batch) == opts.BatchSize || batchBytes >= opts.BatchBytes {
			batchBytes = 0
			done += len(batch)
			if err := flush(); err != nil {
				stopFeed()
				for range out {
				}
				return res, err
			}
			if opts.Progress != nil {
				opts.Progress(done)
			}
			if done >= 2*refreshed {
				if err := s.db.RefreshPlannerStats(ctx); err != nil {
					s.log.Warn("refresh the planner's statistics", "err", err)
				}
				refreshed = done
			}
		}
	}
	done += len(batch)
	if err := flush(); err != nil {
		return res, err
	}
	if opts.Progress != nil {
		opts.Progress(done)
	}
	slices.Sort(res.Private) // batches commit in the order workers finish
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// AttachFile stores the file at an attachment path, wherever the folder keeps
// it: "Folder/assets/name" as add_attachment does, or anywhere, as Obsidian
// vaults do ("Attachments/x.png"). It belongs to the page of the nearest
// folder up its path that has pages (that folder's own page, _index.md, if
// there is one, else its first page), whose access it shares. A file already
// there with other bytes is replaced. It is how folders (imports, the
// mirror) bring attachments in.
func (s *Service) AttachFile(ctx context.Context, p string, data []byte) (atrium.Attachment, bool, error) {
	a, err := writer(ctx)
	if err != nil {
		return atrium.Attachment{}, false, err
	}
	clean, err := normalize(p, "attachment path")
	if err == nil {
		err = checkFolders(clean)
	}
	if err != nil {
		return atrium.Attachment{}, false, err
	}
	dir, name := path.Split(clean)
	dir = strings.TrimSuffix(dir, "/")
	if path.Base(dir) == AssetsFolder {
		dir = folderOf(dir) // the assets folder's files are its folder's
	}
	if _, err := attachmentName(name); err != nil {
		return atrium.Attachment{}, false, err
	}
	if int64(len(data)) > s.MaxAttachmentBytes {
		return atrium.Attachment{}, false, atrium.Errorf(atrium.ETooLarge, "%s is %d bytes; attachments may be at most %d", clean, len(data), s.MaxAttachmentBytes)
	}
	sum := sha256.Sum256(data)
	digest := hex.EncodeToString(sum[:])
	var att atrium.Attachment
	changed := false
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		cur, _, err := tx.AttachmentByPath(ctx, a.Workspace.ID, clean)
		switch {
		case err == nil && cur.SHA256 == digest:
			att = cur
			return nil
		case err == nil:
			if err := tx.DeleteAttachment(ctx, a.Workspace.ID, cur.ID); err != nil {
				return err
			}
		case atrium.ErrorCode(err) != atrium.ENotFound:
			return err
		}
		owner, err := nearestOwner(ctx, tx, a.Workspace.ID, dir)
		if err != nil {
			return err
		}
		att = atrium.Attachment{PageID: owner, Path: clean, Name: name, MIMEType: mimeType(name, data), Size: int64(len(data)), SHA256: digest, CreatedBy: a.Principal.Handle}
		if err := tx.InsertAttachment(ctx, a.Workspace.ID, &att, data, a.Principal.ID); err != nil {
			return err
		}
		changed = true
		return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, EventAttachmentAdded, clean, map[string]any{"path": clean, "size": att.Size, "origin": originOf(ctx)})
	})
	return att, changed, err
}

// nearestOwner is the page a file in folder belongs to: that of the nearest
// folder up its path that has pages, else the workspace's first page.
func nearestOwner(ctx context.Context, tx *store.Tx, ws int64, folder string) (int64, error) {
	for f := folder; ; f = folderOf(f) {
		id, err := folderOwner(ctx, tx, ws, f)
		if atrium.ErrorCode(err) != atrium.ENotFound {
			return id, err
		}
		if f == "" {
			break
		}
	}
	first, err := tx.ListPages(ctx, store.ListQuery{Workspace: ws, Limit: 1, IncludePrivate: true})
	if err != nil {
		return 0, err
	}
	if len(first) == 0 {
		return 0, atrium.Errorf(atrium.ENotFound, "no page to attach files to: add a page first")
	}
	return first[0].ID, nil
}

// folderOwner is the page attachments of a folder belong to.
func folderOwner(ctx context.Context, tx *store.Tx, ws int64, folder string) (int64, error) {
	if p, err := tx.PageByPath(ctx, ws, join(folder, "_index.md")); err == nil {
		return p.ID, nil
	}
	prefix := ""
	if folder != "" {
		prefix = store.PathKey(folder) + "/"
	}
	pages, err := tx.ListPages(ctx, store.ListQuery{Workspace: ws, Parents: []string{strings.TrimSuffix(prefix, "/")}, Limit: 1, IncludePrivate: true})
	if err != nil {
		return 0, err
	}
	if len(pages) == 0 {
		where := folder
		if where == "" {
			where = "the root folder"
		}
		return 0, atrium.Errorf(atrium.ENotFound, "no page in %s to attach files to: add a page there first", where)
	}
	return pages[0].ID, nil
}

// Export calls fn with every page of the caller's workspace, in path order.
func (s *Service) Export(ctx context.Context, fn func(atrium.Page) error) error {
	a, err := writer(ctx)
	if err != nil {
		return err
	}
	after := ""
	for {
		var pages []atrium.Page
		err := s.db.View(ctx, func(tx *store.Tx) error {
			list, err := tx.ListPages(ctx, store.ListQuery{Workspace: a.Workspace.ID, After: after, Limit: 500, IncludePrivate: true})
			if err != nil || len(list) == 0 {
				return err
			}
			ids := make([]int64, len(list))
			for i, p := range list {
				ids[i] = p.ID
			}
			if pages, err = tx.PagesByID(ctx, ids); err != nil {
				return err
			}
			after = store.PathKey(list[len(list)-1].Path)
			return nil
		})
		if err != nil {
			return err
		}
		if len(pages) == 0 {
			return nil
		}
		sortPages(pages)
		for _, p := range pages {
			if err := fn(p); err != nil {
				return err
			}
		}
	}
}

// ExportAttachments calls fn with every attachment of the caller's workspace and its bytes.
func (s *Service) ExportAttachments(ctx context.Context, fn func(atrium.Attachment, []byte) error) error {
	a, err := writer(ctx)
	if err != nil {
		return err
	}
	var atts []atrium.Attachment
	if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		atts, err = tx.Attachments(ctx, a.Workspace.ID, 0)
		return err
	}); err != nil {
		return err
	}
	for _, at := range atts {
		var data []byte
		if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
			_, data, err = tx.AttachmentByPath(ctx, a.Workspace.ID, at.Path)
			return err
		}); err != nil {
			return err
		}
		if err := fn(at, data); err != nil {
			return err
		}
	}
	return nil
}

func sortPages(ps []atrium.Page) {
	slices.SortFunc(ps, func(x, y atrium.Page) int { return strings.Compare(store.PathKey(x.Path), store.PathKey(y.Path)) })
}
