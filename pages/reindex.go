package pages

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/store"
)

// indexVersion names the form of what the store derives from page content:
// search tokens and how the index holds them, headings, links. Raise it with
// any change to tokenizing or parsing that alters them, and the next start
// rebuilds the index from the pages (EnsureIndex).
const indexVersion = "9"

const (
	indexVersionKey = "docs.index_version"
	// rebuildKey holds a rebuild under way: the version it builds, the last
	// page ID it reindexed, how many pages it reindexed and how many there
	// were when it started. It lets a rebuild cut short go on where it
	// stopped, and processes that start together share one rebuild.
	rebuildKey = "docs.index_rebuild"
)

// defaultReindexBatch is how many pages one rebuild transaction rewrites:
// the other writers wait for it, a second or so at this size.
const defaultReindexBatch = 1000

// rebuild is the progress of a rebuild of the index to indexVersion.
type rebuild struct {
	after       int64 // the last page ID reindexed
	done, total int
}

func (r rebuild) String() string {
	return fmt.Sprintf("%s %d %d %d", indexVersion, r.after, r.done, r.total)
}

// indexStatus is the state of a store's index.
type indexStatus struct {
	current bool // at indexVersion, or left to a newer Atrium (newer)
	// newer is the version of a newer Atrium that built the index or is
	// rebuilding it: an older one beside it (a rolling upgrade) leaves it
	// as it is, rather than the two rebuilding it in turn for ever.
	newer   string
	started bool    // a rebuild to indexVersion is under way
	rebuild rebuild // and how far it is
}

// readIndexStatus reads the state of the store's index.
func readIndexStatus(ctx context.Context, tx *store.Tx) (st indexStatus, err error) {
	version, _, err := tx.Meta(ctx, indexVersionKey)
	if err != nil || version == indexVersion {
		return indexStatus{current: err == nil}, err
	}
	if newerVersion(version) {
		return indexStatus{current: true, newer: version}, nil
	}
	v, found, err := tx.Meta(ctx, rebuildKey)
	if err != nil || !found {
		return st, err
	}
	var of string
	r := &st.rebuild
	if n, _ := fmt.Sscanf(v, "%s %d %d %d", &of, &r.after, &r.done, &r.total); n != 4 || of != indexVersion {
		if newerVersion(of) {
			return indexStatus{current: true, newer: of}, nil
		}
		return indexStatus{}, nil // an older version's: start over
	}
	st.started = true
	return st, nil
}

// newerVersion reports whether v is an index version after indexVersion.
func newerVersion(v string) bool {
	n, err := strconv.Atoi(v)
	ours, _ := strconv.Atoi(indexVersion)
	return err == nil && n > ours
}

// indexStatus reads the state of the index in a transaction of its own.
func (s *Service) indexStatus(ctx context.Context) (st indexStatus, err error) {
	err = s.db.View(ctx, func(tx *store.Tx) error {
		st, err = readIndexStatus(ctx, tx)
		return err
	})
	return st, err
}

// rebuildNote is what a search says while the index is rebuilt, or "".
func rebuildNote(ctx context.Context, tx *store.Tx) (string, error) {
	st, err := readIndexStatus(ctx, tx)
	if err != nil || st.current {
		return "", err
	}
	r := st.rebuild
	if !st.started {
		return "the search index is being rebuilt after an upgrade: pages not yet reindexed are missing from these results", nil
	}
	return fmt.Sprintf("the search index is being rebuilt after an upgrade (%d of %d pages so far): pages not yet reindexed are missing from these results",
		min(r.done, r.total), r.total), nil
}

// EnsureIndex rebuilds the derived index of every page of every workspace
// when it was built by another index version, or by none (a migration that
// reset it), and returns once it is current: it is one read of the store when
// it is. It returns how many pages it reindexed itself.
//
// The rebuild goes on from where one cut short stopped, and processes that
// run it at once share it: each batch is taken from the progress the store
// records, in the transaction that advances it. Its pages are read and
// parsed before that transaction, so that other writers wait only for the
// writing; a batch another process took meanwhile is dropped, and this one
// waits a while before it reads the next, so that one process parses each
// batch rather than all of them each batch.
func (s *Service) EnsureIndex(ctx context.Context) (int, error) {
	reindexed := 0
	logged := time.Now()
	for {
		n, finished, err := s.rebuildStep(ctx)
		reindexed += n
		if errors.Is(err, errBatchTaken) {
			select {
			case <-ctx.Done():
				return reindexed, ctx.Err()
			case <-time.After(s.rebuildYield):
			}
			continue
		}
		if err != nil || finished {
			return reindexed, err
		}
		if time.Since(logged) >= rebuildLogEvery {
			logged = time.Now()
			if st, err := s.indexStatus(ctx); err == nil && st.started {
				s.log.Info("rebuilding the search index", "done", st.rebuild.done, "of", max(st.rebuild.total, st.rebuild.done))
			}
		}
	}
}

// errBatchTaken is a rebuild step's when another process reindexed the
// batch first.
var errBatchTaken = errors.New("another process reindexed the batch")

// defaultRebuildYield is how long a process whose batch another took waits
// before it reads the next: that one goes on at once, and the others take
// over within this if it stops.
const defaultRebuildYield = 3 * time.Second

// rebuildLogEvery is how often a rebuild logs how far it is.
const rebuildLogEvery = 15 * time.Second

// KeepIndexCurrent rebuilds the index in the background when it is not
// current, so that a store of a million pages opens at once after an upgrade;
// searches say meanwhile that their results may miss pages. It returns once
// the rebuild has started: a store without pages is current by then. A
// rebuild that fails (a full disk) is tried again a minute later. stop ends
// it and returns once it has: what it committed stays, and the next start
// goes on from there.
func (s *Service) KeepIndexCurrent(ctx context.Context) (stop func(), err error) {
	st, err := s.indexStatus(ctx)
	switch {
	case err != nil:
		return func() {}, err
	case st.newer != "":
		s.log.Warn("the search index is of a newer Atrium; this one leaves it as it is, and may miss words that one splits differently",
			"index_version", st.newer, "ours", indexVersion)
		return func() {}, nil
	case st.current:
		return func() {}, nil
	case st.started:
		s.log.Info("going on with the rebuild of the search index", "done", st.rebuild.done, "of", st.rebuild.total)
	default:
		if err = s.startRebuild(ctx); err == nil {
			st, err = s.indexStatus(ctx)
		}
		if err != nil || st.current {
			return func() {}, err
		}
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, err := s.EnsureIndex(bg)
			if err == nil || bg.Err() != nil {
				return
			}
			s.log.Error("rebuild the search index; trying again in a minute", "err", err)
			select {
			case <-bg.Done():
				return
			case <-time.After(time.Minute):
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// rebuildStep reindexes the next batch of pages. finished is true once the
// index is current.
func (s *Service) rebuildStep(ctx context.Context) (n int, finished bool, err error) {
	st, err := s.indexStatus(ctx)
	if err != nil || st.current {
		return 0, st.current, err
	}
	if !st.started {
		return 0, false, s.startRebuild(ctx)
	}
	r := st.rebuild
	var pages []atrium.Page
	if err := s.db.View(ctx, func(tx *store.Tx) (err error) {
		pages, err = tx.PagesAfter(ctx, r.after, s.reindexBatch)
		return err
	}); err != nil {
		return 0, false, err
	}
	idx, err := s.parseAll(ctx, pages)
	if err != nil {
		return 0, false, err
	}
	took := false
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.TakeTurn(ctx, "reindex"); err != nil {
			return err
		}
		now, err := readIndexStatus(ctx, tx)
		if err != nil || !now.started || now.rebuild != r {
			return err // another process went on meanwhile
		}
		took = true
		if len(pages) == 0 {
			finished = true
			if err := tx.SetMeta(ctx, indexVersionKey, indexVersion); err != nil {
				return err
			}
			return tx.DeleteMeta(ctx, rebuildKey)
		}
		n = 0
		for i := range pages {
			ok, err := tx.ReindexPage(ctx, &pages[i], idx[i])
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
		r.after, r.done = pages[len(pages)-1].ID, r.done+len(pages)
		return tx.SetMeta(ctx, rebuildKey, r.String())
	})
	if err == nil && !took {
		err = errBatchTaken
	}
	if err != nil {
		return 0, false, err
	}
	if finished {
		s.log.Info("rebuilt the search index", "pages", r.done)
	}
	return n, finished, nil
}

// startRebuild empties the index and records a rebuild from the first
// page, unless another process started one meanwhile; a store without
// pages is current at once.
func (s *Service) startRebuild(ctx context.Context) error {
	var total int
	var from string
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		if err := tx.TakeTurn(ctx, "reindex"); err != nil {
			return err
		}
		st, err := readIndexStatus(ctx, tx)
		if err != nil || st.current || st.started {
			return err
		}
		if from, _, err = tx.Meta(ctx, indexVersionKey); err != nil {
			return err
		}
		if total, err = tx.PageCount(ctx, 0); err != nil {
			return err
		}
		if total == 0 {
			return tx.SetMeta(ctx, indexVersionKey, indexVersion)
		}
		if err := tx.ClearPostings(ctx); err != nil {
			return err
		}
		return tx.SetMeta(ctx, rebuildKey, rebuild{total: total}.String())
	})
	if err == nil && total > 0 {
		s.log.Info("rebuilding the search index", "pages", total, "from_version", from, "to_version", indexVersion)
	}
	return err
}

// parseAll derives the index of each page, in parallel. A page that no
// longer parses (a rule tightened since it was written) keeps no index
// entries and is logged: its content is untouched.
func (s *Service) parseAll(ctx context.Context, pages []atrium.Page) ([]store.PageIndex, error) {
	idx := make([]store.PageIndex, len(pages))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(pages) && ctx.Err() == nil; i += workers {
				pc, err := parse(pages[i].Path, pages[i].Content)
				if err != nil {
					s.log.Warn("page left out of the search index", "path", pages[i].Path, "err", err)
					continue
				}
				idx[i] = pc.index(pages[i].Path)
				// The row keeps the title and tags its stems derive from.
				pages[i].Title, pages[i].Tags = pc.title, pc.meta.Tags
			}
		})
	}
	wg.Wait()
	return idx, ctx.Err()
}
