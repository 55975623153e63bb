package store

import (
	"context"
	"slices"
	"time"
)

// An EmbedJob is a page whose vectors are missing or of another revision
// or model than its own: the embedding worker's to do.
type EmbedJob struct {
	Page, Workspace, Revision int64
	Path, Title, Content      string
	Failures                  int
}

// StaleEmbeddings returns up to limit pages after page id after, of every
// workspace, whose vectors are not of their current revision by model,
// leaving out those waiting after a failure until next_at. Trashed pages
// wait: their vectors stay, and no search sees them. A worker sweeps with
// after as its cursor: from the start each time, the scan would walk past
// every page already done, and a first embedding of 100k pages slows from
// ~290 to ~45 pages/s as it goes.
func (tx *Tx) StaleEmbeddings(ctx context.Context, model string, after int64, limit int) ([]EmbedJob, error) {
	return queryAll(ctx, tx, func(sc scanner) (j EmbedJob, err error) {
		err = sc.Scan(&j.Page, &j.Workspace, &j.Revision, &j.Path, &j.Title, textDest{text: &j.Content}, &j.Failures)
		return j, err
	}, `SELECT p.id, p.workspace_id, p.revision, p.path, p.title, p.content, COALESCE(e.failures, 0)
		FROM pages p LEFT JOIN page_embeddings e ON e.page_id = p.id
		WHERE p.id > ? AND p.trashed_at IS NULL AND (e.page_id IS NULL OR ((e.revision <> p.revision OR e.model <> ?) AND e.next_at <= ?))
		ORDER BY p.id LIMIT ?`, after, model, micros(tx.now), limit)
}

// EmbedWork is a cheap figure that changes whenever a page of any workspace
// is written, moved or deleted: the worker looks for stale pages only when
// it moved (or a page's wait ran out).
func (tx *Tx) EmbedWork(ctx context.Context) (int64, error) {
	var n int64
	err := tx.queryRow(ctx, "SELECT COALESCE(SUM(generation), 0) + COALESCE(SUM(docs), 0) FROM search_stats").Scan(&n)
	return n, err
}

// NextEmbedRetry is when the first page waiting after a failure is due
// (zero: none waits).
func (tx *Tx) NextEmbedRetry(ctx context.Context) (time.Time, error) {
	var at int64
	if err := tx.queryRow(ctx, "SELECT COALESCE(MIN(next_at), 0) FROM page_embeddings WHERE next_at > 0").Scan(&at); err != nil || at == 0 {
		return time.Time{}, err
	}
	return time.UnixMicro(at), nil
}

// A SectionVector is one section's vector, int8-quantised: dimension i is
// Vec[i]*Scale.
type SectionVector struct {
	Section int
	Heading string // the heading path, "A > B"; "" before the first heading
	Line    int    // the section's first line in the page, 1-based
	Scale   float32
	Vec     []byte // int8s
}

// PutVectors replaces the vectors of job's page with secs, embedded from
// its revision job.Revision by model. A page deleted meanwhile is left
// alone (false); one edited meanwhile gets them anyway and stays stale, so
// the worker embeds it again.
func (tx *Tx) PutVectors(ctx context.Context, job EmbedJob, model string, secs []SectionVector) (bool, error) {
	var n int
	if err := tx.queryRow(ctx, "SELECT COUNT(*) FROM pages WHERE id = ?", job.Page).Scan(&n); err != nil || n == 0 {
		return false, err
	}
	if _, err := tx.exec(ctx, "DELETE FROM page_vectors WHERE page_id = ?", job.Page); err != nil {
		return false, err
	}
	for _, s := range secs {
		if _, err := tx.exec(ctx, "INSERT INTO page_vectors (page_id, section, workspace_id, heading, line, scale, vec) VALUES (?, ?, ?, ?, ?, ?, ?)",
			job.Page, s.Section, job.Workspace, s.Heading, s.Line, float64(s.Scale), s.Vec); err != nil {
			return false, err
		}
	}
	if _, err := tx.exec(ctx, `INSERT INTO page_embeddings (page_id, workspace_id, revision, model, failures, next_at, updated_at) VALUES (?, ?, ?, ?, 0, 0, ?)
		ON CONFLICT (page_id) DO UPDATE SET revision = excluded.revision, model = excluded.model, failures = 0, next_at = 0, updated_at = excluded.updated_at`,
		job.Page, job.Workspace, job.Revision, model, micros(tx.now)); err != nil {
		return false, err
	}
	return true, tx.bumpVectors(ctx, job.Workspace)
}

// EmbedFailed records that the endpoint refused job's page: it waits
// until next, and its old vectors (if any) stay until it succeeds.
func (tx *Tx) EmbedFailed(ctx context.Context, job EmbedJob, model string, next time.Time) error {
	var n int
	if err := tx.queryRow(ctx, "SELECT COUNT(*) FROM pages WHERE id = ?", job.Page).Scan(&n); err != nil || n == 0 {
		return err
	}
	_, err := tx.exec(ctx, `INSERT INTO page_embeddings (page_id, workspace_id, revision, model, failures, next_at, updated_at) VALUES (?, ?, 0, ?, 1, ?, ?)
		ON CONFLICT (page_id) DO UPDATE SET revision = 0, failures = page_embeddings.failures + 1, next_at = excluded.next_at, updated_at = excluded.updated_at`,
		job.Page, job.Workspace, model, micros(next), micros(tx.now))
	return err
}

func (tx *Tx) bumpVectors(ctx context.Context, ws int64) error {
	_, err := tx.exec(ctx, `INSERT INTO vector_stats (workspace_id, generation) VALUES (?, 1)
		ON CONFLICT (workspace_id) DO UPDATE SET generation = vector_stats.generation + 1`, ws)
	return err
}

// VectorGeneration changes whenever workspace ws's vectors do (0: it has none).
func (tx *Tx) VectorGeneration(ctx context.Context, ws int64) (int64, error) {
	var g int64
	err := tx.queryRow(ctx, "SELECT COALESCE(MAX(generation), 0) FROM vector_stats WHERE workspace_id = ?", ws).Scan(&g)
	return g, err
}

// EachVector calls fn with every section vector of workspace ws embedded
// by model, in page order, streaming: vec is valid only during the call.
// Pages in the trash are included (a search filters them with the rest).
func (tx *Tx) EachVector(ctx context.Context, ws int64, model string, fn func(page int64, section int, scale float32, vec []byte) error) error {
	rows, err := tx.query(ctx, `SELECT v.page_id, v.section, v.scale, v.vec FROM page_vectors v JOIN page_embeddings e ON e.page_id = v.page_id
		WHERE v.workspace_id = ? AND e.model = ? ORDER BY v.page_id, v.section`, ws, model)
	if err != nil {
		return err
	}
	defer rows.Close()
	var (
		page    int64
		section int
		scale   float64
		vec     []byte
	)
	for rows.Next() {
		if err := rows.Scan(&page, &section, &scale, &vec); err != nil {
			return err
		}
		if err := fn(page, section, float32(scale), vec); err != nil {
			return err
		}
	}
	return rows.Err()
}

// A VectorKey names one section's vector.
type VectorKey struct {
	Page    int64
	Section int
}

// VectorSections returns the heading and line of the sections of keys that
// exist.
func (tx *Tx) VectorSections(ctx context.Context, keys []VectorKey) (map[VectorKey]SectionVector, error) {
	out := make(map[VectorKey]SectionVector, len(keys))
	for chunk := range slices.Chunk(keys, 250) {
		q := "SELECT page_id, section, heading, line FROM page_vectors WHERE "
		args := make([]any, 0, 2*len(chunk))
		for i, k := range chunk {
			if i > 0 {
				q += " OR "
			}
			q += "(page_id = ? AND section = ?)"
			args = append(args, k.Page, k.Section)
		}
		rows, err := queryAll(ctx, tx, func(sc scanner) (r struct {
			k VectorKey
			s SectionVector
		}, err error) {
			err = sc.Scan(&r.k.Page, &r.k.Section, &r.s.Heading, &r.s.Line)
			r.s.Section = r.k.Section
			return r, err
		}, q, args...)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.k] = r.s
		}
	}
	return out, nil
}

// FilterPagesIn returns those of ids (in ID order) that are live pages of
// workspace ws and pass f: the same rule lexical candidates pass.
func (tx *Tx) FilterPagesIn(ctx context.Context, ws int64, ids []int64, f CandidateFilter) ([]int64, error) {
	var out []int64
	cond, cargs := filterSQL(f)
	for chunk := range slices.Chunk(ids, 500) {
		args := append(append([]any{ws}, idArgs(chunk)...), cargs...)
		// workspace_id + 0: SQLite would otherwise walk the workspace's
		// index (every page) instead of looking up the few IDs.
		got, err := tx.ids(ctx, "SELECT p.id FROM pages p WHERE p.workspace_id + 0 = ? AND p.trashed_at IS NULL AND p.id IN ("+placeholders(len(chunk))+")"+cond, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	slices.Sort(out)
	return out, nil
}

// EmbedCounts are how many of workspace ws's live pages have vectors of
// their current revision by model, and how many wait for the worker.
func (tx *Tx) EmbedCounts(ctx context.Context, ws int64, model string) (done, waiting int, err error) {
	err = tx.queryRow(ctx, `SELECT COALESCE(SUM(CASE WHEN e.revision = p.revision AND e.model = ? THEN 1 ELSE 0 END), 0), COUNT(*)
		FROM pages p LEFT JOIN page_embeddings e ON e.page_id = p.id WHERE p.workspace_id = ? AND p.trashed_at IS NULL`, model, ws).Scan(&done, &waiting)
	return done, waiting - done, err
}
