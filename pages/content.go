package pages

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/atrium-hq/atrium"
	"github.com/atrium-hq/atrium/markdown"
	"github.com/atrium-hq/atrium/search"
	"github.com/atrium-hq/atrium/store"
)

// maxContentBytes bounds one page: large enough for any document a person
// writes, small enough that no single write can exhaust memory.
const maxContentBytes = 2 << 20

// parsed is a page's content taken apart.
type parsed struct {
	fm     string // frontmatter YAML as written
	body   string
	meta   markdown.Frontmatter
	doc    *markdown.Doc
	title  string
	access atrium.Access
}

// parse checks and takes apart the content of the page at path.
func parse(path, content string) (*parsed, error) {
	if len(content) > maxContentBytes {
		return nil, atrium.Errorf(atrium.ETooLarge, "page content is %d bytes; the limit is %d", len(content), maxContentBytes)
	}
	fm, body, doc := markdown.ParsePage(content)
	meta, err := markdown.ParseFrontmatter(fm)
	if err != nil {
		return nil, atrium.Errorf(atrium.EInvalid, "invalid frontmatter in %s: %v", path, err)
	}
	p := &parsed{fm: fm, body: body, meta: meta, doc: doc, access: atrium.AccessPrivate}
	if meta.Access != "" {
		p.access = atrium.Access(meta.Access)
	}
	p.title = strings.TrimSpace(meta.Title)
	if p.title == "" {
		for _, h := range p.doc.Headings {
			if h.Level == 1 {
				p.title = h.Text
				break
			}
		}
	}
	if p.title == "" {
		p.title = baseName(path)
	}
	return p, nil
}

// apply fills the page's fields from its parsed content.
func (p *parsed) apply(pg *atrium.Page, content string) {
	pg.Content = content
	pg.Title = p.title
	pg.Icon = p.meta.Icon
	pg.Tags = slices.Clone(p.meta.Tags)
	if pg.Tags == nil {
		pg.Tags = []string{}
	}
	pg.Access = p.access
	pg.ContentHash = contentHash(content)
}

func contentHash(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// index derives what the store keeps beside the content of the page at path.
func (p *parsed) index(path string) store.PageIndex {
	idx := store.PageIndex{Headings: markdown.HeadingTexts(p.doc), Texts: fieldTexts(p.meta)}
	fields := searchFields(p.title, p.meta.Tags, idx.Headings, p.body, idx.Texts)
	toks := fields.Fields()
	for i, t := range toks {
		idx.Lens[i] = len(t)
	}
	x := search.IndexPage(fields, p.access == atrium.AccessPublic)
	idx.Stems, idx.Postings = x.Stems, x.Postings
	for i, w := range x.Words {
		idx.Words = append(idx.Words, store.SearchWord{Word: w, Stem: x.WordStems[i]})
	}
	for _, l := range p.doc.Links {
		if key, ok := linkKey(path, l); ok {
			idx.Links = append(idx.Links, atrium.PageLink{Kind: linkKind(l), Target: l.Target, Key: key, Heading: l.Heading, Line: l.Line})
		}
	}
	return idx
}

// storedStems are the stems of a page as index derived them, from what the
// store keeps of it: the title, tags, headings and frontmatter texts index
// gave it, and the content whose body it tokenized.
func storedStems(t store.PageTexts) []string {
	_, body, _ := markdown.Split(t.Content)
	return search.PageStems(searchFields(t.Title, t.Tags, t.Headings, body, t.Texts))
}

// The store keeps a length for each field search scores.
var _ [store.SearchFields]int = [search.NumFields]int{}

// frontmatterFields are the fields the frontmatter's text goes to, after
// the body: store.PageIndex.Texts holds their texts in this order.
var frontmatterFields = [...]search.Field{search.FieldAliases, search.FieldSummary, search.FieldMeta}

// fieldTexts are the texts of the frontmatter fields of a page whose
// frontmatter is meta, values one per line.
func fieldTexts(meta markdown.Frontmatter) []string {
	var texts [len(frontmatterFields)][]string
	for _, kv := range meta.Texts {
		f, ok := search.FrontmatterField(kv.Key)
		if !ok {
			continue
		}
		i := int(f - frontmatterFields[0])
		texts[i] = append(texts[i], kv.Values...)
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = strings.Join(t, "\n")
	}
	return out
}

// searchFields are the tokens of a page's search fields, texts being its
// frontmatter fields' (fieldTexts). Indexing and ranking both call it, so
// that the two always agree.
func searchFields(title string, tags []string, headings, body string, texts []string) search.Doc {
	d := search.Doc{
		Title:    search.Terms(title),
		Tags:     search.Terms(strings.Join(tags, " ")),
		Headings: search.Terms(headings),
		Body:     search.Terms(body),
	}
	for i, dst := range []*[]string{&d.Aliases, &d.Summary, &d.Meta} {
		if i < len(texts) {
			*dst = search.Terms(texts[i])
		}
	}
	return d
}

func linkKind(l markdown.Link) atrium.LinkKind {
	if l.Kind == "wiki" {
		return atrium.LinkWiki
	}
	return atrium.LinkMarkdown
}

// linkKey is the key a link resolves by: for a wikilink its target (a title,
// a file name or a path, without .md), for a Markdown link the path it
// points at (a page's without .md, an attachment's as it is). Links to
// nothing in the workspace (URLs, [[#heading]]) have none.
func linkKey(from string, l markdown.Link) (string, bool) {
	if l.Kind == "wiki" {
		t := strings.TrimSpace(l.Target)
		if t == "" {
			return "", false
		}
		return targetKey(t), true
	}
	resolved, ok := markdown.ResolveMarkdown(from, l.Target)
	if !ok {
		return "", false
	}
	if !strings.EqualFold(pathExt(resolved), ".md") {
		return store.PathKey(resolved), true
	}
	return targetKey(resolved), true
}

// targetKey is the lookup form of a link target: lower case, without .md.
func targetKey(t string) string {
	k := strings.ToLower(strings.TrimSpace(strings.ReplaceAll(t, `\`, "/")))
	k = strings.TrimPrefix(k, "./")
	return strings.TrimSuffix(k, ".md")
}

// keysOf are the keys links reach a page by: its path (without .md), title and file name.
func keysOf(path, title string) []string {
	keys := []string{targetKey(path), strings.ToLower(strings.TrimSpace(title)), targetKey(baseName(path))}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func pathExt(p string) string {
	if i := strings.LastIndexByte(p, '.'); i > strings.LastIndexByte(p, '/') {
		return p[i:]
	}
	return ""
}
