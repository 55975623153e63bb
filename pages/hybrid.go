package pages

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"maps"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
)

// Hybrid search: with an embedder set (SetEmbedder), pages are embedded by
// section in the background (RunEmbeddings), and a query of plain words is
// ranked by its words (BM25) and by the nearness of its meaning to the
// sections' (cosine), the two rankings fused by reciprocal rank fusion.
const (
	// rrfK is reciprocal rank fusion's constant (Cormack et al. 2009): a
	// hit's fused score is the sum, over the rankings holding it, of
	// 1/(rrfK+rank). 60 is the paper's value and what Elasticsearch,
	// OpenSearch and basic-memory use; a larger k flattens the top ranks'
	// lead, a smaller one lets either ranking's first hits dominate.
	rrfK = 60
	// rrfDepth is how many hits of each ranking are fused.
	rrfDepth = 50
	// maxSections bounds the vectors of one page; a longer page's last
	// section holds the rest of its text (cut to maxSectionBytes).
	maxSections = 32
	// maxSectionBytes bounds one section's text sent to the endpoint:
	// about 500 tokens, within every common embedding model's window.
	maxSectionBytes = 2000
	// embedBatchPages is how many pages the worker embeds per round.
	embedBatchPages = 16
	// DefaultQueryEmbedTimeout is how long a search waits for its query's
	// vector before answering from words alone.
	DefaultQueryEmbedTimeout = 2 * time.Second
	// embedDownFor is how long searches skip the endpoint after it failed
	// one: a search then costs nothing while it is down.
	embedDownFor = 10 * time.Second
)

// SetEmbedder turns hybrid search on with e (nil: off). Call it before
// serving and before RunEmbeddings.
func (s *Service) SetEmbedder(e atrium.Embedder) {
	s.embedder = e
	if s.QueryEmbedTimeout == 0 {
		s.QueryEmbedTimeout = DefaultQueryEmbedTimeout
	}
}

// A Section is the part of a page one vector stands for: the text before
// the first heading, or a heading and its text up to the next heading.
type Section struct {
	Heading string // the heading path, "Setup > Linux"; "" before the first heading
	Line    int    // the first line in the page (frontmatter counted), 1-based
	Text    string // what is embedded: the page's title, the heading path and the text
}

// Sections splits a page into the sections it is embedded by. Empty
// sections (a heading right before another) are left out, but a page
// always has one: its title.
func Sections(title, content string) []Section {
	_, body, d := markdown.ParsePage(content)
	lines := strings.Split(markdown.PlainText(body), "\n")
	off := markdown.LinesBefore(content, body) // headings' lines count the frontmatter's
	type span struct {
		heading    string
		start, end int // lines, 0-based, end exclusive; start is the heading's own line
	}
	var spans []span
	first := len(lines)
	if len(d.Headings) > 0 {
		first = d.Headings[0].Line - off - 1
	}
	spans = append(spans, span{"", 0, first})
	for i, h := range d.Headings {
		end := len(lines)
		if i+1 < len(d.Headings) {
			end = d.Headings[i+1].Line - off - 1
		}
		spans = append(spans, span{strings.Join(h.Path, " > "), h.Line - off - 1, end})
	}
	var out []Section
	for i, sp := range spans {
		if len(out) == maxSections-1 && i < len(spans)-1 {
			sp.end = len(lines) // the last section takes the rest
		}
		var text string
		if sp.start < sp.end {
			from := sp.start
			if sp.heading != "" {
				from++ // the heading line is the heading path
			}
			text = strings.TrimSpace(strings.Join(lines[min(from, sp.end):sp.end], "\n"))
		}
		if text == "" && (sp.heading == "" || i+1 < len(spans) && isChild(spans[i+1].heading, sp.heading)) {
			continue // nothing of its own
		}
		out = append(out, Section{Heading: sp.heading, Line: off + sp.start + 1, Text: sectionText(title, sp.heading, text)})
		if len(out) == maxSections {
			break
		}
	}
	if len(out) == 0 {
		out = append(out, Section{Line: 1, Text: sectionText(title, "", "")})
	}
	return out
}

func isChild(heading, parent string) bool { return strings.HasPrefix(heading, parent+" > ") }

func sectionText(title, heading, text string) string {
	var b strings.Builder
	b.WriteString(title)
	if heading != "" {
		b.WriteString("\n" + heading)
	}
	if text != "" {
		b.WriteString("\n\n" + text)
	}
	s := b.String()
	if len(s) > maxSectionBytes {
		cut := maxSectionBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// quantize stores v as int8s and a scale, after normalising it, so that a
// dot product is the cosine: 4 bytes per dimension become 1, at a cosine
// error of about 0.4% of the scale (under 0.01 for 256+ dimensions), far
// below what separates neighbours; ranking is by rank anyway.
func quantize(v []float32) (scale float32, q []byte) {
	var n, m float64
	for _, x := range v {
		n += float64(x) * float64(x)
		m = max(m, math.Abs(float64(x)))
	}
	q = make([]byte, len(v))
	if n == 0 || m == 0 {
		return 0, q
	}
	norm := math.Sqrt(n)
	sc := m / norm / 127
	for i, x := range v {
		q[i] = byte(int8(math.Round(float64(x) / norm / sc)))
	}
	return float32(sc), q
}

// normalized returns v scaled to length 1 (v itself when it is zero).
func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(n))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// EmbedStatus is how far the worker is with a workspace.
type EmbedStatus struct {
	Model    string
	Embedded int // live pages whose vectors are of their current revision
	Waiting  int
}

// EmbedStatus reports the caller's workspace's embedding progress; off
// when no embedder is set.
func (s *Service) EmbedStatus(ctx context.Context) (EmbedStatus, bool, error) {
	a, _, err := reader(ctx)
	if err != nil || s.embedder == nil {
		return EmbedStatus{}, false, err
	}
	st := EmbedStatus{Model: s.embedder.Model()}
	err = s.db.View(ctx, func(tx *store.Tx) (err error) {
		st.Embedded, st.Waiting, err = tx.EmbedCounts(ctx, a.Workspace.ID, st.Model)
		return err
	})
	return st, true, err
}

// RunEmbeddings embeds the pages of every workspace whose vectors are
// missing or stale, until ctx ends. It reads what changed from the store,
// so writes never wait for it, and a restart resumes where it stopped.
// While the endpoint is down it waits longer each time (up to
// maxEmbedBackoff) and sends one request per try; a page the endpoint
// refuses waits on its own, holding no other back.
func (s *Service) RunEmbeddings(ctx context.Context) {
	if s.embedder == nil {
		return
	}
	poll := cmp.Or(s.EmbedPoll, 500*time.Millisecond)
	var (
		seen    int64 = -1 // EmbedWork when the last scan found nothing
		retryAt time.Time
		backoff time.Duration
	)
	for {
		var work int64
		err := s.db.View(ctx, func(tx *store.Tx) (err error) {
			work, err = tx.EmbedWork(ctx)
			return err
		})
		if err == nil && (work != seen || !retryAt.IsZero() && !time.Now().Before(retryAt)) {
			err = s.embedStale(ctx)
			if err == nil {
				seen = work
				err = s.db.View(ctx, func(tx *store.Tx) (err error) {
					retryAt, err = tx.NextEmbedRetry(ctx)
					return err
				})
			}
		}
		wait := poll
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			backoff = min(max(2*backoff, time.Second), maxEmbedBackoff)
			wait = backoff
			s.log.Warn("embedding pages: will try again", "in", backoff, "err", err)
		default:
			if backoff > 0 {
				s.log.Info("embedding pages: the endpoint answers again")
			}
			backoff = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

const maxEmbedBackoff = 5 * time.Minute

// embedStale sweeps the pages once, in id order, embedding the stale ones,
// until the end or the endpoint fails; a page written behind the sweep is
// the next sweep's (the worker's figure of work moved).
func (s *Service) embedStale(ctx context.Context) error {
	model := s.embedder.Model()
	for after := int64(0); ; {
		var jobs []store.EmbedJob
		if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
			jobs, err = tx.StaleEmbeddings(ctx, model, after, embedBatchPages)
			return err
		}); err != nil || len(jobs) == 0 {
			return err
		}
		after = jobs[len(jobs)-1].Page
		secs := make([][]Section, len(jobs))
		var texts []string
		for i, j := range jobs {
			secs[i] = Sections(j.Title, j.Content)
			for _, sc := range secs[i] {
				texts = append(texts, sc.Text)
			}
		}
		start := time.Now()
		vecs, err := s.embedder.Embed(ctx, texts)
		failed := map[int]error{}
		switch {
		case err == nil:
		case atrium.ErrorCode(err) == atrium.EUnavailable || ctx.Err() != nil:
			return err
		default:
			// Refused: find the pages it refuses, one at a time, so that
			// one page the model cannot take holds back no other.
			vecs = vecs[:0]
			for i := range jobs {
				v, err := s.embedder.Embed(ctx, textsOf(secs[i]))
				if atrium.ErrorCode(err) == atrium.EUnavailable || ctx.Err() != nil {
					return err
				}
				if err != nil {
					failed[i] = err
					v = make([][]float32, len(secs[i]))
				}
				vecs = append(vecs, v...)
			}
		}
		s.embedStats.pages.Add(int64(len(jobs) - len(failed)))
		s.embedStats.sections.Add(int64(len(texts)))
		s.embedStats.wait.Add(int64(time.Since(start)))
		err = s.db.Update(ctx, func(tx *store.Tx) error {
			at := 0
			for i, j := range jobs {
				n := len(secs[i])
				if ferr := failed[i]; ferr != nil {
					s.log.Warn("embedding a page: the endpoint refused it", "page", j.Path, "failures", j.Failures+1, "err", ferr)
					wait := min(time.Minute<<min(j.Failures, 10), 24*time.Hour)
					if err := tx.EmbedFailed(ctx, j, model, tx.Now().Add(wait)); err != nil {
						return err
					}
					at += n
					continue
				}
				sv := make([]store.SectionVector, n)
				for k, sc := range secs[i] {
					scale, q := quantize(vecs[at+k])
					sv[k] = store.SectionVector{Section: k, Heading: sc.Heading, Line: sc.Line, Scale: scale, Vec: q}
				}
				at += n
				if _, err := tx.PutVectors(ctx, j, model, sv); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
}

func textsOf(secs []Section) []string {
	out := make([]string, len(secs))
	for i, s := range secs {
		out[i] = s.Text
	}
	return out
}

// EmbedCounters are what the worker has done since start: for benchmarks.
type EmbedCounters struct {
	Pages, Sections int64
	EndpointTime    time.Duration
}

// EmbedCounters reports the worker's totals.
func (s *Service) EmbedCounters() EmbedCounters {
	return EmbedCounters{s.embedStats.pages.Load(), s.embedStats.sections.Load(), time.Duration(s.embedStats.wait.Load())}
}

type embedStats struct{ pages, sections, wait atomic.Int64 }

// vecIndex is a workspace's section vectors in memory, as one int8 matrix:
// ranking 100k sections reads 100k rows of the store otherwise.
type vecIndex struct {
	gen    int64
	model  string
	dims   int
	pages  []int64 // per section, in page order
	secs   []int32
	scales []float32
	data   []int8 // len(pages) × dims
	// signs holds, for an index of coarseRows rows or more, the sign of
	// each dimension of each row, 64 to a word: nearest's coarse pass.
	signs []uint64
	words int // per row
}

// An index this large is ranked in two passes: every row by the Hamming
// distance of its signs to the question's (a popcount per 64 dimensions,
// some twenty times less work than the int8 dot product), then the
// coarseKeep closest rows exactly. Below it every row is ranked exactly.
// Binary quantisation with exact rescoring is what the vector stores do
// at this scale; its recall holds for the high-dimensional vectors real
// models give, and the rescoring makes the order exact among what it kept.
const (
	coarseRows = 50_000
	coarseKeep = 4096
)

// buildSigns fills x.signs for a large index.
func (x *vecIndex) buildSigns() {
	if len(x.pages) < coarseRows || x.dims == 0 {
		return
	}
	x.words = (x.dims + 63) / 64
	x.signs = make([]uint64, len(x.pages)*x.words)
	for i := range x.pages {
		row := x.data[i*x.dims : (i+1)*x.dims]
		for j, v := range row {
			if v >= 0 {
				x.signs[i*x.words+j/64] |= 1 << (j % 64)
			}
		}
	}
}

func (x *vecIndex) bytes() int { return len(x.data) + 16*len(x.pages) }

// VectorCacheBytes is the memory the cached vectors of every workspace
// hold: for benchmarks.
func (s *Service) VectorCacheBytes() int {
	s.vecs.mu.Lock()
	defer s.vecs.mu.Unlock()
	n := 0
	for _, x := range s.vecs.wss {
		n += x.bytes()
	}
	return n
}

// vecCache keeps the vecIndex of the workspaces searched last, each of one
// generation of its vectors (store.VectorGeneration). A search finds an
// index older than the vectors while the worker embeds: it ranks with the
// old one (the words side is exact and current; this side lags by one
// load) and has the new one loaded in the background, rather than pay a
// whole load (hundreds of milliseconds at 10k pages) after every write.
type vecCache struct {
	mu        sync.Mutex
	wss       map[int64]*vecIndex
	load      sync.Mutex // one load at a time: two would hold two copies
	reloading map[int64]bool
}

// maxCachedIndexes bounds how many workspaces' vectors stay in memory.
const maxCachedIndexes = 8

func (c *vecCache) get(ctx context.Context, db *store.DB, ws int64, model string) (*vecIndex, error) {
	var gen int64
	if err := db.View(ctx, func(tx *store.Tx) (err error) {
		gen, err = tx.VectorGeneration(ctx, ws)
		return err
	}); err != nil || gen == 0 {
		return nil, err
	}
	fresh := func() *vecIndex {
		c.mu.Lock()
		defer c.mu.Unlock()
		if x := c.wss[ws]; x != nil && x.gen >= gen && x.model == model {
			return x
		}
		return nil
	}
	if x := fresh(); x != nil {
		return x, nil
	}
	c.mu.Lock()
	if x := c.wss[ws]; x != nil && x.model == model {
		if !c.reloading[ws] {
			if c.reloading == nil {
				c.reloading = map[int64]bool{}
			}
			c.reloading[ws] = true
			go func() {
				lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				defer cancel()
				// A failed load leaves the old index: the next search tries again.
				_, _ = c.loadIndex(lctx, db, ws, model, gen, fresh)
				c.mu.Lock()
				delete(c.reloading, ws)
				c.mu.Unlock()
			}()
		}
		c.mu.Unlock()
		return x, nil
	}
	c.mu.Unlock()
	// No index yet (the first search since the server started): a large
	// workspace's takes seconds to read (3.7 s at 100k pages). It is read
	// in the background; a search waits for it a moment, and past that
	// answers by words alone with a note, as when the endpoint is slow.
	type loaded struct {
		x   *vecIndex
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		x, err := c.loadIndex(lctx, db, ws, model, gen, fresh)
		done <- loaded{x, err}
	}()
	select {
	case l := <-done:
		return l.x, l.err
	case <-time.After(firstLoadWait):
		return nil, errLoading
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// firstLoadWait is how long a search waits for a workspace's first index.
const firstLoadWait = time.Second

// errLoading says the vectors are being read for the first time.
var errLoading = errors.New("the vectors are loading")

// loadIndex reads workspace ws's vectors into a new index and caches it,
// unless one as fresh as gen came meanwhile.
func (c *vecCache) loadIndex(ctx context.Context, db *store.DB, ws int64, model string, gen int64, fresh func() *vecIndex) (*vecIndex, error) {
	c.load.Lock()
	defer c.load.Unlock()
	if x := fresh(); x != nil {
		return x, nil
	}
	x := &vecIndex{model: model}
	err := db.View(ctx, func(tx *store.Tx) error {
		// The generation read with the rows: later writes make a newer one.
		g, err := tx.VectorGeneration(ctx, ws)
		if err != nil {
			return err
		}
		x.gen = g
		return tx.EachVector(ctx, ws, model, func(page int64, section int, scale float32, vec []byte) error {
			if x.dims == 0 {
				x.dims = len(vec)
			}
			if len(vec) != x.dims {
				return nil // another length: left from before a change of model
			}
			x.pages = append(x.pages, page)
			x.secs = append(x.secs, int32(section))
			x.scales = append(x.scales, scale)
			for _, b := range vec {
				x.data = append(x.data, int8(b))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wss == nil {
		c.wss = map[int64]*vecIndex{}
	}
	if len(c.wss) >= maxCachedIndexes {
		for k := range c.wss {
			delete(c.wss, k) // any: a workspace searched again reloads
			break
		}
	}
	x.buildSigns()
	c.wss[ws] = x
	return x, nil
}

// vecHit is a page ranked by its nearest section.
type vecHit struct {
	page    int64
	section int32
	sim     float32
}

type vecHeap []vecHit

func (h vecHeap) Len() int { return len(h) }
func (h vecHeap) Less(i, j int) bool {
	return h[i].sim < h[j].sim || h[i].sim == h[j].sim && h[i].page > h[j].page
}
func (h vecHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *vecHeap) Push(x any)   { *h = append(*h, x.(vecHit)) }
func (h *vecHeap) Pop() any     { old := *h; x := old[len(old)-1]; *h = old[:len(old)-1]; return x }

// nearest returns the k pages whose best section is nearest q (normalised),
// best first, among those keep accepts (nil: all). The query is quantised
// like the sections, so the scan is integer multiply-adds (three times the
// speed of converting each int8 to float), and the cores share the rows.
func (x *vecIndex) nearest(q []float32, k int, keep func(int64) bool) []vecHit {
	if len(q) != x.dims || k <= 0 || len(x.pages) == 0 {
		return nil
	}
	qs, qb := quantize(q)
	qi := make([]int32, len(qb))
	for i, b := range qb {
		qi[i] = int32(int8(b))
	}
	// A filter (a folder, tags, a reader's visibility) could leave fewer
	// than k of the coarse pass's rows: those searches rank every row.
	if x.signs != nil && keep == nil {
		return x.coarse(qi, qs, k)
	}
	// Split at page boundaries, one part per core.
	parts := min(runtime.GOMAXPROCS(0), 4, max(1, len(x.pages)/4096))
	bounds := []int{0}
	for p := 1; p < parts; p++ {
		i := len(x.pages) * p / parts
		for i < len(x.pages) && x.pages[i] == x.pages[i-1] {
			i++
		}
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(x.pages))
	heaps := make([]vecHeap, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() { heaps[p] = x.scan(qi, qs, k, keep, bounds[p], bounds[p+1]) })
	}
	wg.Wait()
	var all vecHeap
	for _, h := range heaps {
		all = append(all, h...)
	}
	slices.SortFunc(all, func(a, b vecHit) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		return cmp.Compare(a.page, b.page)
	})
	return all[:min(k, len(all))]
}

// coarse ranks a large index in two passes (see coarseRows).
func (x *vecIndex) coarse(q []int32, qs float32, k int) []vecHit {
	qsign := make([]uint64, x.words)
	for j, v := range q {
		if v >= 0 {
			qsign[j/64] |= 1 << (j % 64)
		}
	}
	n := len(x.pages)
	dist := make([]uint16, n)
	parts := min(runtime.GOMAXPROCS(0), 4)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for i := n * p / parts; i < n*(p+1)/parts; i++ {
				row, d := x.signs[i*x.words:(i+1)*x.words], 0
				for w, b := range row {
					d += bits.OnesCount64(b ^ qsign[w])
				}
				dist[i] = uint16(d)
			}
		})
	}
	wg.Wait()
	// The distance within which coarseKeep rows (or 8k, if more) lie.
	hist := make([]int, x.words*64+1)
	for _, d := range dist {
		hist[d]++
	}
	limit, seen := 0, 0
	for want := max(coarseKeep, 8*k); limit < len(hist)-1; limit++ {
		if seen += hist[limit]; seen >= want {
			break
		}
	}
	best := map[int64]vecHit{}
	d := x.dims
	for i, dd := range dist {
		if int(dd) > limit {
			continue
		}
		row := x.data[i*d : i*d+d]
		var s int32
		for j, v := range q {
			s += v * int32(row[j])
		}
		sim, page := float32(s)*qs*x.scales[i], x.pages[i]
		if b, ok := best[page]; !ok || sim > b.sim {
			best[page] = vecHit{page: page, section: x.secs[i], sim: sim}
		}
	}
	all := slices.Collect(maps.Values(best))
	slices.SortFunc(all, func(a, b vecHit) int {
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		return cmp.Compare(a.page, b.page)
	})
	return all[:min(k, len(all))]
}

// scan ranks the rows [from, to) into a heap of the k best pages.
func (x *vecIndex) scan(q []int32, qs float32, k int, keep func(int64) bool, from, to int) vecHeap {
	h := make(vecHeap, 0, k+1)
	d := x.dims
	best := vecHit{page: -1}
	flush := func() {
		switch {
		case best.page < 0:
		case len(h) < k:
			heap.Push(&h, best)
		case best.sim > h[0].sim || best.sim == h[0].sim && best.page < h[0].page:
			h[0] = best
			heap.Fix(&h, 0)
		}
	}
	cur, skip := int64(-1), false
	for i := from; i < to; i++ {
		if page := x.pages[i]; page != cur {
			flush()
			cur, skip = page, keep != nil && !keep(page)
			best = vecHit{page: page, sim: float32(math.Inf(-1))}
			if skip {
				best.page = -1
			}
		}
		if skip {
			continue
		}
		row := x.data[i*d : i*d+d]
		row = row[:len(q)]
		var s0, s1, s2, s3 int32
		j := 0
		for ; j+4 <= len(q); j += 4 {
			s0 += q[j] * int32(row[j])
			s1 += q[j+1] * int32(row[j+1])
			s2 += q[j+2] * int32(row[j+2])
			s3 += q[j+3] * int32(row[j+3])
		}
		for ; j < len(q); j++ {
			s0 += q[j] * int32(row[j])
		}
		if sim := float32(s0+s1+s2+s3) * qs * x.scales[i]; sim > best.sim {
			best.sim, best.section = sim, x.secs[i]
		}
	}
	flush()
	return h
}

// vectorSide is the vector ranking of one search.
type vectorSide struct {
	hits []vecHit // best first, each passing the search's filter
	note string   // why there are none, when the endpoint failed
}

// searchVectors ranks the pages of ws nearest question that f lets through.
// It never fails the search: an endpoint down or slow leaves a note.
func (s *Service) searchVectors(ctx context.Context, ws int64, question string, f store.CandidateFilter, depth int) vectorSide {
	if until := s.embedDown.Load(); until != 0 && time.Now().UnixNano() < until {
		return vectorSide{note: noteEmbedDown}
	}
	model := s.embedder.Model()
	x, err := s.vecs.get(ctx, s.db, ws, model)
	if errors.Is(err, errLoading) {
		return vectorSide{note: noteVectorsLoading}
	}
	if err != nil || x == nil {
		if err != nil && ctx.Err() == nil {
			s.log.Warn("hybrid search: reading vectors", "err", err)
		}
		return vectorSide{}
	}
	ectx, cancel := context.WithTimeout(ctx, s.QueryEmbedTimeout)
	vecs, err := s.embedder.Embed(ectx, []string{question})
	cancel()
	if err != nil || len(vecs) != 1 {
		if ctx.Err() != nil {
			return vectorSide{}
		}
		s.embedDown.Store(time.Now().Add(embedDownFor).UnixNano())
		s.log.Warn("hybrid search: the embeddings endpoint failed; answering from words", "err", err)
		return vectorSide{note: noteEmbedDown}
	}
	s.embedDown.Store(0)
	var keep func(int64) bool
	if f.Prefix != "" || len(f.Tags) > 0 || !f.IncludePrivate {
		var allowed []int64
		if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
			allowed, err = tx.FilterPages(ctx, ws, f)
			return err
		}); err != nil {
			return vectorSide{}
		}
		keep = func(id int64) bool { _, ok := slices.BinarySearch(allowed, id); return ok }
	}
	// Pages deleted or trashed since the index was read may be among the
	// nearest; a few more than needed are ranked, and every one passes
	// the store's filter, the one lexical hits pass.
	hits := x.nearest(normalized(vecs[0]), depth+depth/2, keep)
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.page
	}
	var live []int64
	if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		live, err = tx.FilterPagesIn(ctx, ws, ids, f)
		return err
	}); err != nil {
		return vectorSide{}
	}
	out := hits[:0]
	for _, h := range hits {
		if h.sim <= s.MinSimilarity {
			break // hits come best first
		}
		if _, ok := slices.BinarySearch(live, h.page); ok && len(out) < depth {
			out = append(out, h)
		}
	}
	return vectorSide{hits: out}
}

const noteEmbedDown = "the embeddings endpoint did not answer: these results rank by words alone"

// noteVectorsLoading is the note of a search made while the server reads a
// workspace's vectors for the first time.
const noteVectorsLoading = "the vectors are still loading (the first search since the server started): these results rank by words alone"

// plainWords reports whether q is only optional words: the queries hybrid
// search widens. Required, excluded, quoted and prefix terms say exactly
// which words a hit must hold, which a vector cannot.
func plainWords(q search.Query) bool {
	for _, t := range q.Terms {
		if t.Required || t.Excluded || t.Prefix || t.Phrase != nil || t.Text == "" {
			return false
		}
	}
	return len(q.Terms) > 0
}

// fused is a hit of the fused ranking, with what ranked it.
type fused struct {
	hit
	lexRank, vecRank int // 1-based; 0: not ranked by it
	lexScore         float64
	vec              vecHit
}

// fuse merges the lexical ranking lex (best first) and the vector ranking
// vec by reciprocal rank fusion; keys holds the path keys of vector hits.
func fuse(lex []hit, vec []vecHit, keys map[int64]string) []fused {
	byID := map[int64]*fused{}
	var out []*fused
	for i, h := range lex {
		f := &fused{hit: h, lexRank: i + 1, lexScore: h.score}
		f.score = 1.0 / float64(rrfK+i+1)
		byID[h.id] = f
		out = append(out, f)
	}
	for i, v := range vec {
		f := byID[v.page]
		if f == nil {
			key, ok := keys[v.page]
			if !ok {
				continue // gone
			}
			f = &fused{hit: hit{id: v.page, key: key}}
			byID[v.page] = f
			out = append(out, f)
		}
		f.vecRank, f.vec = i+1, v
		f.score += 1.0 / float64(rrfK+i+1)
	}
	res := make([]fused, len(out))
	for i, f := range out {
		res[i] = *f
	}
	slices.SortStableFunc(res, func(x, y fused) int {
		if c := cmp.Compare(y.score, x.score); c != 0 {
			return c
		}
		// Equal fused scores: the better lexical rank (exact words
		// first), then the path.
		if c := cmp.Compare(rankOrMax(x.lexRank), rankOrMax(y.lexRank)); c != 0 {
			return c
		}
		return cmp.Compare(x.key, y.key)
	})
	return res
}

func rankOrMax(r int) int {
	if r == 0 {
		return math.MaxInt
	}
	return r
}

// fusionSignals says which rankings placed h where: its lexical rank and
// BM25 score, its vector rank, similarity and nearest section.
func fusionSignals(h fused, sec store.SectionVector, near bool) []Signal {
	var out []Signal
	if h.lexRank > 0 {
		out = append(out, Signal{Name: "lexical", Score: round(1 / float64(rrfK+h.lexRank)), Rank: h.lexRank})
	}
	if h.vecRank > 0 {
		sg := Signal{Name: "vector", Score: round(1 / float64(rrfK+h.vecRank)), Rank: h.vecRank, Similarity: round(float64(h.vec.sim))}
		if near {
			sg.Section = cmp.Or(sec.Heading, "(top)")
		}
		out = append(out, sg)
	}
	return out
}

// sectionSnippet is the match line and context of a hit found through its
// section sec of page content: the section's first line of text.
func sectionSnippet(content string, sec store.SectionVector) (int, string) {
	lines := strings.Split(content, "\n")
	for i := sec.Line - 1; i >= 0 && i < len(lines) && i < sec.Line+8; i++ {
		if t := strings.TrimSpace(lines[i]); t != "" && !(sec.Heading != "" && i == sec.Line-1) {
			if len(t) > 200 {
				t = t[:200]
				for len(t) > 0 && !utf8.ValidString(t) {
					t = t[:len(t)-1]
				}
				t += "…"
			}
			return i + 1, t
		}
	}
	return sec.Line, ""
}
