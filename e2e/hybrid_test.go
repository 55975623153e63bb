package e2e

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/atrium-hq/atrium/internal/embedfake"
)

type hybridHit struct {
	Path        string `json:"path"`
	MatchLine   int    `json:"match_line"`
	Explanation *struct {
		Signals []struct {
			Name    string `json:"name"`
			Rank    int    `json:"rank"`
			Section string `json:"section"`
		} `json:"signals"`
	} `json:"explanation"`
}

type hybridResult struct {
	Results []hybridHit `json:"results"`
	Note    string      `json:"note"`
}

func (h hybridHit) signal(name string) (rank int, section string, ok bool) {
	if h.Explanation == nil {
		return 0, "", false
	}
	for _, s := range h.Explanation.Signals {
		if s.Name == name {
			return s.Rank, s.Section, true
		}
	}
	return 0, "", false
}

// Hybrid search through the real binary: serve with --embedder pointing at
// the fake endpoint; pages written are embedded in the background; a
// question sharing no word with its answer finds it through the vector
// signal, which the explanation names; a private page never surfaces to an
// anonymous reader; an edit and a deletion reach the vectors; the endpoint
// gone, search still answers from words, with a note.
func TestHybridSearchThroughTheBinary(t *testing.T) {
	fake, err := embedfake.Start(embedfake.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	srv := startServeEnv(t, nil, "", "--embedder", fake.URL, "--embedder-model", "fake-hash")
	pub := "---\naccess: public\n---\n"
	for path, content := range map[string]string{
		"Guides/Sync.md":    pub + "# Sync\n\nHow the service works.\n\n## Setup\n\nPair your devices with the server.\n",
		"Guides/Cooking.md": pub + "# Cooking\n\nBoil the pasta in salted water.\n",
		"Inventory.md":      "# Inventory\n\nThe laptops we own.\n", // private
	} {
		body, _ := json.Marshal(map[string]any{"content": content})
		if res, err := newRequest("PUT", srv.URL+"/api/pages/"+path, srv.AdminToken, string(body)); err != nil || res.StatusCode/100 != 2 {
			t.Fatalf("put %s: %v %v", path, res, err)
		}
	}
	call := func(query string) hybridResult {
		t.Helper()
		out, errOut, code := srv.cli(t, []string{"ATRIUM_TOKEN=" + srv.AdminToken}, "call", "search_pages", "query="+query, "explain=true", "--url", srv.MCP())
		if code != 0 {
			t.Fatalf("search_pages %q: exit %d\n%s\n%s", query, code, out, errOut)
		}
		var r hybridResult
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("search_pages output %s: %v", out, err)
		}
		return r
	}
	anon := func(query string) hybridResult {
		t.Helper()
		status, _, body := get(t, "GET", srv.URL+"/api/search?explain=true&q="+url.QueryEscape(query), "", "")
		var r hybridResult
		if err := json.Unmarshal([]byte(body), &r); status != 200 || err != nil {
			t.Fatalf("anonymous search: %d %s", status, body)
		}
		return r
	}
	paths := func(r hybridResult) string {
		var out []string
		for _, h := range r.Results {
			out = append(out, h.Path)
		}
		return strings.Join(out, " ")
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	var r hybridResult
	waitFor("the pages to be embedded", func() bool {
		r = call("phones")
		return strings.Contains(paths(r), "Guides/Sync.md") && strings.Contains(paths(r), "Inventory.md")
	})
	for _, h := range r.Results {
		if h.Path != "Guides/Sync.md" {
			continue
		}
		rank, section, ok := h.signal("vector")
		if _, _, lex := h.signal("lexical"); !ok || rank < 1 || section != "Sync > Setup" || lex || h.MatchLine != 10 {
			t.Errorf("Sync's hit = %+v: want it ranked by the vector signal alone, through section Sync > Setup, line 10", h)
		}
	}
	if got := paths(anon("phones laptops")); strings.Contains(got, "Inventory") || !strings.Contains(got, "Guides/Sync.md") {
		t.Errorf("anonymous hits = %q: the private page surfaced through vectors, or the public one did not", got)
	}

	// An edit reaches the vectors; so does a deletion.
	body, _ := json.Marshal(map[string]any{"content": pub + "# Sync\n\nNow only about gardening.\n", "overwrite": true})
	if res, err := newRequest("PUT", srv.URL+"/api/pages/Guides/Sync.md", srv.AdminToken, string(body)); err != nil || res.StatusCode/100 != 2 {
		t.Fatalf("edit: %v %v", res, err)
	}
	waitFor("the edit to reach the vectors", func() bool { return !strings.Contains(paths(call("phones")), "Sync") })
	if out, errOut, code := srv.cli(t, []string{"ATRIUM_TOKEN=" + srv.AdminToken}, "call", "delete_page", "path=Inventory.md", "--url", srv.MCP()); code != 0 {
		t.Fatalf("delete: %s %s", out, errOut)
	}
	if got := paths(call("phones")); got != "" {
		t.Errorf("hits after the deletion = %q, want none", got)
	}

	// The endpoint gone: words alone, with a note, never an error.
	before := fake.Requests()
	fake.Close()
	r = call("boil pasta")
	if paths(r) != "Guides/Cooking.md" || !strings.Contains(r.Note, "embeddings endpoint") {
		t.Errorf("with the endpoint down: hits %q, note %q; want the lexical hit and a note", paths(r), r.Note)
	}
	if fake.Requests() != before {
		t.Errorf("requests counted after close")
	}
}
