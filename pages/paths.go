package pages

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/atrium-hq/atrium"
)

// Path limits: generous for people, safe for every file system the mirror
// may write to.
const (
	maxPathBytes    = 1024
	maxSegmentBytes = 255
)

// NormalizePath checks a page path and returns it in canonical form:
// forward slashes, no "." segments, no leading "./". A bad path is an
// invalid_argument that says what is wrong with it.
func NormalizePath(p string) (string, error) {
	clean, err := normalize(p, "page path")
	if err != nil {
		return "", err
	}
	if !strings.EqualFold(path.Ext(clean), ".md") || len(clean) <= len(".md") || strings.HasSuffix(clean, "/.md") {
		return "", atrium.Errorf(atrium.EInvalid, "invalid page path %q: pages are Markdown files, so the path must end in .md (e.g. Projects/Alpha.md)", p)
	}
	return clean, nil
}

// checkFolders refuses a new page or attachment path inside a folder whose
// name ends in .md: beside a page of that name (K.md and K.md/Child.md) the
// folder mirror would need a file and a folder of one name, and REST could
// not tell the page's own routes from the child's path. Existing paths stay
// readable, so that such a page can be moved out.
//
// It also refuses the names Windows reserves for devices (CON.md, nul.md,
// Com1/…): the folder mirror and an export could not write them there. Like
// the folder rule, it applies to new paths only, so that a page of such a
// name made before the rule can still be read and moved.
func checkFolders(p string) error {
	segs := strings.Split(p, "/")
	for _, s := range segs[:len(segs)-1] {
		if strings.EqualFold(path.Ext(s), ".md") {
			return atrium.Errorf(atrium.EInvalid, "invalid path %q: the folder %q ends in .md, like a page's file name; a page's children go in a folder without .md (e.g. %s/…)", p, s, strings.TrimSuffix(s, path.Ext(s)))
		}
	}
	for _, s := range segs {
		if windowsReserved(s) {
			return atrium.Errorf(atrium.EInvalid, "invalid path %q: %q is a device name on Windows (CON, PRN, AUX, NUL, COM1–COM9, LPT1–LPT9, with any extension), which the folder mirror cannot write there; choose another name", p, s)
		}
	}
	return nil
}

// windowsReserved reports a name Windows keeps for a device: the part before
// the first dot, trailing spaces ignored, is CON, PRN, AUX, NUL, COM1–9 or
// LPT1–9 (the superscript digits ¹²³ too), in any case.
func windowsReserved(name string) bool {
	stem, _, _ := strings.Cut(name, ".")
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch stem {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if d, ok := strings.CutPrefix(stem, "COM"); ok || strings.HasPrefix(stem, "LPT") {
		if !ok {
			d = stem[3:]
		}
		return len(d) == 1 && '1' <= d[0] && d[0] <= '9' || d == "¹" || d == "²" || d == "³"
	}
	return false
}

// NormalizeFolder checks a folder path ("Projects", "Projects/Alpha/", or ""
// for the root) and returns it without trailing slash.
func NormalizeFolder(p string) (string, error) {
	p = strings.TrimSpace(p)
	p = strings.TrimRight(strings.ReplaceAll(p, `\`, "/"), "/")
	if p == "" || p == "." {
		return "", nil
	}
	return normalize(p, "folder path")
}

func normalize(p, what string) (string, error) {
	orig := p
	p = strings.TrimSpace(p)
	if p == "" {
		return "", atrium.Errorf(atrium.EInvalid, "empty %s", what)
	}
	if !utf8.ValidString(p) {
		return "", atrium.Errorf(atrium.EInvalid, "invalid %s %q: not valid UTF-8", what, orig)
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(p, "/") || isDrive(p) {
		return "", atrium.Errorf(atrium.EInvalid, "invalid %s %q: paths are relative to the workspace, e.g. Projects/Alpha.md", what, orig)
	}
	var segs []string
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "", ".":
			continue
		case "..":
			return "", atrium.Errorf(atrium.EInvalid, "invalid %s %q: '..' is not allowed", what, orig)
		}
		if err := checkSegment(s); err != "" {
			return "", atrium.Errorf(atrium.EInvalid, "invalid %s %q: %s", what, orig, err)
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return "", atrium.Errorf(atrium.EInvalid, "empty %s", what)
	}
	clean := strings.Join(segs, "/")
	if len(clean) > maxPathBytes {
		return "", atrium.Errorf(atrium.EInvalid, "invalid %s: longer than %d bytes", what, maxPathBytes)
	}
	return clean, nil
}

// isDrive reports a Windows drive path (C:/…).
func isDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ('a' <= p[0]|0x20 && p[0]|0x20 <= 'z') && (len(p) == 2 || p[2] == '/')
}

// checkSegment says what is wrong with one path segment, or "".
func checkSegment(s string) string {
	if len(s) > maxSegmentBytes {
		return "a name is longer than 255 bytes"
	}
	if strings.HasPrefix(s, ".") {
		return "names may not start with '.' (hidden files are not pages)"
	}
	if strings.HasSuffix(s, " ") || strings.HasSuffix(s, ".") && !strings.HasSuffix(s, ".md") {
		return "names may not end with a space or '.'"
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return "control characters are not allowed"
		}
		if strings.ContainsRune(`<>:"|?*`, r) {
			return `the characters < > : " | ? * are not allowed (they break the folder mirror on some systems)`
		}
	}
	return ""
}

// folderOf is the folder of a page path, "" at the root.
func folderOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// join joins a folder and a name.
func join(folder, name string) string {
	if folder == "" {
		return name
	}
	return folder + "/" + name
}

// baseName is the file name of a path without folder and ".md".
func baseName(p string) string {
	b := path.Base(p)
	return strings.TrimSuffix(b, path.Ext(b))
}

// fileNameFor turns a title into a page file name: the title itself, with the
// characters paths may not hold replaced, as Obsidian and most wikis do.
func fileNameFor(title string) string {
	var b strings.Builder
	for _, r := range strings.TrimSpace(title) {
		switch {
		case unicode.IsControl(r):
		case strings.ContainsRune(`/\<>:"|?*#^[]`, r):
			b.WriteRune('-')
		default:
			b.WriteRune(r)
		}
	}
	name := strings.Trim(b.String(), " .")
	if name == "" {
		name = "Untitled"
	}
	for len(name) > maxSegmentBytes-len(".md") {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name + ".md"
}
