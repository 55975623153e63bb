package pages

import (
	"context"
	"time"
)

// What the tests of package pages_test reach inside for.

// SetReindexBatch sets how many pages one step of a rebuild reindexes, and
// how long a process whose batch another took waits.
func SetReindexBatch(s *Service, n int, yield time.Duration) {
	s.reindexBatch, s.rebuildYield = n, yield
}

// RebuildStep runs one step of a rebuild of the index: a process that then
// stops has cut the rebuild short there.
func RebuildStep(ctx context.Context, s *Service) (reindexed int, finished bool, err error) {
	return s.rebuildStep(ctx)
}
