// Package markdown parses and edits Atrium pages: optional YAML frontmatter
// followed by a Markdown body.
//
// It finds headings and their sections, [[wikilinks]] and Markdown links with
// exact byte offsets (so a rename can rewrite targets in place), edits
// frontmatter without disturbing what it does not change, and extracts plain
// text for search. Goldmark decides what is Markdown structure; this package
// only reads that structure back against the source text.
//
// The package is pure: no I/O, no storage, nothing of the rest of Atrium. Its
// errors are *Error values with a code and a message written for the person
// or model who sent the page; callers map the codes to their own.
package markdown
