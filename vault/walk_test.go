//go:build unix

package vault_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/atrium-hq/atrium/vault"
)

// A walk says what every file is, and why one is passed over; hidden files,
// links and special files are never read.
func TestWalkClassifies(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	for p, c := range map[string]string{
		"Home.md": "# Home", "Attachments/logo.png": "png", "Notes/deep/scan.PDF": "pdf",
		"Site/intro.mdx": "mdx", "Site/guide.Markdown": "md", ".obsidian/app.json": "{}", "Notes/.draft.md": "x",
		// An export's records: never pages, never attachments, never mentioned.
		".atrium/tasks.json": "{}", ".atrium/notes.md": "# not a page",
	} {
		name := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, "Out")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "pipe.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	kinds := []string{"page", "attachment", "symlink", "skipped", "unreadable"}
	walk := func(o vault.Options) {
		clear(got)
		if err := vault.Walk(root, o, func(e vault.Entry) error {
			got[e.Rel] = kinds[e.Kind] + " " + e.Why
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	walk(vault.Options{})
	want := map[string]string{
		"Home.md":              "page ",
		"Attachments/logo.png": "attachment ",
		"Notes/deep/scan.PDF":  "attachment ",
		"Site/intro.mdx":       "skipped a Markdown page of another flavour (.mdx): import it with --ext .mdx",
		"Site/guide.Markdown":  "skipped a Markdown page of another flavour (.markdown): import it with --ext .markdown",
		"Out":                  "symlink ",
		"pipe.png":             "skipped not a regular file",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("walk (-want +got):\n%s", diff)
	}
	walk(vault.Options{Extensions: []string{"MDX", ".markdown"}})
	if got["Site/intro.mdx"] != "page " || got["Site/guide.Markdown"] != "page " {
		t.Errorf("with --ext: %v", got)
	}
	if p := vault.PagePath("Site/intro.mdx"); p != "Site/intro.md" {
		t.Errorf("PagePath = %q", p)
	}
}
