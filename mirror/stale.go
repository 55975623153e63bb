package mirror

import (
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/pages"
)

// staleSave reports whether a file save b was made from an older version of
// the page than the one the mirror last synced (st, which is the store's
// current revision p). A file carries no revision, so its content is the
// evidence:
//
//   - When the mirror has written store content over the file since it last
//     read it (st.Read < st.Revision), an editor may still hold the text of
//     revision st.Read. A save made after seeing the newer text keeps some of
//     what changed in between; one that keeps none of it was made from the
//     older text (or undoes all of it, which is as good as a conflict: the
//     save is kept, and saving it again takes it).
//   - Otherwise the file's last content came from the file itself. Bringing
//     back the exact content of an older revision across another writer's
//     later revision (a git checkout of an older branch, a backup restored)
//     is a stale save; across the folder's own revisions it is an undo.
//
// When the evidence cannot be read, the save is taken as stale: a conflict
// copy loses nothing, a wrong revision would.
func (m *Mirror) staleSave(st pages.SyncState, p atrium.Page, b []byte) bool {
	if st.Read < st.Revision {
		older := ""
		if st.Read > 0 {
			r, err := m.cfg.Services.Pages.ReadPage(m.ctx, pages.ReadRequest{Path: p.Path, Revision: st.Read})
			if err != nil {
				m.log.Warn("read the revision a file was last read at", "path", p.Path, "revision", st.Read, "err", err)
				return true
			}
			older = r.Content
		}
		return !keepsAChange(older, p.Content, string(b))
	}
	hash := hashBytes(b)
	others := false // a revision by another writer newer than the one looked at
	cursor := ""
	for range 10 { // the newest 2,000 revisions; older ones are as good as gone from editors
		res, err := m.cfg.Services.Pages.Revisions(m.ctx, p.Path, cursor, 200)
		if err != nil {
			m.log.Warn("read a page's history", "path", p.Path, "err", err)
			return true
		}
		for _, r := range res.Revisions {
			if r.ContentHash == hash && r.Revision < p.Revision {
				return others
			}
			if r.Author != m.cfg.Actor.Principal.Handle {
				others = true
			}
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	return false
}

// keepsAChange reports whether text, an edit of older or newer, keeps at
// least one of the changes that made newer from older: one of the lines
// newer added, or — when newer only removed lines — the lack of one of them.
// Lines are compared as a multiset; blank lines carry no evidence.
func keepsAChange(older, newer, text string) bool {
	was, is, has := lineCounts(older), lineCounts(newer), lineCounts(text)
	added := false
	for line, n := range is {
		if n > was[line] {
			added = true
			if has[line] > was[line] {
				return true
			}
		}
	}
	if added {
		return false
	}
	removed := false
	for line, n := range was {
		if n > is[line] {
			removed = true
			if has[line] < n {
				return true
			}
		}
	}
	return !removed // nothing changed but blank lines: nothing to tell by
}

func lineCounts(s string) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out[line]++
		}
	}
	return out
}
