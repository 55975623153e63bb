package search

import (
	"strconv"
	"strings"
)

// Field is a part of a page that search scores.
type Field int

// The fields, in the order postings record them (see PagePostings).
const (
	FieldTitle    Field = iota // frontmatter title, else the first H1, else the file name
	FieldTags                  // frontmatter tags
	FieldHeadings              // the headings' text
	FieldBody                  // the Markdown after the frontmatter
	FieldAliases               // frontmatter aliases (alias): other names of the page, as Obsidian has them
	FieldSummary               // frontmatter description, summary, excerpt: what the page is about, in a sentence
	FieldMeta                  // every other frontmatter value that is text, or a list of texts
	NumFields
)

// fieldTable is every field a page declares, with its weight: a word
// in the title or an alias says more about a page than the same word in
// passing in the body, and a page's own summary of itself more than the
// body, while the rest of the frontmatter (authors, categories, a slug)
// only a little.
var fieldTable = [NumFields]struct {
	name   string
	weight float64
}{
	FieldTitle:    {"title", 3},
	FieldTags:     {"tags", 2},
	FieldHeadings: {"headings", 2},
	FieldBody:     {"body", 1},
	FieldAliases:  {"aliases", 3},
	FieldSummary:  {"summary", 2},
	FieldMeta:     {"frontmatter", 0.5},
}

var fieldWeights = func() (w [NumFields]float64) {
	for f, d := range fieldTable {
		w[f] = d.weight
	}
	return w
}()

// String is the field's name, as explanations show it.
func (f Field) String() string {
	if f < 0 || f >= NumFields {
		return "field" + strconv.Itoa(int(f))
	}
	return fieldTable[f].name
}

// Weight is the field's weight: what its BM25 score is multiplied by.
func (f Field) Weight() float64 { return fieldWeights[f] }

// FrontmatterField is the field that the text of frontmatter key goes to
// (any case); ok is false for the keys that are no text of their own: title
// and tags are fields already, access, icon and CSS classes are settings.
func FrontmatterField(key string) (f Field, ok bool) {
	switch strings.ToLower(key) {
	case "title", "tags", "tag", "access", "icon", "cssclass", "cssclasses":
		return 0, false
	case "aliases", "alias":
		return FieldAliases, true
	case "description", "summary", "excerpt":
		return FieldSummary, true
	}
	return FieldMeta, true
}
