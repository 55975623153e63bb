package pages

import (
	"context"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/store"
)

// Resolve finds, for the links written in body as if it were the page at
// from ("" for Markdown that is no page: a task's body), the page each one
// means, by the rules a page's own links follow, and only among the pages
// the caller may see. The answer maps a link's target, as markdown.Render
// hands it to its resolver, to the page's path; what it lacks is unresolved.
// Text outside pages — tasks, desks — renders its wikilinks with it.
func (s *Service) Resolve(ctx context.Context, from, body string) (func(markdown.Link) (string, bool), error) {
	a, member, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	keyOf := func(l markdown.Link) (string, bool) { return linkKey(from, l) }
	var keys []string
	for _, l := range markdown.Parse(body).Links {
		if k, ok := keyOf(l); ok {
			keys = append(keys, k)
		}
	}
	found := map[string]string{}
	if len(keys) > 0 {
		err = s.db.View(ctx, func(tx *store.Tx) error {
			targets, err := resolve(ctx, tx, a.Workspace.ID, keys)
			for k, t := range targets {
				if member || t.Access == atrium.AccessPublic {
					found[k] = t.Path
				}
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return func(l markdown.Link) (string, bool) {
		k, ok := keyOf(l)
		if !ok {
			return "", false
		}
		p, ok := found[k]
		return p, ok
	}, nil
}
