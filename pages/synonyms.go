package pages

import (
	"context"
	"sync"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
)

// SynonymsPath is the page of a workspace's synonyms: one group of words
// and phrases that mean the same to it a line ("recover, restore, get back,
// undelete"; see search.ParseSynonyms). People and agents write and review
// it like any page; searches widen a question's words with it from its next
// revision on. It applies to those who may read it: when it is private,
// anonymous readers search without it. It is no answer to the questions it
// widens, which it holds every word of.
const SynonymsPath = "Settings/Synonyms.md"

// synCache keeps each workspace's parsed synonyms with the revision of the
// page they were read from: a search checks the page's revision (one row
// by key) and reads the page only when it changed.
type synCache struct {
	mu  sync.Mutex
	wss map[int64]synEntry
}

type synEntry struct {
	page, revision int64
	syn            *search.Synonyms
}

// synonyms returns the synonyms of workspace ws for a reader who may see
// private pages (member) or not, and the page they come from; nil when
// there are none.
func (c *synCache) synonyms(ctx context.Context, tx *store.Tx, ws int64, member bool) (*search.Synonyms, int64, error) {
	id, rev, access, err := tx.PageStamp(ctx, ws, SynonymsPath)
	if atrium.ErrorCode(err) == atrium.ENotFound || err == nil && !member && access != atrium.AccessPublic {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	e, ok := c.wss[ws]
	c.mu.Unlock()
	if ok && e.page == id && e.revision == rev {
		return e.syn, id, nil
	}
	p, err := tx.PageByID(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	_, body, _ := markdown.Split(p.Content)
	e = synEntry{page: id, revision: p.Revision, syn: search.ParseSynonyms(body)}
	c.mu.Lock()
	if c.wss == nil {
		c.wss = map[int64]synEntry{}
	}
	c.wss[ws] = e
	c.mu.Unlock()
	return e.syn, id, nil
}
