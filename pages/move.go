package pages

import (
	"context"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/store"
)

// MovedPage is one page that moved.
type MovedPage struct {
	From, To string
}

// MoveResult says what a move did.
type MoveResult struct {
	NewPath        string      // where the page (or folder) went
	Moved          []MovedPage // every page that moved (several for a folder)
	PagesChanged   int         // pages whose links were rewritten
	LinksRewritten int
	Attachments    int // attachments that moved with their pages
}

// MovePage moves a page, or a whole folder, and rewrites every wikilink and
// relative Markdown link that pointed at what moved — and the moved pages' own
// relative links — so that nothing breaks. All of it is one transaction.
//
// from is a page path (Projects/Alpha.md) or a folder (Projects/Old). to is a
// page path, or a folder to move into (a path without .md, or ending in /).
// Moving Alpha.md to Alpha/_index.md promotes it to a folder page.
func (s *Service) MovePage(ctx context.Context, from, to string) (MoveResult, error) {
	a, err := writer(ctx)
	if err != nil {
		return MoveResult{}, err
	}
	plan, err := planMove(from, to)
	if err != nil {
		return MoveResult{}, err
	}
	var res MoveResult
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		moving, err := plan.pages(ctx, tx, a.Workspace.ID)
		if err != nil {
			return err
		}
		mv := &mover{ctx: ctx, tx: tx, ws: a.Workspace.ID, actor: a.Principal.ID, plan: plan, paths: map[string]string{}, byID: map[int64]atrium.Page{}}
		for _, p := range moving {
			np := plan.target(p.Path)
			if err := checkFolders(np); err != nil {
				return err
			}
			mv.paths[store.PathKey(p.Path)] = np
			mv.byID[p.ID] = p
			res.Moved = append(res.Moved, MovedPage{From: p.Path, To: np})
		}
		res.NewPath = plan.newPath(moving)
		if err := mv.checkFree(); err != nil {
			return err
		}
		if res.Attachments, err = mv.moveAttachments(); err != nil {
			return err
		}
		changed, links, err := mv.rewrite(s, a)
		res.PagesChanged, res.LinksRewritten = changed, links
		return err
	})
	if err != nil {
		return MoveResult{}, err
	}
	return res, nil
}

// movePlan is what a move request means.
type movePlan struct {
	folder   bool
	from, to string // normalized: page paths, or folder paths
}

func planMove(from, to string) (movePlan, error) {
	from, to = strings.TrimSpace(from), strings.TrimSpace(to)
	toFolder := !strings.HasSuffix(strings.ToLower(to), ".md")
	if strings.HasSuffix(strings.ToLower(from), ".md") {
		src, err := NormalizePath(from)
		if err != nil {
			return movePlan{}, err
		}
		if !toFolder {
			dst, err := NormalizePath(to)
			return movePlan{from: src, to: dst}, err
		}
		dir, err := NormalizeFolder(to)
		if err != nil {
			return movePlan{}, err
		}
		return movePlan{from: src, to: join(dir, src[strings.LastIndexByte(src, '/')+1:])}, nil
	}
	src, err := NormalizeFolder(from)
	if err != nil {
		return movePlan{}, err
	}
	if src == "" {
		return movePlan{}, atrium.Errorf(atrium.EInvalid, "source_path is required: a page (Projects/Alpha.md) or a folder (Projects/Old)")
	}
	if !toFolder {
		return movePlan{}, atrium.Errorf(atrium.EInvalid, "a folder moves to a folder: destination_path %q ends in .md", to)
	}
	dst, err := NormalizeFolder(to)
	if err != nil {
		return movePlan{}, err
	}
	if k, dk := store.PathKey(src), store.PathKey(dst); dk == k || strings.HasPrefix(dk, k+"/") {
		return movePlan{}, atrium.Errorf(atrium.EInvalid, "cannot move folder %s into itself (%s)", src, dst)
	}
	return movePlan{folder: true, from: src, to: dst}, nil
}

// pages loads what moves.
func (p movePlan) pages(ctx context.Context, tx *store.Tx, ws int64) ([]atrium.Page, error) {
	if !p.folder {
		pg, err := tx.PageByPath(ctx, ws, p.from)
		if err != nil {
			return nil, err
		}
		return []atrium.Page{pg}, nil
	}
	var ids []int64
	after := ""
	for {
		batch, err := tx.ListPages(ctx, store.ListQuery{Workspace: ws, Prefix: store.PathKey(p.from) + "/", After: after, Limit: 1000, IncludePrivate: true})
		if err != nil {
			return nil, err
		}
		for _, s := range batch {
			ids = append(ids, s.ID)
		}
		if len(batch) < 1000 {
			break
		}
		after = store.PathKey(batch[len(batch)-1].Path)
	}
	if len(ids) == 0 {
		return nil, atrium.Errorf(atrium.ENotFound, "Folder not found: %s", p.from)
	}
	pages, err := tx.PagesByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pages, func(x, y atrium.Page) int { return strings.Compare(store.PathKey(x.Path), store.PathKey(y.Path)) })
	return pages, nil
}

// target is the new path of a moved page.
func (p movePlan) target(old string) string {
	if !p.folder {
		return p.to
	}
	return join(p.to, old[len(p.from)+1:])
}

func (p movePlan) newPath(moving []atrium.Page) string {
	if p.folder {
		return p.to + "/"
	}
	return p.to
}

// mover carries one move's state through its transaction.
type mover struct {
	ctx   context.Context
	tx    *store.Tx
	ws    int64
	actor int64
	plan  movePlan
	paths map[string]string     // old path key -> new path, for every moved page
	atts  map[string]string     // old attachment path key -> new path
	byID  map[int64]atrium.Page // moved pages as they were
	after map[string]int64      // link key -> the page it means once the move is done (0: none)
	err   error                 // the first store error of resolvesAfter
}

// resolvesAfter reports whether a wikilink key means page id once the move is
// done: the store still holds the pages where they were, so the moved pages
// are taken out of its answer and matched at their new paths instead.
func (m *mover) resolvesAfter(key string, id int64) bool {
	if got, ok := m.after[key]; ok {
		return got == id
	}
	if m.after == nil {
		m.after = map[string]int64{}
	}
	targets, err := m.tx.ResolveKeys(m.ctx, m.ws, []string{key})
	if err != nil {
		if m.err == nil {
			m.err = err
		}
		return false
	}
	var cands []store.Target
	for _, t := range targets {
		if _, moving := m.byID[t.Page.ID]; !moving {
			cands = append(cands, t)
		}
	}
	for pid, p := range m.byID {
		np := m.paths[store.PathKey(p.Path)]
		title := p.Title
		if pc, err := parse(np, p.Content); err == nil {
			title = pc.title // a title taken from the file name follows it
		}
		s := store.PageSummary{ID: pid, Path: np, Title: title}
		for _, mt := range []struct{ key, how string }{{targetKey(np), "path"}, {targetKey(baseName(np)), "name"}, {strings.ToLower(strings.TrimSpace(title)), "title"}} {
			if mt.key == key {
				cands = append(cands, store.Target{Key: key, Page: s, Match: mt.how})
			}
		}
	}
	slices.SortStableFunc(cands, func(x, y store.Target) int {
		return strings.Compare(store.PathKey(x.Page.Path), store.PathKey(y.Page.Path))
	})
	var best *store.Target
	for i := range cands {
		if best == nil || betterTarget(cands[i], *best) {
			best = &cands[i]
		}
	}
	if best != nil {
		m.after[key] = best.Page.ID
	} else {
		m.after[key] = 0
	}
	return m.after[key] == id
}

// checkFree refuses a move onto pages that stay where they are.
func (m *mover) checkFree() error {
	for _, np := range m.paths {
		p, err := m.tx.PageByPath(m.ctx, m.ws, np)
		if atrium.ErrorCode(err) == atrium.ENotFound {
			continue
		}
		if err != nil {
			return err
		}
		if _, moving := m.byID[p.ID]; !moving {
			return atrium.Errorf(atrium.EConflict, "A page already exists at path: %s; move or delete it first", p.Path)
		}
	}
	return nil
}

// moveAttachments moves the attachments that go with what moves, so that
// relative links keep working: a page's assets folder beside it, or
// everything inside a moved folder. Files kept elsewhere (an Obsidian
// vault's Attachments/) stay where the vault keeps them.
func (m *mover) moveAttachments() (int, error) {
	m.atts = map[string]string{}
	n := 0
	for id, p := range m.byID {
		atts, err := m.tx.Attachments(m.ctx, m.ws, id)
		if err != nil {
			return 0, err
		}
		assets := join(folderOf(p.Path), AssetsFolder) + "/"
		newAssets := join(folderOf(m.paths[store.PathKey(p.Path)]), AssetsFolder)
		for _, at := range atts {
			var np string
			switch key := store.PathKey(at.Path); {
			case m.plan.folder && strings.HasPrefix(key, store.PathKey(m.plan.from)+"/"):
				np = join(m.plan.to, at.Path[len(m.plan.from)+1:])
			case !m.plan.folder && strings.HasPrefix(key, store.PathKey(assets)):
				np = join(newAssets, at.Path[len(assets):])
			default:
				continue
			}
			if store.PathKey(np) == store.PathKey(at.Path) {
				continue
			}
			m.atts[store.PathKey(at.Path)] = np
			taken, err := m.tx.AttachmentPathTaken(m.ctx, m.ws, np)
			if err != nil {
				return 0, err
			}
			if taken {
				return 0, atrium.Errorf(atrium.EConflict, "An attachment already exists at %s, where %s would move with its page", np, at.Path)
			}
			if err := m.tx.MoveAttachment(m.ctx, m.ws, at.ID, np); err != nil {
				return 0, err
			}
			if err := m.tx.EmitJSON(m.ctx, m.ws, m.actor, EventAttachmentMoved, np, map[string]any{"path": np, "from": at.Path, "origin": originOf(m.ctx)}); err != nil {
				return 0, err
			}
			n++
		}
	}
	return n, nil
}

// rewrite updates every page that moved or links to something that moved, in
// path order, and returns how many pages had links rewritten and how many links.
func (m *mover) rewrite(s *Service, a *atrium.Actor) (changed, links int, err error) {
	// Who links to what moves, by every key that reached it before the move.
	var keys []string
	for _, p := range m.byID {
		keys = append(keys, keysOf(p.Path, p.Title)...)
	}
	incoming, err := m.tx.LinksTo(m.ctx, m.ws, dedupe(keys))
	if err != nil {
		return 0, 0, err
	}
	affected := map[int64]bool{}
	for id := range m.byID {
		affected[id] = true
	}
	for _, l := range incoming {
		affected[l.SourceID] = true
	}
	ids := make([]int64, 0, len(affected))
	for id := range affected {
		ids = append(ids, id)
	}
	pages, err := m.tx.PagesByID(m.ctx, ids)
	if err != nil {
		return 0, 0, err
	}
	slices.SortFunc(pages, func(x, y atrium.Page) int { return strings.Compare(store.PathKey(x.Path), store.PathKey(y.Path)) })

	// Resolve every wikilink of the affected pages as things stood before.
	docs := make(map[int64]*markdown.Doc, len(pages))
	var wikiKeys []string
	for _, p := range pages {
		_, body, _ := markdown.Split(p.Content)
		d := markdown.Parse(body)
		docs[p.ID] = d
		for _, l := range d.Links {
			if l.Kind == "wiki" && strings.TrimSpace(l.Target) != "" {
				wikiKeys = append(wikiKeys, targetKey(l.Target))
			}
		}
	}
	before, err := resolve(m.ctx, m.tx, m.ws, wikiKeys)
	if err != nil {
		return 0, 0, err
	}

	for _, p := range pages {
		oldPath := p.Path
		newPath := oldPath
		if np, ok := m.paths[store.PathKey(oldPath)]; ok {
			newPath = np
		}
		fm, body, _ := markdown.Split(p.Content)
		edits := m.linkEdits(docs[p.ID], body, oldPath, newPath, before)
		if m.err != nil {
			return 0, 0, m.err
		}
		content := p.Content
		if len(edits) > 0 {
			nb, err := markdown.Rewrite(body, edits)
			if err != nil {
				return 0, 0, err
			}
			content = markdown.Join(fm, nb)
			changed++
			links += len(edits)
		}
		if content == p.Content && newPath == oldPath {
			continue
		}
		pc, err := parse(newPath, content)
		if err != nil {
			return 0, 0, err
		}
		np := p
		np.Path = newPath
		pc.apply(&np, content)
		if err := m.tx.UpdatePage(m.ctx, &np, pc.index(newPath), a.Principal.ID); err != nil {
			return 0, 0, err
		}
		kind, from := EventPageUpdated, ""
		if newPath != oldPath {
			kind, from = EventPageMoved, oldPath
		}
		if err := s.emitChange(m.ctx, m.tx, a, Change{Kind: kind, Page: np, From: from, linksOnly: newPath == oldPath}); err != nil {
			return 0, 0, err
		}
	}
	return changed, links, nil
}

// linkEdits are the replacements that keep the links of a page (now at
// newPath, before at oldPath) pointing where they pointed.
func (m *mover) linkEdits(d *markdown.Doc, body, oldPath, newPath string, before map[string]store.PageSummary) []markdown.Edit {
	var edits []markdown.Edit
	for _, l := range d.Links {
		written := body[l.TargetStart:l.TargetEnd]
		switch l.Kind {
		case "wiki":
			if strings.TrimSpace(l.Target) == "" {
				continue
			}
			key := targetKey(l.Target)
			t, ok := before[key]
			if !ok {
				continue
			}
			np, moved := m.paths[store.PathKey(t.Path)]
			if !moved {
				continue
			}
			// The link keeps the form its author wrote: a path stays a
			// path, a file name a file name (or a title a title) where it
			// still means the moved page alone; else it becomes its path.
			withMD := strings.HasSuffix(strings.ToLower(strings.TrimSpace(l.Target)), ".md")
			long := strings.TrimSuffix(np, pathExt(np))
			if withMD {
				long = np
			}
			repl := long
			switch key {
			case targetKey(t.Path):
			case targetKey(baseName(t.Path)):
				short := baseName(np)
				if withMD {
					short += ".md"
				}
				if m.resolvesAfter(targetKey(short), t.ID) {
					repl = short
				}
			default: // by title, which a move keeps unless it was the file name
				if m.resolvesAfter(key, t.ID) {
					continue
				}
			}
			if repl != strings.TrimSpace(written) {
				edits = append(edits, markdown.Edit{Start: l.TargetStart, End: l.TargetEnd, Text: repl})
			}
		default:
			target, ok := markdown.ResolveMarkdown(oldPath, l.Target)
			if !ok {
				continue
			}
			newTarget := target
			if np, moved := m.paths[store.PathKey(target)]; moved {
				newTarget = np
			} else if np, moved := m.atts[store.PathKey(target)]; moved {
				newTarget = np
			}
			if newTarget == target && newPath == oldPath {
				continue
			}
			if r, ok := markdown.ResolveMarkdown(newPath, l.Target); ok && r == newTarget {
				continue // still right from the new place
			}
			edits = append(edits, markdown.Edit{Start: l.TargetStart, End: l.TargetEnd, Text: markdown.RelativeLink(newPath, newTarget)})
		}
	}
	return edits
}
