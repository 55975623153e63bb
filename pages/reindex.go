package pages

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/atrium-hq/atrium/store"
)

// indexVersion names the form of what the store derives from page content:
// search tokens and how the index holds them, headings, links. Raise it with
// any change to tokenizing or parsing that alters them, and the next start
// rebuilds the index from the pages (EnsureIndex).
const indexVersion = "8"

const indexVersionKey = "docs.index_version"

// reindexBatch is how many pages one rebuild transaction rewrites.
const reindexBatch = 2000

// EnsureIndex rebuilds the derived index of every page of every workspace
// when it was built by another index version, or by none (a migration that
// reset it): it is one read of the store when the index is current. The
// rebuild runs in transactions of a few hundred pages and can be interrupted;
// it starts over at the next call. It returns how many pages it rebuilt.
func (s *Service) EnsureIndex(ctx context.Context) (int, error) {
	var version string
	var pages int
	err := s.db.View(ctx, func(tx *store.Tx) error {
		var err error
		if version, _, err = tx.Meta(ctx, indexVersionKey); err != nil {
			return err
		}
		if version != indexVersion {
			pages, err = tx.PageCount(ctx, 0)
		}
		return err
	})
	if err != nil || version == indexVersion {
		return 0, err
	}
	start := time.Now()
	if pages > 0 {
		s.log.Info("rebuilding the search index", "pages", pages, "from_version", version, "to_version", indexVersion)
	}
	if err := s.db.Update(ctx, func(tx *store.Tx) error { return tx.ClearPostings(ctx) }); err != nil {
		return 0, err
	}
	done := 0
	for after := int64(0); ; {
		var n int
		err := s.db.Update(ctx, func(tx *store.Tx) error {
			var err error
			n, after, err = s.reindexAfter(ctx, tx, after)
			return err
		})
		if err != nil {
			return done, err
		}
		if n == 0 {
			break
		}
		done += n
	}
	if done > 0 {
		if err := s.db.OptimizeSearch(ctx); err != nil {
			return done, err
		}
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error { return tx.SetMeta(ctx, indexVersionKey, indexVersion) })
	if err == nil && done > 0 {
		s.log.Info("rebuilt the search index", "pages", done, "took", time.Since(start).Round(time.Millisecond))
	}
	return done, err
}

// reindexAfter rebuilds the index of the next batch of pages after the page
// ID after, parsing them in parallel. It returns how many pages it read and
// the last ID. A page that no longer parses (a rule tightened since it was
// written) keeps no index entries and is logged: its content is untouched.
func (s *Service) reindexAfter(ctx context.Context, tx *store.Tx, after int64) (int, int64, error) {
	pages, err := tx.PagesAfter(ctx, after, reindexBatch)
	if err != nil || len(pages) == 0 {
		return 0, after, err
	}
	idx := make([]store.PageIndex, len(pages))
	errs := make([]error, len(pages))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(pages); i += workers {
				pc, err := parse(pages[i].Path, pages[i].Content)
				if err != nil {
					errs[i] = err
					continue
				}
				idx[i] = pc.index(pages[i].Path)
			}
		})
	}
	wg.Wait()
	for i := range pages {
		if errs[i] != nil {
			s.log.Warn("page left out of the search index", "path", pages[i].Path, "err", errs[i])
			idx[i] = store.PageIndex{}
		}
		if err := tx.ReindexPage(ctx, &pages[i], idx[i]); err != nil {
			return 0, after, err
		}
	}
	return len(pages), pages[len(pages)-1].ID, nil
}
