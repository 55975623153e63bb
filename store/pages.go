package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium"
)

// PageIndex is what a write derives from a page's content and stores beside
// it: keys for listing and link resolution, the links, the search tokens.
type PageIndex struct {
	Headings string            // heading texts, one per line
	Words    []SearchWord      // the page's distinct tokens whose stem is another word (search.PageIndex)
	Stems    []string          // the page's distinct stems, sorted
	Postings [][]byte          // what the page holds of each stem (search.PagePostings)
	Lens     [SearchFields]int // search tokens in each field
	// Texts are the texts of the fields after the body (aliases, summary,
	// the rest of the frontmatter), which ranking from text reads.
	Texts []string
	Links []atrium.PageLink // links written in the page
	// Packed is the page's text packed ahead (DB.PackText); when it is
	// not of the text written, the transaction packs that.
	Packed PackedText
}

// PathKey is the case-insensitive form of a path that uniqueness and lookups use.
func PathKey(path string) string { return strings.ToLower(path) }

func parentKey(pathKey string) string {
	if i := strings.LastIndexByte(pathKey, '/'); i >= 0 {
		return pathKey[:i]
	}
	return ""
}

// StemKey is the lookup key of a page's file name without folder and ".md".
func StemKey(path string) string {
	k := PathKey(path)
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		k = k[i+1:]
	}
	return strings.TrimSuffix(k, ".md")
}

const pageCols = `p.id, p.uid, p.workspace_id, p.path, p.title, p.icon, p.tags, p.access, p.content, p.content_hash, p.revision,
	COALESCE(cb.handle, ''), p.created_at, COALESCE(ub.handle, ''), p.updated_at`

const pageFrom = ` FROM pages p LEFT JOIN principals cb ON cb.id = p.created_by LEFT JOIN principals ub ON ub.id = p.updated_by`

// pageRow is a page as scanned from pageCols.
type pageRow struct {
	p                atrium.Page
	tags, access     string
	created, updated int64
}

func (r *pageRow) dest() []any {
	return []any{&r.p.ID, &r.p.UID, &r.p.WorkspaceID, &r.p.Path, &r.p.Title, &r.p.Icon, &r.tags, &r.access, textDest{text: &r.p.Content}, &r.p.ContentHash, &r.p.Revision,
		&r.p.CreatedBy, &r.created, &r.p.UpdatedBy, &r.updated}
}

func (r *pageRow) page() (atrium.Page, error) {
	p := r.p
	p.Access, p.CreatedAt, p.UpdatedAt = atrium.Access(r.access), fromMicros(r.created), fromMicros(r.updated)
	if err := json.Unmarshal([]byte(r.tags), &p.Tags); err != nil {
		return p, fmt.Errorf("page %d tags: %w", p.ID, err)
	}
	return p, nil
}

func scanPage(sc scanner) (atrium.Page, error) {
	var r pageRow
	if err := sc.Scan(r.dest()...); err != nil {
		return r.p, err
	}
	return r.page()
}

// PageByPath returns the page at path (any case) in workspace ws, or not_found.
func (tx *Tx) PageByPath(ctx context.Context, ws int64, path string) (atrium.Page, error) {
	return tx.pageByPath(ctx, pageCols, ws, path)
}

// pageMetaCols are pageCols with NULL for the text.
var pageMetaCols = strings.Replace(pageCols, "p.content,", "NULL,", 1)

// PageMetaByPath is PageByPath without the page's text (Content is empty),
// for a writer that replaces it: reading and inflating the text it checks
// by its hash was a tenth of a write_page.
func (tx *Tx) PageMetaByPath(ctx context.Context, ws int64, path string) (atrium.Page, error) {
	return tx.pageByPath(ctx, pageMetaCols, ws, path)
}

func (tx *Tx) pageByPath(ctx context.Context, cols string, ws int64, path string) (atrium.Page, error) {
	p, err := scanPage(tx.queryRow(ctx, "SELECT "+cols+pageFrom+" WHERE p.workspace_id = ? AND p.path_key = ?", ws, PathKey(path)))
	if errors.Is(err, sql.ErrNoRows) {
		return p, atrium.Errorf(atrium.ENotFound, "Page not found at path: %s", path)
	}
	return p, err
}

// PageByID returns a page by its row ID, or not_found.
func (tx *Tx) PageByID(ctx context.Context, id int64) (atrium.Page, error) {
	p, err := scanPage(tx.queryRow(ctx, "SELECT "+pageCols+pageFrom+" WHERE p.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return p, atrium.Errorf(atrium.ENotFound, "page %d not found", id)
	}
	return p, err
}

// PagesByID returns the pages with the given IDs, in no particular order.
func (tx *Tx) PagesByID(ctx context.Context, ids []int64) ([]atrium.Page, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	q := "SELECT " + pageCols + pageFrom + " WHERE p.id IN (" + placeholders(len(ids)) + ")"
	args := idArgs(ids)
	return queryAll(ctx, tx, scanPage, q, args...)
}

// under returns the condition that keeps the keys of a folder prefix
// ("projects/", or "" for everything) as a range scan: "projects0" is the
// least key above every "projects/…", keys comparing bytewise on both engines
// (COLLATE "C" on PostgreSQL).
func under(col, prefix string) (string, []any) {
	if prefix == "" {
		return "", nil
	}
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return " AND " + col + " >= ? AND " + col + " < ?", []any{prefix, prefix[:len(prefix)-1] + "0"}
}

// idArgs are ids as query arguments.
func idArgs(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// InsertPage adds p (ID, UID and revision 1 are set here) with its first
// revision, links, tags, search index and folder counts.
func (tx *Tx) InsertPage(ctx context.Context, p *atrium.Page, idx PageIndex, actor int64) error {
	p.UID = "pg_" + strings.ToLower(rand.Text()[:16])
	p.Revision, p.CreatedAt, p.UpdatedAt = 1, tx.now, tx.now
	tags, err := json.Marshal(nonNil(p.Tags))
	if err != nil {
		return err
	}
	key := PathKey(p.Path)
	texts, err := json.Marshal(nonNil(idx.Texts))
	if err != nil {
		return err
	}
	args := []any{p.UID, p.WorkspaceID, p.Path, key, parentKey(key), p.Title, strings.ToLower(p.Title), StemKey(p.Path), p.Icon, string(tags), string(p.Access),
		tx.packedText(idx.Packed, p.Content), idx.Headings, string(texts), p.ContentHash, p.Revision}
	args = append(args, lenArgs(idx.Lens, 1)...)
	args = append(args, nullID(actor), micros(tx.now), nullID(actor), micros(tx.now))
	err = tx.queryRow(ctx, `INSERT INTO pages (uid, workspace_id, path, path_key, parent_key, title, title_key, stem_key, icon, tags, access,
		content, headings, field_texts, content_hash, revision, `+lenColumns()+`, created_by, created_at, updated_by, updated_at, index_epoch)
		VALUES (`+placeholders(len(args))+`, `+indexEpoch+`)
		ON CONFLICT (workspace_id, path_key) DO NOTHING RETURNING id`, args...).Scan(&p.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return atrium.Errorf(atrium.EConflict, "A page already exists at path: %s", p.Path)
	}
	if err != nil {
		return fmt.Errorf("insert page: %w", err)
	}
	if err := tx.addRevision(ctx, p, actor); err != nil {
		return err
	}
	if err := tx.addFolders(ctx, p.WorkspaceID, p.Path, 1, p.Access == atrium.AccessPublic); err != nil {
		return err
	}
	if err := tx.adjustStats(ctx, p.WorkspaceID, 1, idx.Lens, 1); err != nil {
		return err
	}
	return tx.writeIndex(ctx, p, idx, unindexed)
}

// UpdatePage stores p's new content, metadata and path as its next revision.
// p.Revision must be the revision it replaces; it is incremented here.
func (tx *Tx) UpdatePage(ctx context.Context, p *atrium.Page, idx PageIndex, actor int64) error {
	var (
		oldPath, oldAccess string
		old                [SearchFields]int
		was                listing
	)
	err := tx.queryRow(ctx, "SELECT path, access, "+listedColumns+", "+lenColumns()+" FROM pages WHERE id = ? AND revision = ?", p.ID, p.Revision).
		Scan(append(append([]any{&oldPath, &oldAccess}, was.dest()...), lenDest(&old)...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return atrium.Errorf(atrium.EConflict, "Page was modified concurrently: %s is no longer at revision %d; read it again", p.Path, p.Revision)
	}
	if err != nil {
		return err
	}
	tags, err := json.Marshal(nonNil(p.Tags))
	if err != nil {
		return err
	}
	p.Revision++
	p.UpdatedAt = tx.now
	key := PathKey(p.Path)
	if PathKey(oldPath) != key {
		var taken int
		if err := tx.queryRow(ctx, "SELECT COUNT(*) FROM pages WHERE workspace_id = ? AND path_key = ? AND id <> ?", p.WorkspaceID, key, p.ID).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return atrium.Errorf(atrium.EConflict, "A page already exists at path: %s", p.Path)
		}
	}
	// The text being replaced goes into its revision's row, which held none
	// while it was the newest; copied inside the database, before pages
	// changes. A concurrent writer that wins below rolls this back with it.
	if _, err := tx.exec(ctx, "UPDATE page_revisions SET content = (SELECT content FROM pages WHERE id = ?) WHERE page_id = ? AND revision = ?",
		p.ID, p.ID, p.Revision-1); err != nil {
		return fmt.Errorf("keep the replaced revision's text: %w", err)
	}
	// The revision check is part of the update: on PostgreSQL a concurrent
	// writer that committed first makes this match no row.
	texts, err := json.Marshal(nonNil(idx.Texts))
	if err != nil {
		return err
	}
	args := []any{p.Path, key, parentKey(key), p.Title, strings.ToLower(p.Title), StemKey(p.Path), p.Icon, string(tags), string(p.Access),
		tx.packedText(idx.Packed, p.Content), idx.Headings, string(texts), p.ContentHash, p.Revision}
	args = append(args, lenArgs(idx.Lens, 1)...)
	args = append(args, nullID(actor), micros(tx.now))
	upd, err := tx.exec(ctx, `UPDATE pages SET path = ?, path_key = ?, parent_key = ?, title = ?, title_key = ?, stem_key = ?, icon = ?, tags = ?, access = ?,
		content = ?, headings = ?, field_texts = ?, content_hash = ?, revision = ?, `+lenSets()+`, updated_by = ?, updated_at = ?, index_epoch = `+indexEpoch+`
		WHERE id = ? AND revision = ?`, append(args, p.ID, p.Revision-1)...)
	if err != nil {
		return fmt.Errorf("update page: %w", err)
	}
	if n, err := upd.RowsAffected(); err != nil || n != 1 {
		p.Revision--
		return atrium.Errorf(atrium.EConflict, "Page was modified concurrently: %s is no longer at revision %d; read it again", p.Path, p.Revision)
	}
	if err := tx.addRevision(ctx, p, actor); err != nil {
		return err
	}
	if PathKey(oldPath) != key || oldAccess != string(p.Access) {
		if err := tx.addFolders(ctx, p.WorkspaceID, oldPath, -1, oldAccess == string(atrium.AccessPublic)); err != nil {
			return err
		}
		if err := tx.addFolders(ctx, p.WorkspaceID, p.Path, 1, p.Access == atrium.AccessPublic); err != nil {
			return err
		}
	}
	if err := tx.basePostings(p.WorkspaceID, p.ID, &was); err != nil {
		return err
	}
	return tx.replaceIndex(ctx, p, old, idx, indexed)
}

// DeletePage removes a page with its history, links, attachments and index entries.
func (tx *Tx) DeletePage(ctx context.Context, p atrium.Page) error {
	var lens [SearchFields]int
	var access string
	err := tx.queryRow(ctx, "SELECT access, "+lenColumns()+" FROM pages WHERE id = ?", p.ID).Scan(append([]any{&access}, lenDest(&lens)...)...)
	p.Access = atrium.Access(access)
	if errors.Is(err, sql.ErrNoRows) {
		return atrium.Errorf(atrium.ENotFound, "Page not found at path: %s", p.Path)
	}
	if err != nil {
		return err
	}
	if err := tx.dropPostings(ctx, p.ID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, "DELETE FROM pages WHERE id = ?", p.ID); err != nil {
		return err
	}
	if err := tx.addFolders(ctx, p.WorkspaceID, p.Path, -1, p.Access == atrium.AccessPublic); err != nil {
		return err
	}
	return tx.adjustStats(ctx, p.WorkspaceID, -1, lens, -1)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// addRevision records p's new revision. Its text stays in pages alone while
// it is the newest (UpdatePage moves it here when it is replaced), so
// the store holds a page's current text once.
func (tx *Tx) addRevision(ctx context.Context, p *atrium.Page, actor int64) error {
	_, err := tx.exec(ctx, "INSERT INTO page_revisions (page_id, revision, path, content, content_hash, author, created_at) VALUES (?, ?, ?, '', ?, ?, ?)",
		p.ID, p.Revision, p.Path, p.ContentHash, nullID(actor), micros(tx.now))
	if err != nil {
		return fmt.Errorf("insert revision: %w", err)
	}
	return nil
}

// How writeIndex finds the page's index entries. Whatever the state, the
// page's row already holds the texts its new stems derive from.
type indexState int

const (
	indexed   indexState = iota // entries to replace: the lists of the stems given to basePostings hold its postings
	unindexed                   // none: trashed, or never written
	rebuilt                     // entries to replace, but no postings or tokens (ClearPostings)
)

// indexEpoch is the index's epoch, which ClearPostings moves on: a page's
// stems name the lists that hold it only while its index_epoch is this.
const indexEpoch = "(SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta WHERE key = 'search.epoch')"

// notListed is the index_epoch of a page that is in no list (trashed, or
// going): no epoch is below zero.
const notListed = "-1"

// PageTexts are what a page's row keeps of the texts its search index
// derives from: its title and tags, its heading texts, its content (body
// and frontmatter) and its frontmatter fields' texts (PageIndex.Texts).
type PageTexts struct {
	Title    string
	Tags     []string
	Headings string
	Content  string
	Texts    []string
}

// DeriveStemsWith gives the store the function from a page's texts to its
// stems (PageIndex.Stems, as its writer derived them). The store does not
// keep a page's stems — at about a kilobyte a page, they were a third of
// its row and made rows too big to share a database page — but derives
// them again when a page is rewritten or removed, to know which lists hold
// it. The docs service, which derives every PageIndex, sets it.
func (db *DB) DeriveStemsWith(f func(PageTexts) []string) { db.stems.Store(&f) }

// listedColumns are, of a page's row, what says which lists hold its
// postings: whether it is in the index's current epoch, and the texts its
// stems derive from, scanned with a listing's dest.
const listedColumns = "index_epoch = " + indexEpoch + ", title, tags, headings, content, field_texts"

// A listing is a page's listedColumns as read. Its content stays as stored
// until its stems are derived: a page in no list (every page a rebuild
// reaches) needs it not inflated.
type listing struct {
	current          bool
	texts            PageTexts
	tags, fieldTexts string
	content          any // as the driver gave it: TEXT, or a packed BLOB
}

func (l *listing) dest() []any {
	return []any{&l.current, &l.texts.Title, &l.tags, &l.texts.Headings, &l.content, &l.fieldTexts}
}

// stems are the stems whose lists hold the page's postings, space-separated
// as search_pending keeps them: none unless it is listed in this epoch.
func (l *listing) stems(db *DB) (string, error) {
	if !l.current {
		return "", nil
	}
	f := db.stems.Load()
	if f == nil {
		return "", errors.New("store: a page's stems cannot be derived: DeriveStemsWith was not called")
	}
	if err := json.Unmarshal([]byte(l.tags), &l.texts.Tags); err != nil {
		return "", fmt.Errorf("page tags: %w", err)
	}
	if err := json.Unmarshal([]byte(l.fieldTexts), &l.texts.Texts); err != nil {
		return "", fmt.Errorf("page field texts: %w", err)
	}
	if err := (textDest{text: &l.texts.Content}).Scan(l.content); err != nil {
		return "", err
	}
	return strings.Join((*f)(l.texts), " "), nil
}

// writeIndex replaces the page's tags, links and search tokens.
func (tx *Tx) writeIndex(ctx context.Context, p *atrium.Page, idx PageIndex, state indexState) error {
	replace := state == indexed || state == rebuilt
	if replace {
		for _, q := range []string{"DELETE FROM page_tags WHERE page_id = ?", "DELETE FROM page_links WHERE source_id = ?"} {
			if _, err := tx.exec(ctx, q, p.ID); err != nil {
				return err
			}
		}
	}
	seen := map[string]bool{}
	for _, t := range p.Tags {
		k := strings.ToLower(t)
		if seen[k] {
			continue
		}
		seen[k] = true
		if _, err := tx.exec(ctx, "INSERT INTO page_tags (page_id, workspace_id, tag_key) VALUES (?, ?, ?)", p.ID, p.WorkspaceID, k); err != nil {
			return err
		}
	}
	for _, l := range idx.Links {
		if _, err := tx.exec(ctx, "INSERT INTO page_links (workspace_id, source_id, kind, target, target_key, heading, line) VALUES (?, ?, ?, ?, ?, ?, ?)",
			p.WorkspaceID, p.ID, string(l.Kind), storedTarget(l), l.Key, l.Heading, l.Line); err != nil {
			return err
		}
	}
	if err := tx.addWords(ctx, p.WorkspaceID, idx.Words); err != nil {
		return err
	}
	return tx.setPostings(p.WorkspaceID, p.ID, idx, state)
}

// A SearchWord is a token as written whose stem is another word.
type SearchWord struct{ Word, Stem string }

// wordsAtOnce is how many words one statement of addWords adds.
const wordsAtOnce = 200

// addWords adds words to the workspace's search_words. A word stays when no
// page holds it any more: a prefix then reads one list more than it needs,
// never less. (A rebuild starts the words over.)
//
// The words a call has added already are not sent again: the few hundred
// such words of a vault come back on most of its pages, and an import's
// batch of thousands of pages would otherwise insert each again and again
// (a tenth of its writer's time).
func (tx *Tx) addWords(ctx context.Context, ws int64, words []SearchWord) error {
	if tx.words == nil {
		tx.words = map[wordKey]bool{}
	}
	fresh := make([]SearchWord, 0, len(words))
	for _, w := range words {
		k := wordKey{ws, w.Word}
		if !tx.words[k] {
			tx.words[k] = true
			fresh = append(fresh, w)
		}
	}
	for chunk := range slices.Chunk(fresh, wordsAtOnce) {
		args := make([]any, 0, 3*len(chunk))
		for _, w := range chunk {
			args = append(args, ws, w.Word, w.Stem)
		}
		values := strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", len(chunk)), ", ")
		if _, err := tx.exec(ctx, "INSERT INTO search_words (workspace_id, word, stem) VALUES "+values+" ON CONFLICT DO NOTHING", args...); err != nil {
			return fmt.Errorf("write search words: %w", err)
		}
	}
	return nil
}

// A wordKey names a word of search_words.
type wordKey struct {
	ws   int64
	word string
}

// addFolders adds delta to the page counts of every folder above path,
// creating folders that appear and dropping those that empty.
func (tx *Tx) addFolders(ctx context.Context, ws int64, path string, delta int, public bool) error {
	pub := 0
	if public {
		pub = delta
	}
	parts := strings.Split(path, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		key := PathKey(dir)
		if delta > 0 {
			_, err := tx.exec(ctx, `INSERT INTO folders (workspace_id, path_key, path, parent_key, pages, public_pages) VALUES (?, ?, ?, ?, ?, ?)
				ON CONFLICT (workspace_id, path_key) DO UPDATE SET pages = folders.pages + excluded.pages, public_pages = folders.public_pages + excluded.public_pages`,
				ws, key, dir, parentKey(key), delta, pub)
			if err != nil {
				return err
			}
			continue
		}
		if _, err := tx.exec(ctx, "UPDATE folders SET pages = pages + ?, public_pages = public_pages + ? WHERE workspace_id = ? AND path_key = ?", delta, pub, ws, key); err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "DELETE FROM folders WHERE workspace_id = ? AND path_key = ? AND pages <= 0", ws, key); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Tx) adjustStats(ctx context.Context, ws int64, docs int, lens [SearchFields]int, sign int) error {
	var sums strings.Builder
	for _, c := range lenCols {
		fmt.Fprintf(&sums, "%s = search_stats.%s + excluded.%s, ", c, c, c)
	}
	args := append([]any{ws, docs}, lenArgs(lens, sign)...)
	_, err := tx.exec(ctx, `INSERT INTO search_stats (workspace_id, docs, `+lenColumns()+`) VALUES (`+placeholders(len(args))+`)
		ON CONFLICT (workspace_id) DO UPDATE SET docs = search_stats.docs + excluded.docs, `+sums.String()+`generation = search_stats.generation + 1`, args...)
	return err
}

// PageSummary is a page as listed: no content unless asked for.
type PageSummary struct {
	ID       int64
	UID      string
	Path     string
	Title    string
	Icon     string
	Access   atrium.Access
	Revision int64
	Content  string // only when listed with content
	Updated  int64
}

// ListQuery selects pages to list.
type ListQuery struct {
	Workspace      int64
	Prefix         string   // folder key ("projects/"), "" for all
	Parents        []string // if set, only pages directly in these folders (keys, "" the root)
	After          string   // path key to continue after
	Limit          int
	IncludePrivate bool
	WithContent    bool
}

// ListPages lists pages under a folder prefix in path order.
func (tx *Tx) ListPages(ctx context.Context, q ListQuery) ([]PageSummary, error) {
	cols := "id, uid, path, title, icon, access, revision, updated_at, ''"
	if q.WithContent {
		cols = "id, uid, path, title, icon, access, revision, updated_at, content"
	}
	sqlq := "SELECT " + cols + " FROM pages WHERE workspace_id = ? AND path_key > ?" + live
	args := []any{q.Workspace, q.After}
	if len(q.Parents) > 0 {
		sqlq += " AND parent_key IN (" + placeholders(len(q.Parents)) + ")"
		for _, p := range q.Parents {
			args = append(args, p)
		}
	} else {
		cond, cargs := under("path_key", q.Prefix)
		sqlq += cond
		args = append(args, cargs...)
	}
	if !q.IncludePrivate {
		sqlq += " AND access = 'public'"
	}
	sqlq += " ORDER BY path_key LIMIT ?"
	args = append(args, q.Limit)
	return queryAll(ctx, tx, func(sc scanner) (s PageSummary, err error) {
		var access string
		if err := sc.Scan(&s.ID, &s.UID, &s.Path, &s.Title, &s.Icon, &access, &s.Revision, &s.Updated, textDest{text: &s.Content}); err != nil {
			return s, err
		}
		s.Access = atrium.Access(access)
		return s, nil
	}, sqlq, args...)
}

// CountPrivate counts the private pages under a folder prefix.
func (tx *Tx) CountPrivate(ctx context.Context, ws int64, prefix string) (int, error) {
	var n int
	cond, args := under("path_key", prefix)
	err := tx.queryRow(ctx, "SELECT COUNT(*) FROM pages WHERE workspace_id = ? AND access = 'private'"+live+cond, append([]any{ws}, args...)...).Scan(&n)
	return n, err
}

// A Folder is a folder implied by page paths.
type Folder struct {
	Path   string
	Pages  int // pages anywhere below
	Public int // public pages anywhere below
}

// Folders lists the folders under a folder prefix ("" for all), in path order.
func (tx *Tx) Folders(ctx context.Context, ws int64, prefix string) ([]Folder, error) {
	cond, args := under("path_key", prefix)
	return queryAll(ctx, tx, func(sc scanner) (f Folder, err error) {
		err = sc.Scan(&f.Path, &f.Pages, &f.Public)
		return f, err
	}, "SELECT path, pages, public_pages FROM folders WHERE workspace_id = ?"+cond+" ORDER BY path_key", append([]any{ws}, args...)...)
}

// FolderExists reports whether pages exist below folder path.
func (tx *Tx) FolderExists(ctx context.Context, ws int64, path string) (bool, error) {
	var n int
	err := tx.queryRow(ctx, "SELECT COUNT(*) FROM folders WHERE workspace_id = ? AND path_key = ?", ws, PathKey(path)).Scan(&n)
	return n > 0, err
}

// PageCount counts the pages of workspace ws, or of every workspace when ws is 0.
func (tx *Tx) PageCount(ctx context.Context, ws int64) (int, error) {
	var n int
	var err error
	if ws == 0 {
		err = tx.queryRow(ctx, "SELECT COUNT(*) FROM pages WHERE trashed_at IS NULL").Scan(&n)
	} else {
		err = tx.queryRow(ctx, "SELECT COUNT(*) FROM pages WHERE workspace_id = ?"+live, ws).Scan(&n)
	}
	return n, err
}

// revisionText is a revision's text (r) read with its page (p): the newest
// revision's is the page's own.
const revisionText = "CASE WHEN r.revision = p.revision THEN p.content ELSE r.content END"

// PageRevisions lists a page's revisions, newest first, below revision before
// (0: from the newest), with their content when withContent.
func (tx *Tx) PageRevisions(ctx context.Context, page, before int64, limit int, withContent bool) ([]atrium.PageRevision, error) {
	// The text's size: on SQLite from a packed text's header; PostgreSQL
	// measures its own, rather than send every text to be measured.
	text := revisionText
	if !withContent && tx.db.engine == Postgres {
		text = "octet_length(" + revisionText + ")"
	}
	q := `SELECT r.revision, r.path, r.content_hash, ` + text + `, COALESCE(pr.handle, ''), r.created_at
		FROM page_revisions r JOIN pages p ON p.id = r.page_id LEFT JOIN principals pr ON pr.id = r.author WHERE r.page_id = ?`
	args := []any{page}
	if before > 0 {
		q += " AND r.revision < ?"
		args = append(args, before)
	}
	q += " ORDER BY r.revision DESC LIMIT ?"
	args = append(args, limit)
	return queryAll(ctx, tx, func(sc scanner) (r atrium.PageRevision, err error) {
		var at int64
		var dest any = textDest{size: &r.Size}
		switch {
		case withContent:
			dest = textDest{text: &r.Content, size: &r.Size}
		case tx.db.engine == Postgres:
			dest = &r.Size
		}
		if err := sc.Scan(&r.Revision, &r.Path, &r.ContentHash, dest, &r.Author, &at); err != nil {
			return r, err
		}
		r.CreatedAt = fromMicros(at)
		return r, nil
	}, q, args...)
}

// PageRevision returns one revision of a page with its content, or not_found.
func (tx *Tx) PageRevision(ctx context.Context, page, revision int64) (atrium.PageRevision, error) {
	var r atrium.PageRevision
	var at int64
	err := tx.queryRow(ctx, `SELECT r.revision, r.path, `+revisionText+`, r.content_hash, COALESCE(pr.handle, ''), r.created_at
		FROM page_revisions r JOIN pages p ON p.id = r.page_id LEFT JOIN principals pr ON pr.id = r.author WHERE r.page_id = ? AND r.revision = ?`, page, revision).
		Scan(&r.Revision, &r.Path, textDest{text: &r.Content}, &r.ContentHash, &r.Author, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return r, atrium.Errorf(atrium.ENotFound, "revision %d not found", revision)
	}
	r.Size, r.CreatedAt = len(r.Content), fromMicros(at)
	return r, err
}

// storedTarget is the target column of link l: empty when the target is
// written as its key is (a wikilink in lower case), which no target is
// otherwise — a tenth of a generated vault's store was targets twice.
func storedTarget(l atrium.PageLink) string {
	if l.Target == l.Key {
		return ""
	}
	return l.Target
}

// linkTarget is the target of a link whose columns hold target and key.
func linkTarget(target, key string) string {
	if target == "" {
		return key
	}
	return target
}

// LinksFrom lists the links written in a page, in order.
func (tx *Tx) LinksFrom(ctx context.Context, page int64) ([]atrium.PageLink, error) {
	return queryAll(ctx, tx, func(sc scanner) (l atrium.PageLink, err error) {
		var kind string
		if err := sc.Scan(&kind, &l.Target, &l.Key, &l.Heading, &l.Line); err != nil {
			return l, err
		}
		l.Kind, l.Target = atrium.LinkKind(kind), linkTarget(l.Target, l.Key)
		return l, nil
	}, "SELECT kind, target, target_key, heading, line FROM page_links WHERE source_id = ? ORDER BY id", page)
}

// An IncomingLink is a link to a page, from another.
type IncomingLink struct {
	SourceID    int64
	SourcePath  string
	SourceTitle string
	atrium.PageLink
}

// LinksTo lists the links whose target key is one of keys, by source path.
func (tx *Tx) LinksTo(ctx context.Context, ws int64, keys []string) ([]IncomingLink, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	args := []any{ws}
	for _, k := range keys {
		args = append(args, k)
	}
	return queryAll(ctx, tx, func(sc scanner) (l IncomingLink, err error) {
		var kind string
		if err := sc.Scan(&l.SourceID, &l.SourcePath, &l.SourceTitle, &kind, &l.Target, &l.Key, &l.Heading, &l.Line); err != nil {
			return l, err
		}
		l.Kind, l.Target = atrium.LinkKind(kind), linkTarget(l.Target, l.Key)
		return l, nil
	}, `SELECT l.source_id, p.path, p.title, l.kind, l.target, l.target_key, l.heading, l.line
		FROM page_links l JOIN pages p ON p.id = l.source_id
		WHERE l.workspace_id = ? AND l.target_key IN (`+placeholders(len(keys))+`) ORDER BY p.path_key, l.id`, args...)
}

// A Target is a page a link key may resolve to, and how it matched.
type Target struct {
	Key   string
	Page  PageSummary
	Match string // "path", "title" or "name"
}

// ResolveKeys finds, for each link key (a target in lower case, without .md),
// the pages it may mean: by path (key + ".md"), by title, or by file name.
func (tx *Tx) ResolveKeys(ctx context.Context, ws int64, keys []string) ([]Target, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	in := placeholders(len(keys))
	args := []any{ws}
	for _, k := range keys {
		args = append(args, k+".md")
	}
	for range 2 {
		args = append(args, ws)
		for _, k := range keys {
			args = append(args, k)
		}
	}
	// Each arm names the workspace, so that each is a search of its own
	// index (SQLite's multi-index OR, PostgreSQL's bitmap OR): with the
	// workspace outside the OR, both read every page of the workspace.
	rows, err := tx.query(ctx, `SELECT id, uid, path, path_key, title, title_key, stem_key, icon, access, revision FROM pages
		WHERE ((workspace_id = ? AND path_key IN (`+in+`)) OR (workspace_id = ? AND title_key IN (`+in+`)) OR (workspace_id = ? AND stem_key IN (`+in+`)))`+live+`
		ORDER BY path_key`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var out []Target
	for rows.Next() {
		var s PageSummary
		var pathKey, titleKey, stemKey, access string
		if err := rows.Scan(&s.ID, &s.UID, &s.Path, &pathKey, &s.Title, &titleKey, &stemKey, &s.Icon, &access, &s.Revision); err != nil {
			return nil, err
		}
		s.Access = atrium.Access(access)
		for _, m := range []struct{ key, how string }{{strings.TrimSuffix(pathKey, ".md"), "path"}, {titleKey, "title"}, {stemKey, "name"}} {
			if want[m.key] {
				out = append(out, Target{Key: m.key, Page: s, Match: m.how})
			}
		}
	}
	return out, rows.Err()
}

func jsonUnmarshalStrings(s string, out *[]string) error {
	if err := json.Unmarshal([]byte(s), out); err != nil {
		return fmt.Errorf("decode tags: %w", err)
	}
	return nil
}

// PathsWithPrefix lists up to limit page paths of workspace ws starting with
// prefix (any case), in path order, and how many there are in all.
func (tx *Tx) PathsWithPrefix(ctx context.Context, ws int64, prefix string, includePrivate bool, limit int) ([]string, int, error) {
	key := PathKey(prefix)
	cond := " WHERE workspace_id = ? AND path_key >= ? AND path_key < ?" + live
	if !includePrivate {
		cond += " AND access = 'public'"
	}
	// U+10FFFF sorts after every character, bytewise on both engines.
	args := []any{ws, key, key + "\U0010FFFF"}
	var total int
	if err := tx.queryRow(ctx, "SELECT COUNT(*) FROM pages"+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := tx.query(ctx, "SELECT path FROM pages"+cond+" ORDER BY path_key LIMIT ?", append(args, limit)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, 0, err
		}
		out = append(out, p)
	}
	return out, total, rows.Err()
}

// FolderPages returns the pages of their own (_index.md) of the given folders
// (keys), by folder key.
func (tx *Tx) FolderPages(ctx context.Context, ws int64, folders []string) (map[string]PageSummary, error) {
	out := map[string]PageSummary{}
	for chunk := range slices.Chunk(folders, 500) {
		args := []any{ws}
		for _, f := range chunk {
			args = append(args, f+"/_index.md")
		}
		rows, err := tx.query(ctx, "SELECT id, uid, path, path_key, title, icon, access, revision, updated_at FROM pages WHERE workspace_id = ? AND path_key IN ("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var s PageSummary
			var key, access string
			if err := rows.Scan(&s.ID, &s.UID, &s.Path, &key, &s.Title, &s.Icon, &access, &s.Revision, &s.Updated); err != nil {
				rows.Close()
				return nil, err
			}
			s.Access = atrium.Access(access)
			out[strings.TrimSuffix(key, "/_index.md")] = s
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PagesAfter returns up to limit pages of every workspace whose IDs follow
// after, in ID order: a walk over all pages in chunks.
func (tx *Tx) PagesAfter(ctx context.Context, after int64, limit int) ([]atrium.Page, error) {
	return queryAll(ctx, tx, scanPage, "SELECT "+pageCols+pageFrom+" WHERE p.id > ? AND p.trashed_at IS NULL ORDER BY p.id LIMIT ?", after, limit)
}

// ReindexPage replaces what the store derived from p's content (headings,
// field lengths, tags, links, search tokens) with idx, leaving the page and
// its history as they are, in a rebuild that started with ClearPostings:
// the page is in no list, unless it was written since. It reports false and
// changes nothing when the page is no longer at p's revision and path, or
// is in the trash: idx was derived from what it was, and the write that
// changed it indexed it itself.
func (tx *Tx) ReindexPage(ctx context.Context, p *atrium.Page, idx PageIndex) (bool, error) {
	var old [SearchFields]int
	var was listing
	err := tx.queryRow(ctx, "SELECT "+listedColumns+", "+lenColumns()+" FROM pages WHERE id = ? AND revision = ? AND path = ? AND trashed_at IS NULL",
		p.ID, p.Revision, p.Path).Scan(append(was.dest(), lenDest(&old)...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	state := rebuilt
	if was.current {
		state = indexed
		if err := tx.basePostings(p.WorkspaceID, p.ID, &was); err != nil {
			return false, err
		}
	}
	if err := tx.setDerived(ctx, p, idx); err != nil {
		return false, err
	}
	return true, tx.replaceIndex(ctx, p, old, idx, state)
}

// setDerived writes what the page's row keeps of idx and of the title and
// tags it was derived with: its stems derive from them again (PageTexts).
func (tx *Tx) setDerived(ctx context.Context, p *atrium.Page, idx PageIndex) error {
	texts, err := json.Marshal(nonNil(idx.Texts))
	if err != nil {
		return err
	}
	tags, err := json.Marshal(nonNil(p.Tags))
	if err != nil {
		return err
	}
	args := append([]any{p.Title, strings.ToLower(p.Title), string(tags), idx.Headings, string(texts)}, lenArgs(idx.Lens, 1)...)
	_, err = tx.exec(ctx, "UPDATE pages SET title = ?, title_key = ?, tags = ?, headings = ?, field_texts = ?, "+lenSets()+", index_epoch = "+indexEpoch+" WHERE id = ?",
		append(args, p.ID)...)
	return err
}

// replaceIndex moves the workspace's search figures from the page's old
// field lengths to idx's and rewrites its index entries.
func (tx *Tx) replaceIndex(ctx context.Context, p *atrium.Page, old [SearchFields]int, idx PageIndex, state indexState) error {
	if err := tx.adjustStats(ctx, p.WorkspaceID, 0, old, -1); err != nil {
		return err
	}
	if err := tx.adjustStats(ctx, p.WorkspaceID, 0, idx.Lens, 1); err != nil {
		return err
	}
	return tx.writeIndex(ctx, p, idx, state)
}

// RefreshPlannerStats has PostgreSQL sample the tables that page writes
// grow. Its plans for an import's statements are made when the workspace's
// tables are nearly empty, and scan them whole; at 26k pages such an import
// had slowed to a few hundred pages a minute, until an ANALYZE let it go
// on at 40k a minute. SQLite's planner needs nothing of the kind.
func (db *DB) RefreshPlannerStats(ctx context.Context) error {
	if db.engine != Postgres {
		return nil
	}
	_, err := db.w.ExecContext(ctx, "ANALYZE pages, page_revisions, page_links, page_tags, folders, search_postings, search_pending")
	return err
}

// ChildFolders lists the folders directly in folder parent (a key, "" for
// the root) whose keys follow after (or equal it, when inclusive), in key
// order, through the parent index: a cost of limit rows at any size of tree.
// Without includePrivate, folders holding no public page are left out.
func (tx *Tx) ChildFolders(ctx context.Context, ws int64, parent, after string, inclusive bool, limit int, includePrivate bool) ([]Folder, error) {
	op := ">"
	if inclusive {
		op = ">="
	}
	q := "SELECT path, pages, public_pages FROM folders WHERE workspace_id = ? AND parent_key = ? AND path_key " + op + " ?"
	if !includePrivate {
		q += " AND public_pages > 0"
	}
	return queryAll(ctx, tx, func(sc scanner) (f Folder, err error) {
		err = sc.Scan(&f.Path, &f.Pages, &f.Public)
		return f, err
	}, q+" ORDER BY path_key LIMIT ?", ws, parent, after, limit)
}

// PageStamp returns the row ID, revision and access of the page at path
// (any case) in workspace ws, or not_found: what a cache of something
// derived from the page checks it against, without reading the page.
func (tx *Tx) PageStamp(ctx context.Context, ws int64, path string) (id, revision int64, access atrium.Access, err error) {
	var a string
	err = tx.queryRow(ctx, "SELECT id, revision, access FROM pages WHERE workspace_id = ? AND path_key = ?", ws, PathKey(path)).Scan(&id, &revision, &a)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, "", atrium.Errorf(atrium.ENotFound, "Page not found at path: %s", path)
	}
	return id, revision, atrium.Access(a), err
}
