package pages

import (
	"sync"
	"time"
)

// fmCache keeps the decoded frontmatter of recent reads, keyed by its text:
// YAML decoding was a quarter of a page read, and a page's frontmatter
// changes far less often than it is read. Hits are deep copies, so that no
// caller can change what another one gets.
type fmCache struct {
	mu sync.Mutex
	m  map[string]map[string]any
}

// Bounds: entries are small texts, so the whole cache stays under a few MB.
const (
	fmCacheEntries = 2048
	fmCacheKeyMax  = 2048 // larger frontmatter is decoded every time
)

func (c *fmCache) get(fm string) (map[string]any, bool) {
	c.mu.Lock()
	v, ok := c.m[fm]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	return copyValue(v).(map[string]any), true
}

func (c *fmCache) put(fm string, v map[string]any) {
	if len(fm) > fmCacheKeyMax {
		return
	}
	v = copyValue(v).(map[string]any)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= fmCacheEntries {
		c.m = make(map[string]map[string]any) // dropped whole: cheap, and bounded
	}
	c.m[fm] = v
}

// copyValue deep-copies what YAML decodes into map[string]any: maps,
// slices and immutable scalars.
func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyValue(e)
		}
		return out
	case map[any]any:
		out := make(map[any]any, len(x))
		for k, e := range x {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	case time.Time, string, bool, int, int64, uint64, float64, nil:
		return x
	}
	return v
}
