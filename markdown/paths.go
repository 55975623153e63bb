package markdown

import (
	"net/url"
	"path"
	"strings"
)

// ResolveMarkdown resolves a Markdown link destination, as written in the
// page at fromPage ("Projects/Alpha.md"), to a workspace path: "../B.md" is
// "B.md", "./assets/x.png" is "Projects/assets/x.png", "Sub%20Folder/C.md" is
// "Sub Folder/C.md". A query or fragment is dropped. It reports false for
// what is not a path in the workspace: URLs with a scheme, "//host" and
// absolute paths, fragment-only destinations, and paths that climb above the
// root.
//
// Link.Target is already unescaped; resolving it again only differs for a
// name that itself contains a %XX sequence.
func ResolveMarkdown(fromPage, dest string) (string, bool) {
	if i := strings.IndexAny(dest, "?#"); i >= 0 {
		dest = dest[:i]
	}
	if dest == "" || strings.HasPrefix(dest, "/") || isURL([]byte(dest)) {
		return "", false
	}
	if u, err := url.PathUnescape(dest); err == nil {
		dest = u
	}
	if strings.HasPrefix(dest, "/") {
		return "", false
	}
	dir := path.Dir(path.Clean(fromPage))
	if dir == ".." || strings.HasPrefix(dir, "../") || strings.HasPrefix(dir, "/") {
		return "", false
	}
	p := path.Join(dir, dest)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	return p, true
}

// RelativeLink returns the shortest relative destination from the page at
// fromPage to toPath, escaped for use in a Markdown link: from
// "Projects/Alpha.md", "Archive/Alpha.md" is "../Archive/Alpha.md" and
// "Projects/Beta.md" is "Beta.md". ResolveMarkdown(fromPage, RelativeLink(fromPage, p))
// gives back p.
func RelativeLink(fromPage, toPath string) string {
	var from []string
	if dir := path.Dir(path.Clean(fromPage)); dir != "." {
		from = strings.Split(dir, "/")
	}
	to := strings.Split(path.Clean(toPath), "/")
	common := 0
	for common < len(from) && common < len(to)-1 && from[common] == to[common] {
		common++
	}
	parts := make([]string, 0, len(from)-common+len(to)-common)
	for range from[common:] {
		parts = append(parts, "..")
	}
	for _, seg := range to[common:] {
		parts = append(parts, escapeSegment(seg))
	}
	link := strings.Join(parts, "/")
	if strings.Contains(parts[0], ":") {
		// "a:b.md" would read as a URL with scheme "a".
		link = "./" + link
	}
	return link
}

// escapeSegment percent-escapes what would end or change a link destination
// (blanks, brackets, parentheses, "#", "?", "%", "&" entities, "|" in tables)
// and leaves the rest, including non-ASCII letters, readable.
func escapeSegment(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f || strings.IndexByte("\"#%&()<>?[\\]^`{|}", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
