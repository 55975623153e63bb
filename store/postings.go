package store

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The postings index keeps, for each stem of a workspace, what every page
// holding it holds of it (an opaque body the search package writes and
// reads): ranking a question then reads its words' lists, not the pages.
//
// A stem's list is cut into rows of consecutive postings, each row named by
// its first and last page and at most postingRowBytes long (or one
// posting): a common word's list is a few dozen rows to read, a rare word's
// one, and writing a page rewrites one short row per stem. A new page, whose
// ID is above every other, joins the last row of each of its stems, or
// starts a row after it once that row is postingRowSealed long. Within a row,
// postings are in page order, each framed as uvarint(page − previous page,
// the first from the row's first page), uvarint(body length), body.
const (
	postingRowBytes  = 8 << 10
	postingRowSealed = 1 << 10
)

// stemKey names one stem's list.
type stemKey struct {
	ws   int64
	stem string
}

func (k stemKey) compare(o stemKey) int {
	if c := cmp.Compare(k.ws, o.ws); c != 0 {
		return c
	}
	return cmp.Compare(k.stem, o.stem)
}

// postEdit says that page now holds body of a stem (nil: nothing).
type postEdit struct {
	key  stemKey
	page int64
	body []byte
}

// pendingPage is a page whose postings a transaction changed: the stems
// whose lists hold its older postings (base), and its postings now.
type pendingPage struct {
	ws     int64
	base   string // stems, space-separated
	stems  []string
	bodies [][]byte
}

// setPostings records the page's postings now; flushPostings writes them.
// The page's row holds the texts its new stems derive from already: for a
// page whose lists hold older postings (indexed), the stems its row derived
// before were given to basePostings first.
func (tx *Tx) setPostings(ws, page int64, idx PageIndex, state indexState) error {
	if len(idx.Stems) != len(idx.Postings) {
		return fmt.Errorf("page index has %d stems and %d postings", len(idx.Stems), len(idx.Postings))
	}
	p := tx.pending[page]
	if p == nil {
		if state == indexed {
			return fmt.Errorf("page %d: the stems its lists hold were not read before its row changed", page)
		}
		p = tx.addPending(ws, page, "")
	}
	p.stems, p.bodies = idx.Stems, idx.Postings
	return nil
}

// basePostings records that the lists of the stems its row was read as
// (was) hold the page's postings until this transaction's change, unless an
// earlier change of the transaction said so already. (For a page waiting in
// search_pending, its row there names them instead: flushPostings reads
// those for all such pages at once.)
func (tx *Tx) basePostings(ws, page int64, was *listing) error {
	if tx.pending[page] != nil {
		return nil
	}
	stems, err := was.stems(tx.db)
	if err != nil {
		return err
	}
	tx.addPending(ws, page, stems)
	return nil
}

func (tx *Tx) addPending(ws, page int64, base string) *pendingPage {
	if tx.pending == nil {
		tx.pending = map[int64]*pendingPage{}
	}
	p := &pendingPage{ws: ws, base: base}
	tx.pending[page] = p
	return p
}

// dropPostings records that the page holds no stem any more.
func (tx *Tx) dropPostings(ctx context.Context, page int64) error {
	var ws int64
	if err := tx.queryRow(ctx, "SELECT workspace_id FROM pages WHERE id = ?", page).Scan(&ws); err != nil {
		return fmt.Errorf("read page: %w", err)
	}
	if tx.pending[page] == nil {
		var was listing
		if err := tx.queryRow(ctx, "SELECT "+listedColumns+" FROM pages WHERE id = ?", page).Scan(was.dest()...); err != nil {
			return fmt.Errorf("read page stems: %w", err)
		}
		if err := tx.basePostings(ws, page, &was); err != nil {
			return err
		}
	}
	p := tx.pending[page]
	p.stems, p.bodies = nil, nil
	_, err := tx.exec(ctx, "UPDATE pages SET index_epoch = "+notListed+" WHERE id = ?", page)
	return err
}

// pendingBases sets the base of each of pages that is pending already to
// what its pending row says.
func (tx *Tx) pendingBases(ctx context.Context, ws int64, pages []int64, pend map[int64]*pendingPage) error {
	for chunk := range slices.Chunk(pages, 500) {
		args := append([]any{ws}, idArgs(chunk)...)
		rows, err := tx.query(ctx, "SELECT page_id, base_stems FROM search_pending WHERE workspace_id = ? AND page_id IN ("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return fmt.Errorf("read pending postings: %w", err)
		}
		for rows.Next() {
			var (
				page int64
				base string
			)
			if err := rows.Scan(&page, &base); err != nil {
				rows.Close()
				return fmt.Errorf("read pending postings: %w", err)
			}
			pend[page].base = base
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read pending postings: %w", err)
		}
	}
	return nil
}

// ClearPostings empties the postings index of every workspace, and its
// words, for a rebuild that then indexes every page again (ReindexPage):
// removing each page from its lists one by one would rewrite every row many
// times. A page is in its stems' lists only while its index_epoch is the
// current one (listedColumns), which this moves past.
func (tx *Tx) ClearPostings(ctx context.Context) error {
	qs := []string{"DELETE FROM search_postings", "DELETE FROM search_pending", "DELETE FROM search_words",
		"INSERT INTO meta (key, value) VALUES ('search.epoch', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS INTEGER) + 1 AS TEXT)"}
	if tx.db.engine == Postgres {
		// Alone, once no writer is between folding into the lists and its
		// commit: the DELETE's snapshot does not hold the rows such a
		// writer inserted, so its postings, with those of the pages that
		// share their rows, would outlive the clear in lists that the
		// new epoch says hold nothing of them.
		qs = append([]string{"SELECT pg_advisory_xact_lock(hashtext(" + allPostingsLock + "))"}, qs...)
	}
	for _, q := range qs {
		if _, err := tx.exec(ctx, q); err != nil {
			return err
		}
	}
	tx.words = nil // they are gone: a page indexed again adds its own
	return nil
}

// allPostingsLock names the lock that writers of the postings index take
// shared and ClearPostings alone (PostgreSQL), per schema.
const allPostingsLock = "'atrium.postings.' || current_schema()"

// postingListsAtOnce is how many stems one statement of flushPostings reads
// the rows of, and postingRowsAtOnce how many rows one writes: an import's
// transaction touches tens of thousands.
const (
	postingListsAtOnce = 100
	postingRowsAtOnce  = 200
)

// flushPostings writes the postings of the pages the transaction changed.
//
// Rewriting a page's postings in place touches one row of each of its stems,
// a hundred or more rows for one page. So a written page goes first to
// search_pending, one row, which searches read beside the lists
// (PostingLists); once a workspace has Options.PendingPages pages there, the
// write that brings it there folds them all into the lists, each row of a
// list rewritten once for all of them. An import's batch folds at once.
func (tx *Tx) flushPostings(ctx context.Context) error {
	pend := tx.pending
	tx.pending = nil
	byWS := map[int64][]int64{}
	for page, p := range pend {
		byWS[p.ws] = append(byWS[p.ws], page)
	}
	wss := slices.Sorted(maps.Keys(byWS))
	for _, ws := range wss {
		pages := byWS[ws]
		slices.Sort(pages)
		if tx.db.engine == Postgres {
			// Writers of one workspace take turns here until they commit:
			// rewriting a row reads it first, and two transactions
			// rewriting the same list at once would each drop the other's
			// pages. Today they already queue on the workspace's
			// search_stats row, which every page write updates; this lock
			// does not lean on that. (On SQLite the one writer sees to it.)
			// They share the lock ClearPostings takes alone.
			if _, err := tx.exec(ctx, "SELECT pg_advisory_xact_lock_shared(hashtext("+allPostingsLock+")), pg_advisory_xact_lock(hashtext(?))",
				"atrium.postings."+strconv.FormatInt(ws, 10)); err != nil {
				return fmt.Errorf("lock the postings index: %w", err)
			}
		}
		waiting, err := tx.PendingCount(ctx, ws)
		if err != nil {
			return fmt.Errorf("count pending postings: %w", err)
		}
		if waiting > 0 {
			if err := tx.pendingBases(ctx, ws, pages, pend); err != nil {
				return err
			}
		}
		if waiting+len(pages) < tx.db.pendingPages {
			if err := tx.writePending(ctx, ws, pages, pend); err != nil {
				return err
			}
			continue
		}
		if err := tx.fold(ctx, ws, pages, pend); err != nil {
			return err
		}
	}
	return nil
}

// writePending writes pages to search_pending.
func (tx *Tx) writePending(ctx context.Context, ws int64, pages []int64, pend map[int64]*pendingPage) error {
	for chunk := range slices.Chunk(pages, postingRowsAtOnce) {
		args := make([]any, 0, 4*len(chunk))
		for _, page := range chunk {
			p := pend[page]
			args = append(args, ws, page, p.base, encodePending(p.stems, p.bodies))
		}
		values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?), ", len(chunk)), ", ")
		if _, err := tx.exec(ctx, "INSERT INTO search_pending (workspace_id, page_id, base_stems, data) VALUES "+values+
			" ON CONFLICT (workspace_id, page_id) DO UPDATE SET base_stems = excluded.base_stems, data = excluded.data", args...); err != nil {
			return fmt.Errorf("write pending postings: %w", err)
		}
	}
	return nil
}

// fold takes the workspace's pending pages and pages into its lists.
func (tx *Tx) fold(ctx context.Context, ws int64, pages []int64, pend map[int64]*pendingPage) error {
	waiting, err := tx.pendingPages(ctx, ws)
	if err != nil {
		return err
	}
	all := make(map[int64]*pendingPage, len(waiting)+len(pages))
	for _, w := range waiting {
		all[w.page] = &pendingPage{ws: ws, base: w.base, stems: w.stems, bodies: w.bodies}
	}
	for _, page := range pages {
		all[page] = pend[page] // its base is the pending row's, read by pendingBases
	}
	order := slices.Sorted(maps.Keys(all))
	n := 0
	for _, p := range all {
		n += strings.Count(p.base, " ") + 1 + len(p.stems)
	}
	edits := make([]postEdit, 0, n)
	for _, page := range order {
		p := all[page]
		for s := range strings.FieldsSeq(p.base) {
			edits = append(edits, postEdit{key: stemKey{ws, s}, page: page})
		}
		for i, s := range p.stems {
			edits = append(edits, postEdit{key: stemKey{ws, s}, page: page, body: p.bodies[i]})
		}
	}
	if err := tx.applyEdits(ctx, edits); err != nil {
		return err
	}
	if len(waiting) > 0 {
		if _, err := tx.exec(ctx, "DELETE FROM search_pending WHERE workspace_id = ?", ws); err != nil {
			return fmt.Errorf("fold pending postings: %w", err)
		}
	}
	return nil
}

// applyEdits rewrites the rows of the lists edits change, all of one
// workspace, in the order made: for one page of a list, the last holds.
func (tx *Tx) applyEdits(ctx context.Context, edits []postEdit) error {
	if len(edits) == 0 {
		return nil
	}
	// By list, then page. Edits are laid out list by list in one array: a
	// slice per list costs an import's batch hundreds of megabytes of
	// garbage.
	at := map[stemKey]int{}
	var keys []stemKey
	var counts []int
	for _, e := range edits {
		i, ok := at[e.key]
		if !ok {
			i = len(keys)
			at[e.key] = i
			keys = append(keys, e.key)
			counts = append(counts, 0)
		}
		counts[i]++
	}
	starts := make([]int, len(keys)+1)
	for i, c := range counts {
		starts[i+1] = starts[i] + c
	}
	grouped := make([]postEdit, len(edits))
	fill := slices.Clone(starts[:len(keys)])
	for _, e := range edits {
		i := at[e.key]
		grouped[fill[i]] = e
		fill[i]++
	}
	byList := make(map[stemKey][]postEdit, len(keys))
	for i, k := range keys {
		es := grouped[starts[i]:starts[i+1]:starts[i+1]]
		if !slices.IsSortedFunc(es, comparePage) {
			slices.SortStableFunc(es, comparePage)
		}
		byList[k] = es
	}
	slices.SortFunc(keys, stemKey.compare)
	w := rowWriter{tx: tx, ws: keys[0].ws}
	for len(keys) > 0 {
		n := min(len(keys), postingListsAtOnce)
		if err := w.rewrite(ctx, keys[:n], byList); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return w.flush(ctx)
}

// waitingPage is a row of search_pending, decoded.
type waitingPage struct {
	page   int64
	base   string
	stems  []string
	bodies [][]byte
}

// pendingPages reads the workspace's pending pages.
func (tx *Tx) pendingPages(ctx context.Context, ws int64) ([]waitingPage, error) {
	return queryAll(ctx, tx, func(sc scanner) (w waitingPage, err error) {
		var data []byte
		if err := sc.Scan(&w.page, &w.base, &data); err != nil {
			return w, err
		}
		w.stems, w.bodies, err = decodePending(data)
		return w, err
	}, "SELECT page_id, base_stems, data FROM search_pending WHERE workspace_id = ?", ws)
}

// encodePending is a page's postings as search_pending keeps them:
// uvarint(len(stem)), stem, uvarint(len(body)), body, for each stem in order.
func encodePending(stems []string, bodies [][]byte) []byte {
	n := 0
	for i, s := range stems {
		n += len(s) + len(bodies[i]) + 4
	}
	out := make([]byte, 0, n)
	for i, s := range stems {
		out = binary.AppendUvarint(out, uint64(len(s)))
		out = append(out, s...)
		out = binary.AppendUvarint(out, uint64(len(bodies[i])))
		out = append(out, bodies[i]...)
	}
	return out
}

func decodePending(data []byte) (stems []string, bodies [][]byte, err error) {
	err = eachPending(data, func(stem, body []byte) {
		stems = append(stems, string(stem))
		bodies = append(bodies, body)
	})
	return stems, bodies, err
}

// eachPending calls fn with each stem and posting of a page's pending
// postings (encodePending), without copying them: a search reads every
// pending page.
func eachPending(data []byte, fn func(stem, body []byte)) error {
	for len(data) > 0 {
		stem, rest, ok := readBytes(data)
		var body []byte
		if ok {
			body, data, ok = readBytes(rest)
		}
		if !ok {
			return errors.New("corrupt pending postings")
		}
		fn(stem, body)
	}
	return nil
}

func comparePage(x, y postEdit) int { return cmp.Compare(x.page, y.page) }

// rowWriter gathers the row writes of a flush into statements of many rows.
type rowWriter struct {
	tx     *Tx
	ws     int64
	gone   []any // stem, first page of rows to delete
	upsert []any // the six columns of rows to write
	merged []rawPosting
	buf    []byte // the rows in upsert
}

// row is a row of a list as rewrite reads it.
type row struct {
	first int64
	data  []byte // nil: sealed, kept as it is
}

// rewrite applies the edits of lists keys, all of one workspace: it reads
// the rows that hold or neighbour the edited pages, merges the edits in, and
// cuts the result into rows again.
func (w *rowWriter) rewrite(ctx context.Context, keys []stemKey, byList map[stemKey][]postEdit) error {
	ws := keys[0].ws
	if ws != w.ws {
		if err := w.flush(ctx); err != nil {
			return err
		}
		w.ws = ws
	}
	// For each list, its rows from the one an edit of the least page
	// belongs to (the last row starting at or before it) to the last
	// starting at or before the greatest. The CROSS JOIN keeps SQLite
	// from scanning the workspace's whole index for them.
	values := strings.TrimSuffix(strings.Repeat("(CAST(? AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT)), ", len(keys)), ", ")
	args := make([]any, 0, 3+3*len(keys))
	for _, k := range keys {
		es := byList[k]
		args = append(args, k.stem, es[0].page, es[len(es)-1].page)
	}
	// A row that only gains pages after its last is left as it is once it
	// is postingRowSealed long: the new pages start a row of their own. An
	// import or a new page then writes what it adds, not the row before.
	args = append(args, postingRowSealed, ws, ws)
	rows, err := w.tx.query(ctx, `WITH e (stem, lo, hi) AS (VALUES `+values+`)
		SELECT p.stem, p.first_page, CASE WHEN e.lo > p.last_page AND length(p.data) >= ? THEN NULL ELSE p.data END
		FROM e CROSS JOIN search_postings p
		WHERE p.workspace_id = ? AND p.stem = e.stem AND p.first_page <= e.hi AND p.first_page >= COALESCE((SELECT MAX(q.first_page) FROM search_postings q
			WHERE q.workspace_id = ? AND q.stem = e.stem AND q.first_page <= e.lo), 0)`, args...)
	if err != nil {
		return fmt.Errorf("read postings: %w", err)
	}
	old := map[string][]row{}
	for rows.Next() {
		var (
			stem string
			r    row
		)
		if err := rows.Scan(&stem, &r.first, &r.data); err != nil {
			rows.Close()
			return fmt.Errorf("read postings: %w", err)
		}
		old[stem] = append(old[stem], r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read postings: %w", err)
	}
	for _, k := range keys {
		rs := old[k.stem]
		slices.SortFunc(rs, func(x, y row) int { return cmp.Compare(x.first, y.first) })
		// Each edit goes to the row its page falls in: the last starting at
		// or before it (the first row, for a page before every row). Rows
		// no edit falls in stay as they are; a sealed row's edits, all
		// after it, start rows of their own.
		es := byList[k]
		for len(es) > 0 {
			at := -1
			for i, r := range rs {
				if r.first > es[0].page {
					break
				}
				at = i
			}
			if at < 0 && len(rs) > 0 {
				at = 0
			}
			end := len(es) // the edits before the next row
			if at >= 0 && at+1 < len(rs) {
				end = sort.Search(len(es), func(i int) bool { return es[i].page >= rs[at+1].first })
			}
			var base *row
			if at >= 0 && rs[at].data != nil {
				base = &rs[at]
			}
			if err := w.rewriteRow(ctx, k.stem, base, es[:end]); err != nil {
				return err
			}
			es = es[end:]
		}
	}
	return nil
}

// rewriteRow merges edits into one row of a list (base; nil: none, the
// edits start rows of their own) and cuts the result into rows again,
// dropping base if no new row takes its place.
func (w *rowWriter) rewriteRow(ctx context.Context, stem string, base *row, edits []postEdit) error {
	var list []rawPosting
	if base != nil {
		var err error
		if list, err = appendRow(nil, base.data, base.first); err != nil {
			return fmt.Errorf("postings of %q: %w", stem, err)
		}
	}
	w.merged = mergePostings(w.merged[:0], list, edits)
	list = w.merged
	rewritten := false
	for len(list) > 0 {
		n, size := 0, 0
		for n < len(list) && (n == 0 || size+len(list[n].body)+2*binary.MaxVarintLen32 <= postingRowBytes) {
			size += len(list[n].body) + 2*binary.MaxVarintLen32
			n++
		}
		first := list[0].page
		rewritten = rewritten || base != nil && first == base.first
		start := len(w.buf)
		w.buf = encodeRow(w.buf, list[:n], first)
		if err := w.add(ctx, stem, first, list[n-1].page, n, w.buf[start:len(w.buf):len(w.buf)]); err != nil {
			return err
		}
		list = list[n:]
	}
	if base != nil && !rewritten {
		return w.drop(ctx, stem, base.first)
	}
	return nil
}

func (w *rowWriter) add(ctx context.Context, stem string, first, last int64, n int, data []byte) error {
	w.upsert = append(w.upsert, w.ws, stem, first, last, n, data)
	if len(w.upsert) >= 6*postingRowsAtOnce {
		return w.flush(ctx)
	}
	return nil
}

func (w *rowWriter) drop(ctx context.Context, stem string, first int64) error {
	w.gone = append(w.gone, stem, first)
	if len(w.gone) >= 2*postingRowsAtOnce {
		return w.flush(ctx)
	}
	return nil
}

// flush runs the writes gathered. Deletions go first: a row deleted is never
// one written again in the same flush (rewrite keeps those).
func (w *rowWriter) flush(ctx context.Context) error {
	if len(w.gone) > 0 {
		pairs := strings.TrimSuffix(strings.Repeat("(CAST(? AS TEXT), CAST(? AS BIGINT)), ", len(w.gone)/2), ", ")
		if _, err := w.tx.exec(ctx, "DELETE FROM search_postings WHERE workspace_id = ? AND (stem, first_page) IN (VALUES "+pairs+")", append([]any{w.ws}, w.gone...)...); err != nil {
			return fmt.Errorf("write postings: %w", err)
		}
		w.gone = w.gone[:0]
	}
	if len(w.upsert) > 0 {
		values := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?), ", len(w.upsert)/6), ", ")
		if _, err := w.tx.exec(ctx, "INSERT INTO search_postings (workspace_id, stem, first_page, last_page, pages, data) VALUES "+values+
			" ON CONFLICT (workspace_id, stem, first_page) DO UPDATE SET last_page = excluded.last_page, pages = excluded.pages, data = excluded.data", w.upsert...); err != nil {
			return fmt.Errorf("write postings: %w", err)
		}
		w.upsert = w.upsert[:0]
		w.buf = nil // the driver may keep what it was given
	}
	return nil
}

// mergePostings appends to out list (by page) with edits (of one list, by
// page) applied.
func mergePostings(out, list []rawPosting, edits []postEdit) []rawPosting {
	i := 0
	for j := 0; j < len(edits); j++ {
		e := edits[j]
		if j+1 < len(edits) && edits[j+1].page == e.page {
			continue // a later edit of the same page holds
		}
		for i < len(list) && list[i].page < e.page {
			out = append(out, list[i])
			i++
		}
		if i < len(list) && list[i].page == e.page {
			i++
		}
		if e.body != nil {
			out = append(out, rawPosting{e.page, e.body})
		}
	}
	return append(out, list[i:]...)
}

type rawPosting struct {
	page int64
	body []byte
}

// appendRow decodes a row's postings, whose first page is first. The bodies
// alias data.
func appendRow(dst []rawPosting, data []byte, first int64) ([]rawPosting, error) {
	page := first
	for len(data) > 0 {
		d, body, rest, ok := readPosting(data)
		if !ok {
			return dst, errCorruptRow
		}
		page += int64(d)
		dst = append(dst, rawPosting{page, body})
		data = rest
	}
	return dst, nil
}

// readPosting reads the posting that data starts with: its page's distance
// from the one before, and its body; rest is what follows.
func readPosting(data []byte) (delta uint64, body, rest []byte, ok bool) {
	delta, n := uvarint(data)
	if n <= 0 {
		return 0, nil, nil, false
	}
	body, rest, ok = readBytes(data[n:])
	return delta, body, rest, ok
}

// readBytes reads the uvarint-prefixed bytes that data starts with.
func readBytes(data []byte) (b, rest []byte, ok bool) {
	l, n := uvarint(data)
	if n <= 0 || uint64(len(data)-n) < l {
		return nil, nil, false
	}
	return data[n : n+int(l)], data[n+int(l):], true
}

var errCorruptRow = errors.New("corrupt postings row")

func encodeRow(dst []byte, list []rawPosting, first int64) []byte {
	prev := first
	for _, p := range list {
		dst = binary.AppendUvarint(dst, uint64(p.page-prev))
		dst = binary.AppendUvarint(dst, uint64(len(p.body)))
		dst = append(dst, p.body...)
		prev = p.page
	}
	return dst
}

// A PostingList is one stem's postings in a workspace, read in page order
// with Next: its rows, less the pages pending, merged with the pending
// pages' postings of the stem.
type PostingList struct {
	Pages int // how many pages hold the stem
	rows  []postingRow
	page  int64
	err   error
	skip  []int64      // pending pages whose postings in rows are old
	delta []rawPosting // the pending pages' postings of the stem, by page
	// the next posting of rows, not a pending page's, once peeked
	peeked, ok bool
	next       rawPosting
}

type postingRow struct {
	first int64
	data  []byte
}

// Next returns the next page holding the stem and its posting body; ok is
// false past the last, or at a row that does not decode (Err says so).
func (l *PostingList) Next() (page int64, body []byte, ok bool) {
	if len(l.skip) == 0 && len(l.delta) == 0 && !l.peeked {
		return l.rowsNext()
	}
	if !l.peeked {
		l.peeked = true
		for {
			l.next.page, l.next.body, l.ok = l.rowsNext()
			if !l.ok || len(l.skip) == 0 || l.next.page < l.skip[0] {
				break
			}
			for len(l.skip) > 0 && l.skip[0] < l.next.page {
				l.skip = l.skip[1:]
			}
			if len(l.skip) == 0 || l.skip[0] != l.next.page {
				break
			}
		}
	}
	if len(l.delta) > 0 && (!l.ok || l.delta[0].page < l.next.page) {
		d := l.delta[0]
		l.delta = l.delta[1:]
		return d.page, d.body, true
	}
	if !l.ok {
		return 0, nil, false
	}
	l.peeked = false
	return l.next.page, l.next.body, true
}

// rowsNext returns the rows' next posting.
func (l *PostingList) rowsNext() (page int64, body []byte, ok bool) {
	for len(l.rows) > 0 && len(l.rows[0].data) == 0 {
		l.rows = l.rows[1:]
		if len(l.rows) > 0 {
			l.page = l.rows[0].first
		}
	}
	if len(l.rows) == 0 || l.err != nil {
		return 0, nil, false
	}
	r := &l.rows[0]
	d, body, rest, ok := readPosting(r.data)
	if !ok {
		l.err = errCorruptRow
		return 0, nil, false
	}
	l.page += int64(d)
	r.data = rest
	return l.page, body, true
}

// Err reports a row that did not decode.
func (l *PostingList) Err() error { return l.err }

func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// PostingLists returns the postings of each of stems in workspace ws, in the
// order given (a stem no page holds has an empty list). One statement reads
// the lists' rows and the pending pages, so that both are of one moment.
func (tx *Tx) PostingLists(ctx context.Context, ws int64, stems []string) ([]*PostingList, error) {
	out := make([]*PostingList, len(stems))
	at := map[string]int{}
	args := []any{ws}
	for i, s := range stems {
		out[i] = &PostingList{}
		if _, ok := at[s]; !ok {
			at[s] = i
			args = append(args, s)
		}
	}
	if len(args) == 1 {
		return out, nil
	}
	args = append(args, ws)
	rows, err := tx.query(ctx, "SELECT 0, stem, first_page, pages, data, '' FROM search_postings WHERE workspace_id = ? AND stem IN ("+placeholders(len(args)-2)+
		") UNION ALL SELECT 1, '', page_id, 0, data, base_stems FROM search_pending WHERE workspace_id = ?", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			pending      int
			stem, base   string
			first, pages int64
			data         []byte
		)
		if err := rows.Scan(&pending, &stem, &first, &pages, &data, &base); err != nil {
			return nil, err
		}
		if pending == 0 {
			l := out[at[stem]]
			l.Pages += int(pages)
			l.rows = append(l.rows, postingRow{first, data})
			continue
		}
		// A pending page: the lists of its base stems hold it no more, and
		// its stems' lists now do.
		for s := range strings.FieldsSeq(base) {
			if i, ok := at[s]; ok {
				out[i].Pages--
				out[i].skip = append(out[i].skip, first)
			}
		}
		err := eachPending(data, func(stem, body []byte) {
			if i, ok := at[string(stem)]; ok {
				out[i].Pages++
				out[i].delta = append(out[i].delta, rawPosting{first, body})
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Sorted here: an ORDER BY would make the engine sort the rows' data.
	for _, i := range at {
		l := out[i]
		slices.Sort(l.skip)
		slices.SortFunc(l.rows, func(x, y postingRow) int { return cmp.Compare(x.first, y.first) })
		if len(l.rows) > 0 {
			l.page = l.rows[0].first
		}
		slices.SortFunc(l.delta, func(x, y rawPosting) int { return cmp.Compare(x.page, y.page) })
	}
	for i, s := range stems {
		if j := at[s]; j != i {
			c := *out[j]
			c.rows = slices.Clone(c.rows)
			out[i] = &c
		}
	}
	return out, nil
}

// CheckPostings verifies the postings index of workspace ws against the
// pages: every list's rows are in page order without overlap, and each
// row's counts and bounds are what it holds; the lists hold each page under
// the stems its row derives, or, for a pending page, under its base stems,
// its pending row holding its postings of the stems its row derives. It reads the
// whole index: for tests and repair, not for serving.
func (tx *Tx) CheckPostings(ctx context.Context, ws int64) error {
	type page struct {
		id    int64
		stems string
	}
	pages, err := queryAll(ctx, tx, func(sc scanner) (p page, err error) {
		var was listing
		if err = sc.Scan(append([]any{&p.id}, was.dest()...)...); err == nil {
			p.stems, err = was.stems(tx.db)
		}
		return p, err
	}, "SELECT id, "+listedColumns+" FROM pages WHERE workspace_id = ?", ws)
	if err != nil {
		return err
	}
	waiting, err := tx.pendingPages(ctx, ws)
	if err != nil {
		return err
	}
	pending := map[int64]waitingPage{}
	for _, w := range waiting {
		pending[w.page] = w
	}
	want := map[string]map[int64]bool{} // what the rows must hold
	add := func(stems string, id int64) {
		for s := range strings.FieldsSeq(stems) {
			if want[s] == nil {
				want[s] = map[int64]bool{}
			}
			want[s][id] = true
		}
	}
	for _, p := range pages {
		w, ok := pending[p.id]
		if !ok {
			add(p.stems, p.id)
			continue
		}
		add(w.base, p.id)
		if got := strings.Join(w.stems, " "); got != p.stems {
			return fmt.Errorf("page %d is pending with stems %q, holds %q", p.id, got, p.stems)
		}
		delete(pending, p.id)
	}
	for _, w := range pending {
		if w.base != "" || len(w.stems) > 0 { // a page gone: it must be in no list
			add(w.base, w.page)
			if len(w.stems) > 0 {
				return fmt.Errorf("page %d is gone but pending with stems %q", w.page, w.stems)
			}
		}
	}
	type row struct {
		stem               string
		first, last, pages int64
		data               []byte
	}
	all, err := queryAll(ctx, tx, func(sc scanner) (r row, err error) {
		err = sc.Scan(&r.stem, &r.first, &r.last, &r.pages, &r.data)
		return r, err
	}, "SELECT stem, first_page, last_page, pages, data FROM search_postings WHERE workspace_id = ? ORDER BY stem, first_page", ws)
	if err != nil {
		return err
	}
	got := map[string]map[int64]bool{}
	for i, r := range all {
		list, err := appendRow(nil, r.data, r.first)
		if err != nil {
			return fmt.Errorf("%q row at %d: %w", r.stem, r.first, err)
		}
		switch {
		case len(list) == 0 || int64(len(list)) != r.pages:
			return fmt.Errorf("%q row at %d holds %d postings, says %d", r.stem, r.first, len(list), r.pages)
		case list[0].page != r.first || list[len(list)-1].page != r.last:
			return fmt.Errorf("%q row at %d spans %d–%d, says %d–%d", r.stem, r.first, list[0].page, list[len(list)-1].page, r.first, r.last)
		case i > 0 && all[i-1].stem == r.stem && all[i-1].last >= r.first:
			return fmt.Errorf("%q rows at %d and %d overlap", r.stem, all[i-1].first, r.first)
		}
		for j, p := range list {
			if j > 0 && p.page <= list[j-1].page {
				return fmt.Errorf("%q row at %d is out of order at page %d", r.stem, r.first, p.page)
			}
			if len(p.body) == 0 {
				return fmt.Errorf("%q row at %d: page %d has an empty posting", r.stem, r.first, p.page)
			}
			if got[r.stem] == nil {
				got[r.stem] = map[int64]bool{}
			}
			got[r.stem][p.page] = true
		}
	}
	for s, pages := range want {
		for p := range pages {
			if !got[s][p] {
				return fmt.Errorf("page %d should be in the list of %q and is not", p, s)
			}
		}
	}
	for s, pages := range got {
		for p := range pages {
			if !want[s][p] {
				return fmt.Errorf("page %d is in the list of %q and should not be", p, s)
			}
		}
	}
	return nil
}

// PendingCount is how many pages of workspace ws wait beside the lists.
func (tx *Tx) PendingCount(ctx context.Context, ws int64) (int, error) {
	var n int
	err := tx.queryRow(ctx, "SELECT COUNT(*) FROM search_pending WHERE workspace_id = ?", ws).Scan(&n)
	return n, err
}
