package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/atrium-hq/atrium/store"
	"github.com/atrium-hq/atrium/store/storetest"
)

// writersPerSurface is how many writes each surface makes: a few in the
// default run, the 100 with ATRIUM_RELIABILITY=full.
func writersPerSurface() int {
	if os.Getenv("ATRIUM_RELIABILITY") == "full" {
		return 100
	}
	return 20
}

// writersHistory reads a page's revisions over REST, keeping the ones already read:
// revisions never change, so each is fetched once.
type writersHistory struct {
	url   string // the page's REST address
	token string
	mu    sync.Mutex
	revs  map[int64]string // revision -> content
	hits  map[string]int64 // content -> revision
}

// get answers a failed request as a status 0, so that writer goroutines
// never call t.Fatal.
func (h *writersHistory) get(url string) (int, []byte) {
	return writersDo("GET", url, h.token, "")
}

// writersDo sends one request and returns its status and body (newRequest
// drops the body); a failed request is status 0.
func writersDo(method, url, token, body string) (int, []byte) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// refresh reads the revisions made since the last refresh.
func (h *writersHistory) refresh() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	status, b := h.get(h.url)
	if status != 200 {
		return fmt.Errorf("read page: %d %s", status, b)
	}
	var cur struct{ Revision int64 }
	json.Unmarshal(b, &cur)
	for rev := int64(1); rev <= cur.Revision; rev++ {
		if _, ok := h.revs[rev]; ok {
			continue
		}
		status, b := h.get(fmt.Sprintf("%s?revision=%d&format=markdown", h.url, rev))
		if status != 200 {
			return fmt.Errorf("read revision %d: %d %s", rev, status, b)
		}
		h.revs[rev], h.hits[string(b)] = string(b), rev
	}
	return nil
}

func (h *writersHistory) has(content string) (int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rev, ok := h.hits[content]
	return rev, ok
}

// conflictFiles reads every conflict copy the mirror kept for name in dir.
func writersConflictFiles(dir, name string) map[string]string {
	stem := strings.TrimSuffix(name, ".md")
	entries, _ := os.ReadDir(dir)
	out := map[string]string{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), stem+".conflict-") && strings.HasSuffix(e.Name(), ".md") {
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				out[e.Name()] = string(b)
			}
		}
	}
	return out
}

// REST, MCP and the mirror folder write one page at once, each with its own
// recognisable content. Every accepted REST/MCP write is a revision; every
// refused one was refused with a conflict its writer saw; every file save
// that the folder still held when the mirror read it (the last of a burst) is
// a revision or a conflict copy: nothing vanishes.
func TestReliabilityThreeSurfaceWriters(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e store.Engine) {
		db := ""
		if e == store.Postgres {
			db = storetest.PostgresDSN(t)
		}
		dir := t.TempDir()
		srv := startServe(t, db, "--mirror", dir)
		const name = "Shared.md"
		pageURL := srv.URL + "/api/pages/" + name
		file := filepath.Join(dir, name)
		if resp, err := newRequest("PUT", pageURL, srv.AdminToken, `{"content":"seed\n"}`); err != nil || resp.StatusCode != 201 {
			t.Fatalf("create page: %v %v", resp, err)
		}
		writersWait(t, "the page's file", func() bool { b, _ := os.ReadFile(file); return string(b) == "seed\n" })
		h := &writersHistory{url: pageURL, token: srv.AdminToken, revs: map[int64]string{}, hits: map[string]int64{}}
		n := writersPerSurface()

		type result struct {
			content  string
			revision int64 // 0: refused
		}
		var (
			rest, viaMCP []result
			fileLast     []string // the last save of each burst: must be kept
			fileEarlier  []string // saves a later save of the same burst may have replaced
			wg           sync.WaitGroup
			failMu       sync.Mutex
			failures     []string
		)
		fail := func(f string, a ...any) {
			failMu.Lock()
			failures = append(failures, fmt.Sprintf(f, a...))
			failMu.Unlock()
		}
		pause := func(i int) { time.Sleep(time.Duration(20+i%5*30) * time.Millisecond) }
		// REST and MCP keep writing while the folder does: at least n writes
		// each, more while the file writer is still saving (at most 10n).
		fileDone := make(chan struct{})
		more := func(i int) bool {
			select {
			case <-fileDone:
				return i < n
			default:
				return i < 10*n
			}
		}

		wg.Add(3)
		go func() { // REST: read, then write on that revision
			defer wg.Done()
			for i := 0; more(i); i++ {
				status, b := h.get(pageURL)
				var cur struct{ Revision int64 }
				json.Unmarshal(b, &cur)
				if status != 200 {
					fail("REST read: %d %s", status, b)
					return
				}
				content := fmt.Sprintf("rest write %d\n", i)
				body, _ := json.Marshal(map[string]any{"content": content, "base_revision": cur.Revision})
				wstatus, wb := writersDo("PUT", pageURL, srv.AdminToken, string(body))
				var out struct {
					Revision int64
					Code     string
				}
				json.Unmarshal(wb, &out)
				switch {
				case wstatus == 200 && out.Revision > 0:
					rest = append(rest, result{content, out.Revision})
				case wstatus == 409 && out.Code == "conflict":
					rest = append(rest, result{content, 0})
				default:
					fail("REST write %d: %d %s", i, wstatus, wb)
				}
				pause(i)
			}
		}()
		go func() { // MCP over Streamable HTTP: read_page, then write_page on that revision
			defer wg.Done()
			cs, err := tryConnectHTTP(srv.MCP(), srv.AdminToken, "")
			if err != nil {
				fail("MCP connect: %v", err)
				return
			}
			defer cs.Close()
			for i := 0; more(i); i++ {
				read, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_page", Arguments: map[string]any{"path": name}})
				if err != nil {
					fail("MCP read: %v", err)
					return
				}
				m, _ := asMap(read.StructuredContent)
				rev, _ := m["revision"].(float64)
				if read.IsError || rev == 0 {
					fail("MCP read: %v", read.Content)
					return
				}
				content := fmt.Sprintf("mcp write %d\n", i)
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_page", Arguments: map[string]any{"path": name, "content": content, "base_revision": int64(rev)}})
				if err != nil {
					fail("MCP write: %v", err)
					return
				}
				out, _ := asMap(res.StructuredContent)
				switch r, _ := out["revision"].(float64); {
				case !res.IsError && r > 0:
					viaMCP = append(viaMCP, result{content, int64(r)})
				case res.IsError && out["code"] == "conflict":
					viaMCP = append(viaMCP, result{content, 0})
				default:
					fail("MCP write %d: %v", i, res.Content)
				}
				pause(i + 2)
			}
		}()
		go func() { // the folder: an editor saving, in place or by rename, sometimes twice in a row
			defer wg.Done()
			defer close(fileDone)
			for i := range n {
				burst := 1 + i%3/2 // 1, 1, 2, 1, 1, 2, …
				var last string
				for j := range burst {
					last = fmt.Sprintf("file save %d.%d\n", i, j)
					if i%2 == 0 {
						// An editor that has just read the file: it keeps
						// the first line and adds its own. The others save a
						// buffer that knows nothing of the file's text.
						if b, err := os.ReadFile(file); err == nil {
							first, _, _ := strings.Cut(string(b), "\n")
							last = first + "\n" + last
						}
					}
					if err := writersSave(file, last, (i+j)%2 == 0); err != nil {
						fail("save file: %v", err)
						return
					}
					if j < burst-1 {
						fileEarlier = append(fileEarlier, last)
					}
				}
				fileLast = append(fileLast, last)
				// Wait until the mirror has taken the save: into the history
				// or a conflict copy. 10 s is "never".
				deadline := time.Now().Add(10 * time.Second)
				for !writersKept(h, dir, name, last) {
					if time.Now().After(deadline) {
						fail("file save %q vanished: neither a revision nor a conflict copy after 10 s", last)
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
		wg.Wait()
		for _, f := range failures {
			t.Error(f)
		}
		// The folder and the store settle on the same content.
		writersWait(t, "the file to hold the page's content", func() bool {
			status, b := h.get(pageURL + "?format=markdown")
			f, _ := os.ReadFile(file)
			return status == 200 && string(f) == string(b)
		})
		if err := h.refresh(); err != nil {
			t.Fatal(err)
		}
		accepted := 0
		acceptedBy := map[string]int{}
		for _, w := range rest {
			if w.revision > 0 {
				acceptedBy["REST"]++
			}
		}
		for _, w := range viaMCP {
			if w.revision > 0 {
				acceptedBy["MCP"]++
			}
		}
		for _, w := range append(append([]result(nil), rest...), viaMCP...) {
			rev, ok := h.has(w.content)
			switch {
			case w.revision > 0 && (!ok || rev != w.revision):
				t.Errorf("accepted write %q (revision %d) is not that revision in the history", w.content, w.revision)
			case w.revision == 0 && ok:
				t.Errorf("refused write %q is in the history (revision %d)", w.content, rev)
			case w.revision > 0:
				accepted++
			}
		}
		conflicts := writersConflictFiles(dir, name)
		lost, coalesced := 0, 0
		for _, c := range fileLast {
			if !writersKept(h, dir, name, c) {
				lost++
				t.Errorf("file save %q is neither a revision nor in a conflict copy", c)
			}
		}
		for _, c := range fileEarlier {
			if !writersKept(h, dir, name, c) {
				coalesced++ // replaced by its writer's next save before the mirror read it
			}
		}
		fileRevs := 0
		for _, c := range h.revs {
			if strings.Contains(c, "file save ") {
				fileRevs++
			}
		}
		refused := len(rest) + len(viaMCP) - accepted
		// The floor: a REST or MCP write is refused only when another landed
		// between its read and its write, a few milliseconds against the
		// 20-140 ms each writer pauses. A server that answered every write
		// with a conflict would pass every check above; at least half must
		// be accepted, and some on each surface.
		if accepted*2 < len(rest)+len(viaMCP) || acceptedBy["REST"] == 0 || acceptedBy["MCP"] == 0 {
			t.Errorf("%d of %d REST and MCP writes accepted (REST %d of %d, MCP %d of %d), want at least half and some of each",
				accepted, len(rest)+len(viaMCP), acceptedBy["REST"], len(rest), acceptedBy["MCP"], len(viaMCP))
		}
		t.Logf("RELIABILITY writers: engine=%s rest=%d mcp=%d file=%d revisions=%d conflicts=%d conflict_files=%d file_revisions=%d coalesced=%d lost=%d",
			e, len(rest), len(viaMCP), len(fileLast)+len(fileEarlier), len(h.revs), refused, len(conflicts), fileRevs, coalesced, lost)
	})
}

// kept reports whether content is a revision of the page or a conflict copy.
func writersKept(h *writersHistory, dir, name, content string) bool {
	if _, ok := h.has(content); ok {
		return true
	}
	for _, c := range writersConflictFiles(dir, name) {
		if c == content {
			return true
		}
	}
	h.refresh() // a failure shows as "not kept"
	_, ok := h.has(content)
	return ok
}

// saveFile saves content as an editor does: in place, or into a new file
// renamed over the old one.
func writersSave(path, content string, inPlace bool) error {
	if inPlace {
		return os.WriteFile(path, []byte(content), 0o644)
	}
	tmp := filepath.Join(filepath.Dir(path), ".editor-save.tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// waitFor waits up to 10 s for cond.
func writersWait(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
