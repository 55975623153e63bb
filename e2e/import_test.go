package e2e

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// pngBytes is a 1×1 PNG: an attachment with bytes that are not text.
const pngBytes = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82"

// vaultPages are the pages of the hand-made vault, as files.
var vaultPages = map[string]string{
	"Home.md":                    "# Home\n\nStart at [[Projects/Alpha]].\n",
	"Projects/_index.md":         "---\ntitle: Projects\n---\n# Projects\n\n![diagram](./assets/diagram.png)\n",
	"Projects/Alpha.md":          "---\ntitle: Alpha plan\ntags: [plan, q3]\naccess: public\n---\n# Alpha\n\nShip it.\n",
	"Projects/Deep/Down/Beta.md": "# Beta\n\nNested three folders down.\n",
	"Journal/2026-01-01.md":      "# New year\n",
}

// writeVault writes the hand-made vault to a new folder: pages, an image in
// an assets folder, Obsidian's hidden state, a stray text file, a page whose
// frontmatter is broken, and symbolic links to a page inside the vault, to a
// page outside it and to a folder outside it.
func writeVault(t *testing.T) string {
	t.Helper()
	vault, outside := t.TempDir(), t.TempDir()
	writeFiles(t, vault, vaultPages)
	writeFiles(t, vault, map[string]string{
		"Projects/assets/diagram.png": pngBytes,
		".obsidian/app.json":          "{}",
		".obsidian/Hidden.md":         "# Hidden\n",
		"Projects/.draft.md":          "# Draft\n",
		"notes.txt":                   "kept as an attachment",
		"Site/intro.mdx":              "# Intro\n\n<Note>MDX</Note>\n",
		"Broken.md":                   "---\ntitle: [unclosed\n---\n# Broken\n",
	})
	writeFiles(t, outside, map[string]string{"Secret.md": "# Secret\n"})
	symlink(t, "Home.md", filepath.Join(vault, "Linked.md"))
	symlink(t, filepath.Join(outside, "Secret.md"), filepath.Join(vault, "Outside.md"))
	symlink(t, outside, filepath.Join(vault, "OutsideDir"))
	return vault
}

func TestImportVault(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := newCLIDB(t, e)
		vault := writeVault(t)

		_, errOut, code := db.run(t, "import", vault)
		if code != 1 {
			t.Fatalf("import with a broken page: exit %d, want 1\n%s", code, errOut)
		}
		sum := parseSummary(t, errOut)
		sum.want(t, "pages", "5 created, 0 updated, 0 unchanged")
		sum.want(t, "attachments", "2 added, 0 unchanged")
		sum.wantList(t, "ignored", "Linked.md", "Outside.md", "OutsideDir")
		sum.wantList(t, "skipped", "Site/intro.mdx: a Markdown page of another flavour (.mdx): import it with --ext .mdx")
		sum.wantList(t, "failed", "Broken.md: invalid frontmatter")
		if strings.Contains(errOut, ".obsidian") || strings.Contains(errOut, ".draft") || strings.Contains(errOut, "\r") {
			t.Errorf("hidden files must go unmentioned, and no progress line off a terminal:\n%s", errOut)
		}

		alpha := db.call(t, "read_page", "path=Projects/Alpha.md")
		if alpha["content"] != vaultPages["Projects/Alpha.md"] || alpha["title"] != "Alpha plan" || alpha["access"] != "public" {
			t.Errorf("read_page Projects/Alpha.md = %v", alpha)
		}
		if diff := cmp.Diff([]any{"plan", "q3"}, alpha["tags"]); diff != "" {
			t.Errorf("tags (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(slices.Sorted(maps.Keys(vaultPages)), db.pagePaths(t)); diff != "" {
			t.Errorf("pages (-want +got):\n%s", diff)
		}
		for _, p := range []string{"Outside.md", "Linked.md", "OutsideDir/Secret.md", "Broken.md"} {
			if out, _, code := db.run(t, "call", "read_page", "path="+p); code != 1 || decode(t, out)["code"] != "not_found" {
				t.Errorf("%s must not be a page: exit %d, %s", p, code, out)
			}
		}
		// The attachment's bytes, as the workspace holds them.
		exported := t.TempDir()
		if _, errOut, code := db.run(t, "export", exported); code != 0 {
			t.Fatalf("export: exit %d\n%s", code, errOut)
		}
		if got := readTree(t, exported)["Projects/assets/diagram.png"]; got != pngBytes {
			t.Errorf("attachment bytes = %q, want the PNG", got)
		}

		// Importing the same folder again changes nothing: no new revision.
		revs := db.revisions(t, "Projects/Alpha.md")
		_, errOut, code = db.run(t, "import", vault)
		if code != 1 {
			t.Fatalf("re-import: exit %d, want 1 (Broken.md still fails)\n%s", code, errOut)
		}
		sum = parseSummary(t, errOut)
		sum.want(t, "pages", "0 created, 0 updated, 5 unchanged")
		sum.want(t, "attachments", "0 added, 2 unchanged")
		if got := db.revisions(t, "Projects/Alpha.md"); got != revs {
			t.Errorf("re-import made revisions: %d, was %d", got, revs)
		}

		// A changed page becomes a new revision; a repaired one goes in, and
		// then the import succeeds.
		writeFiles(t, vault, map[string]string{
			"Projects/Alpha.md": vaultPages["Projects/Alpha.md"] + "\nNow with a date.\n",
			"Broken.md":         "---\ntitle: Fixed\n---\n# Fixed\n",
		})
		_, errOut, code = db.run(t, "import", vault)
		if code != 0 {
			t.Fatalf("import after the fix: exit %d\n%s", code, errOut)
		}
		sum = parseSummary(t, errOut)
		sum.want(t, "pages", "1 created, 1 updated, 4 unchanged")
		sum.want(t, "failed", "0 files")
		if got := db.revisions(t, "Projects/Alpha.md"); got != revs+1 {
			t.Errorf("revisions after a change = %d, want %d", got, revs+1)
		}
	})
}

// An attachment belongs to the nearest page up its path; a vault without
// pages has nobody to hold it: it fails, and says why.
func TestImportAttachmentWithoutPage(t *testing.T) {
	t.Parallel()
	db := newCLIDB(t, store.SQLite)
	vault := t.TempDir()
	writeFiles(t, vault, map[string]string{"Lonely/assets/a.png": pngBytes})
	_, errOut, code := db.run(t, "import", vault)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errOut)
	}
	parseSummary(t, errOut).wantList(t, "failed", "Lonely/assets/a.png: no page to attach files to")
}

// Export, then import into a fresh store and export again: the two folders
// are the same, byte for byte, and the first is the vault that went in.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		vault := t.TempDir()
		if _, errOut, code := runAtrium(t, nil, "dev", "gen-vault", "-n", "40", "--seed", "3", vault); code != 0 {
			t.Fatalf("gen-vault: exit %d\n%s", code, errOut)
		}
		writeFiles(t, vault, vaultPages)
		writeFiles(t, vault, map[string]string{
			"Projects/assets/diagram.png": pngBytes,
			// Bytes a careless writer would change: a BOM, CRLF, no final
			// newline, non-ASCII names.
			"Café/Ünïcödé page.md": "\ufeff---\r\ntitle: CRLF\r\n---\r\nline one\r\nno final newline",
		})
		want := readTree(t, vault)

		first, second := newCLIDB(t, e), newCLIDB(t, e)
		out1, out2 := t.TempDir(), t.TempDir()
		mustRun(t, first, "import", vault)
		errOut := mustRun(t, first, "export", out1)
		parseSummary(t, errOut).want(t, "pages", "46 written, 0 unchanged")
		if diff := cmp.Diff(want, pagesOf(readTree(t, out1))); diff != "" {
			t.Fatalf("export differs from the vault imported (-vault +export):\n%s", diff)
		}
		mustRun(t, second, "import", out1)
		mustRun(t, second, "export", out2)
		if diff := cmp.Diff(readTree(t, out1), readTree(t, out2)); diff != "" {
			t.Fatalf("round trip changed the files (-first +second):\n%s", diff)
		}

		// Exporting again over the same files writes nothing.
		sum := parseSummary(t, mustRun(t, first, "export", out1))
		sum.want(t, "pages", "0 written, 46 unchanged")
		sum.want(t, "attachments", "0 written, 1 unchanged")
	})
}

// A symbolic link in the export folder cannot lead the export out of it.
func TestExportStaysInsideFolder(t *testing.T) {
	t.Parallel()
	db := newCLIDB(t, store.SQLite)
	vault := t.TempDir()
	writeFiles(t, vault, vaultPages)
	mustRun(t, db, "import", vault)

	out, outside := t.TempDir(), t.TempDir()
	symlink(t, outside, filepath.Join(out, "Projects"))
	_, errOut, code := db.run(t, "export", out)
	if code != 1 {
		t.Fatalf("export through a symlink out: exit %d, want 1\n%s", code, errOut)
	}
	sum := parseSummary(t, errOut)
	sum.want(t, "pages", "2 written, 0 unchanged")
	sum.wantList(t, "failed", "Projects/Alpha.md: ", "Projects/Deep/Down/Beta.md: ", "Projects/_index.md: ")
	if got := readTree(t, outside); len(got) != 0 {
		t.Errorf("export wrote outside its folder: %v", slices.Sorted(maps.Keys(got)))
	}
	if got := readTree(t, out)["Home.md"]; got != vaultPages["Home.md"] {
		t.Errorf("Home.md = %q", got)
	}
}

func TestGenVaultIsDeterministic(t *testing.T) {
	t.Parallel()
	gen := func(seed string) map[string]string {
		dir := t.TempDir()
		if _, errOut, code := runAtrium(t, nil, "dev", "gen-vault", "-n", "25", "--seed", seed, dir); code != 0 {
			t.Fatalf("gen-vault: exit %d\n%s", code, errOut)
		}
		return readTree(t, dir)
	}
	a, b, other := gen("7"), gen("7"), gen("8")
	if len(a) != 25 {
		t.Fatalf("gen-vault -n 25 wrote %d files", len(a))
	}
	for p := range a {
		if !strings.HasSuffix(p, ".md") {
			t.Errorf("not a page: %s", p)
		}
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different vaults (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, other) {
		t.Error("seeds 7 and 8 wrote the same vault")
	}
}

// cliDB is the global flags of a fresh database: a data folder, and on
// PostgreSQL a new schema.
type cliDB []string

func newCLIDB(t *testing.T, e store.Engine) cliDB {
	t.Helper()
	db := cliDB{"--data-dir", t.TempDir()}
	if e == store.Postgres {
		db = append(db, "--db", storetest.PostgresDSN(t))
	}
	return db
}

func (db cliDB) run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runAtrium(t, []string{"ATRIUM_AGENT=importer"}, append(slices.Clone(db), args...)...)
}

// mustRun runs a command that must succeed and returns its stderr.
func mustRun(t *testing.T, db cliDB, args ...string) string {
	t.Helper()
	_, errOut, code := db.run(t, args...)
	if code != 0 {
		t.Fatalf("atrium %v: exit %d\n%s", args, code, errOut)
	}
	return errOut
}

// call calls a tool with `atrium call` and returns its result.
func (db cliDB) call(t *testing.T, tool string, args ...string) map[string]any {
	t.Helper()
	out, errOut, code := db.run(t, append([]string{"call", tool}, args...)...)
	if code != 0 {
		t.Fatalf("call %s %v: exit %d\n%s%s", tool, args, code, out, errOut)
	}
	return decode(t, out)
}

// pagePaths lists every page, private ones included, in path order.
func (db cliDB) pagePaths(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, e := range db.call(t, "list_pages", "depth=10", "include_private=true", "limit=1000")["pages"].([]any) {
		if m, _ := asMap(e); m["is_folder"] != true {
			paths = append(paths, m["path"].(string))
		}
	}
	slices.Sort(paths)
	return paths
}

// revisions is how many revisions a page has.
func (db cliDB) revisions(t *testing.T, page string) int {
	t.Helper()
	revs, _ := db.call(t, "list_page_revisions", "path="+page)["revisions"].([]any)
	return len(revs)
}

// summary is what import and export print on stderr: "  name: value" lines,
// each followed by the files it lists, indented further.
type summary struct {
	values map[string]string
	lists  map[string][]string
	text   string
}

func parseSummary(t *testing.T, s string) summary {
	t.Helper()
	sum := summary{values: map[string]string{}, lists: map[string][]string{}, text: s}
	current := ""
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "    "):
			sum.lists[current] = append(sum.lists[current], strings.TrimSpace(line))
		case strings.HasPrefix(line, "  "):
			name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				t.Fatalf("summary line %q has no name", line)
			}
			current = name
			sum.values[name] = strings.TrimSpace(value)
		}
	}
	return sum
}

// want checks that the value of name starts with prefix (a rate may follow).
func (s summary) want(t *testing.T, name, prefix string) {
	t.Helper()
	if !strings.HasPrefix(s.values[name], prefix) {
		t.Errorf("%s: %q, want %q\n%s", name, s.values[name], prefix, s.text)
	}
}

// wantList checks that the files listed under name start with the prefixes,
// in any order.
func (s summary) wantList(t *testing.T, name string, prefixes ...string) {
	t.Helper()
	got := slices.Sorted(slices.Values(s.lists[name]))
	prefixes = slices.Sorted(slices.Values(prefixes))
	ok := len(got) == len(prefixes)
	for i := 0; ok && i < len(got); i++ {
		ok = strings.HasPrefix(got[i], prefixes[i])
	}
	if !ok {
		t.Errorf("%s lists %q, want %q\n%s", name, got, prefixes, s.text)
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		name := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pagesOf is an export's tree without its .atrium records: the files of
// the pages and attachments.
func pagesOf(tree map[string]string) map[string]string {
	maps.DeleteFunc(tree, func(p, _ string) bool { return strings.HasPrefix(p, ".atrium/") })
	return tree
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// readTree returns the regular files under root by slash-separated path.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		tree[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}
