package e2e

import (
	"io"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// osHandle is the principal the CLI acts as without ATRIUM_AGENT: the OS
// user's name.
func osHandle(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil || u.Username == "" {
		t.Skip("no OS user name here")
	}
	return strings.ToLower(u.Username)
}

// activityHTML is the workspace's activity page as a browser gets it.
func activityHTML(t *testing.T, srv *server) string {
	t.Helper()
	resp, err := http.Get(srv.URL + "/activity")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /activity: %d\n%s", resp.StatusCode, b)
	}
	return string(b)
}

// An import a person runs and the edits they save in the mirror folder are
// theirs in the feed: the OS user, as a person, not an AI agent (issue 23.10).
// ATRIUM_AGENT still makes the CLI an agent.
func TestPeoplesImportsAndFolderSavesAreTheirs(t *testing.T) {
	handle := osHandle(t)
	dbPath := filepath.Join(t.TempDir(), "atrium.db")
	vault := t.TempDir()
	writeFiles(t, vault, map[string]string{"One.md": "# One\n", "Two.md": "# Two\n"})
	data := t.TempDir()
	if _, errOut, code := runAtrium(t, nil, "--data-dir", data, "--db", dbPath, "import", vault); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, errOut)
	}
	agentVault := t.TempDir()
	writeFiles(t, agentVault, map[string]string{"Bot.md": "# Bot\n"})
	if _, errOut, code := runAtrium(t, []string{"ATRIUM_AGENT=scribe"}, "--data-dir", data, "--db", dbPath, "import", agentVault); code != 0 {
		t.Fatalf("import as an agent: exit %d\n%s", code, errOut)
	}
	dir := t.TempDir()
	srv := startServe(t, dbPath, "--auth", "none", "--mirror", dir)
	waitFor(t, "the pages in the folder", func() bool { _, err := os.Stat(filepath.Join(dir, "Two.md")); return err == nil })
	if err := os.WriteFile(filepath.Join(dir, "Three.md"), []byte("# Three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	person := `<span class="author-human" title="a person"><span class="badge">person</span> ` + regexp.QuoteMeta(handle) + `</span>`
	wants := map[string]*regexp.Regexp{
		"the import, by the person":      regexp.MustCompile(person + `\s*imported 2 pages`),
		"the folder save, by the person": regexp.MustCompile(person + `\s*created\s*<a href="[^"]*Three.md"`),
		"the agent's import, by the AI":  regexp.MustCompile(`<span class="badge">AI</span> scribe</span>\s*created`),
	}
	var page string
	waitFor(t, "the folder's new page in the feed", func() bool {
		page = activityHTML(t, srv)
		return strings.Contains(page, "Three.md")
	})
	for what, re := range wants {
		if !re.MatchString(page) {
			t.Errorf("%s: not in the feed\n%s", what, page)
		}
	}
	if strings.Contains(page, "AI</span> "+handle+"<") || strings.Contains(page, "AI</span> mirror<") {
		t.Errorf("the person's work is shown as an AI agent's:\n%s", page)
	}
}

// A file the mirror leaves alone is shown to people, in the feed and in the
// home page's "needs attention" list, not only in the server's log (issue 23.8).
func TestMirrorTroubleIsShownToPeople(t *testing.T) {
	dir := t.TempDir()
	srv := startServe(t, filepath.Join(t.TempDir(), "atrium.db"), "--auth", "none", "--mirror", dir)
	if err := os.WriteFile(filepath.Join(dir, "what?.md"), []byte("# What\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".draft.md"), []byte("# Draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the skipped files in the feed", func() bool {
		page := activityHTML(t, srv)
		return strings.Contains(page, "what?.md") && strings.Contains(page, ".draft.md") && strings.Contains(page, "left alone")
	})
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	home := string(b)
	i := strings.Index(home, "Needs attention")
	if i < 0 {
		t.Fatalf("no \"Needs attention\" on the home page:\n%s", home)
	}
	for _, want := range []string{"<code>what?.md</code> in the folder is not synced", "<code>.draft.md</code> in the folder is not synced: hidden files"} {
		if !strings.Contains(home[i:], want) {
			t.Errorf("needs attention lacks %q:\n%s", want, home[i:])
		}
	}
}
