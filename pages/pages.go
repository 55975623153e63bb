// Package pages is the service of the Markdown knowledge base: pages with
// frontmatter, sections, links, history, attachments and search. Every rule —
// path checks, revision checks, link indexing and rewriting, access — lives
// here, once, for MCP, REST and the folder mirror alike. Each call is one
// transaction with its event.
package pages

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/store"
)

// Event kinds of pages; the subject is the page path.
const (
	EventPageCreated     = "page.created"
	EventPageUpdated     = "page.updated"
	EventPageDeleted     = "page.deleted"
	EventPageMoved       = "page.moved"
	EventAttachmentAdded = "attachment.added"
)

// PageEvent is the payload of page events.
type PageEvent struct {
	Path     string `json:"path"`
	PageID   string `json:"page_id"`
	Revision int64  `json:"revision,omitempty"`
	From     string `json:"from,omitempty"`   // page.moved: the old path
	Origin   string `json:"origin,omitempty"` // who wrote it through which surface, e.g. "mirror"
}

// Service is the pages service.
type Service struct {
	db  *store.DB
	log *slog.Logger
	// MaxAttachmentBytes bounds one attachment (stored in the database).
	MaxAttachmentBytes int64
	// TrashRetention is how long a deleted page stays in the trash before
	// PurgeExpired removes it; 0 keeps it until purged by hand.
	TrashRetention time.Duration
	hooks          []Hook
	searches       *gate
	dfs            dfCache
	fm             fmCache
	syns           synCache
	// QueryEmbedTimeout is how long a search waits for its query's vector
	// (hybrid search, SetEmbedder); EmbedPoll how often the worker looks
	// for pages to embed.
	QueryEmbedTimeout time.Duration
	EmbedPoll         time.Duration
	// MinSimilarity is the cosine a section must pass to rank a page by
	// meaning (0: any closer than unrelated). Models differ in their
	// range, so it is off unless a test or a tuning sets it.
	MinSimilarity float32
	embedder      atrium.Embedder
	embedDown     atomic.Int64 // until when (unix ns) searches skip the endpoint
	embedStats    embedStats
	vecs          vecCache
	reindexBatch  int
	rebuildYield  time.Duration
}

// A Change is one page written, moved or deleted, as hooks see it.
type Change struct {
	Kind string // EventPageCreated, EventPageUpdated, EventPageMoved or EventPageDeleted
	Page atrium.Page
	From string // EventPageMoved: the old path
	// linksOnly marks an update that only rewrote links to a page that
	// moved: a consequence of the move, not an edit by the mover.
	linksOnly bool
}

// A Hook runs inside the transaction of every page change, so that what
// depends on pages (review anchors) changes with them or not at all.
type Hook func(ctx context.Context, tx *store.Tx, actor *atrium.Actor, c Change) error

// OnChange adds a hook. Call it before serving.
func (s *Service) OnChange(h Hook) { s.hooks = append(s.hooks, h) }

func (s *Service) changed(ctx context.Context, tx *store.Tx, a *atrium.Actor, c Change) error {
	if err := deskRule(a, c); err != nil {
		return err
	}
	for _, h := range s.hooks {
		if err := h(ctx, tx, a, c); err != nil {
			return err
		}
	}
	return nil
}

// New returns the pages service over db.
func New(db *store.DB, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	// Searches leave a read connection free for light calls, and are
	// CPU-bound: more at once than cores only makes each slower.
	running := max(1, min(runtime.GOMAXPROCS(0), db.Conns()-1))
	db.DeriveStemsWith(storedStems)
	return &Service{db: db, log: log, MaxAttachmentBytes: 25 << 20, TrashRetention: DefaultTrashRetention,
		searches: newSearchGate(running), reindexBatch: defaultReindexBatch, rebuildYield: defaultRebuildYield}
}

// origin lets a surface say where a write came from (the mirror marks its own
// writes so that it does not write them back).
type originKey struct{}

// WithOrigin marks the writes made with ctx as coming from origin.
func WithOrigin(ctx context.Context, origin string) context.Context {
	return context.WithValue(ctx, originKey{}, origin)
}

func originOf(ctx context.Context) string {
	s, _ := ctx.Value(originKey{}).(string)
	return s
}

// writer is the caller of a write, who must be a writer in their workspace.
func writer(ctx context.Context) (*atrium.Actor, error) {
	return atrium.RequireActor(ctx, atrium.RoleWriter)
}

// reader is the caller of a read. Anonymous callers (an actor with no role)
// may read public pages only; member says whether private pages are visible.
func reader(ctx context.Context) (a *atrium.Actor, member bool, err error) {
	a = atrium.ActorFromContext(ctx)
	if a == nil || a.Workspace.ID == 0 {
		return nil, false, atrium.Errorf(atrium.EUnauthenticated, "no caller identity: authenticate first")
	}
	return a, a.Role.Allows(atrium.RoleReader), nil
}

// visible reports whether a reader may see p; a hidden page reads as missing,
// so that its existence does not leak.
func visible(p atrium.Page, member bool) error {
	if member || p.Access == atrium.AccessPublic {
		return nil
	}
	return atrium.Errorf(atrium.ENotFound, "Page not found at path: %s", p.Path)
}

// visiblePage reads the page at path for a reader; a page the reader may not
// see is missing.
func visiblePage(ctx context.Context, tx *store.Tx, ws int64, path string, member bool) (atrium.Page, error) {
	p, err := tx.PageByPath(ctx, ws, path)
	if err != nil {
		return atrium.Page{}, err
	}
	return p, visible(p, member)
}

// emit records a page change: its event, and what the hooks derive from it.
func (s *Service) emit(ctx context.Context, tx *store.Tx, a *atrium.Actor, kind string, p atrium.Page, from string) error {
	return s.emitChange(ctx, tx, a, Change{Kind: kind, Page: p, From: from})
}

func (s *Service) emitChange(ctx context.Context, tx *store.Tx, a *atrium.Actor, c Change) error {
	if err := s.changed(ctx, tx, a, c); err != nil {
		return err
	}
	p := c.Page
	return tx.EmitJSON(ctx, a.Workspace.ID, a.Principal.ID, c.Kind, p.Path, PageEvent{Path: p.Path, PageID: p.UID, Revision: p.Revision, From: c.From, Origin: originOf(ctx)})
}

// WriteRequest writes a whole page.
type WriteRequest struct {
	Path    string
	Content string
	// BaseRevision is the revision the content was based on; required to
	// replace an existing page unless Overwrite is set. 0: not given.
	BaseRevision int64
	Overwrite    bool
}

// WriteResult says what a write did.
type WriteResult struct {
	Page    atrium.Page
	Created bool
	Changed bool // false when the content was already exactly this
}

// WritePage creates the page at r.Path, or replaces it when r.BaseRevision is
// its current revision (or r.Overwrite). A stale base revision is a conflict
// that names both revisions: a write never silently overwrites another.
func (s *Service) WritePage(ctx context.Context, r WriteRequest) (WriteResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	path, err := NormalizePath(r.Path)
	if err != nil {
		return WriteResult{}, err
	}
	// The text is packed while it is parsed and indexed: a tenth of a
	// write's time each, on a core that is otherwise idle while one caller
	// waits. (The channel is buffered: a parse that fails leaves nothing
	// waiting.)
	packed := make(chan store.PackedText, 1)
	go func() { packed <- s.db.PackText(r.Content) }()
	pc, err := parse(path, r.Content)
	if err != nil {
		return WriteResult{}, err
	}
	// Derived before the transaction, so that other writers do not wait
	// on it; for content that turns out unchanged it was done in vain.
	idx := pc.index(path)
	idx.Packed = <-packed
	var res WriteResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		cur, err := tx.PageMetaByPath(ctx, a.Workspace.ID, path)
		switch {
		case atrium.ErrorCode(err) == atrium.ENotFound:
			if r.BaseRevision > 0 {
				return atrium.Errorf(atrium.ENotFound, "Page not found at path: %s (base_revision %d was given, so the page was expected to exist)", path, r.BaseRevision)
			}
			if err := checkFolders(path); err != nil {
				return err
			}
			res.Page, res.Created, res.Changed = atrium.Page{WorkspaceID: a.Workspace.ID, Path: path}, true, true
			pc.apply(&res.Page, r.Content)
			if err := tx.InsertPage(ctx, &res.Page, idx, a.Principal.ID); err != nil {
				return err
			}
			return s.emit(ctx, tx, a, EventPageCreated, res.Page, "")
		case err != nil:
			return err
		}
		if err := checkBase(cur, r.BaseRevision, r.Overwrite); err != nil {
			return err
		}
		res.Page = cur
		if cur.ContentHash == contentHash(r.Content) && cur.Path == path {
			res.Page.Content = r.Content // what cur, read without it, holds
			return nil                   // already so: no new revision
		}
		res.Changed = true
		res.Page.Path = path
		pc.apply(&res.Page, r.Content)
		if err := tx.UpdatePage(ctx, &res.Page, idx, a.Principal.ID); err != nil {
			return err
		}
		return s.emit(ctx, tx, a, EventPageUpdated, res.Page, "")
	})
	if err != nil {
		return WriteResult{}, err
	}
	return res, nil
}

// checkBase refuses a replacement that was not based on the current revision.
func checkBase(cur atrium.Page, base int64, overwrite bool) error {
	switch {
	case overwrite:
		return nil
	case base == 0:
		return atrium.Errorf(atrium.EConflict, "A page already exists at %s (revision %d). To replace it, pass base_revision: %d after reading it, or overwrite: true; to change part of it, use edit_page.",
			cur.Path, cur.Revision, cur.Revision).WithDetails(map[string]any{"path": cur.Path, "current_revision": cur.Revision})
	case base != cur.Revision:
		return atrium.Errorf(atrium.EConflict, "Page was modified since you read it: %s is at revision %d, your change is based on revision %d. Read it again and reapply your change.",
			cur.Path, cur.Revision, base).WithDetails(map[string]any{"path": cur.Path, "current_revision": cur.Revision, "base_revision": base})
	}
	return nil
}

// CreateRequest creates a page from a title.
type CreateRequest struct {
	Title      string
	ParentPath string // folder ("Projects") or a folder page ("Projects/_index.md"); "" for the root
	Content    string // the body; frontmatter is generated
	Icon       string
}

// CreatePage creates a page named after its title in the parent folder, with
// generated frontmatter (title, icon). A taken path is a conflict.
func (s *Service) CreatePage(ctx context.Context, r CreateRequest) (WriteResult, error) {
	title := strings.TrimSpace(r.Title)
	if title == "" {
		return WriteResult{}, atrium.Errorf(atrium.EInvalid, "title is required")
	}
	parent := strings.TrimSpace(r.ParentPath)
	if strings.HasSuffix(strings.ToLower(parent), ".md") {
		// A page as parent: its folder (Projects/_index.md → Projects;
		// Projects/Alpha.md → Projects/Alpha, Notion-style children).
		parent = strings.TrimSuffix(strings.TrimSuffix(parent, pathExt(parent)), "/_index")
	}
	folder, err := NormalizeFolder(parent)
	if err != nil {
		return WriteResult{}, err
	}
	set := map[string]any{"title": title}
	if r.Icon != "" {
		set["icon"] = r.Icon
	}
	fm, err := markdown.SetFrontmatter("", set)
	if err != nil {
		return WriteResult{}, atrium.Errorf(atrium.EInvalid, "%v", err)
	}
	body := r.Content
	if body != "" && !strings.HasPrefix(body, "\n") {
		body = "\n" + body
	}
	return s.WritePage(ctx, WriteRequest{Path: join(folder, fileNameFor(title)), Content: markdown.Join(fm, body)})
}

// ReadRequest reads a page, a section of it, or an earlier revision.
type ReadRequest struct {
	Path     string
	Section  string // heading path, e.g. "Design > Storage"
	Revision int64  // 0: the current one
}

// ReadResult is a page as read.
type ReadResult struct {
	Page        atrium.Page
	Frontmatter map[string]any // parsed YAML, every key
	Content     string         // the page, the section, or the revision asked for
	Section     string         // the full heading path of the section read
	Line        int            // first line of Content in the page (1-based)
}

// ReadPage reads a page (or a section, or a revision).
func (s *Service) ReadPage(ctx context.Context, r ReadRequest) (ReadResult, error) {
	_, member, err := reader(ctx)
	if err != nil {
		return ReadResult{}, err
	}
	path, err := NormalizePath(r.Path)
	if err != nil {
		return ReadResult{}, err
	}
	a := atrium.ActorFromContext(ctx)
	var res ReadResult
	// The current page is one statement, consistent on its own: no
	// transaction (BEGIN and ROLLBACK were a third of a read). An earlier
	// revision reads twice, so that both agree.
	run := s.db.Read
	if r.Revision > 0 {
		run = s.db.View
	}
	err = run(ctx, func(tx *store.Tx) error {
		p, err := visiblePage(ctx, tx, a.Workspace.ID, path, member)
		if err != nil {
			return err
		}
		res.Page = p
		res.Content, res.Line = p.Content, 1
		if r.Revision > 0 && r.Revision != p.Revision {
			rev, err := tx.PageRevision(ctx, p.ID, r.Revision)
			if atrium.ErrorCode(err) == atrium.ENotFound {
				return atrium.Errorf(atrium.ENotFound, "Revision %d of %s not found: it has revisions 1 to %d", r.Revision, p.Path, p.Revision)
			}
			if err != nil {
				return err
			}
			if !member && revisionAccess(rev.Content) != atrium.AccessPublic {
				// As missing as a private page: its existence does not leak.
				return atrium.Errorf(atrium.ENotFound, "Revision %d of %s not found", r.Revision, p.Path)
			}
			res.Content = rev.Content
			res.Page.Revision = rev.Revision
		}
		return nil
	})
	if err != nil {
		return ReadResult{}, err
	}
	if !member {
		res.Page = anonymous(res.Page)
	}
	fm, body, _ := markdown.Split(res.Content)
	if res.Frontmatter, err = s.frontmatter(fm); err != nil {
		return ReadResult{}, err
	}
	if r.Section != "" {
		// Only a section needs the Markdown structure (the costliest part
		// of a read, when it was parsed for every one).
		_, _, doc := markdown.ParsePage(res.Content)
		h, err := doc.Section(r.Section)
		if err != nil {
			return ReadResult{}, sectionError(res.Page.Path, err)
		}
		res.Content = body[h.Start:h.End]
		res.Section = strings.Join(h.Path, " > ")
		res.Line = h.Line
	}
	return res, nil
}

// frontmatter decodes a page's frontmatter, from the cache when it was
// decoded lately.
func (s *Service) frontmatter(fm string) (map[string]any, error) {
	if m, ok := s.fm.get(fm); ok {
		return m, nil
	}
	m, err := frontmatterMap(fm)
	if err == nil {
		s.fm.put(fm, m)
	}
	return m, err
}

// lineOffset is the number of lines before the body in content.
func lineOffset(content, _ string) int {
	_, body, _ := markdown.Split(content)
	return markdown.LinesBefore(content, body)
}

// sectionError turns a markdown section lookup failure into a coded error.
func sectionError(path string, err error) error {
	var me *markdown.Error
	if asMarkdownError(err, &me) {
		switch me.Code {
		case "not_found":
			return atrium.Errorf(atrium.ENotFound, "Section not found in %s: %s", path, me.Message)
		case "ambiguous":
			return atrium.Errorf(atrium.EInvalid, "Section is ambiguous in %s: %s", path, me.Message)
		}
		return atrium.Errorf(atrium.EInvalid, "%s", me.Message)
	}
	return err
}
